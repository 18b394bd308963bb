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
#include "WaitPolicy.h"

#include <cstdlib>

// libomp's call for setting its defaults as its environment variables
// would; weak, so that an artifact without parallel loops (no libomp)
// still loads.
extern "C" void kmp_set_defaults(const char *) __attribute__((weak));

// The wait policy of WaitPolicy.h, when the artifact loads.
__attribute__((constructor)) static void chooseWaitPolicy() {
  tessera::cpu::chooseWaitPolicy(kmp_set_defaults);
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
