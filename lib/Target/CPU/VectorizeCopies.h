//===- VectorizeCopies.h - copies that move data in vector steps -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The copies tessera-cpu-vectorize-loops takes before its elementwise and
// reduction loops (VectorizeCopies.cpp): nearest upsamplings, transposes
// in 16 x 16 blocks, and pads that fill only their border.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_VECTORIZECOPIES_H
#define TESSERA_LIB_TARGET_CPU_VECTORIZECOPIES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// f32 lanes of one AVX-512 vector.
constexpr int64_t kF32Lanes = 16;

/// Each nearest upsampling by whole factors in `func` (the Resize
/// lowering's copy reading x floordiv f, the innermost f dividing the
/// lanes) as rows of vector steps on threads.
void vectorizeUpsamplings(mlir::RewriterBase &rewriter, mlir::func::FuncOp func);

/// Each f32 transposing copy in `func` whose input's innermost dim is not
/// the output's, one of the two dynamic, in 16 x 16 blocks on threads.
void vectorizeBlockTransposes(mlir::RewriterBase &rewriter,
                              mlir::func::FuncOp func);

/// A pattern that rewrites an f32 pad of an image's two innermost dims as
/// one parallel loop over the planes, each filling only its border.
void populatePadPlanesPattern(mlir::RewritePatternSet &patterns);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_VECTORIZECOPIES_H
