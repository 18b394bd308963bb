//===- MemRefCopy.h - the strided copy compiled code calls ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_RUNTIME_MEMREFCOPY_H
#define TESSERA_LIB_RUNTIME_MEMREFCOPY_H

#include <cstdint>

namespace tessera::runtime {
/// An unranked memref as compiled code passes it: rank and descriptor.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
} // namespace tessera::runtime

/// Copies `src` to `dst` (same shape, any strides); bound to the symbol
/// `memrefCopy` that lowered code calls.
extern "C" void tesseraMemrefCopy(int64_t elementSize,
                                  tessera::runtime::UnrankedMemRef *src,
                                  tessera::runtime::UnrankedMemRef *dst);

#endif // TESSERA_LIB_RUNTIME_MEMREFCOPY_H
