//===- DataMovement.cpp - reshapes, slices, gathers and constants to linalg ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

struct ConstantLowering : OpRewritePattern<ts::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<ts::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes;
    for (auto [i, dim] : llvm::enumerate(op.getPermutation()))
      if (op.getType().isDynamicDim(i))
        dynamicSizes.push_back(
            linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), dim));
    Value init = emptyTensor(rewriter, loc, op.getType(), dynamicSizes);
    rewriter.replaceOp(op, linalg::TransposeOp::create(
                               rewriter, loc, op.getInput(), init,
                               op.getPermutation())
                               ->getResult(0));
    return success();
  }
};

Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// For static shapes: the groups of `from`'s and `to`'s dims whose sizes
/// have equal products, in order (197x1x768 and 197x12x64: {0}-{0},
/// {1, 2}-{1, 2}); none when a dim is 0 or the shapes differ in size.
std::optional<std::pair<SmallVector<ReassociationIndices>,
                        SmallVector<ReassociationIndices>>>
commonGroups(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0) ||
      from.empty() || to.empty())
    return std::nullopt;
  SmallVector<ReassociationIndices> fromGroups, toGroups;
  size_t i = 0, j = 0;
  while (i < from.size() && j < to.size()) {
    ReassociationIndices f = {static_cast<int64_t>(i)},
                         t = {static_cast<int64_t>(j)};
    int64_t a = from[i++], b = to[j++];
    while (a != b) {
      if (a < b && i < from.size()) {
        f.push_back(i);
        a *= from[i++];
      } else if (b < a && j < to.size()) {
        t.push_back(j);
        b *= to[j++];
      } else {
        return std::nullopt;
      }
    }
    fromGroups.push_back(f);
    toGroups.push_back(t);
  }
  // Trailing unit dims join the last group.
  for (; i < from.size(); ++i) {
    if (from[i] != 1)
      return std::nullopt;
    fromGroups.back().push_back(i);
  }
  for (; j < to.size(); ++j) {
    if (to[j] != 1)
      return std::nullopt;
    toGroups.back().push_back(j);
  }
  return std::make_pair(fromGroups, toGroups);
}

/// tessera.reshape as tensor.reshape with the result's shape computed at
/// run time where it is dynamic (ONNX's 0 and -1 in a shape operand); with
/// static shapes, as a collapse of the input's dims into the groups both
/// shapes share and an expansion of those into the result's, which read a
/// strided input (a slice of q, k and v) in place where tensor.reshape
/// copies it.
struct ReshapeLowering : OpRewritePattern<ts::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getInput().getType().hasStaticShape() &&
        op.getType().hasStaticShape()) {
      ArrayRef<int64_t> from = op.getInput().getType().getShape(),
                        to = op.getType().getShape();
      if (auto groups = commonGroups(from, to)) {
        Value value = op.getInput();
        if (groups->first.size() != from.size())
          value = tensor::CollapseShapeOp::create(rewriter, loc, value,
                                                  groups->first);
        if (groups->second.size() != to.size())
          value = tensor::ExpandShapeOp::create(rewriter, loc, op.getType(),
                                                value, groups->second);
        rewriter.replaceOp(op, value);
        return success();
      }
    }
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType outType = op.getType();
    Value input = op.getInput();
    int64_t rank = outType.getRank();
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t i = 0; i < inType.getRank(); ++i)
      total = arith::MulIOp::create(
          rewriter, loc, total,
          linalg::createOrFoldDimOp(rewriter, loc, input, i));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value minusOne = arith::ConstantIndexOp::create(rewriter, loc, -1);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    // First pass: each dim's value, -1 where it must be inferred.
    SmallVector<Value> dims;
    SmallVector<int64_t> inputDynamic;
    for (int64_t i = 0; i < inType.getRank(); ++i)
      if (inType.isDynamicDim(i))
        inputDynamic.push_back(i);
    bool unitOnly = !op.getShape() && outType.getNumDynamicDims() > 1;
    size_t nextDynamic = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (!outType.isDynamicDim(i)) {
        dims.push_back(
            arith::ConstantIndexOp::create(rewriter, loc, outType.getDimSize(i)));
      } else if (op.getShape()) {
        Value index = arith::ConstantIndexOp::create(rewriter, loc, i);
        Value v = toIndex(rewriter, loc,
                          tensor::ExtractOp::create(rewriter, loc,
                                                    op.getShape(), index));
        if (i < inType.getRank()) {
          Value isCopy = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::eq, v, zero);
          v = arith::SelectOp::create(
              rewriter, loc, isCopy,
              linalg::createOrFoldDimOp(rewriter, loc, input, i), v);
        }
        dims.push_back(v);
      } else if (unitOnly && nextDynamic < inputDynamic.size()) {
        dims.push_back(linalg::createOrFoldDimOp(rewriter, loc, input,
                                                 inputDynamic[nextDynamic++]));
      } else {
        dims.push_back(minusOne);
      }
    }
    // Second pass: a -1 is the element count over the other dims.
    Value known = one;
    for (Value d : dims) {
      Value isInferred = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, d, minusOne);
      known = arith::MulIOp::create(
          rewriter, loc, known,
          arith::SelectOp::create(rewriter, loc, isInferred, one, d));
    }
    // An empty tensor makes the inferred dim 0 (and must not divide by 0).
    Value knownIsZero = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, known, zero);
    Value divisor =
        arith::SelectOp::create(rewriter, loc, knownIsZero, one, known);
    Value inferred = arith::SelectOp::create(
        rewriter, loc, knownIsZero, zero,
        arith::DivUIOp::create(rewriter, loc, total, divisor));
    for (Value &d : dims) {
      Value isInferred = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, d, minusOne);
      d = arith::SelectOp::create(rewriter, loc, isInferred, inferred, d);
    }
    Value shape = tensor::FromElementsOp::create(rewriter, loc, dims);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, outType, input, shape);
    return success();
  }
};

/// expand: a broadcasting copy; dynamic result dims come from the shape
/// operand (ONNX: the broadcast of the input's shape and `shape`).
struct ExpandLowering : OpRewritePattern<ts::ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ExpandOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    RankedTensorType inType = op.getInput().getType();
    int64_t rank = outType.getRank(), offset = rank - inType.getRank();
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!outType.isDynamicDim(i))
        continue;
      if (!op.getShape())
        return rewriter.notifyMatchFailure(op, "dynamic dims without shape");
      int64_t shapeLength = cast<RankedTensorType>(op.getShape().getType())
                                .getDimSize(0);
      Value index = arith::ConstantIndexOp::create(
          rewriter, loc, i - (rank - shapeLength));
      Value v = toIndex(rewriter, loc,
                        tensor::ExtractOp::create(rewriter, loc,
                                                  op.getShape(), index));
      if (i >= offset && inType.getDimSize(i - offset) != 1) {
        Value in =
            linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), i - offset);
        v = arith::MaxUIOp::create(rewriter, loc, v, in);
      }
      dynamicSizes.push_back(v);
    }
    MLIRContext *ctx = rewriter.getContext();
    Value init = emptyTensor(rewriter, loc, outType, dynamicSizes);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, op.getInput(), init,
        ArrayRef<AffineMap>{broadcastMap(ctx, inType, outType),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location nloc, ValueRange args) {
          linalg::YieldOp::create(b, nloc, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ts::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(),
                                             op.getType().getRank());
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, op.getType(), axis,
                                                  op.getInputs());
    return success();
  }
};

struct SplitLowering : OpRewritePattern<ts::SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::SplitOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    int64_t rank = inType.getRank();
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(), rank);
    Value offset = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> results;
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      Value piece;
      for (int64_t d = 0; d < rank; ++d) {
        Value size;
        if (d != axis)
          size = linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d);
        else if (!type.isDynamicDim(d))
          size = arith::ConstantIndexOp::create(rewriter, loc,
                                                type.getDimSize(d));
        else // equal pieces of a dynamic dim
          size = arith::DivUIOp::create(
              rewriter, loc,
              linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d),
              arith::ConstantIndexOp::create(rewriter, loc,
                                             op.getNumResults()));
        if (d == axis)
          piece = size;
        sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(size)
                                             : rewriter.getIndexAttr(
                                                   type.getDimSize(d)));
      }
      offsets[axis] = offset;
      results.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, type, op.getInput(), offsets, sizes, strides));
      offset = arith::AddIOp::create(rewriter, loc, offset, piece);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// slice on static dims: an extract_slice for positive steps, a gathering
/// generic (index arithmetic) for negative ones.
struct SliceLowering : OpRewritePattern<ts::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType outType = op.getType();
    int64_t rank = inType.getRank();
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    ArrayRef<int64_t> given = op.getStarts();
    SmallVector<int64_t> axes =
        op.getAxes() ? SmallVector<int64_t>(*op.getAxes())
                     : llvm::to_vector(llvm::seq<int64_t>(0, given.size()));
    bool backwards = false;
    for (auto [i, a] : llvm::enumerate(axes)) {
      int64_t axis = a < 0 ? a + rank : a;
      int64_t dim = inType.getDimSize(axis);
      if (ShapedType::isDynamic(dim))
        return rewriter.notifyMatchFailure(op, "slice of a dynamic dim");
      int64_t step = op.getSteps() ? (*op.getSteps())[i] : 1;
      int64_t start = given[i] < 0 ? given[i] + dim : given[i];
      start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                       : std::clamp<int64_t>(start, 0, dim - 1);
      starts[axis] = start;
      steps[axis] = step;
      backwards |= step < 0;
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < rank; ++d) {
      offsets.push_back(rewriter.getIndexAttr(starts[d]));
      sizes.push_back(outType.isDynamicDim(d)
                          ? OpFoldResult(linalg::createOrFoldDimOp(
                                rewriter, loc, op.getInput(), d))
                          : rewriter.getIndexAttr(outType.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(steps[d]));
    }
    if (!backwards) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, outType, op.getInput(), offsets, sizes, strides);
      return success();
    }
    Value input = op.getInput();
    Value result = buildElementwise(
        rewriter, loc, outType, ValueRange{},
        [&](OpBuilder &b, Location nloc, ValueRange) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, nloc, d);
            Value scaled = arith::MulIOp::create(
                b, nloc, i, arith::ConstantIndexOp::create(b, nloc, steps[d]));
            indices.push_back(arith::AddIOp::create(
                b, nloc, scaled,
                arith::ConstantIndexOp::create(b, nloc, starts[d])));
          }
          return tensor::ExtractOp::create(b, nloc, input, indices);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// gather: each result element reads input[..., indices[...], ...], with
/// negative indices counting from the back.
struct GatherLowering : OpRewritePattern<ts::GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  /// A gather of one constant index (a scalar or a one-element vector:
  /// `qkv[0]` after a transpose, `x[:, -1]`) within the axis's static size
  /// is a slice of the input: a view that the consumers read in place,
  /// instead of a copy that computes each element's index.
  static LogicalResult lowerAsSlice(ts::GatherOp op, int64_t axis,
                                    PatternRewriter &rewriter) {
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType idxType = op.getIndices().getType();
    DenseIntElementsAttr constant;
    if (idxType.getRank() > 1 || !idxType.hasStaticShape() ||
        idxType.getNumElements() != 1 ||
        !matchPattern(op.getIndices(), m_Constant(&constant)))
      return failure();
    int64_t index = (*constant.begin()).getSExtValue();
    int64_t size = inType.getDimSize(axis);
    if (ShapedType::isDynamic(size) || index < -size || index >= size)
      return failure();
    if (index < 0)
      index += size;
    // The result's type is the input's with the axis cut to 1 (dropped for
    // a scalar index), as gather's verifier holds: the slice's.
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> offsets, sizes,
        strides(inType.getRank(), rewriter.getIndexAttr(1));
    for (int64_t d = 0; d < inType.getRank(); ++d) {
      offsets.push_back(rewriter.getIndexAttr(d == axis ? index : 0));
      int64_t dim = d == axis ? 1 : inType.getDimSize(d);
      sizes.push_back(ShapedType::isDynamic(dim)
                          ? OpFoldResult(linalg::createOrFoldDimOp(
                                rewriter, loc, op.getInput(), d))
                          : rewriter.getIndexAttr(dim));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getInput(), offsets, sizes, strides);
    return success();
  }

  LogicalResult matchAndRewrite(ts::GatherOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType idxType = op.getIndices().getType();
    RankedTensorType outType = op.getType();
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(), inType.getRank());
    int64_t idxRank = idxType.getRank();
    if (succeeded(lowerAsSlice(op, axis, rewriter)))
      return success();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < idxRank; ++i)
      idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
    AffineMap idxMap = AffineMap::get(outType.getRank(), 0, idxExprs, ctx);
    Value input = op.getInput();
    Value axisSize = linalg::createOrFoldDimOp(rewriter, loc, input, axis);
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (!outType.isDynamicDim(d))
        continue;
      if (d < axis)
        dynamicSizes.push_back(
            linalg::createOrFoldDimOp(rewriter, loc, input, d));
      else if (d < axis + idxRank)
        dynamicSizes.push_back(linalg::createOrFoldDimOp(
            rewriter, loc, op.getIndices(), d - axis));
      else
        dynamicSizes.push_back(
            linalg::createOrFoldDimOp(rewriter, loc, input, d - idxRank + 1));
    }
    Value init = emptyTensor(rewriter, loc, outType, dynamicSizes);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, op.getIndices(), init,
        ArrayRef<AffineMap>{idxMap,
                            rewriter.getMultiDimIdentityMap(outType.getRank())},
        SmallVector<utils::IteratorType>(outType.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value raw = toIndex(b, nloc, args[0]);
          Value negative = arith::CmpIOp::create(
              b, nloc, arith::CmpIPredicate::slt, raw,
              arith::ConstantIndexOp::create(b, nloc, 0));
          Value index = arith::SelectOp::create(
              b, nloc, negative, arith::AddIOp::create(b, nloc, raw, axisSize),
              raw);
          SmallVector<Value> indices;
          for (int64_t d = 0; d < inType.getRank(); ++d) {
            if (d == axis)
              indices.push_back(index);
            else
              indices.push_back(linalg::IndexOp::create(
                  b, nloc, d < axis ? d : d + idxRank - 1));
          }
          linalg::YieldOp::create(
              b, nloc, tensor::ExtractOp::create(b, nloc, input, indices)
                           .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ShapeLowering : OpRewritePattern<ts::ShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ShapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> dims;
    for (int64_t d = 0; d < op.getInput().getType().getRank(); ++d)
      dims.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(),
          linalg::createOrFoldDimOp(rewriter, loc, op.getInput(), d)));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), dims);
    return success();
  }
};

/// range: max(ceil((limit - start) / delta), 0) elements start + i * delta.
struct RangeLowering : OpRewritePattern<ts::RangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::RangeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType().getElementType();
    auto scalar = [&](Value v) {
      return tensor::ExtractOp::create(rewriter, loc, v, ValueRange{})
          .getResult();
    };
    Value start = scalar(op.getStart()), limit = scalar(op.getLimit()),
          delta = scalar(op.getDelta());
    Value count;
    if (isa<FloatType>(type)) {
      Value span = arith::SubFOp::create(rewriter, loc, limit, start);
      Value steps = math::CeilOp::create(
          rewriter, loc, arith::DivFOp::create(rewriter, loc, span, delta));
      count = arith::FPToSIOp::create(rewriter, loc, rewriter.getI64Type(),
                                      steps);
    } else {
      Value span = arith::SubIOp::create(rewriter, loc, limit, start);
      count = castScalar(
          rewriter, loc, arith::CeilDivSIOp::create(rewriter, loc, span, delta),
          rewriter.getI64Type());
    }
    count = arith::MaxSIOp::create(
        rewriter, loc, count,
        scalarConstant(rewriter, loc, rewriter.getI64Type(), 0));
    Value size = toIndex(rewriter, loc, count);
    auto generate = tensor::GenerateOp::create(
        rewriter, loc, op.getType(), ValueRange{size},
        [&](OpBuilder &b, Location nloc, ValueRange indices) {
          Value i = arith::IndexCastOp::create(b, nloc, b.getI64Type(),
                                               indices[0]);
          Value step = mulScalar(b, nloc, castScalar(b, nloc, i, type), delta);
          tensor::YieldOp::create(b, nloc, addScalar(b, nloc, start, step));
        });
    rewriter.replaceOp(op, generate.getResult());
    return success();
  }
};

/// A fusion region's body runs in place; backends that compile regions as
/// kernels do so before this lowering.
struct FusionInlining : OpRewritePattern<ts::FusionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::FusionOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<ts::YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&body, op);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// quantize: saturate(round_even(x / s) + zp) for integers, the
/// saturating cast of x / s for fp8 (no zero point).
/// dequantize: (x - zp) * s. Per-channel scales read along `axis`.
template <typename OpTy, bool Quantize>
struct QuantLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto outType = cast<RankedTensorType>(op.getType());
    Type outElement = outType.getElementType();
    Type quantElement = Quantize ? outElement
                                 : op.getInput().getType().getElementType();
    bool fp8 = isa<FloatType>(quantElement);
    int64_t rank = outType.getRank();
    auto paramMap = [&](Value param) {
      auto type = cast<RankedTensorType>(param.getType());
      if (!op.getAxis() || type.getRank() == 0)
        return AffineMap::get(rank, 0,
                              SmallVector<AffineExpr>(
                                  type.getRank(), getAffineConstantExpr(0, ctx)),
                              ctx);
      int64_t axis = *::tessera::normalizeAxis(*op.getAxis(), rank);
      return AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)}, ctx);
    };
    SmallVector<Value> inputs = {op.getInput(), op.getScale()};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   paramMap(op.getScale())};
    if (op.getZeroPoint()) {
      inputs.push_back(op.getZeroPoint());
      maps.push_back(paramMap(op.getZeroPoint()));
    }
    Value result = buildElementwise(
        rewriter, loc, outType, inputs,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Type f32 = b.getF32Type();
          Value scale = castScalar(b, nloc, args[1], f32);
          Value zp = args.size() > 2 ? castScalar(b, nloc, args[2], f32)
                                     : scalarConstant(b, nloc, f32, 0.0);
          Value x = castScalar(b, nloc, args[0], f32);
          if (!Quantize) {
            Value centered = arith::SubFOp::create(b, nloc, x, zp);
            return castScalar(b, nloc,
                              arith::MulFOp::create(b, nloc, centered, scale),
                              outElement);
          }
          if (fp8)
            // The cast of x / scale rounds to nearest even and saturates.
            return castScalar(b, nloc,
                              arith::DivFOp::create(b, nloc, x, scale),
                              outElement);
          Value q = math::RoundEvenOp::create(
              b, nloc, arith::DivFOp::create(b, nloc, x, scale));
          q = arith::AddFOp::create(b, nloc, q, zp);
          unsigned width = outElement.getIntOrFloatBitWidth();
          double lo = -std::ldexp(1.0, width - 1), hi = -lo - 1;
          q = arith::MaximumFOp::create(b, nloc, q,
                                        scalarConstant(b, nloc, f32, lo));
          q = arith::MinimumFOp::create(b, nloc, q,
                                        scalarConstant(b, nloc, f32, hi));
          return arith::FPToSIOp::create(b, nloc, outElement, q);
        },
        maps);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, TransposeLowering, ReshapeLowering,
               ExpandLowering, ConcatLowering, SplitLowering, SliceLowering,
               GatherLowering, ShapeLowering, RangeLowering, FusionInlining,
               QuantLowering<ts::QuantizeOp, true>,
               QuantLowering<ts::DequantizeOp, false>>(patterns.getContext());
}

} // namespace tessera::to_linalg
