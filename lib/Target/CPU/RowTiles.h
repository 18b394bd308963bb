//===- RowTiles.h - the row tiles of a register-tiled contraction -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CPU_ROWTILES_H
#define TESSERA_LIB_TARGET_CPU_ROWTILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// Loops [batch..., rows, k, columns] (the order Tessera's matmul lowering
/// produces): one reduction, two operands, one accumulator.
bool isContraction(mlir::linalg::GenericOp op);

/// When the panel loop's accumulator starts as a linalg.fill, starts each
/// row tile `rows` from the fill value in registers instead; the loop's
/// other contractions (the partial tile of dynamic rows) fill their own
/// accumulators just before they run, and the fill of the whole result
/// goes away.
void fillTilesInRegisters(mlir::RewriterBase &rewriter,
                          mlir::scf::ForallOp loop,
                          mlir::linalg::GenericOp rows);

/// For the 8-row tile `rows` of a contraction whose rows are dynamic: the
/// row loop peeled, so that its full iterations have tiles of exactly 8
/// rows, and the last, partial tile runs after it as a loop of its own.
/// The full tile, or null.
mlir::Operation *peelPartialRows(mlir::RewriterBase &rewriter,
                                 mlir::linalg::GenericOp rows);

/// `target` tiled by `tileSizes` (0: that loop not tiled) in an scf.for
/// nest, or in one scf.forall when `parallel`; the tiled op, or null.
mlir::Operation *tileOp(mlir::RewriterBase &rewriter, mlir::Operation *target,
                        llvm::ArrayRef<mlir::OpFoldResult> tileSizes,
                        bool parallel);

/// Tiles the row tile `rows` by one k step and vectorizes that step.
void vectorizeTile(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp rows);

/// The partial tile of dynamic rows that peelPartialRows left in `loop`:
/// one row at a time, each a 1-row register tile like the full ones.
void tilePartialRows(mlir::RewriterBase &rewriter, mlir::scf::ForallOp loop,
                     mlir::linalg::GenericOp rows);

/// Replaces each tensor.expand_shape of `value` that splits a dim into
/// more than one dynamic dim by a tensor.reshape to the same shape (MLIR
/// 22's strided-metadata expansion of memref.expand_shape cannot expand
/// into two dynamic dims; a reshape of a contiguous buffer needs no
/// strides).
void reshapeInsteadOfExpand(mlir::RewriterBase &rewriter, mlir::Value value);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_ROWTILES_H
