//===- MatrixVector.h - a matrix times a vector as a GEMV kernel -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tessera-cpu-tile-contractions that computes a matrix times a
// vector ([..., M, K] x [K] -> [..., M], ONNX's MatMul with a rank-1 rhs),
// which the register-tiled GEMM does not take (it has no columns): blocks
// of rows on threads, each a loop over k carrying one vector accumulator
// per row, the vector's k values loaded once per step for all the block's
// rows, then one horizontal sum per row. The matrix is read once, in
// order, at the memory's speed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_MATRIXVECTOR_H
#define TESSERA_LIB_TARGET_CPU_MATRIXVECTOR_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// Whether `op` is an f32 matrix times a vector in the form the GEMV
/// kernel takes: loops [rows..., k], the matrix read by every loop in
/// order, the vector by k alone, the result (its initial value added) by
/// the rows, the body acc + a * b.
bool isMatrixTimesVector(mlir::linalg::GenericOp op);

/// Replaces `op` (isMatrixTimesVector) by the GEMV kernel: blocks of `rows`
/// rows on threads (then single rows for the rest), k in vectors of
/// `lanes`, the k values no vector fills summed one at a time.
void lowerMatrixTimesVector(mlir::RewriterBase &rewriter,
                            mlir::linalg::GenericOp op, int64_t rows,
                            int64_t lanes);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_MATRIXVECTOR_H
