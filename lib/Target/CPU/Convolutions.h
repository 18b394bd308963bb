//===- Convolutions.h - convolutions as GEMMs for the register tiles -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tessera-cpu-tile-contractions that turns convolutions into
// contractions the register tiles take: im2col and a GEMM, a GEMM of the
// image itself for a pointwise convolution, a loop over the images for a
// symbolic batch and over the groups for a grouped convolution.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H
#define TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// Rewrites the convolutions of `func` into contractions (see the file
/// comment), `panel` the register tile's columns; with `report`, each one
/// left a direct loop nest is named, with the reason, in a remark at its
/// op.
void convolutionsToGemms(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                         int64_t panel, bool report);

/// When `op`'s accumulator is the collapse of a linalg.fill used nowhere
/// else, fills the collapsed shape instead, so that each tile can start
/// from the fill value (defined in TileContractions.cpp).
void fillAfterCollapse(mlir::RewriterBase &rewriter,
                       mlir::linalg::GenericOp op);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H
