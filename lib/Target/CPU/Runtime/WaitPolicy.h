//===- WaitPolicy.h - how the OpenMP threads of a CPU model wait ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// OpenMP threads that wait for work spin for 1 ms and then sleep, instead
// of spinning for 200 ms (libomp's default): on a shared machine a
// spinning thread takes the core from another process and from this
// model's own descheduled threads. Sleeping at once (OMP_WAIT_POLICY=
// passive) costs a futex wake at every parallel loop: a model runs a few
// dozen of them per inference, back to back. Measured on one 2-core
// machine (bench/contention_bench.py, medians of 3 rounds; a torch.nn
// encoder layer): alone 10.5 ms with 1 ms, 13.3 passive, 10.6 spinning;
// beside one busy process 22.5, 21.3 and 24.9 ms. The user's own
// OMP_WAIT_POLICY, KMP_BLOCKTIME or KMP_LIBRARY wins.
//
// Both ways a CPU model runs set it: an artifact when it loads
// (ArtifactSupport.cpp), a model compiled in process when its engine has
// loaded libomp (JitExecutable.cpp). Either only has an effect before
// libomp starts its threads, at the process's first parallel loop.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_RUNTIME_WAITPOLICY_H
#define TESSERA_LIB_TARGET_CPU_RUNTIME_WAITPOLICY_H

#include <cstdlib>

namespace tessera::cpu {

/// Sets the wait policy above through libomp's `kmp_set_defaults` (null:
/// no libomp, nothing to do), unless the environment chooses one.
inline void chooseWaitPolicy(void (*setDefaults)(const char *)) {
  if (!setDefaults || std::getenv("OMP_WAIT_POLICY") ||
      std::getenv("KMP_BLOCKTIME") || std::getenv("KMP_LIBRARY"))
    return;
  setDefaults("KMP_BLOCKTIME=1");
}

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_RUNTIME_WAITPOLICY_H
