//===- Resize.cpp - tessera.resize to one gathering generic per resized dim ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Resize is separable: each dim is resampled in turn, from the last to the
// first, as ONNX's reference does. For a dim, a generic over the partial
// result maps its coordinate into the input (in f64, like the reference),
// picks one neighbour (nearest) or weights two (linear) or four (cubic),
// and reads them with tensor.extract. A dim whose scale is a constant 1
// under a mode that maps it onto itself is skipped.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;
using CoordinateMode = ts::ResizeCoordinateMode;

/// f64 helpers for the coordinate arithmetic.
struct F64 {
  OpBuilder &b;
  Location loc;
  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value ceil(Value x) { return math::CeilOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// An index as f64.
  Value fromIndex(Value index) {
    Value i64 =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), index).getResult();
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), i64);
  }
  /// floor-ed f64 to index, clamped into [0, size - 1] (edge padding).
  Value clampedIndex(Value x, Value size) {
    Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value last = arith::SubIOp::create(
        b, loc, size, arith::ConstantIndexOp::create(b, loc, 1));
    Value low = arith::MaxSIOp::create(b, loc, index, zero);
    return arith::MinSIOp::create(b, loc, low, last);
  }
};

/// The input coordinate of output coordinate `x` along a dim (ONNX's
/// coordinate_transformation_mode); `in` is the dim's size, `out` the
/// output length scale * in, `outSize` the output's (integer) size.
Value inputCoordinate(F64 &f, CoordinateMode mode, Value x, Value scale,
                      Value in, Value out, Value outSize, Value roiStart,
                      Value roiEnd) {
  Value half = f.c(0.5), one = f.c(1.0);
  Value halfPixel = f.sub(f.div(f.add(x, half), scale), half);
  switch (mode) {
  case CoordinateMode::half_pixel:
    return halfPixel;
  case CoordinateMode::half_pixel_symmetric: {
    Value adjustment = f.div(outSize, out);
    Value center = f.div(in, f.c(2.0));
    Value offset = f.mul(center, f.sub(one, adjustment));
    return f.add(offset, halfPixel);
  }
  case CoordinateMode::pytorch_half_pixel:
    return f.select(f.cmp(arith::CmpFPredicate::OGT, out, one), halfPixel,
                    f.c(0.0));
  case CoordinateMode::align_corners:
    return f.select(f.cmp(arith::CmpFPredicate::OEQ, out, one), f.c(0.0),
                    f.div(f.mul(x, f.sub(in, one)), f.sub(out, one)));
  case CoordinateMode::asymmetric:
    return f.div(x, scale);
  case CoordinateMode::tf_half_pixel_for_nn:
    return f.div(f.add(x, half), scale);
  case CoordinateMode::tf_crop_and_resize: {
    Value span = f.sub(in, one);
    Value stepped = f.add(
        f.mul(roiStart, span),
        f.div(f.mul(f.mul(x, f.sub(roiEnd, roiStart)), span), f.sub(out, one)));
    Value centered = f.mul(f.mul(half, f.add(roiStart, roiEnd)), span);
    return f.select(f.cmp(arith::CmpFPredicate::OGT, out, one), stepped,
                    centered);
  }
  }
  llvm_unreachable("unknown coordinate mode");
}

/// The Keys cubic weights of the four neighbours floor(x) - 1 ... + 2 at
/// fraction `t`.
SmallVector<Value> cubicWeights(F64 &f, Value t, double a) {
  Value A = f.c(a), one = f.c(1.0);
  // |s| in [1, 2): ((A|s| - 5A)|s| + 8A)|s| - 4A; |s| < 1:
  // ((A + 2)|s| - (A + 3))|s|^2 + 1.
  auto far = [&](Value s) {
    return f.sub(
        f.mul(f.add(f.mul(f.sub(f.mul(A, s), f.c(5 * a)), s), f.c(8 * a)), s),
        f.c(4 * a));
  };
  auto near = [&](Value s) {
    return f.add(
        f.mul(f.mul(f.sub(f.mul(f.c(a + 2), s), f.c(a + 3)), s), s), one);
  };
  Value rest = f.sub(one, t);
  return {far(f.add(t, one)), near(t), near(rest), far(f.add(rest, one))};
}

struct ResizeLowering : OpRewritePattern<ts::ResizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ts::ResizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    F64 f{rewriter, loc};
    DenseElementsAttr constantScales;
    matchPattern(op.getScales(), m_Constant(&constantScales));
    CoordinateMode mode = op.getCoordinateMode();
    bool crop = mode == CoordinateMode::tf_crop_and_resize;

    if (!op.getSizes() &&
        succeeded(integerUpsampling(rewriter, op, constantScales)))
      return success();

    auto read = [&](Value tensor, int64_t i) -> Value {
      Value v = tensor::ExtractOp::create(
          rewriter, loc, tensor,
          ValueRange{arith::ConstantIndexOp::create(rewriter, loc, i)});
      return arith::ExtFOp::create(rewriter, loc, rewriter.getF64Type(), v);
    };

    Value current = op.getInput();
    for (int64_t d = rank - 1; d >= 0; --d) {
      auto currentType = cast<RankedTensorType>(current.getType());
      int64_t inSize = currentType.getDimSize(d);
      int64_t outSize = resultType.getDimSize(d);
      if (constantScales && !crop && !op.getSizes() &&
          mode != CoordinateMode::tf_half_pixel_for_nn &&
          constantScales.getValues<APFloat>()[d].convertToDouble() == 1.0 &&
          !ShapedType::isDynamic(inSize) && inSize == outSize)
        continue;
      Value scale = read(op.getScales(), d);
      Value inDim = linalg::createOrFoldDimOp(rewriter, loc, current, d);
      Value inF = f.fromIndex(inDim);
      // A dynamic output size is the `sizes` operand's entry, else
      // floor(input size * scale) (ONNX).
      Value outDim;
      if (!ShapedType::isDynamic(outSize))
        outDim = arith::ConstantIndexOp::create(rewriter, loc, outSize);
      else if (op.getSizes())
        outDim = arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(),
            tensor::ExtractOp::create(
                rewriter, loc, op.getSizes(),
                ValueRange{arith::ConstantIndexOp::create(rewriter, loc, d)}));
      else
        outDim = arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(),
            arith::FPToSIOp::create(rewriter, loc, rewriter.getI64Type(),
                                    f.floor(f.mul(inF, scale))));
      // With sizes, the scale is size / input size, exactly (ONNX's rule;
      // the f32 ratio in `scales` rounds).
      if (op.getSizes())
        scale = f.div(f.fromIndex(outDim), inF);
      // ONNX's formulas use the output length as scale * input length, a
      // fraction when a scale does not divide evenly (align_corners,
      // pytorch_half_pixel, tf_crop_and_resize; half_pixel_symmetric
      // relates both). A product within f32 rounding of an integer (scales
      // computed from sizes) is that integer.
      Value outF = f.mul(scale, inF);
      Value nearestInt = math::RoundOp::create(rewriter, loc, outF);
      Value off = math::AbsFOp::create(rewriter, loc, f.sub(outF, nearestInt));
      Value tolerance =
          f.mul(f.c(1e-6), arith::MaximumFOp::create(rewriter, loc, nearestInt,
                                                     f.c(1.0)));
      outF = f.select(f.cmp(arith::CmpFPredicate::OLE, off, tolerance),
                      nearestInt, outF);
      Value outSizeF = f.fromIndex(outDim);
      Value roiStart, roiEnd;
      if (crop) {
        roiStart = read(op.getRoi(), d);
        roiEnd = read(op.getRoi(), rank + d);
      }
      SmallVector<int64_t> shape(currentType.getShape());
      shape[d] = outSize;
      auto stepType = RankedTensorType::get(shape, resultType.getElementType());
      SmallVector<Value> dynamicSizes;
      for (int64_t i = 0; i < stepType.getRank(); ++i)
        if (stepType.isDynamicDim(i))
          dynamicSizes.push_back(
              i == d ? outDim
                     : linalg::createOrFoldDimOp(rewriter, loc, current, i));
      Value init = emptyTensor(rewriter, loc, stepType, dynamicSizes);
      Value source = current;
      auto generic = linalg::GenericOp::create(
          rewriter, loc, stepType, ValueRange{}, init,
          ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &b, Location nloc, ValueRange) {
            F64 g{b, nloc};
            SmallVector<Value> at;
            for (int64_t i = 0; i < rank; ++i)
              at.push_back(linalg::IndexOp::create(b, nloc, i));
            Value x = g.fromIndex(at[d]);
            Value xIn = inputCoordinate(g, mode, x, scale, inF, outF,
                                        outSizeF, roiStart, roiEnd);
            Value value = interpolate(b, nloc, op, source, at, d, xIn, inDim);
            if (crop) {
              // Outside the input: the extrapolation value.
              Value outside = arith::OrIOp::create(
                  b, nloc,
                  g.cmp(arith::CmpFPredicate::OLT, xIn, g.c(0.0)),
                  g.cmp(arith::CmpFPredicate::OGT, xIn,
                        g.sub(inF, g.c(1.0))));
              Value fill = scalarConstant(b, nloc, value.getType(),
                                          op.getExtrapolationValue()
                                              .convertToDouble());
              value = arith::SelectOp::create(b, nloc, outside, fill, value);
            }
            linalg::YieldOp::create(b, nloc, value);
          });
      current = generic.getResult(0);
    }
    if (current.getType() != resultType)
      current = tensor::CastOp::create(rewriter, loc, resultType, current);
    rewriter.replaceOp(op, current);
    return success();
  }

  /// Nearest upsampling by whole factors where ONNX's rule picks input
  /// pixel floor(x / s) (asymmetric coordinates rounded down, as PyTorch
  /// exports `interpolate(mode="nearest")`; half-pixel ones rounded to the
  /// nearest, ties down, which comes to the same for whole factors): one
  /// copy whose reads are affine (x floordiv s), no coordinate arithmetic.
  static LogicalResult integerUpsampling(PatternRewriter &rewriter,
                                         ts::ResizeOp op,
                                         DenseElementsAttr scales) {
    using ts::ResizeNearestMode;
    CoordinateMode mode = op.getCoordinateMode();
    ResizeNearestMode rounding = op.getNearestMode();
    if (!scales || op.getMode() != ts::ResizeMode::nearest ||
        !((mode == CoordinateMode::asymmetric &&
           rounding == ResizeNearestMode::floor) ||
          (mode == CoordinateMode::half_pixel &&
           rounding == ResizeNearestMode::round_prefer_floor)))
      return failure();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    SmallVector<int64_t> factors;
    for (int64_t d = 0; d < rank; ++d) {
      double scale = scales.getValues<APFloat>()[d].convertToDouble();
      int64_t factor = static_cast<int64_t>(scale);
      int64_t in = inType.getDimSize(d), out = resultType.getDimSize(d);
      if (factor < 1 || static_cast<double>(factor) != scale ||
          ShapedType::isDynamic(in) != ShapedType::isDynamic(out) ||
          (!ShapedType::isDynamic(in) && in * factor != out))
        return failure();
      factors.push_back(factor);
      AffineExpr x = getAffineDimExpr(d, ctx);
      reads.push_back(factor == 1 ? x : x.floorDiv(factor));
    }
    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (resultType.isDynamicDim(d))
        dynamicSizes.push_back(arith::MulIOp::create(
            rewriter, loc,
            linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d),
            arith::ConstantIndexOp::create(rewriter, loc, factors[d])));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{op.getInput()},
        ValueRange{emptyTensor(rewriter, loc, resultType, dynamicSizes)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, reads, ctx),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  /// The value at input coordinate `xIn` along dim `d`, the other
  /// coordinates being `at`'s.
  static Value interpolate(OpBuilder &b, Location loc, ts::ResizeOp op,
                           Value source, ArrayRef<Value> at, int64_t d,
                           Value xIn, Value size) {
    F64 f{b, loc};
    auto readAt = [&](Value index) -> Value {
      SmallVector<Value> where(at);
      where[d] = index;
      return tensor::ExtractOp::create(b, loc, source, where);
    };
    Value low = f.floor(xIn);
    Value t = f.sub(xIn, low);
    if (op.getMode() == ts::ResizeMode::nearest) {
      Value picked;
      switch (op.getNearestMode()) {
      case ts::ResizeNearestMode::round_prefer_floor:
        picked = f.select(f.cmp(arith::CmpFPredicate::OGT, t, f.c(0.5)),
                          f.add(low, f.c(1.0)), low);
        break;
      case ts::ResizeNearestMode::round_prefer_ceil:
        picked = f.select(f.cmp(arith::CmpFPredicate::OGE, t, f.c(0.5)),
                          f.add(low, f.c(1.0)), low);
        break;
      case ts::ResizeNearestMode::floor:
        picked = low;
        break;
      case ts::ResizeNearestMode::ceil:
        picked = f.ceil(xIn);
        break;
      }
      return readAt(f.clampedIndex(picked, size));
    }
    SmallVector<Value> weights;
    int64_t first;
    if (op.getMode() == ts::ResizeMode::linear) {
      weights = {f.sub(f.c(1.0), t), t};
      first = 0;
    } else {
      weights = cubicWeights(f, t, op.getCubicCoeffA().convertToDouble());
      first = -1;
    }
    SmallVector<Value> positions;
    for (int64_t i = 0; i < static_cast<int64_t>(weights.size()); ++i)
      positions.push_back(f.add(low, f.c(static_cast<double>(first + i))));
    if (op.getExcludeOutside()) {
      // Neighbours beyond the edge get weight 0; the rest renormalize.
      Value last = f.sub(f.fromIndex(size), f.c(1.0));
      Value total = f.c(0.0);
      for (auto [w, p] : llvm::zip(weights, positions)) {
        Value inside = arith::AndIOp::create(
            b, loc, f.cmp(arith::CmpFPredicate::OGE, p, f.c(0.0)),
            f.cmp(arith::CmpFPredicate::OLE, p, last));
        w = f.select(inside, w, f.c(0.0));
        total = f.add(total, w);
      }
      for (Value &w : weights)
        w = f.div(w, total);
    }
    Type elementType = op.getType().getElementType();
    Value sum;
    for (auto [w, p] : llvm::zip(weights, positions)) {
      Value v = readAt(f.clampedIndex(p, size));
      Value vf = elementType.isF64() ? v
                                     : arith::ExtFOp::create(
                                           b, loc, b.getF64Type(), v)
                                           .getResult();
      Value term = f.mul(w, vf);
      sum = sum ? f.add(sum, term) : term;
    }
    return arith::TruncFOp::create(b, loc, elementType, sum);
  }
};

} // namespace

void populateResizePatterns(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}

} // namespace tessera::to_linalg
