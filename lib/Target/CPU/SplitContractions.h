//===- SplitContractions.h - ragged contractions in parts -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CPU_SPLITCONTRACTIONS_H
#define TESSERA_LIB_TARGET_CPU_SPLITCONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// Splits the contraction `op` (loops [batch..., rows, k, columns]) at
/// `point` along its loop `dim` (rows or columns) into two parts, and its
/// elementwise `epilogue` (null when it has none) at the same point, so
/// that each part of the product keeps an epilogue part that reads it
/// directly. A part's accumulator that is a slice of a linalg.fill becomes
/// a fill of its own (so that its tiles can start from the fill value in
/// registers, and the whole result is not filled first). The two parts, or
/// nulls when the op does not split.
std::pair<mlir::linalg::GenericOp, mlir::linalg::GenericOp>
splitContraction(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op,
                 unsigned dim, int64_t point, mlir::Operation *epilogue);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_SPLITCONTRACTIONS_H
