//===- ArtifactSupport.cpp - code linked into every CPU artifact ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Lowered memref.copy calls `memrefCopy`; each artifact carries its own, so
// that it loads into any process.
//
//===----------------------------------------------------------------------===//
#include "MemRefCopy.h"

extern "C" void memrefCopy(int64_t elementSize,
                           tessera::runtime::UnrankedMemRef *src,
                           tessera::runtime::UnrankedMemRef *dst) {
  tesseraMemrefCopy(elementSize, src, dst);
}
