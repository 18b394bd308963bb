//===- PixelRows.cpp - convolutions as GEMMs whose rows are pixels -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A convolution as a GEMM whose rows are the output pixels and whose
// columns are the filters ([N, P, F] = patches times the filters
// transposed, packed at compile time when they are a constant), transposed
// back to NCHW
// afterwards. The register tiles take any number of rows (dynamic ones
// too, a partial tile of rows is still whole vectors of filters), so this
// serves images of symbolic size and images whose pixels would leave a
// partial vector of columns in the filters-by-pixels GEMM (a ResNet's 7 x
// 7 and 14 x 14 maps: 49 and 196 pixels).
//
//===----------------------------------------------------------------------===//
#include "Convolutions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using tessera::cpu::channelEpilogue;
using tessera::cpu::copyThrough;
using tessera::cpu::dilationsOf;
using tessera::cpu::epilogueOn;
using tessera::cpu::gemmGeneric;
using tessera::cpu::isDynamicImageConvolution;
using tessera::cpu::replaceWithEpilogue;
using tessera::cpu::stridesOf;

namespace {

/// `epilogue` (see channelEpilogue) over the loops [n, p, f] of the GEMM's
/// `product` [N, P, F] instead of [n, f, oh, ow], into `init` (made before
/// the GEMM, so that the tiles can take the epilogue in): the product read
/// in place of the convolution's result, per-channel inputs by f.
Value epilogueOnProduct(RewriterBase &rewriter, Location loc,
                        linalg::GenericOp epilogue, Value convResult,
                        Value product, Value init) {
  MLIRContext *ctx = rewriter.getContext();
  // (n, f, oh, ow) -> (n, p, f): n -> d0, f -> d2; oh, ow unused.
  AffineMap toProduct = AffineMap::get(
      3, 0,
      {getAffineDimExpr(0, ctx), getAffineDimExpr(2, ctx),
       getAffineConstantExpr(0, ctx), getAffineConstantExpr(0, ctx)},
      ctx);
  return epilogueOn(rewriter, loc, epilogue, convResult, product, init,
                    toProduct);
}

} // namespace

linalg::GenericOp tessera::cpu::pixelRowsGemm(RewriterBase &rewriter,
                                              Location loc,
                                              linalg::Conv2DNchwFchwOp conv,
                                              Value lhs, AffineMap lhsMap) {
  Value filter = conv.getInputs()[1], init = conv.getOutputs()[0];
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  Type element = initType.getElementType();
  MLIRContext *ctx = rewriter.getContext();
  int64_t filters = filterType.getDimSize(0);
  int64_t depth = filterType.getNumElements() / filters;
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, init, 0);
  // The pixels are the dim of `lhs` that the GEMM's loop p (d1) reads.
  AffineExpr p = getAffineDimExpr(1, ctx);
  OpFoldResult pixels = tensor::getMixedSize(rewriter, loc, lhs,
                                             lhsMap.getResult(1) == p ? 1 : 2);
  Value weights = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value weightsT =
      linalg::TransposeOp::create(
          rewriter, loc, weights,
          tensor::EmptyOp::create(rewriter, loc,
                                  ArrayRef<int64_t>{depth, filters}, element),
          ArrayRef<int64_t>{1, 0})
          ->getResult(0);
  SmallVector<OpFoldResult> productSizes = {batch, pixels,
                                            rewriter.getIndexAttr(filters)};
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Value productInit =
      linalg::FillOp::create(
          rewriter, loc, fill.getInputs()[0],
          tensor::EmptyOp::create(rewriter, loc,
                                  ArrayRef<OpFoldResult>(productSizes), element)
              .getResult())
          .getResult(0);
  AffineExpr n, k, f;
  bindDims(ctx, n, p, k, f);
  SmallVector<AffineMap> maps = {lhsMap, AffineMap::get(4, 0, {k, f}, ctx),
                                 AffineMap::get(4, 0, {n, p, f}, ctx)};
  linalg::GenericOp epilogue = channelEpilogue(conv);
  Value epilogueInit =
      epilogue ? tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<OpFoldResult>(productSizes),
                                         element)
                     .getResult()
               : Value();
  linalg::GenericOp gemm =
      gemmGeneric(rewriter, loc, lhs, weightsT, productInit, maps);
  // Its elementwise consumer (bias, batch norm, activation) runs on the
  // product, before the transpose: there it is an epilogue the register
  // tiles apply while the tile is in registers (row vectors over the
  // filters), not one more pass over the NCHW result.
  Value product = gemm.getResult(0);
  if (epilogue)
    product = epilogueOnProduct(rewriter, loc, epilogue, conv->getResult(0),
                                product, epilogueInit);
  Value nchw = linalg::TransposeOp::create(
                   rewriter, loc, product,
                   tensor::EmptyOp::create(
                       rewriter, loc,
                       ArrayRef<OpFoldResult>{
                           batch, rewriter.getIndexAttr(filters), pixels},
                       element),
                   ArrayRef<int64_t>{0, 2, 1})
                   ->getResult(0);
  // Back to [N, F, OH, OW]: an expansion when the image's size is static,
  // else a reshape (memref cannot expand one dim into two dynamic ones).
  Value result;
  if (!initType.isDynamicDim(2) && !initType.isDynamicDim(3)) {
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, initType, nchw,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    SmallVector<Value> dims;
    for (OpFoldResult size :
         {batch, OpFoldResult(rewriter.getIndexAttr(filters)),
          tensor::getMixedSize(rewriter, loc, init, 2),
          tensor::getMixedSize(rewriter, loc, init, 3)})
      dims.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, size));
    Value shape = tensor::FromElementsOp::create(rewriter, loc, dims);
    result = tensor::ReshapeOp::create(rewriter, loc, initType, nchw, shape);
  }
  replaceWithEpilogue(rewriter, conv, epilogue, result);
  return gemm;
}

bool tessera::cpu::prefersPixelRows(linalg::Conv2DNchwFchwOp conv,
                                    int64_t lanes) {
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto initType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  Type element = initType.getElementType();
  if (!initType.hasStaticShape() || !element.isF32() ||
      getElementTypeOrSelf(conv.getInputs()[0].getType()) != element ||
      filterType.getElementType() != element ||
      !conv.getOutputs()[0].getDefiningOp<linalg::FillOp>())
    return false;
  int64_t pixels = initType.getDimSize(2) * initType.getDimSize(3);
  int64_t depth = filterType.getNumElements() / filterType.getDimSize(0);
  return pixels % lanes != 0 && filterType.getDimSize(0) % lanes == 0 &&
         depth >= kPixelRowsDepth * pixels;
}

linalg::GenericOp
tessera::cpu::dynamicConvolutionToGemm(RewriterBase &rewriter,
                                       linalg::Conv2DNchwFchwOp conv) {
  if (!isDynamicImageConvolution(conv))
    return {};
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto filterType = cast<RankedTensorType>(filter.getType());
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  SmallVector<int64_t> strides = stridesOf(conv), dilations = dilationsOf(conv);
  int64_t channels = filterType.getDimSize(1);
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  bool pointwise = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1;
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, p, k, f;
  bindDims(ctx, n, p, k, f);
  if (pointwise) {
    Value images = tensor::CollapseShapeOp::create(
        rewriter, loc, input,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    return pixelRowsGemm(rewriter, loc, conv, images,
                         AffineMap::get(4, 0, {n, k, p}, ctx));
  }
  // patches[n, oh, ow, c, i, j] = input[n, c, oh * sh + i * dh,
  // ow * sw + j * dw].
  Value empty = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{tensor::getMixedSize(rewriter, loc, init, 0),
                             tensor::getMixedSize(rewriter, loc, init, 2),
                             tensor::getMixedSize(rewriter, loc, init, 3),
                             rewriter.getIndexAttr(channels),
                             rewriter.getIndexAttr(kh),
                             rewriter.getIndexAttr(kw)},
      element);
  AffineExpr d[6];
  for (int i = 0; i < 6; ++i)
    d[i] = getAffineDimExpr(i, ctx);
  AffineMap read =
      AffineMap::get(6, 0,
                     {d[0], d[3], d[1] * strides[0] + d[4] * dilations[0],
                      d[2] * strides[1] + d[5] * dilations[1]},
                     ctx);
  Value patches = copyThrough(rewriter, loc, input, read, empty);
  Value lhs = tensor::CollapseShapeOp::create(
      rewriter, loc, patches,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  return pixelRowsGemm(rewriter, loc, conv, lhs,
                       AffineMap::get(4, 0, {n, p, k}, ctx));
}
