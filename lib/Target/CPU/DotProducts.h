//===- DotProducts.h - register tiles on x86 dot-product instructions -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tessera-cpu-tile-contractions that computes bf16 products on
// vdpbf16ps and int8 products on vpdpbusd: the rhs panels in groups of
// rows (pairs for bf16, fours for int8), each row tile a loop over the
// groups of k carrying its accumulators in vector registers.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_DOTPRODUCTS_H
#define TESSERA_LIB_TARGET_CPU_DOTPRODUCTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// The dot-product instruction a contraction can take: vdpbf16ps sums
/// pairs of bf16 products into f32 lanes, vpdpbusd groups of four u8 x s8
/// products into i32 lanes.
enum class DotProduct { None, BF16, Int8 };

/// k values per 32-bit lane of `kind`.
int64_t groupOf(DotProduct kind);

/// The dot product the contraction `op` (loops [batch..., rows, k,
/// columns]) takes with panels `width` wide, where `bf16` and `int8`
/// allow them: bf16 operands into f32 on vdpbf16ps, i8 operands into i32
/// on vpdpbusd, with k a multiple of the group, whole 16-column vectors,
/// the lhs read along k, the accumulator along the columns and the rhs as
/// (k, columns). None otherwise.
DotProduct dotProductFor(mlir::linalg::GenericOp op, int64_t width, bool bf16,
                         bool int8);

/// The panel `rhs` ([1..., K, W], read as (k, columns)) with its rows in
/// groups of `group`, [K/group, group * W], made at run time by a
/// transpose.
mlir::Value groupRows(mlir::RewriterBase &rewriter, mlir::Location loc,
                      mlir::Value rhs, int64_t group);

/// For int8: 128 times each column's sum over k of the panel `groups`
/// ([K/4, 4W]), as W/16 vectors, computed once per panel (vpdpbusd reads
/// the lhs as x + 128; see emitGroupTile).
llvm::SmallVector<mlir::Value> columnOffsets(mlir::RewriterBase &rewriter,
                                             mlir::Location loc,
                                             mlir::Value groups,
                                             int64_t width);

/// Replaces the static tile `rows` (up to 8 rows, unit batch dims, W
/// columns) of a contraction that takes `kind` by a loop over the groups
/// of k that reads the rhs from `groups` ([K/G, G * W]) and carries the
/// accumulators in vector registers; for int8, `offsets` are subtracted
/// at the end. False (nothing changed) when the tile does not fit.
bool emitGroupTile(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp rows,
                   DotProduct kind, mlir::Value groups,
                   llvm::ArrayRef<mlir::Value> offsets);

/// Memory effects for llvm.call_intrinsic (none for vpdpbusd, a read and a
/// write for any other intrinsic), so that bufferization's deallocation
/// accepts the vpdpbusd calls emitGroupTile makes.
void registerDotProductEffects(mlir::DialectRegistry &registry);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_DOTPRODUCTS_H
