//===- Convolutions.h - convolutions as GEMMs for the register tiles -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tessera-cpu-tile-contractions that turns convolutions into
// contractions the register tiles take: im2col and a GEMM, a GEMM of the
// image itself for a pointwise convolution, a loop over the images for a
// symbolic batch and over the groups for a grouped convolution; over an
// image of symbolic size, the pixels padded to whole panels of columns
// (PixelPanels.cpp) or the pixels as the GEMM's rows (PixelRows.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H
#define TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {

/// Whether a convolution with `filter` [F, C, KH, KW] and `result` [N, F,
/// OH, OW] shapes makes, on bf16 or f16 operands, a GEMM of whole tiles:
/// 8-row tiles of filters, pairs of k (C*KH*KW even) and whole 16-column
/// vectors of pixels (OH*OW). Partial narrow tiles would need vectors of
/// odd lengths of bf16, which LLVM's x86 backend cannot convert (it stops
/// with "Do not know how to soft promote this operator's operand").
bool isWholeNarrowGemm(llvm::ArrayRef<int64_t> filter,
                       llvm::ArrayRef<int64_t> result);

/// A grouped convolution (not dilated, dims other than the batch static) as
/// a loop over its groups, each an ungrouped linalg.conv_2d_nchw_fchw
/// (GroupedConvolutions.cpp): parallel unless the groups are few and their
/// GEMMs large. False when `conv` stays as it is.
bool groupsAsConvolutions(mlir::RewriterBase &rewriter,
                          mlir::linalg::Conv2DNgchwGfchwOp conv);

/// Rewrites the convolutions of `func` into contractions (see the file
/// comment), `panel` the register tile's columns and `lanes` its vectors'
/// lanes; with `report`, each one left a direct loop nest is named, with
/// the reason, in a remark at its op.
void convolutionsToGemms(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                         int64_t panel, int64_t lanes, bool report);

/// A float convolution over an image of symbolic height or width (or a
/// static one at stride 1 with few filters) as a GEMM
/// of the filters and the output pixels padded to whole panels of `panel`
/// columns (PixelPanels.cpp); false when `conv` is not such a one.
bool pixelPanelsConvolution(mlir::RewriterBase &rewriter,
                            mlir::linalg::Conv2DNchwFchwOp conv, int64_t panel);

/// The least ratio of a convolution's depth (C*KH*KW) to its pixels at
/// which prefersPixelRows holds.
constexpr int64_t kPixelRowsDepth = 2;

/// Whether the static f32 convolution `conv` (its result a fill) is better
/// as a GEMM whose rows are its output pixels (pixelRowsGemm): its pixels
/// are not whole vectors of the register tile's `lanes` (a ResNet's 7 x 7
/// and 14 x 14 maps under AVX-512), which in the filters-by-pixels GEMM
/// would leave a partial vector of columns on one thread, and its filters
/// are; and its depth is at least kPixelRowsDepth
/// times its pixels, so that the partial vectors' multiply-adds (filters x
/// depth) outweigh the transpose of the product back to NCHW (filters x
/// pixels). Measured on 2 cores: a ResNet's 3 x 3 convolutions at 7 x 7
/// and 14 x 14 took 0.81-0.89x the time, MobileNetV2's pointwise ones at
/// 14 x 14 (depth 64 and 384 for 196 pixels) 1.2x. A convolution that is
/// one image of a symbolic batch or one group of a grouped one (its result
/// a slice, not a fill) keeps the filters as rows.
bool prefersPixelRows(mlir::linalg::Conv2DNchwFchwOp conv, int64_t lanes);

/// `conv` (its result a fill) as the GEMM [N, P, F] of `lhs`, its patches
/// or its image, read through `lhsMap` by the loops [n, p, k, f] (as [N, K,
/// P] or [N, P, K]), and the filters transposed to [K, F]; its channel
/// epilogue (see channelEpilogue) applied to the product, then transposed
/// back to [N, F, OH, OW], which replaces `conv`. Returns the GEMM.
mlir::linalg::GenericOp pixelRowsGemm(mlir::RewriterBase &rewriter,
                                      mlir::Location loc,
                                      mlir::linalg::Conv2DNchwFchwOp conv,
                                      mlir::Value lhs, mlir::AffineMap lhsMap);

/// A float convolution over an image of dynamic height or width that
/// pixelPanelsConvolution does not take (pointwise at stride 1, or of more
/// than kMaxTapCopies taps) as pixelRowsGemm: the images [N, C, P] read
/// transposed (pointwise: no copy), or im2col's patches [N, P, C*KH*KW]
/// written pixel-major by one generic over [n, oh, ow, c, kh, kw]. The
/// GEMM, or null for another convolution (PixelRows.cpp).
mlir::linalg::GenericOp
dynamicConvolutionToGemm(mlir::RewriterBase &rewriter,
                         mlir::linalg::Conv2DNchwFchwOp conv);

// Parts that Convolutions.cpp, PixelPanels.cpp and PixelRows.cpp share (defined
// in Convolutions.cpp, where each is described).

/// The most taps whose im2col is one copy each (7 x 7).
constexpr int64_t kMaxTapCopies = 49;

/// A GEMM's contraction of `lhs` and `rhs` through `maps` (the result's
/// last) into `init` with multiply-adds; the loops the result does not
/// read are reduced.
mlir::linalg::GenericOp gemmGeneric(mlir::RewriterBase &rewriter,
                                    mlir::Location loc, mlir::Value lhs,
                                    mlir::Value rhs, mlir::Value init,
                                    mlir::ArrayRef<mlir::AffineMap> maps);

/// A copy into `init` of `input` read through `read`.
mlir::Value copyThrough(mlir::RewriterBase &rewriter, mlir::Location loc,
                        mlir::Value input, mlir::AffineMap read,
                        mlir::Value init);

/// Im2col's patches of `conv`'s input as [N, C, KH, KW, rows, OW], one
/// copy per tap (`rows` null: OH).
mlir::Value copyTaps(mlir::RewriterBase &rewriter, mlir::Location loc,
                     mlir::linalg::Conv2DNchwFchwOp conv,
                     mlir::ArrayRef<mlir::OpFoldResult> sizes,
                     mlir::OpFoldResult rows = {});

/// The elementwise op that alone reads `conv`'s result per channel, which
/// can run on a GEMM's product instead; null otherwise.
mlir::linalg::GenericOp channelEpilogue(mlir::linalg::Conv2DNchwFchwOp conv);

/// `epilogue` over the loops of the GEMM's `product`, its per-channel
/// inputs read through their maps composed with `toProduct`.
mlir::Value epilogueOn(mlir::RewriterBase &rewriter, mlir::Location loc,
                       mlir::linalg::GenericOp epilogue, mlir::Value convResult,
                       mlir::Value product, mlir::Value init,
                       mlir::AffineMap toProduct);

/// Whether `conv` is of floats over an image of dynamic height or width,
/// its filter and channels static and its result a fill.
bool isDynamicImageConvolution(mlir::linalg::Conv2DNchwFchwOp conv);

/// Filters up to which a static convolution at stride 1 takes the pixel
/// panels' shifted taps rather than im2col (see isFewFilterConvolution):
/// with more (ResNet's 64 and up) im2col's copy is spread over enough
/// multiply-adds, and ResNet-18 ran 2.7x slower on the shifted taps.
constexpr int64_t kFewFilters = 32;
/// The fewest channels such a convolution has (each tap's GEMM reduces
/// over them).
constexpr int64_t kFewFilterChannels = 16;

/// Whether `conv` is a static float convolution at stride 1 with at most
/// kFewFilters filters and at least kFewFilterChannels channels, its
/// result a fill.
bool isFewFilterConvolution(mlir::linalg::Conv2DNchwFchwOp conv);

/// `conv`'s strides and dilations (height, width) as integers.
llvm::SmallVector<int64_t> stridesOf(mlir::linalg::Conv2DNchwFchwOp conv);
llvm::SmallVector<int64_t> dilationsOf(mlir::linalg::Conv2DNchwFchwOp conv);

/// Replaces `conv` by `result`, which holds `epilogue` when there is one.
void replaceWithEpilogue(mlir::RewriterBase &rewriter,
                         mlir::linalg::Conv2DNchwFchwOp conv,
                         mlir::linalg::GenericOp epilogue, mlir::Value result);

/// When `op`'s accumulator is the collapse of a linalg.fill used nowhere
/// else, fills the collapsed shape instead, so that each tile can start
/// from the fill value (defined in TileContractions.cpp).
void fillAfterCollapse(mlir::RewriterBase &rewriter,
                       mlir::linalg::GenericOp op);

} // namespace tessera::cpu

#endif // TESSERA_LIB_TARGET_CPU_CONVOLUTIONS_H
