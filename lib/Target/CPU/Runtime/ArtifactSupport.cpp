//===- ArtifactSupport.cpp - code linked into every CPU artifact ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Lowered memref.copy calls `memrefCopy`, memref.alloc and memref.dealloc
// the `_mlir_memref_to_llvm_*` functions (bound to the block cache), f32 to
// bf16 conversions on CPUs without AVX-512 BF16 `__truncsfbf2`
// (Builtins.cpp); each artifact carries its own, so that it loads into any
// process.
//
//===----------------------------------------------------------------------===//
#include "BlockCache.h"
#include "Builtins.h"
#include "MemRefCopy.h"

#include <cstdlib>

// libomp's call for setting its defaults as its environment variables
// would; weak, so that an artifact without parallel loops (no libomp)
// still loads.
extern "C" void kmp_set_defaults(const char *) __attribute__((weak));

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
__attribute__((constructor)) static void chooseWaitPolicy() {
  if (!kmp_set_defaults || std::getenv("OMP_WAIT_POLICY") ||
      std::getenv("KMP_BLOCKTIME") || std::getenv("KMP_LIBRARY"))
    return;
  kmp_set_defaults("KMP_BLOCKTIME=1");
}

extern "C" void memrefCopy(int64_t elementSize,
                           tessera::runtime::UnrankedMemRef *src,
                           tessera::runtime::UnrankedMemRef *dst) {
  tesseraMemrefCopy(elementSize, src, dst);
}

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return tesseraAlloc(size);
}
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                     uint64_t size) {
  return tesseraAlignedAlloc(alignment, size);
}
extern "C" void _mlir_memref_to_llvm_free(void *pointer) {
  tesseraFree(pointer);
}

// The artifact's block cache goes with it when the library is unloaded: the
// runtime keeps a library loaded while any buffer it handed out lives, so
// nothing of this artifact allocates or frees after this runs.
__attribute__((destructor)) static void releaseBlockCache() {
  tesseraReleaseCache();
}
