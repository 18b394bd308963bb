//===- PackConstants.h - constant operands packed at compile time -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tessera-cpu-tile-contractions that packs a contraction's
// constant rhs into the register tile's panels, and its constant lhs into
// the register tile's row tiles, at compile time, in the function or, for
// a kernel shared by a model's layers, at every call.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_PACKCONSTANTS_H
#define TESSERA_LIB_TARGET_CPU_PACKCONSTANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <tuple>

namespace tessera::cpu {

/// What is already packed: the matrix as the contraction reads it (or the
/// constant a call passes), which panels (0: of its columns, an rhs's; 1:
/// of its rows, an lhs's 8-row tiles, which are the column panels of its
/// transpose; plus twice the matrix's rows when it collapses the
/// constant), the first column (or row) and the panel width.
using PackedKey = std::tuple<mlir::Value, int64_t, int64_t, int64_t>;

/// For a contraction whose rhs is a constant K x N matrix (or the
/// transpose of a constant N x K one, or a column slice of either, or a
/// slice of such a slice) read as (k, columns), shared by all batch
/// iterations: the same columns as
/// N/`width` contiguous K x `width` panels, packed once here instead of at
/// every call (and once per constant and columns: `packed` holds those
/// already packed). The matrix may also be an argument of a private
/// function (a kernel shared by a model's layers) to which every caller
/// passes a constant: each call then passes its constant packed, as a new
/// argument (recorded in `packedArguments`, so that the old one goes
/// once nothing reads it). A constant several calls pass (a weight tied
/// between layers) is packed once for all of them. With `group` > 1
/// (dividing K), each panel is [K/group, group * `width`]: `group` rows
/// side by side, as vdpbf16ps (2) and vpdpbusd (4) read them
/// ([N/width, K/group, group * width] in all).
mlir::Value
packConstantRhs(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op,
                int64_t width, int64_t group,
                llvm::DenseMap<PackedKey, mlir::Value> &packed,
                llvm::SetVector<mlir::BlockArgument> &packedArguments);

/// For a contraction whose lhs is a constant M x K matrix (or its
/// collapse, as a convolution's filters [F, C * KH * KW], or the transpose
/// of a constant K x M one, or a row slice of either, or a slice of such a
/// slice) read as (rows, k), shared by all batch
/// iterations, with M a multiple of `rows`: the same rows as M/`rows`
/// contiguous K x `rows` tiles ([M/rows, K, rows], the layout the run-time
/// lhs packing makes), packed once here instead of at every call. Shares
/// `packed` and `packedArguments` with packConstantRhs, and so handles an
/// argument of a private function to which every call passes a constant
/// the same way.
mlir::Value packConstantLhs(mlir::RewriterBase &rewriter,
                            mlir::linalg::GenericOp op, int64_t rows,
                            llvm::DenseMap<PackedKey, mlir::Value> &packed,
                            llvm::SetVector<mlir::BlockArgument> &packedArguments);

/// Removes the arguments whose constants were passed packed instead, once
/// nothing in the function reads them (what read them is dead), from the
/// function and its calls; and so the packed ones that nothing reads
/// (a contraction whose tiling failed).
void dropPackedArguments(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                         llvm::ArrayRef<mlir::BlockArgument> arguments);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_PACKCONSTANTS_H
