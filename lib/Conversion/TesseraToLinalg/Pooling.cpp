//===- Pooling.cpp - max_pool and avg_pool to linalg -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// How many elements of window `o` along one dim count in an average:
/// those inside [lo, hi) of the unpadded coordinates.
int64_t windowCount(int64_t o, int64_t kernel, int64_t stride,
                    int64_t dilation, int64_t padBegin, int64_t lo,
                    int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t at = o * stride + k * dilation - padBegin;
    count += at >= lo && at < hi;
  }
  return count;
}

/// An average's sums divided by their windows' counts computed per element
/// (dynamic spatial dims, dilation 1): along each dim, the window at output
/// `o` covers [o * stride - padBegin, + kernel) and counts what of it lies
/// inside [lo, hi), the input (or, counting pads, the padded input).
Value divideByDynamicCounts(OpBuilder &b, Location loc, ts::AvgPoolOp op,
                            Value sums) {
  auto type = cast<RankedTensorType>(sums.getType());
  int64_t rank = type.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    pads = op.getPads();
  bool countPads = op.getCountIncludePad();
  SmallVector<Value> his;
  for (int64_t i = 0; i < spatial; ++i) {
    Value in = linalg::createOrFoldDimOp(b, loc, op.getInput(), 2 + i);
    his.push_back(countPads ? arith::AddIOp::create(
                                  b, loc, in,
                                  arith::ConstantIndexOp::create(
                                      b, loc, pads[spatial + i]))
                                  .getResult()
                            : in);
  }
  Type elementType = type.getElementType();
  return buildElementwise(
      b, loc, type, ValueRange{sums},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        auto c = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nloc, v);
        };
        Value count = c(1);
        for (int64_t i = 0; i < spatial; ++i) {
          Value o = linalg::IndexOp::create(nb, nloc, 2 + i);
          Value start = arith::SubIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, o, c(strides[i])),
              c(pads[i]));
          Value end = arith::AddIOp::create(nb, nloc, start, c(kernel[i]));
          Value first = arith::MaxSIOp::create(
              nb, nloc, start, c(countPads ? -pads[i] : 0));
          Value last = arith::MinSIOp::create(nb, nloc, end, his[i]);
          Value along = arith::MaxSIOp::create(
              nb, nloc, arith::SubIOp::create(nb, nloc, last, first), c(0));
          count = arith::MulIOp::create(nb, nloc, count, along);
        }
        Value asInt = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(),
                                                 count);
        Value divisor =
            arith::SIToFPOp::create(nb, nloc, elementType, asInt);
        return arith::DivFOp::create(nb, nloc, args[0], divisor);
      });
}

/// The most taps (KH * KW) a 2-D max pool reads as shifted views of its
/// input.
constexpr int64_t kMaxPoolTaps = 49;

/// A 2-D max pool of floats over a window of at most kMaxPoolTaps taps, on
/// its `padded` input, as one elementwise op over the output whose operands
/// are the input shifted by each tap (strided views), as a depthwise
/// convolution is built: it vectorizes along the output's rows with no
/// loop over the window (the generic over the window stayed scalar, each
/// maximum with its NaN check: 6% of ResNet-18's run). A stride along the
/// rows of at most `maxWindowStride` is read at the stride by each tap; a
/// wider one would make every tap's read a gather, so the columns are
/// computed at stride 1 and every `stride`-th taken afterwards (see
/// depthwiseConvolution). Null for another pool. `dynamicSizes` are
/// the result's dynamic sizes.
Value maxOverTaps(OpBuilder &b, Location loc, ts::MaxPoolOp op, Value padded,
                  ValueRange dynamicSizes, int64_t maxWindowStride) {
  RankedTensorType resultType = op.getType();
  Type element = resultType.getElementType();
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    dilations = op.getDilations();
  if (resultType.getRank() != 4 || !isa<FloatType>(element) ||
      kernel[0] * kernel[1] > kMaxPoolTaps)
    return {};
  // The output's sizes, its columns at stride 1: (out - 1) * stride + 1.
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t d = 0; d < 4; ++d)
    sizes.push_back(resultType.isDynamicDim(d)
                        ? OpFoldResult(dynamicSizes[next++])
                        : b.getIndexAttr(resultType.getDimSize(d)));
  OpFoldResult columns = sizes[3];
  SmallVector<int64_t> wideShape(resultType.getShape());
  bool subsample = strides[1] > maxWindowStride;
  if (subsample) {
    sizes[3] = strideOneColumns(b, loc, columns, strides[1]);
    if (!resultType.isDynamicDim(3))
      wideShape[3] = *getConstantIntValue(sizes[3]);
  }
  auto wideType = RankedTensorType::get(wideShape, element);
  SmallVector<OpFoldResult> sliceStrides = {
      b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(strides[0]),
      b.getIndexAttr(subsample ? 1 : strides[1])};
  SmallVector<Value> shifted;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j)
      shifted.push_back(tensor::ExtractSliceOp::create(
          b, loc, wideType, padded,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                 b.getIndexAttr(i * dilations[0]),
                                 b.getIndexAttr(j * dilations[1])},
          sizes, sliceStrides));
  SmallVector<Value> wideDynamic;
  for (int64_t d = 0; d < 4; ++d)
    if (wideType.isDynamicDim(d))
      wideDynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  AffineMap identity = b.getMultiDimIdentityMap(4);
  auto generic = linalg::GenericOp::create(
      b, loc, wideType, shifted, emptyTensor(b, loc, wideType, wideDynamic),
      SmallVector<AffineMap>(shifted.size() + 1, identity),
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = args[0];
        for (Value tap : args.drop_front().drop_back())
          result = arith::MaximumFOp::create(nb, nloc, result, tap);
        linalg::YieldOp::create(nb, nloc, result);
      });
  if (!subsample)
    return generic.getResult(0);
  sizes[3] = columns;
  SmallVector<OpFoldResult> every = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1),
                                     b.getIndexAttr(strides[1])};
  Value taken = tensor::ExtractSliceOp::create(
      b, loc, resultType, generic.getResult(0),
      SmallVector<OpFoldResult>(4, b.getIndexAttr(0)), sizes, every);
  // Copied out of the wide result: a view strided along its last dim,
  // passed on, was copied element by element on one thread.
  return linalg::CopyOp::create(b, loc, taken,
                                emptyTensor(b, loc, resultType, dynamicSizes))
      .getResult(0);
}

/// max_pool and avg_pool: the input padded (with the lowest value or zero)
/// up to what the last window reads, one linalg.generic reducing over the
/// window (its sizes carried by an empty tensor, as linalg's pooling ops
/// do), and for averages a division by the window's count, a constant
/// computed here from the static spatial dims.
template <typename OpTy>
struct PoolLowering : OpRewritePattern<OpTy> {
  PoolLowering(MLIRContext *context, int64_t maxWindowStride)
      : OpRewritePattern<OpTy>(context), maxWindowStride(maxWindowStride) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, ts::MaxPoolOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    int64_t rank = inType.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      dilations = op.getDilations(), pads = op.getPads();
    bool dynamic = false;
    for (int64_t i = 0; i < spatial; ++i)
      dynamic |= inType.isDynamicDim(2 + i);
    if (dynamic && !isMax &&
        llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
      return rewriter.notifyMatchFailure(
          op, "dilated average pooling of dynamic spatial dims");

    // Pad to exactly what the windows read: (out - 1) * stride + span; a
    // dynamic dim by the end pad and, rounding up, a stride more (the
    // windows read no further than they need).
    SmallVector<OpFoldResult> low(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> high(rank, rewriter.getIndexAttr(0));
    SmallVector<int64_t> paddedShape(inType.getShape());
    bool padded = false;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = inType.getDimSize(2 + i);
      if (ShapedType::isDynamic(in)) {
        int64_t extra = pads[spatial + i] +
                        (op.getCeilMode() ? strides[i] - 1 : 0);
        low[2 + i] = rewriter.getIndexAttr(pads[i]);
        high[2 + i] = rewriter.getIndexAttr(extra);
        padded |= pads[i] != 0 || extra != 0;
        continue;
      }
      int64_t reads = (resultType.getDimSize(2 + i) - 1) * strides[i] +
                      dilations[i] * (kernel[i] - 1) + 1;
      int64_t extra = std::max<int64_t>(0, reads - in - pads[i]);
      low[2 + i] = rewriter.getIndexAttr(pads[i]);
      high[2 + i] = rewriter.getIndexAttr(extra);
      paddedShape[2 + i] = in + pads[i] + extra;
      padded |= pads[i] != 0 || extra != 0;
    }
    Value init = isMax ? buildReductionIdentity(rewriter, loc, elementType,
                                                ReduceKind::Max)
                       : scalarConstant(rewriter, loc, elementType, 0.0);
    Value input = op.getInput();
    if (padded)
      input = tensor::PadOp::create(
          rewriter, loc, RankedTensorType::get(paddedShape, elementType),
          input, low, high, init);

    // Loops: N, C, the output's spatial dims, then the window's.
    int64_t loops = rank + spatial;
    SmallVector<AffineExpr> inExprs = {getAffineDimExpr(0, ctx),
                                       getAffineDimExpr(1, ctx)};
    SmallVector<AffineExpr> windowExprs;
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr o = getAffineDimExpr(2 + i, ctx);
      AffineExpr k = getAffineDimExpr(rank + i, ctx);
      inExprs.push_back(o * strides[i] + k * dilations[i]);
      windowExprs.push_back(k);
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(loops, 0, inExprs, ctx),
        AffineMap::get(loops, 0, windowExprs, ctx),
        AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      Value in = linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d);
      int64_t i = d - 2;
      dynamicSizes.push_back(
          d < 2 ? in
                : windowOutputSize(rewriter, loc, in, kernel[i], strides[i],
                                   pads[i], pads[spatial + i], dilations[i],
                                   op.getCeilMode()));
    }
    if constexpr (isMax) {
      if (Value taps = maxOverTaps(rewriter, loc, op, input, dynamicSizes,
                                   maxWindowStride)) {
        rewriter.replaceOp(op, taps);
        return success();
      }
    }
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, elementType);
    Value out = linalg::FillOp::create(
                    rewriter, loc, init,
                    emptyTensor(rewriter, loc, resultType, dynamicSizes))
                    .getResult(0);
    Value pooled =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{input, window},
            ValueRange{out}, maps, iterators,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value next;
              if (!isMax)
                next = addScalar(b, nloc, args[2], args[0]);
              else if (isa<FloatType>(elementType))
                next = arith::MaximumFOp::create(b, nloc, args[2], args[0]);
              else
                next = arith::MaxSIOp::create(b, nloc, args[2], args[0]);
              linalg::YieldOp::create(b, nloc, next);
            })
            .getResult(0);
    if constexpr (!isMax) {
      if (dynamic) {
        pooled = divideByDynamicCounts(rewriter, loc, op, pooled);
        rewriter.replaceOp(op, pooled);
        return success();
      }
      // The divisor of each window, the product of its per-dim counts.
      SmallVector<int64_t> outSpatial(resultType.getShape().drop_front(2));
      SmallVector<SmallVector<int64_t>> perDim(spatial);
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t in = inType.getDimSize(2 + i);
        int64_t lo = op.getCountIncludePad() ? -pads[i] : 0;
        int64_t hi = op.getCountIncludePad() ? in + pads[spatial + i] : in;
        for (int64_t o = 0; o < outSpatial[i]; ++o)
          perDim[i].push_back(windowCount(o, kernel[i], strides[i],
                                          dilations[i], pads[i], lo, hi));
      }
      SmallVector<APFloat> counts;
      const llvm::fltSemantics &semantics =
          cast<FloatType>(elementType).getFloatSemantics();
      int64_t total = 1;
      for (int64_t size : outSpatial)
        total *= size;
      for (int64_t flat = 0; flat < total; ++flat) {
        int64_t rest = flat, count = 1;
        for (int64_t i = spatial - 1; i >= 0; --i) {
          count *= perDim[i][rest % outSpatial[i]];
          rest /= outSpatial[i];
        }
        APFloat value(static_cast<double>(count));
        bool lost;
        value.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
        counts.push_back(value);
      }
      auto countType = RankedTensorType::get(outSpatial, elementType);
      Value divisor = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(countType, counts));
      SmallVector<AffineExpr> countExprs;
      for (int64_t i = 0; i < spatial; ++i)
        countExprs.push_back(getAffineDimExpr(2 + i, ctx));
      pooled = buildElementwise(
          rewriter, loc, resultType, ValueRange{pooled, divisor},
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            return arith::DivFOp::create(b, nloc, args[0], args[1]);
          },
          {rewriter.getMultiDimIdentityMap(rank),
           AffineMap::get(rank, 0, countExprs, ctx)});
    }
    rewriter.replaceOp(op, pooled);
    return success();
  }

  int64_t maxWindowStride;
};

} // namespace

void populatePoolingPatterns(RewritePatternSet &patterns,
                             int64_t maxWindowStride) {
  patterns.add<PoolLowering<ts::MaxPoolOp>, PoolLowering<ts::AvgPoolOp>>(
      patterns.getContext(), maxWindowStride);
}

} // namespace tessera::to_linalg
