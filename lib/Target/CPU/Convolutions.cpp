//===- Convolutions.cpp - convolutions as GEMMs for the register tiles ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Convolutions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using tessera::cpu::fillAfterCollapse;

namespace {

/// A static, ungrouped NCHW convolution as im2col and a GEMM ([N,
/// C*KH*KW, OH*OW] patches, then filters [F, C*KH*KW] times patches per
/// image: staticConvolutionToGemm for floats, linalg's rewriteInIm2Col for
/// others), the GEMM's loops put in the order [batch, rows, k, columns]
/// that the register tiles take: rows are the filters, columns the output
/// pixels, so the result is NCHW as it is.
/// Why `conv` cannot become im2col and a GEMM, or nothing when it can
/// (statically, or per image when its batch alone is dynamic).
std::optional<std::string> whyDirect(linalg::Conv2DNchwFchwOp conv) {
  if (!conv.hasPureTensorSemantics())
    return std::string("it works on buffers");
  // linalg's im2col rewrite takes undilated NCHW convolutions only.
  if (!llvm::all_of(conv.getDilations(),
                    [](const APInt &d) { return d.isOne(); }))
    return std::string("it is dilated");
  auto staticButBatch = [](Type type) {
    auto shaped = cast<ShapedType>(type);
    return llvm::none_of(shaped.getShape().drop_front(), ShapedType::isDynamic);
  };
  if (!staticButBatch(conv.getInputs()[0].getType()) ||
      !cast<ShapedType>(conv.getInputs()[1].getType()).hasStaticShape() ||
      !staticButBatch(conv.getOutputs()[0].getType()))
    return std::string("dims other than its batch are dynamic");
  return std::nullopt;
}

bool convolutionToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv);

/// A GEMM's contraction over loops [batch..., rows, k, columns] (the order
/// the register tiles take), reading `lhs` and `rhs` through `maps` (the
/// result's last), accumulating into `init` with multiply-adds.
linalg::GenericOp gemmGeneric(RewriterBase &rewriter, Location loc, Value lhs,
                              Value rhs, Value init,
                              ArrayRef<AffineMap> maps) {
  // The loops the result does not read are reduced.
  AffineMap result = maps.back();
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < result.getNumDims(); ++d)
    iterators.push_back(result.isFunctionOfDim(d)
                            ? utils::IteratorType::parallel
                            : utils::IteratorType::reduction);
  return linalg::GenericOp::create(
      rewriter, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init},
      maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(b, l, args[0], args[1]);
        linalg::YieldOp::create(
            b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
      });
}

/// Whether `conv`'s input, filter and result are static, of one float type.
bool isStaticFloat(linalg::Conv2DNchwFchwOp conv) {
  Type element = getElementTypeOrSelf(conv.getOutputs()[0].getType());
  return isa<FloatType>(element) &&
         llvm::all_of(conv->getOperandTypes(), [&](Type type) {
           auto shaped = cast<ShapedType>(type);
           return shaped.getElementType() == element && shaped.hasStaticShape();
         });
}

/// A copy into `init` (im2col's 6-D patches) of `input` read through
/// `read`, one generic over the patches.
Value copyThrough(RewriterBase &rewriter, Location loc, Value input,
                  AffineMap read, Value init) {
  unsigned rank = cast<ShapedType>(init.getType()).getRank();
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{input},
             ValueRange{init},
             ArrayRef<AffineMap>{read, AffineMap::getMultiDimIdentityMap(
                                           rank, rewriter.getContext())},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, args[0]);
             })
      .getResult(0);
}

/// The most taps whose im2col is one copy each (7 x 7).
constexpr int64_t kMaxTapCopies = 49;

/// Im2col's patches of `conv`'s input as [N, C, KH, KW, OH, OW] (`sizes`
/// holds N, C, OH, OW, static or not): patches[n, c, i, j, oh, ow] =
/// input[n, c, oh * sh + i * dh, ow * sw + j * dw], one copy per tap (i, j)
/// of the input's strided slice [N, C, OH, OW], which the loop vectorizer
/// moves a row at a time (no division or remainder per element). Each
/// copy writes its slot [N, C, 1, 1, OH, OW] of the patches as it is: a
/// slot rank-reduced to 4-D is ambiguous where N is 1 and the image's size
/// symbolic (its strides all dynamic), and the buffer of such a slice kept
/// the wrong unit dims (the channels a tap wrote overlapped, and the rest
/// of the patches was never written). With `rows`, the patches hold that
/// many rows ([N, C, KH, KW, rows, OW], rows >= OH) and each tap writes
/// its first OH.
Value copyTaps(RewriterBase &rewriter, Location loc,
               linalg::Conv2DNchwFchwOp conv, ArrayRef<OpFoldResult> sizes,
               OpFoldResult rows = {}) {
  Value input = conv.getInputs()[0];
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  Type element = filterType.getElementType();
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  auto ints = [](DenseIntElementsAttr attr) {
    return llvm::to_vector(llvm::map_range(
        attr, [](const APInt &v) { return v.getSExtValue(); }));
  };
  SmallVector<int64_t> strides = ints(conv.getStrides()),
                       dilations = ints(conv.getDilations());
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  auto index = [&](int64_t v) -> OpFoldResult {
    return rewriter.getIndexAttr(v);
  };
  Value patches = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{sizes[0], sizes[1], index(kh), index(kw),
                             rows ? rows : sizes[2], sizes[3]},
      element);
  SmallVector<int64_t> tapShape;
  for (OpFoldResult size : sizes) {
    std::optional<int64_t> known = getConstantIntValue(size);
    tapShape.push_back(known ? *known : ShapedType::kDynamic);
  }
  auto tapType = RankedTensorType::get(tapShape, element);
  auto slotType = RankedTensorType::get(
      {tapShape[0], tapShape[1], 1, 1, tapShape[2], tapShape[3]}, element);
  SmallVector<OpFoldResult> slotSizes = {sizes[0], sizes[1], one,
                                         one,      sizes[2], sizes[3]};
  SmallVector<OpFoldResult> unit(6, one);
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d[6];
  for (int k = 0; k < 6; ++k)
    d[k] = getAffineDimExpr(k, ctx);
  AffineMap read = AffineMap::get(6, 0, {d[0], d[1], d[4], d[5]}, ctx);
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      Value tap = tensor::ExtractSliceOp::create(
          rewriter, loc, tapType, input,
          ArrayRef<OpFoldResult>{zero, zero, index(i * dilations[0]),
                                 index(j * dilations[1])},
          sizes,
          ArrayRef<OpFoldResult>{one, one, index(strides[0]),
                                 index(strides[1])});
      SmallVector<OpFoldResult> at = {zero, zero, index(i),
                                      index(j), zero, zero};
      Value slot = tensor::ExtractSliceOp::create(rewriter, loc, slotType,
                                                  patches, at, slotSizes, unit);
      Value copied = copyThrough(rewriter, loc, tap, read, slot);
      patches = tensor::InsertSliceOp::create(rewriter, loc, copied, patches,
                                              at, slotSizes, unit);
    }
  return patches;
}

/// `conv` (static) as the filters [F, C*KH*KW] times `columns`
/// [N, C*KH*KW, OH*OW] per image, loops [batch, filters, k, pixels] as the
/// register tiles take them, so that the result is NCHW as it is; the GEMM.
linalg::GenericOp filtersTimesColumns(RewriterBase &rewriter, Location loc,
                                      linalg::Conv2DNchwFchwOp conv,
                                      Value columns) {
  Value filter = conv.getInputs()[1], init = conv.getOutputs()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<ReassociationIndices> pixels = {{0}, {1}, {2, 3}};
  Value weights = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value out = tensor::CollapseShapeOp::create(rewriter, loc, init, pixels);
  AffineExpr n, f, k, p;
  bindDims(ctx, n, f, k, p);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {f, k}, ctx),
                                 AffineMap::get(4, 0, {n, k, p}, ctx),
                                 AffineMap::get(4, 0, {n, f, p}, ctx)};
  linalg::GenericOp gemm =
      gemmGeneric(rewriter, loc, weights, columns, out, maps);
  Value result = tensor::ExpandShapeOp::create(rewriter, loc, initType,
                                               gemm.getResult(0), pixels);
  rewriter.replaceOp(conv, result);
  fillAfterCollapse(rewriter, gemm);
  return gemm;
}

/// A convolution whose batch alone is dynamic (a symbolic batch: a ViT's
/// patch embedding; whyDirect holds) as a loop over the images, each a
/// static convolution that then becomes im2col and a GEMM.
void convolutionPerImage(RewriterBase &rewriter,
                         linalg::Conv2DNchwFchwOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  auto image = [](RankedTensorType type) {
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = 1;
    return RankedTensorType::get(shape, type.getElementType());
  };
  RankedTensorType inputImage = image(inputType), outputImage = image(initType);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value batch = tensor::DimOp::create(rewriter, loc, input, 0);
  linalg::Conv2DNchwFchwOp inner;
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, batch, one, ValueRange{init},
      [&](OpBuilder &b, Location l, Value n, ValueRange args) {
        // Image n of a [N, ...] tensor: offsets [n, 0, 0, 0], sizes
        // [1, ...].
        SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
            strides(4, b.getIndexAttr(1));
        offsets[0] = n;
        auto sizesOf = [&](RankedTensorType type) {
          return getAsIndexOpFoldResult(b.getContext(), type.getShape());
        };
        Value in = tensor::ExtractSliceOp::create(
            b, l, inputImage, input, offsets, sizesOf(inputImage), strides);
        Value out = tensor::ExtractSliceOp::create(
            b, l, outputImage, args[0], offsets, sizesOf(outputImage), strides);
        inner = linalg::Conv2DNchwFchwOp::create(
            b, l, TypeRange{outputImage}, ValueRange{in, filter},
            ValueRange{out}, conv.getStrides(), conv.getDilations());
        Value inserted = tensor::InsertSliceOp::create(
            b, l, inner.getResult(0), args[0], offsets, sizesOf(outputImage),
            strides);
        scf::YieldOp::create(b, l, inserted);
      });
  rewriter.replaceOp(conv, loop.getResults());
  convolutionToGemm(rewriter, inner);
}

/// A static float pointwise convolution (1 x 1 filter, stride 1, one
/// element type) is a GEMM of
/// the filters [F, C] and each image viewed as [C, H*W], with no im2col
/// copy: loops [batch, filters, channels, pixels] as the register tiles
/// take them. The GEMM, or null for another convolution.
linalg::GenericOp pointwiseToGemm(RewriterBase &rewriter,
                                  linalg::Conv2DNchwFchwOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  if (!isStaticFloat(conv) || filterType.getDimSize(2) != 1 ||
      filterType.getDimSize(3) != 1 ||
      !llvm::all_of(conv.getStrides(),
                    [](const APInt &s) { return s.isOne(); }) ||
      inputType.getShape().drop_front(2) != initType.getShape().drop_front(2))
    return {};
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  Value images = tensor::CollapseShapeOp::create(
      rewriter, loc, input, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return filtersTimesColumns(rewriter, loc, conv, images);
}

/// The elementwise op that alone reads `conv`'s result, when it can run on
/// the GEMM's [N, P, F] product instead of the NCHW result: all loops
/// parallel, the result read as it is by exactly one input, its other
/// inputs per channel or scalars (maps of only the batch and channel
/// loops, or constants) defined before the convolution, its init not read
/// and written as it is, no linalg.index in its body, one result of the
/// same type. Null otherwise.
linalg::GenericOp channelEpilogue(linalg::Conv2DNchwFchwOp conv) {
  Value result = conv->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || consumer.getNumDpsInits() != 1 ||
      consumer.getNumLoops() != 4 || consumer.getNumParallelLoops() != 4 ||
      consumer->getResult(0).getType() != result.getType() ||
      !consumer.hasPureTensorSemantics() ||
      consumer.payloadUsesValueFromOperand(consumer.getDpsInitOperand(0)) ||
      !consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
           .isIdentity() ||
      !consumer.getBlock()->getOps<linalg::IndexOp>().empty())
    return {};
  // Values the body reads from above must exist at the convolution too.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(consumer->getRegion(0), captured);
  auto before = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return !def ||
           (def->getBlock() == conv->getBlock() && def->isBeforeInBlock(conv));
  };
  if (!llvm::all_of(captured, before))
    return {};
  unsigned reads = 0;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (input->get() == result) {
      if (!map.isIdentity())
        return {};
      ++reads;
      continue;
    }
    if (!before(input->get()))
      return {};
    // Per channel ([C], [1, C, 1, 1]) or scalar: no height or width loop.
    if (map.isFunctionOfDim(2) || map.isFunctionOfDim(3) ||
        getElementTypeOrSelf(input->get().getType()).isInteger(1))
      return {};
  }
  return reads == 1 ? consumer : linalg::GenericOp();
}

/// `epilogue` (see channelEpilogue) over the loops of the GEMM's
/// `product` instead of [n, f, oh, ow], into `init` (made before the GEMM,
/// so that the tiles can take the epilogue in): the product read in place
/// of the convolution's result, the per-channel inputs through their maps
/// composed with `toProduct` (the product's loops to [n, f, oh, ow]).
Value epilogueOn(RewriterBase &rewriter, Location loc,
                 linalg::GenericOp epilogue, Value convResult, Value product,
                 Value init, AffineMap toProduct) {
  MLIRContext *ctx = rewriter.getContext();
  unsigned loops = toProduct.getNumDims();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    if (input->get() == convResult) {
      inputs.push_back(product);
      maps.push_back(AffineMap::getMultiDimIdentityMap(loops, ctx));
      continue;
    }
    inputs.push_back(input->get());
    maps.push_back(epilogue.getMatchingIndexingMap(input).compose(toProduct));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(loops, ctx));
  auto productType = cast<RankedTensorType>(product.getType());
  auto moved = linalg::GenericOp::create(
      rewriter, loc, productType, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel));
  rewriter.cloneRegionBefore(epilogue.getRegion(), moved.getRegion(),
                             moved.getRegion().end());
  return moved.getResult(0);
}

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

/// Whether `conv` is one of floats (input, filter and result of one type)
/// over an image whose height or width is dynamic (an OCR or segmentation
/// model's), its filter and channels static and its result a fill.
bool isDynamicImageConvolution(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  Value init = conv.getOutputs()[0];
  Type element = getElementTypeOrSelf(init.getType());
  return conv.hasPureTensorSemantics() &&
         init.getDefiningOp<linalg::FillOp>() && isa<FloatType>(element) &&
         inputType.getElementType() == element &&
         filterType.getElementType() == element &&
         filterType.hasStaticShape() && !inputType.isDynamicDim(1) &&
         (inputType.isDynamicDim(2) || inputType.isDynamicDim(3));
}

/// Replaces `conv` by `result`, which already holds its `epilogue` (the
/// elementwise consumer moved onto the GEMM's product) when there is one:
/// then the epilogue's result is replaced and the convolution erased.
void replaceWithEpilogue(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                         linalg::GenericOp epilogue, Value result) {
  if (!epilogue) {
    rewriter.replaceOp(conv, result);
    return;
  }
  rewriter.replaceOp(epilogue, result);
  rewriter.eraseOp(conv);
}

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
/// lies inside its channel. The product, with `epilogue` applied when it
/// was (else null in `epilogue`).
Value shiftedTapsProduct(RewriterBase &rewriter, Location loc,
                         linalg::Conv2DNchwFchwOp conv, int64_t panel,
                         OpFoldResult batch, Value grid, Value panels,
                         linalg::GenericOp &epilogue) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  Type element = filterType.getElementType();
  int64_t filters = filterType.getDimSize(0),
          channels = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  SmallVector<int64_t> dilations = llvm::to_vector(llvm::map_range(
      conv.getDilations(), [](const APInt &v) { return v.getSExtValue(); }));
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
  Value fillValue =
      conv.getOutputs()[0].getDefiningOp<linalg::FillOp>().getInputs()[0];
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
/// stride as [N, C*KH*KW, L] (L = `padded`, whole panels), one copy per
/// tap of the input's strided slice (copyTaps) into OH + ceil((panel - 1)
/// / OW) rows of OW pixels, the extra rows zero.
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

/// A float convolution whose height or width is dynamic, of im2col taps
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
bool pixelPanelsConvolution(RewriterBase &rewriter,
                            linalg::Conv2DNchwFchwOp conv, int64_t panel) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  Type element = initType.getElementType();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!isDynamicImageConvolution(conv))
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
                                 panels, epilogue);
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

/// A float convolution over an image of dynamic height or width that
/// pixelPanelsConvolution does not take (pointwise at stride 1, or of more
/// than kMaxTapCopies taps) as a GEMM whose rows are the output pixels,
/// which the register tiles take with dynamic rows: [N, P, F] = the
/// images [N, C, P] read transposed (pointwise: no copy), or im2col's
/// patches [N, P, C*KH*KW] written pixel-major by one generic over
/// [n, oh, ow, c, kh, kw], times the filters transposed to [C*KH*KW, F]
/// (a constant, so at compile time), then transposed back to [N, F, P].
/// The GEMM, or null for another convolution.
linalg::GenericOp dynamicConvolutionToGemm(RewriterBase &rewriter,
                                           linalg::Conv2DNchwFchwOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  Type element = initType.getElementType();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!isDynamicImageConvolution(conv))
    return {};
  SmallVector<int64_t> strides = llvm::to_vector(llvm::map_range(
      conv.getStrides(), [](const APInt &v) { return v.getSExtValue(); }));
  SmallVector<int64_t> dilations = llvm::to_vector(llvm::map_range(
      conv.getDilations(), [](const APInt &v) { return v.getSExtValue(); }));
  int64_t filters = filterType.getDimSize(0), channels = filterType.getDimSize(1);
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  int64_t depth = channels * kh * kw;
  bool pointwise = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1;
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, init, 0);
  OpFoldResult outH = tensor::getMixedSize(rewriter, loc, init, 2);
  OpFoldResult outW = tensor::getMixedSize(rewriter, loc, init, 3);
  // The lhs and how the GEMM's loops [n, p, k, f] read it.
  Value lhs;
  AffineExpr n, p, k, f;
  bindDims(ctx, n, p, k, f);
  AffineMap lhsMap;
  if (pointwise) {
    lhs = tensor::CollapseShapeOp::create(
        rewriter, loc, input,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    lhsMap = AffineMap::get(4, 0, {n, k, p}, ctx);
  } else {
    // patches[n, oh, ow, c, i, j] = input[n, c, oh * sh + i * dh,
    // ow * sw + j * dw].
    Value empty = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, outH, outW, rewriter.getIndexAttr(channels),
                               rewriter.getIndexAttr(kh),
                               rewriter.getIndexAttr(kw)},
        element);
    AffineExpr d[6];
    for (int i = 0; i < 6; ++i)
      d[i] = getAffineDimExpr(i, ctx);
    AffineMap read = AffineMap::get(
        6, 0,
        {d[0], d[3], d[1] * strides[0] + d[4] * dilations[0],
         d[2] * strides[1] + d[5] * dilations[1]},
        ctx);
    Value patches = copyThrough(rewriter, loc, input, read, empty);
    lhs = tensor::CollapseShapeOp::create(
        rewriter, loc, patches,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
    lhsMap = AffineMap::get(4, 0, {n, p, k}, ctx);
  }
  OpFoldResult pixels = tensor::getMixedSize(
      rewriter, loc, lhs, lhsMap.getResult(1) == p ? 1 : 2);
  Value weights = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value weightsT =
      linalg::TransposeOp::create(
          rewriter, loc, weights,
          tensor::EmptyOp::create(rewriter, loc,
                                  ArrayRef<int64_t>{depth, filters}, element),
          ArrayRef<int64_t>{1, 0})
          ->getResult(0);
  Value productEmpty = tensor::EmptyOp::create(
      rewriter, loc,
      ArrayRef<OpFoldResult>{batch, pixels, rewriter.getIndexAttr(filters)},
      element);
  Value productInit =
      linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], productEmpty)
          .getResult(0);
  SmallVector<AffineMap> maps = {lhsMap, AffineMap::get(4, 0, {k, f}, ctx),
                                 AffineMap::get(4, 0, {n, p, f}, ctx)};
  linalg::GenericOp epilogue = channelEpilogue(conv);
  Value epilogueInit =
      epilogue ? tensor::EmptyOp::create(
                     rewriter, loc,
                     ArrayRef<OpFoldResult>{batch, pixels,
                                            rewriter.getIndexAttr(filters)},
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
  // Back to [N, F, OH, OW]: a reshape (memref cannot expand one dim into
  // two dynamic ones).
  SmallVector<Value> dims;
  for (OpFoldResult size :
       {batch, OpFoldResult(rewriter.getIndexAttr(filters)), outH, outW})
    dims.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, size));
  Value shape = tensor::FromElementsOp::create(rewriter, loc, dims);
  Value result =
      tensor::ReshapeOp::create(rewriter, loc, initType, nchw, shape);
  replaceWithEpilogue(rewriter, conv, epilogue, result);
  return gemm;
}

/// A static float convolution (whyDirect holds) as im2col and a GEMM:
/// patches [N, C, KH, KW, OH, OW] copied from the input per tap (strided
/// slices, no division or remainder per element, rows of OW contiguous at
/// stride 1), viewed as
/// [N, C*KH*KW, OH*OW], then the filters [F, C*KH*KW] times the patches
/// per image, loops [batch, filters, k, pixels] as the register tiles take
/// them, so that the result is NCHW as it is. The GEMM, or null when the
/// convolution is not such a one.
linalg::GenericOp staticConvolutionToGemm(RewriterBase &rewriter,
                                          linalg::Conv2DNchwFchwOp conv) {
  if (!isStaticFloat(conv))
    return {};
  Value input = conv.getInputs()[0];
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto initType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  Type element = initType.getElementType();
  SmallVector<int64_t> strides = llvm::to_vector(llvm::map_range(
      conv.getStrides(), [](const APInt &v) { return v.getSExtValue(); }));
  int64_t n = initType.getDimSize(0), oh = initType.getDimSize(2),
          ow = initType.getDimSize(3);
  int64_t c = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  // Up to kMaxTapCopies taps, a copy per tap (copyTaps); more (a ViT's
  // 16 x 16 patches), one generic over the patches whose reads are affine
  // in its loops.
  Value patches;
  if (kh * kw <= kMaxTapCopies) {
    patches = copyTaps(rewriter, loc, conv,
                       getAsIndexOpFoldResult(ctx, {n, c, oh, ow}));
  } else {
    AffineExpr d[6];
    for (int i = 0; i < 6; ++i)
      d[i] = getAffineDimExpr(i, ctx);
    AffineMap read = AffineMap::get(
        6, 0,
        {d[0], d[1], d[4] * strides[0] + d[2], d[5] * strides[1] + d[3]},
        ctx);
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{n, c, kh, kw, oh, ow}, element);
    patches = copyThrough(rewriter, loc, input, read, empty);
  }
  Value columns = tensor::CollapseShapeOp::create(
      rewriter, loc, patches,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  return filtersTimesColumns(rewriter, loc, conv, columns);
}

/// True when `conv` was rewritten (see whyDirect for when it is not).
bool convolutionToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv) {
  if (whyDirect(conv))
    return false;
  if (pointwiseToGemm(rewriter, conv))
    return true;
  if (llvm::any_of(conv->getOperandTypes(), [](Type type) {
        return !cast<ShapedType>(type).hasStaticShape();
      })) {
    convolutionPerImage(rewriter, conv);
    return true;
  }
  if (staticConvolutionToGemm(rewriter, conv))
    return true;
  rewriter.setInsertionPoint(conv);
  FailureOr<std::pair<Operation *, Operation *>> rewritten =
      linalg::rewriteInIm2Col(rewriter, conv);
  if (failed(rewritten))
    return false;
  Operation *last = rewritten->second;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(last))
    last = expand.getSrc().getDefiningOp();
  auto gemm = dyn_cast_if_present<linalg::GenericOp>(last);
  if (!gemm || gemm.getNumLoops() != 4)
    return true;
  FailureOr<linalg::GenericOp> ordered =
      linalg::interchangeGenericOp(rewriter, gemm, {0, 1, 3, 2});
  if (succeeded(ordered))
    fillAfterCollapse(rewriter, *ordered);
  return true;
}

/// A grouped convolution (channels and filters split into G groups, not
/// dilated, dims other than the batch static) as a loop over the groups,
/// each an ungrouped convolution of its group's channels and filters, which
/// then becomes im2col and a GEMM. False when `conv` stays as it is.
bool groupsAsConvolutions(RewriterBase &rewriter,
                          linalg::Conv2DNgchwGfchwOp conv) {
  if (!conv.hasPureTensorSemantics() ||
      !llvm::all_of(conv.getDilations(),
                    [](const APInt &d) { return d.isOne(); }))
    return false;
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  auto staticButBatch = [](RankedTensorType type) {
    return llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
  };
  if (!staticButBatch(inType) || !filterType.hasStaticShape() ||
      !staticButBatch(initType))
    return false;
  // Group g's slices: [N, 1, ...] of the input and result, [1, ...] of the
  // filters, with the group dim dropped.
  auto dropGroup = [](RankedTensorType type, int64_t dim) {
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + dim);
    return RankedTensorType::get(shape, type.getElementType());
  };
  RankedTensorType inGroup = dropGroup(inType, 1),
                   filterGroup = dropGroup(filterType, 0),
                   outGroup = dropGroup(initType, 1);
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value groups =
      arith::ConstantIndexOp::create(rewriter, loc, filterType.getDimSize(0));
  linalg::Conv2DNchwFchwOp inner;
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, groups, one, ValueRange{init},
      [&](OpBuilder &b, Location l, Value g, ValueRange args) {
        auto sizesOf = [&](Value source, RankedTensorType type,
                           int64_t groupDim) {
          SmallVector<OpFoldResult> sizes;
          for (int64_t d = 0; d < type.getRank(); ++d)
            sizes.push_back(
                d == groupDim ? b.getIndexAttr(1)
                : type.isDynamicDim(d)
                    ? OpFoldResult(
                          tensor::DimOp::create(b, l, source, d).getResult())
                    : b.getIndexAttr(type.getDimSize(d)));
          return sizes;
        };
        auto slice = [&](Value source, RankedTensorType type,
                         RankedTensorType group, int64_t groupDim) -> Value {
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[groupDim] = g;
          SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
          return tensor::ExtractSliceOp::create(b, l, group, source, offsets,
                                                sizesOf(source, type, groupDim),
                                                strides);
        };
        Value in = slice(input, inType, inGroup, 1);
        Value w = slice(filter, filterType, filterGroup, 0);
        Value out = slice(args[0], initType, outGroup, 1);
        inner = linalg::Conv2DNchwFchwOp::create(
            b, l, TypeRange{outGroup}, ValueRange{in, w}, ValueRange{out},
            conv.getStrides(), conv.getDilations());
        SmallVector<OpFoldResult> offsets(initType.getRank(),
                                          b.getIndexAttr(0));
        offsets[1] = g;
        SmallVector<OpFoldResult> strides(initType.getRank(),
                                          b.getIndexAttr(1));
        Value inserted = tensor::InsertSliceOp::create(
            b, l, inner.getResult(0), args[0], offsets,
            sizesOf(args[0], initType, 1), strides);
        scf::YieldOp::create(b, l, inserted);
      });
  rewriter.replaceOp(conv, loop.getResults());
  return true;
}

} // namespace

void tessera::cpu::convolutionsToGemms(RewriterBase &rewriter,
                                       func::FuncOp func, int64_t panel,
                                       bool report) {
  SmallVector<linalg::Conv2DNgchwGfchwOp> grouped;
  func.walk([&](linalg::Conv2DNgchwGfchwOp op) { grouped.push_back(op); });
  for (linalg::Conv2DNgchwGfchwOp conv : grouped)
    groupsAsConvolutions(rewriter, conv);
  SmallVector<linalg::Conv2DNchwFchwOp> convolutions;
  func.walk([&](linalg::Conv2DNchwFchwOp op) { convolutions.push_back(op); });
  for (linalg::Conv2DNchwFchwOp conv : convolutions) {
    if (pixelPanelsConvolution(rewriter, conv, panel) ||
        dynamicConvolutionToGemm(rewriter, conv))
      continue;
    std::optional<std::string> why = whyDirect(conv);
    if (why && report)
      conv.emitRemark() << "convolution stays a direct loop nest (not "
                           "im2col and the register-tiled GEMM): "
                        << *why;
    if (!why && !convolutionToGemm(rewriter, conv) && report)
      conv.emitRemark("convolution stays a direct loop nest (not im2col "
                      "and the register-tiled GEMM): the im2col rewrite "
                      "failed");
  }
  if (report)
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::ConvolutionOpInterface>(op.getOperation()) &&
          !isa<linalg::Conv2DNchwFchwOp>(op.getOperation()))
        op.emitRemark() << "convolution stays a direct loop nest (not the "
                           "register-tiled GEMM): "
                        << op->getName().stripDialect()
                        << " (grouped and dilated, or dynamic dims other "
                           "than the batch)";
    });
}
