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
using tessera::cpu::channelEpilogue;
using tessera::cpu::copyTaps;
using tessera::cpu::copyThrough;
using tessera::cpu::dilationsOf;
using tessera::cpu::dynamicConvolutionToGemm;
using tessera::cpu::epilogueOn;
using tessera::cpu::fillAfterCollapse;
using tessera::cpu::gemmGeneric;
using tessera::cpu::isDynamicImageConvolution;
using tessera::cpu::kMaxTapCopies;
using tessera::cpu::pixelPanelsConvolution;
using tessera::cpu::pixelRowsGemm;
using tessera::cpu::prefersPixelRows;
using tessera::cpu::replaceWithEpilogue;
using tessera::cpu::stridesOf;

namespace tessera::cpu {

static SmallVector<int64_t> integers(DenseIntElementsAttr attr) {
  return llvm::to_vector(
      llvm::map_range(attr, [](const APInt &v) { return v.getSExtValue(); }));
}

SmallVector<int64_t> stridesOf(linalg::Conv2DNchwFchwOp conv) {
  return integers(conv.getStrides());
}

SmallVector<int64_t> dilationsOf(linalg::Conv2DNchwFchwOp conv) {
  return integers(conv.getDilations());
}

bool isWholeNarrowGemm(ArrayRef<int64_t> filter, ArrayRef<int64_t> result) {
  if (filter.size() != 4 || result.size() != 4 ||
      llvm::any_of(filter, ShapedType::isDynamic) ||
      llvm::any_of(result.drop_front(2), ShapedType::isDynamic))
    return false;
  return filter[0] % 8 == 0 && (filter[1] * filter[2] * filter[3]) % 2 == 0 &&
         (result[2] * result[3]) % 16 == 0;
}

/// A GEMM's contraction over loops [batch..., rows, k, columns] (the order
/// the register tiles take), reading `lhs` and `rhs` through `maps` (the
/// result's last), accumulating into `init` with multiply-adds (narrower
/// operands, bf16 or f16 into f32, widened first, as in a narrow matmul).
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
        Type acc = args[2].getType();
        auto widen = [&](Value v) -> Value {
          return v.getType() == acc ? v : arith::ExtFOp::create(b, l, acc, v);
        };
        Value product =
            arith::MulFOp::create(b, l, widen(args[0]), widen(args[1]));
        linalg::YieldOp::create(
            b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
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

/// Im2col's patches of `conv`'s input as [N, C, KH, KW, OH, OW] (`sizes`
/// holds N, C, OH, OW, static or not): patches[n, c, i, j, oh, ow] =
/// input[n, c, oh * sh + i * dh, ow * sw + j * dw], in one parallel loop
/// over the taps (i, j) and the channels, each iteration a copy of the
/// input's strided slice [N, 1, OH, OW], which the loop vectorizer moves a
/// row at a time (no division or remainder per element). (One copy per
/// tap, each too small to share among threads, left a 3 x 3
/// convolution's im2col on the calling thread.) Each copy writes its slot
/// [N, 1, 1, 1, OH, OW] of the patches as it is: a slot rank-reduced is
/// ambiguous where N is 1 and the image's size symbolic (its strides all
/// dynamic), and the buffer of such a slice kept the wrong unit dims (the
/// channels a tap wrote overlapped, and the rest of the patches was never
/// written). With `rows`, the patches hold that many rows ([N, C, KH, KW,
/// rows, OW], rows >= OH) and each tap writes its first OH.
Value copyTaps(RewriterBase &rewriter, Location loc,
               linalg::Conv2DNchwFchwOp conv, ArrayRef<OpFoldResult> sizes,
               OpFoldResult rows) {
  Value input = conv.getInputs()[0];
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  Type element = filterType.getElementType();
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  SmallVector<int64_t> strides = stridesOf(conv), dilations = dilationsOf(conv);
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
  tapShape[1] = 1;
  auto tapType = RankedTensorType::get(tapShape, element);
  auto slotType = RankedTensorType::get(
      {tapShape[0], 1, 1, 1, tapShape[2], tapShape[3]}, element);
  SmallVector<OpFoldResult> tapSizes = {sizes[0], one, sizes[2], sizes[3]};
  SmallVector<OpFoldResult> slotSizes = {sizes[0], one,      one,
                                         one,      sizes[2], sizes[3]};
  SmallVector<OpFoldResult> unit(6, one);
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d[6];
  for (int k = 0; k < 6; ++k)
    d[k] = getAffineDimExpr(k, ctx);
  AffineMap read = AffineMap::get(6, 0, {d[0], d[1], d[4], d[5]}, ctx);
  auto loop = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{index(kh), index(kw), sizes[1]},
      ValueRange{patches}, std::nullopt,
      [&](OpBuilder &b, Location bloc, ValueRange ivs) {
        // The tap (i, j), the channel c and the patches.
        Value i = ivs[0], j = ivs[1], c = ivs[2];
        auto scaled = [&](Value v, int64_t factor) -> OpFoldResult {
          if (factor == 1)
            return v;
          return arith::MulIOp::create(
                     b, bloc, v,
                     arith::ConstantIndexOp::create(b, bloc, factor))
              .getResult();
        };
        Value tap = tensor::ExtractSliceOp::create(
            b, bloc, tapType, input,
            ArrayRef<OpFoldResult>{zero, c, scaled(i, dilations[0]),
                                   scaled(j, dilations[1])},
            tapSizes,
            ArrayRef<OpFoldResult>{one, one, index(strides[0]),
                                   index(strides[1])});
        Value shared = ivs[3];
        SmallVector<OpFoldResult> at = {zero, c, i, j, zero, zero};
        Value slot = tensor::ExtractSliceOp::create(b, bloc, slotType, shared,
                                                    at, slotSizes, unit);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(b.getInsertionBlock(),
                                   b.getInsertionPoint());
        Value copied = copyThrough(rewriter, bloc, tap, read, slot);
        auto terminator = scf::InParallelOp::create(b, bloc);
        b.setInsertionPointToStart(terminator.getBody());
        tensor::ParallelInsertSliceOp::create(b, bloc, copied, shared, at,
                                              slotSizes, unit);
      });
  return loop.getResult(0);
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

/// Whether `conv` is one of floats (input, filter and result of one type),
/// its filter and channels static and its result a fill.
static bool isFloatImageConvolution(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  Value init = conv.getOutputs()[0];
  Type element = getElementTypeOrSelf(init.getType());
  return conv.hasPureTensorSemantics() &&
         init.getDefiningOp<linalg::FillOp>() && isa<FloatType>(element) &&
         inputType.getElementType() == element &&
         filterType.getElementType() == element &&
         filterType.hasStaticShape() && !inputType.isDynamicDim(1);
}

/// Whether `conv` is a float image convolution (see above) whose height or
/// width is dynamic (an OCR or segmentation model's).
bool isDynamicImageConvolution(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  return isFloatImageConvolution(conv) &&
         (inputType.isDynamicDim(2) || inputType.isDynamicDim(3));
}

/// Whether `conv` is a static float image convolution at stride 1 with at
/// most kFewFilters filters, for which im2col's patches would cost about
/// as much as the GEMM: each value copied feeds only that many
/// multiply-adds (PaddleOCR's detector, 96 channels into 24 filters at 40 x
/// 56, spent 11% of its time copying patches). Its channels are at least
/// kFewFilterChannels: each tap's GEMM reduces over them (an RGB image's 3
/// would make 9 GEMMs of k 3 out of one of k 27).
bool isFewFilterConvolution(linalg::Conv2DNchwFchwOp conv) {
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  return isFloatImageConvolution(conv) &&
         cast<RankedTensorType>(conv.getInputs()[0].getType())
             .hasStaticShape() &&
         filterType.getDimSize(0) <= kFewFilters &&
         filterType.getDimSize(1) >= kFewFilterChannels &&
         llvm::all_of(conv.getStrides(),
                      [](const APInt &s) { return s.isOne(); });
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

} // namespace tessera::cpu

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

bool convolutionToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                       int64_t lanes);

/// Whether `conv`'s input, filter and result are static floats, the input
/// and filter of the result's type, or bf16 or f16 into an f32 result
/// whose GEMM has no partial tile (see isWholeNarrowGemm).
bool isStaticFloat(linalg::Conv2DNchwFchwOp conv) {
  Type element = getElementTypeOrSelf(conv.getOutputs()[0].getType());
  Type operand = getElementTypeOrSelf(conv.getInputs()[0].getType());
  auto shape = [&](unsigned i) {
    return cast<ShapedType>(conv->getOperand(i).getType()).getShape();
  };
  return isa<FloatType>(element) &&
         (operand == element ||
          (element.isF32() && isa<BFloat16Type, Float16Type>(operand) &&
           tessera::cpu::isWholeNarrowGemm(shape(1), shape(2)))) &&
         getElementTypeOrSelf(conv.getInputs()[1].getType()) == operand &&
         llvm::all_of(conv->getOperandTypes(), [&](Type type) {
           return cast<ShapedType>(type).hasStaticShape();
         });
}

/// `conv` (static) as the filters [F, C*KH*KW] times `columns`
/// [N, C*KH*KW, OH*OW] per image, loops [batch, filters, k, pixels] as the
/// register tiles take them, so that the result is NCHW as it is; or, when
/// prefersPixelRows holds, as pixelRowsGemm with `columns` read
/// transposed. The GEMM.
linalg::GenericOp filtersTimesColumns(RewriterBase &rewriter, Location loc,
                                      linalg::Conv2DNchwFchwOp conv,
                                      Value columns, int64_t lanes) {
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, f, k, p;
  if (prefersPixelRows(conv, lanes)) {
    bindDims(ctx, n, p, k, f);
    return pixelRowsGemm(rewriter, loc, conv, columns,
                         AffineMap::get(4, 0, {n, k, p}, ctx));
  }
  Value filter = conv.getInputs()[1], init = conv.getOutputs()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  SmallVector<ReassociationIndices> pixels = {{0}, {1}, {2, 3}};
  Value weights = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value out = tensor::CollapseShapeOp::create(rewriter, loc, init, pixels);
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
void convolutionPerImage(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                         int64_t lanes) {
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
  convolutionToGemm(rewriter, inner, lanes);
}

/// A static float pointwise convolution (1 x 1 filter, stride 1, one
/// element type) is a GEMM of
/// the filters [F, C] and each image viewed as [C, H*W], with no im2col
/// copy: loops [batch, filters, channels, pixels] as the register tiles
/// take them. The GEMM, or null for another convolution.
linalg::GenericOp pointwiseToGemm(RewriterBase &rewriter,
                                  linalg::Conv2DNchwFchwOp conv,
                                  int64_t lanes) {
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
      rewriter, loc, input,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return filtersTimesColumns(rewriter, loc, conv, images, lanes);
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
                                          linalg::Conv2DNchwFchwOp conv,
                                          int64_t lanes) {
  if (!isStaticFloat(conv))
    return {};
  Value input = conv.getInputs()[0];
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto initType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  SmallVector<int64_t> strides = stridesOf(conv);
  int64_t n = initType.getDimSize(0), oh = initType.getDimSize(2),
          ow = initType.getDimSize(3);
  int64_t c = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  // Up to kMaxTapCopies taps, the taps' copies (copyTaps); more (a ViT's
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
        rewriter, loc, ArrayRef<int64_t>{n, c, kh, kw, oh, ow},
        getElementTypeOrSelf(input.getType()));
    patches = copyThrough(rewriter, loc, input, read, empty);
  }
  Value columns = tensor::CollapseShapeOp::create(
      rewriter, loc, patches,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  return filtersTimesColumns(rewriter, loc, conv, columns, lanes);
}

/// True when `conv` was rewritten (see whyDirect for when it is not).
bool convolutionToGemm(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                       int64_t lanes) {
  if (whyDirect(conv))
    return false;
  if (pointwiseToGemm(rewriter, conv, lanes))
    return true;
  if (llvm::any_of(conv->getOperandTypes(), [](Type type) {
        return !cast<ShapedType>(type).hasStaticShape();
      })) {
    convolutionPerImage(rewriter, conv, lanes);
    return true;
  }
  if (staticConvolutionToGemm(rewriter, conv, lanes))
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

} // namespace

void tessera::cpu::convolutionsToGemms(RewriterBase &rewriter,
                                       func::FuncOp func, int64_t panel,
                                       int64_t lanes, bool report) {
  SmallVector<linalg::Conv2DNgchwGfchwOp> grouped;
  func.walk([&](linalg::Conv2DNgchwGfchwOp op) { grouped.push_back(op); });
  for (linalg::Conv2DNgchwGfchwOp conv : grouped)
    tessera::cpu::groupsAsConvolutions(rewriter, conv);
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
    if (!why && !convolutionToGemm(rewriter, conv, lanes) && report)
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
