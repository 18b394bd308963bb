//===- PixelPanels.cpp - convolutions over images of symbolic size ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A convolution over an image of symbolic height or width (or a static one
// at stride 1 with few filters) as the register tiles' GEMM with the
// filters as its rows and the output pixels as its columns, padded to
// whole panels so that the columns stay static: at stride 1 with no im2col
// (each tap a shift of the flat input), at other strides from per-tap
// copies.
//
//===----------------------------------------------------------------------===//
#include "Convolutions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using tessera::cpu::channelEpilogue;
using tessera::cpu::copyTaps;
using tessera::cpu::epilogueOn;
using tessera::cpu::gemmGeneric;
using tessera::cpu::isDynamicImageConvolution;
using tessera::cpu::isFewFilterConvolution;
using tessera::cpu::kMaxTapCopies;
using tessera::cpu::replaceWithEpilogue;

namespace {

/// A GEMM over the loops [n, q, f, k, c] (batch n and q, rows f, k,
/// columns c), `lhs` [F, K] read (f, k), `rhs` [N, K, Q, W] read (n, k,
/// q, c), accumulating into `init` [N, F, Q, W] with multiply-adds.
linalg::GenericOp panelsGemm(RewriterBase &rewriter, Location loc, Value lhs,
                             Value rhs, Value init) {
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, q, f, k, c;
  bindDims(ctx, n, q, f, k, c);
  SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {f, k}, ctx),
                                 AffineMap::get(5, 0, {n, k, q, c}, ctx),
                                 AffineMap::get(5, 0, {n, f, q, c}, ctx)};
  return gemmGeneric(rewriter, loc, lhs, rhs, init, maps);
}

/// Whether the per-channel inputs of `epilogue` (see channelEpilogue) read
/// no batch index, so that it can run on one image's panel.
bool readsNoBatch(linalg::GenericOp epilogue, Value convResult) {
  return llvm::all_of(epilogue.getDpsInputOperands(), [&](OpOperand *input) {
    return input->get() == convResult ||
           !epilogue.getMatchingIndexingMap(input).isFunctionOfDim(0);
  });
}

/// For pixelPanelsConvolution, a convolution at stride 1: the product
/// [N, F, Q, panel] over the pixels of the input's grid (OH rows of the
/// input's width Win), where the tap (i, j) of pixel p = oh * Win + ow
/// reads the flat input at p + i * dh * Win + j * dw. No im2col: each
/// panel of pixels (in parallel) is KH * KW GEMMs, one per tap, of its
/// filters [F, C] and the flat input's slice [C, panel] from the panel's
/// start plus the tap's shift, accumulated in turn, the epilogue (when it
/// reads no batch index) after the last. The pixels of each row past OW
/// wrap into the next row and are dropped; the input gets rows of padding
/// below (its pad made taller, or a pad of its own) so that each slice
/// lies inside its channel; each panel's accumulator starts at
/// `fillValue`. The product, with `epilogue` applied when it was (else
/// null in `epilogue`).
Value shiftedTapsProduct(RewriterBase &rewriter, Location loc,
                         linalg::Conv2DNchwFchwOp conv, int64_t panel,
                         OpFoldResult batch, Value grid, Value panels,
                         Value fillValue, linalg::GenericOp &epilogue) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  Type element = filterType.getElementType();
  int64_t filters = filterType.getDimSize(0),
          channels = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  SmallVector<int64_t> dilations = tessera::cpu::dilationsOf(conv);
  MLIRContext *ctx = rewriter.getContext();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  // The last panel reads up to panel - 1 pixels past the grid, and the
  // last tap (KW - 1) * dw past that: rows * Win >= that much.
  Value rows = arith::CeilDivUIOp::create(
      rewriter, loc, constant((kw - 1) * dilations[1] + panel - 1),
      arith::MaxUIOp::create(rewriter, loc, grid, constant(1)));
  Value source = input;
  SmallVector<OpFoldResult> low(4, zero), high(4, zero);
  Value padValue = arith::ConstantOp::create(rewriter, loc, element,
                                             rewriter.getZeroAttr(element));
  // The input's pad, when it pads with a constant and nothing else reads
  // it, grows (its value made anew here: it may be defined in the pad's
  // region, which goes).
  auto pad = input.getDefiningOp<tensor::PadOp>();
  Attribute padding;
  if (pad && pad->hasOneUse() && pad.getConstantPaddingValue() &&
      matchPattern(pad.getConstantPaddingValue(), m_Constant(&padding))) {
    source = pad.getSource();
    low = pad.getMixedLowPad();
    high = pad.getMixedHighPad();
    padValue =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(padding));
  }
  high[2] = arith::AddIOp::create(
                rewriter, loc,
                getValueOrCreateConstantIndexOp(rewriter, loc, high[2]), rows)
                .getResult();
  SmallVector<int64_t> tallShape(inputType.getShape());
  tallShape[2] = ShapedType::kDynamic;
  Value tall = tensor::PadOp::create(rewriter, loc,
                                     RankedTensorType::get(tallShape, element),
                                     source, low, high, padValue);
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, tall, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  // The filters as [KH * KW * F, C]: tap t's are rows [t * F, (t + 1) * F).
  Value byTap = linalg::TransposeOp::create(
                    rewriter, loc, filter,
                    tensor::EmptyOp::create(
                        rewriter, loc,
                        ArrayRef<int64_t>{kh, kw, filters, channels}, element),
                    ArrayRef<int64_t>{2, 3, 0, 1})
                    ->getResult(0);
  Value tapRows = tensor::CollapseShapeOp::create(
      rewriter, loc, byTap, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
  SmallVector<Value> weights, shifts;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      weights.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, tapRows,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr((i * kw + j) * filters),
                                 zero},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(filters),
                                 rewriter.getIndexAttr(channels)},
          ArrayRef<OpFoldResult>{one, one}));
      shifts.push_back(arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, constant(i * dilations[0]),
                                grid),
          constant(j * dilations[1])));
    }
  Value product = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(filters), panels,
                             rewriter.getIndexAttr(panel)},
      element);
  if (epilogue && !readsNoBatch(epilogue, conv->getResult(0)))
    epilogue = {};
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{batch, panels}, ArrayRef<OpFoldResult>{one, one},
      ValueRange{product}, std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getTerminator());
  Value n = forall.getInductionVars()[0], q = forall.getInductionVars()[1];
  Value start = arith::MulIOp::create(rewriter, loc, q, constant(panel));
  auto tileType = RankedTensorType::get({1, filters, 1, panel}, element);
  Value acc =
      linalg::FillOp::create(
          rewriter, loc, fillValue,
          tensor::EmptyOp::create(rewriter, loc, tileType.getShape(), element)
              .getResult())
          .getResult(0);
  auto rhsType = RankedTensorType::get({1, channels, panel}, element);
  for (auto [lhs, shift] : llvm::zip(weights, shifts)) {
    Value rhs = tensor::ExtractSliceOp::create(
        rewriter, loc, rhsType, flat,
        ArrayRef<OpFoldResult>{
            n, zero,
            arith::AddIOp::create(rewriter, loc, start, shift).getResult()},
        ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(channels),
                               rewriter.getIndexAttr(panel)},
        ArrayRef<OpFoldResult>{one, one, one});
    Value columns = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({1, channels, 1, panel}, element),
        rhs, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    acc = panelsGemm(rewriter, loc, lhs, columns, acc).getResult(0);
  }
  if (epilogue) {
    AffineExpr d0, d1;
    bindDims(ctx, d0, d1);
    AffineMap toProduct = AffineMap::get(
        4, 0,
        {d0, d1, getAffineConstantExpr(0, ctx), getAffineConstantExpr(0, ctx)},
        ctx);
    acc = epilogueOn(
        rewriter, loc, epilogue, conv->getResult(0), acc,
        tensor::EmptyOp::create(rewriter, loc, tileType.getShape(), element),
        toProduct);
  }
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, acc, forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{n, zero, q, zero},
      ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(filters), one,
                             rewriter.getIndexAttr(panel)},
      SmallVector<OpFoldResult>(4, one));
  return forall.getResult(0);
}

/// For pixelPanelsConvolution: im2col's patches of a convolution at any
/// stride as [N, C*KH*KW, L] (L = `padded`, whole panels), the taps'
/// copies of the input's strided slices (copyTaps) into OH + ceil((panel -
/// 1) / OW) rows of OW pixels, the extra rows zero.
Value rowTaps(RewriterBase &rewriter, Location loc,
              linalg::Conv2DNchwFchwOp conv, OpFoldResult batch,
              OpFoldResult outH, OpFoldResult outW, int64_t panel,
              Value padded) {
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  Type element = filterType.getElementType();
  int64_t channels = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  Value oh = getValueOrCreateConstantIndexOp(rewriter, loc, outH);
  Value ow = getValueOrCreateConstantIndexOp(rewriter, loc, outW);
  // extra * OW >= panel - 1 >= padded - OH * OW (an OW of 0 read as 1: no
  // pixels, no panels).
  Value extra = arith::CeilDivUIOp::create(
      rewriter, loc, constant(panel - 1),
      arith::MaxUIOp::create(rewriter, loc, ow, constant(1)));
  Value rows = arith::AddIOp::create(rewriter, loc, oh, extra);
  Value patches =
      copyTaps(rewriter, loc, conv,
               {batch, rewriter.getIndexAttr(channels), outH, outW}, rows);
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> tailOffsets = {zero, zero, zero, zero, oh, zero};
  SmallVector<OpFoldResult> tailSizes = {batch,
                                         rewriter.getIndexAttr(channels),
                                         rewriter.getIndexAttr(kh),
                                         rewriter.getIndexAttr(kw),
                                         extra,
                                         outW};
  SmallVector<OpFoldResult> units(6, one);
  Value tail = tensor::ExtractSliceOp::create(rewriter, loc, patches,
                                              tailOffsets, tailSizes, units);
  Value zeroValue = arith::ConstantOp::create(rewriter, loc, element,
                                              rewriter.getZeroAttr(element));
  Value zeros =
      linalg::FillOp::create(rewriter, loc, zeroValue, tail).getResult(0);
  patches = tensor::InsertSliceOp::create(rewriter, loc, zeros, patches,
                                          tailOffsets, tailSizes, units);
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, patches,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  return tensor::ExtractSliceOp::create(
      rewriter, loc, flat, ArrayRef<OpFoldResult>{zero, zero, zero},
      ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(channels * kh * kw),
                             padded},
      ArrayRef<OpFoldResult>{one, one, one});
}

} // namespace

/// A float convolution whose height or width is dynamic, or a static one
/// at stride 1 with few filters (isFewFilterConvolution: no im2col copy
/// that so few multiply-adds per value would not pay for), of im2col taps
/// (not pointwise, at most kMaxTapCopies taps), as the static form has it:
/// the filters [F, C*KH*KW] times the patches, the output pixels the
/// columns, so that the product is NCHW and the filters are the register
/// tiles' rows (a few filters, such as 24, fill 8 x 48 tiles that a
/// product with the filters as its columns leaves half empty). The pixels
/// are those of a grid of OH rows, padded to Q whole panels of `panel`
/// columns, so that the GEMM's columns are static (Q is a dynamic batch
/// dim of the GEMM over the loops [n, q, f, k, c]): at stride 1 the
/// grid's rows are the input's width, and each tap is a shift of the flat
/// input (shiftedTapsProduct: no im2col); at other strides OW, with
/// im2col's patches [N, C*KH*KW, Q * panel] (rowTaps) read as [N,
/// C*KH*KW, Q, panel]. Its elementwise consumer (channelEpilogue) runs on
/// the product [N, F, Q, panel], in the tiles' epilogue (at stride 1 only
/// when it reads no batch index; else on the result); the grid's pixels
/// are then copied out, and its first OW columns. False when `conv` is not
/// such a convolution.
bool tessera::cpu::pixelPanelsConvolution(RewriterBase &rewriter,
                                          linalg::Conv2DNchwFchwOp conv,
                                          int64_t panel) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  Type element = initType.getElementType();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!isDynamicImageConvolution(conv) && !isFewFilterConvolution(conv))
    return false;
  int64_t filters = filterType.getDimSize(0),
          channels = filterType.getDimSize(1);
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  bool unitStrides =
      llvm::all_of(conv.getStrides(), [](const APInt &s) { return s.isOne(); });
  if ((kh == 1 && kw == 1 && unitStrides) || kh * kw > kMaxTapCopies)
    return false;
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, init, 0);
  OpFoldResult outH = tensor::getMixedSize(rewriter, loc, init, 2);
  OpFoldResult outW = tensor::getMixedSize(rewriter, loc, init, 3);
  auto value = [&](OpFoldResult size) {
    return getValueOrCreateConstantIndexOp(rewriter, loc, size);
  };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  Value oh = value(outH), ow = value(outW);
  // At stride 1 the grid's rows are the input's width: its pad's source's
  // plus the pad's (not a dim of the pad itself, so that the pad has no
  // other user and can grow).
  Value grid = ow;
  if (unitStrides) {
    auto pad = input.getDefiningOp<tensor::PadOp>();
    grid = pad ? affine::makeComposedAffineApply(
                     rewriter, loc,
                     rewriter.getAffineSymbolExpr(0) +
                         rewriter.getAffineSymbolExpr(1) +
                         rewriter.getAffineSymbolExpr(2),
                     {tensor::getMixedSize(rewriter, loc, pad.getSource(), 3),
                      pad.getMixedLowPad()[3], pad.getMixedHighPad()[3]})
                     .getResult()
               : tensor::DimOp::create(rewriter, loc, input, 3).getResult();
  }
  Value pixels = arith::MulIOp::create(rewriter, loc, oh, grid);
  Value panels =
      arith::CeilDivUIOp::create(rewriter, loc, pixels, constant(panel));
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  linalg::GenericOp epilogue = channelEpilogue(conv);
  Value product;
  if (unitStrides) {
    product = shiftedTapsProduct(rewriter, loc, conv, panel, batch, grid,
                                 panels, fill.getInputs()[0], epilogue);
  } else {
    Value padded =
        arith::MulIOp::create(rewriter, loc, panels, constant(panel));
    Value patches =
        rowTaps(rewriter, loc, conv, batch, outH, outW, panel, padded);
    int64_t depth = channels * kh * kw;
    Value columns = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get(
            {initType.getDimSize(0), depth, ShapedType::kDynamic, panel},
            element),
        patches, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}},
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(depth), panels,
                               rewriter.getIndexAttr(panel)});
    Value weights = tensor::CollapseShapeOp::create(
        rewriter, loc, filter,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    SmallVector<OpFoldResult> productSizes = {
        batch, rewriter.getIndexAttr(filters), panels,
        rewriter.getIndexAttr(panel)};
    Value productInit =
        linalg::FillOp::create(
            rewriter, loc, fill.getInputs()[0],
            tensor::EmptyOp::create(rewriter, loc, productSizes, element)
                .getResult())
            .getResult(0);
    Value epilogueInit =
        epilogue ? tensor::EmptyOp::create(rewriter, loc, productSizes, element)
                       .getResult()
                 : Value();
    product =
        panelsGemm(rewriter, loc, weights, columns, productInit).getResult(0);
    if (epilogue) {
      // (n, f, q, c) -> (n, f, oh, ow): per-channel inputs read n and f.
      AffineExpr d0, d1;
      bindDims(ctx, d0, d1);
      AffineMap toProduct =
          AffineMap::get(4, 0,
                         {d0, d1, getAffineConstantExpr(0, ctx),
                          getAffineConstantExpr(0, ctx)},
                         ctx);
      product = epilogueOn(rewriter, loc, epilogue, conv->getResult(0), product,
                           epilogueInit, toProduct);
    }
  }
  // The grid's pixels of each filter, copied out contiguous, viewed as
  // [N, F, OH, grid] (a reshape: memref cannot expand one dim into two
  // dynamic ones), then its first OW columns.
  auto copyOf = [&](Value source, ArrayRef<OpFoldResult> sizes) -> Value {
    return linalg::CopyOp::create(
               rewriter, loc, source,
               tensor::EmptyOp::create(rewriter, loc, sizes, element)
                   .getResult())
        .getResult(0);
  };
  Value productFlat = tensor::CollapseShapeOp::create(
      rewriter, loc, product,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  SmallVector<OpFoldResult> gridSizes = {batch, rewriter.getIndexAttr(filters),
                                         pixels};
  Value kept = copyOf(tensor::ExtractSliceOp::create(
                          rewriter, loc, productFlat,
                          ArrayRef<OpFoldResult>{zero, zero, zero}, gridSizes,
                          ArrayRef<OpFoldResult>{one, one, one}),
                      gridSizes);
  RankedTensorType gridType = initType;
  if (unitStrides)
    gridType =
        RankedTensorType::get({initType.getDimSize(0), filters,
                               initType.getDimSize(2), ShapedType::kDynamic},
                              element);
  Value shape = tensor::FromElementsOp::create(
      rewriter, loc, ValueRange{value(batch), constant(filters), oh, grid});
  Value result =
      tensor::ReshapeOp::create(rewriter, loc, gridType, kept, shape);
  if (unitStrides) {
    SmallVector<OpFoldResult> outSizes = {batch, rewriter.getIndexAttr(filters),
                                          outH, outW};
    result = copyOf(tensor::ExtractSliceOp::create(
                        rewriter, loc, initType, result,
                        ArrayRef<OpFoldResult>{zero, zero, zero, zero},
                        outSizes, SmallVector<OpFoldResult>(4, one)),
                    outSizes);
  }
  replaceWithEpilogue(rewriter, conv, epilogue, result);
  return true;
}
