//===- Reduction.cpp - reductions, softmax and normalizations to linalg ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each composite op becomes a few generics: reductions over the normalized
// dims, then one elementwise pass that reads the per-row statistics through
// a map that drops those dims.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// Reads a reduced tensor (the dims in `reduced` dropped) from a loop nest
/// over the full rank.
AffineMap statisticMap(MLIRContext *ctx, int64_t rank,
                       ArrayRef<int64_t> reduced) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(reduced, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<int64_t> trailingDims(int64_t axis, int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(axis < 0 ? axis + rank : axis,
                                            rank));
}

template <typename OpTy, ReduceKind Kind, bool Mean = false>
struct ReduceLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    SmallVector<int64_t> dims;
    for (int64_t axis : op.getAxes())
      dims.push_back(*::tessera::normalizeAxis(axis, inputType.getRank()));
    llvm::sort(dims);
    Value result = buildReduction(rewriter, loc, op.getInput(), dims, Kind);
    if (Mean) {
      auto type = cast<RankedTensorType>(result.getType());
      Value count = elementCount(rewriter, loc, op.getInput(), dims,
                                 type.getElementType());
      result = buildElementwise(
          rewriter, loc, type, result,
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            if (isa<FloatType>(args[0].getType()))
              return arith::DivFOp::create(b, nloc, args[0], count);
            return arith::DivSIOp::create(b, nloc, args[0], count);
          });
    }
    if (op.getKeepdims())
      result = expandUnitDims(rewriter, loc, result, dims);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// softmax: exp(x - max) / sum; log_softmax: x - max - log(sum).
template <typename OpTy, bool Log>
struct SoftmaxLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> axis = {*::tessera::normalizeAxis(op.getAxis(), rank)};
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rowMap = statisticMap(ctx, rank, axis);
    Value x = op.getInput();
    Value max = buildReduction(rewriter, loc, x, axis, ReduceKind::Max);
    Value shifted = buildElementwise(
        rewriter, loc, type, ValueRange{x, max},
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return arith::SubFOp::create(b, nloc, args[0], args[1]);
        },
        {identity, rowMap});
    Value exps = buildElementwise(
        rewriter, loc, type, shifted,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return math::ExpOp::create(b, nloc, args[0]);
        });
    Value sum = buildReduction(rewriter, loc, exps, axis, ReduceKind::Sum);
    Value result = buildElementwise(
        rewriter, loc, type, ValueRange{Log ? shifted : exps, sum},
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          if (Log)
            return arith::SubFOp::create(
                b, nloc, args[0], math::LogOp::create(b, nloc, args[1]));
          return arith::DivFOp::create(b, nloc, args[0], args[1]);
        },
        {identity, rowMap});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Shared by layer_norm (centered) and rms_norm (not centered):
/// y = (x - mean?) / sqrt(mean(sq) + eps) * scale + bias.
Value normalize(PatternRewriter &rewriter, Location loc, Value x,
                int64_t axis, double epsilon, bool centered, Value scale,
                Value bias) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  Type elementType = type.getElementType();
  int64_t rank = type.getRank();
  SmallVector<int64_t> dims = trailingDims(axis, rank);
  AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
  AffineMap rowMap = statisticMap(ctx, rank, dims);
  Value count = elementCount(rewriter, loc, x, dims, elementType);
  auto divideByCount = [&](Value sum) {
    return buildElementwise(
        rewriter, loc, cast<RankedTensorType>(sum.getType()), sum,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return arith::DivFOp::create(b, nloc, args[0], count);
        });
  };
  Value centeredX = x;
  if (centered) {
    Value mean =
        divideByCount(buildReduction(rewriter, loc, x, dims, ReduceKind::Sum));
    centeredX = buildElementwise(
        rewriter, loc, type, ValueRange{x, mean},
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return arith::SubFOp::create(b, nloc, args[0], args[1]);
        },
        {identity, rowMap});
  }
  Value squares = buildElementwise(
      rewriter, loc, type, centeredX,
      [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
        return arith::MulFOp::create(b, nloc, args[0], args[0]);
      });
  Value variance = divideByCount(
      buildReduction(rewriter, loc, squares, dims, ReduceKind::Sum));
  SmallVector<Value> inputs = {centeredX, variance};
  SmallVector<AffineMap> maps = {identity, rowMap};
  for (Value param : {scale, bias}) {
    if (!param)
      continue;
    inputs.push_back(param);
    maps.push_back(
        broadcastMap(ctx, cast<ShapedType>(param.getType()), type));
  }
  return buildElementwise(
      rewriter, loc, type, inputs,
      [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
        Value eps = scalarConstant(b, nloc, elementType, epsilon);
        Value inv = math::RsqrtOp::create(
            b, nloc, arith::AddFOp::create(b, nloc, args[1], eps));
        Value y = arith::MulFOp::create(b, nloc, args[0], inv);
        size_t next = 2;
        if (scale)
          y = arith::MulFOp::create(
              b, nloc, y, castScalar(b, nloc, args[next++], elementType));
        if (bias)
          y = arith::AddFOp::create(
              b, nloc, y, castScalar(b, nloc, args[next++], elementType));
        return y;
      },
      maps);
}

struct LayerNormLowering : OpRewritePattern<ts::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, normalize(rewriter, op.getLoc(), op.getInput(),
                                     op.getAxis(),
                                     op.getEpsilon().convertToDouble(),
                                     /*centered=*/true, op.getScale(),
                                     op.getBias()));
    return success();
  }
};

struct RmsNormLowering : OpRewritePattern<ts::RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, normalize(rewriter, op.getLoc(), op.getInput(),
                                     op.getAxis(),
                                     op.getEpsilon().convertToDouble(),
                                     /*centered=*/false, op.getScale(),
                                     Value()));
    return success();
  }
};

/// argmax/argmin: one reduction generic carrying the best value and its
/// index; ties keep the first index unless select_last_index.
template <typename OpTy, bool Max>
struct ArgReduceLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    int64_t rank = inType.getRank();
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(), rank);
    Type elementType = inType.getElementType();
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      shape.push_back(inType.getDimSize(d));
      if (inType.isDynamicDim(d))
        dynamicSizes.push_back(
            linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d));
    }
    auto valueType = RankedTensorType::get(shape, elementType);
    auto indexType = RankedTensorType::get(shape, rewriter.getI64Type());
    Value values = linalg::FillOp::create(
                       rewriter, loc,
                       buildReductionIdentity(rewriter, loc, elementType,
                                              Max ? ReduceKind::Max
                                                  : ReduceKind::Min),
                       emptyTensor(rewriter, loc, valueType, dynamicSizes))
                       .getResult(0);
    Value indices =
        linalg::FillOp::create(
            rewriter, loc,
            scalarConstant(rewriter, loc, rewriter.getI64Type(), 0),
            emptyTensor(rewriter, loc, indexType, dynamicSizes))
            .getResult(0);
    AffineMap rowMap = statisticMap(ctx, rank, {axis});
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    bool last = op.getSelectLastIndex();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, indexType}, op.getInput(),
        ValueRange{values, indices},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), rowMap,
                            rowMap},
        iterators, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isa<FloatType>(elementType))
            better = arith::CmpFOp::create(
                b, nloc,
                Max ? (last ? arith::CmpFPredicate::OGE
                            : arith::CmpFPredicate::OGT)
                    : (last ? arith::CmpFPredicate::OLE
                            : arith::CmpFPredicate::OLT),
                x, best);
          else
            better = arith::CmpIOp::create(
                b, nloc,
                Max ? (last ? arith::CmpIPredicate::sge
                            : arith::CmpIPredicate::sgt)
                    : (last ? arith::CmpIPredicate::sle
                            : arith::CmpIPredicate::slt),
                x, best);
          Value i = arith::IndexCastOp::create(
              b, nloc, b.getI64Type(), linalg::IndexOp::create(b, nloc, axis));
          linalg::YieldOp::create(
              b, nloc,
              ValueRange{arith::SelectOp::create(b, nloc, better, x, best),
                         arith::SelectOp::create(b, nloc, better, i,
                                                 bestIndex)});
        });
    Value result = generic.getResult(1);
    if (op.getKeepdims())
      result = expandUnitDims(rewriter, loc, result, {axis});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ts::ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<ts::ReduceMeanOp, ReduceKind::Sum, true>,
               ReduceLowering<ts::ReduceMaxOp, ReduceKind::Max>,
               ReduceLowering<ts::ReduceMinOp, ReduceKind::Min>,
               ReduceLowering<ts::ReduceProdOp, ReduceKind::Prod>,
               SoftmaxLowering<ts::SoftmaxOp, false>,
               SoftmaxLowering<ts::LogSoftmaxOp, true>, LayerNormLowering,
               ArgReduceLowering<ts::ArgMaxOp, true>,
               ArgReduceLowering<ts::ArgMinOp, false>,
               RmsNormLowering>(patterns.getContext());
}

} // namespace tessera::to_linalg
