//===- Indexing.cpp - gather_elements, gather_nd and the scatters to linalg/scf //
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Gathers are parallel generics over the result whose element reads the
// input at a computed position (tensor.extract). Scatters copy the data and
// apply their updates in order with an scf.for nest threading the tensor
// (tensor.insert / insert_slice), so that repeated indices behave as ONNX
// says: the last update wins, or all of them combine.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// `raw` (an integer index read from the model) as an index, counted from
/// the back of a dim of `size` when negative.
Value normalizedIndex(OpBuilder &b, Location loc, Value raw, Value size) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                            arith::ConstantIndexOp::create(b, loc, 0));
  return arith::SelectOp::create(b, loc, negative,
                                 arith::AddIOp::create(b, loc, index, size),
                                 index);
}

/// The dynamic sizes of `type` read from `source` dim by dim (same shape).
SmallVector<Value> dynamicSizesLike(OpBuilder &b, Location loc,
                                    RankedTensorType type, Value source) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(linalg::createOrFoldDimOp(b, loc, source, d));
  return sizes;
}

/// Combines an update with the element it lands on.
Value combine(OpBuilder &b, Location loc, ts::ScatterReduction reduction,
              Value old, Value update) {
  bool isFloat = isa<FloatType>(update.getType());
  switch (reduction) {
  case ts::ScatterReduction::none:
    return update;
  case ts::ScatterReduction::add:
    return addScalar(b, loc, old, update);
  case ts::ScatterReduction::mul:
    return mulScalar(b, loc, old, update);
  case ts::ScatterReduction::max:
    return isFloat ? arith::MaximumFOp::create(b, loc, old, update).getResult()
                   : arith::MaxSIOp::create(b, loc, old, update).getResult();
  case ts::ScatterReduction::min:
    return isFloat ? arith::MinimumFOp::create(b, loc, old, update).getResult()
                   : arith::MinSIOp::create(b, loc, old, update).getResult();
  }
  llvm_unreachable("unknown scatter reduction");
}

struct GatherElementsLowering : OpRewritePattern<ts::GatherElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    int64_t rank = outType.getRank();
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(), rank);
    Value input = op.getInput();
    Value axisSize = linalg::createOrFoldDimOp(rewriter, loc, input, axis);
    Value init = emptyTensor(rewriter, loc, outType,
                             dynamicSizesLike(rewriter, loc, outType,
                                              op.getIndices()));
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, op.getIndices(), init,
        ArrayRef<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(d == axis
                             ? normalizedIndex(b, nloc, args[0], axisSize)
                             : linalg::IndexOp::create(b, nloc, d).getResult());
          linalg::YieldOp::create(
              b, nloc, tensor::ExtractOp::create(b, nloc, input, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct GatherNDLowering : OpRewritePattern<ts::GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    Value input = op.getInput(), indices = op.getIndices();
    int64_t batch = op.getBatchDims();
    int64_t idxRank = op.getIndices().getType().getRank();
    int64_t k = op.getIndices().getType().getShape().back();
    int64_t outer = idxRank - 1; // result dims from indices
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (outType.isDynamicDim(d))
        dynamicSizes.push_back(
            d < outer
                ? linalg::createOrFoldDimOp(rewriter, loc, indices, d)
                : linalg::createOrFoldDimOp(rewriter, loc, input,
                                            d - outer + batch + k));
    SmallVector<Value> inputSizes;
    for (int64_t j = 0; j < k; ++j)
      inputSizes.push_back(
          linalg::createOrFoldDimOp(rewriter, loc, input, batch + j));
    Value init = emptyTensor(rewriter, loc, outType, dynamicSizes);
    int64_t rank = outType.getRank();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location nloc, ValueRange) {
          SmallVector<Value> outerIdx, at;
          for (int64_t d = 0; d < outer; ++d)
            outerIdx.push_back(linalg::IndexOp::create(b, nloc, d));
          for (int64_t d = 0; d < batch; ++d)
            at.push_back(outerIdx[d]);
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> where(outerIdx);
            where.push_back(arith::ConstantIndexOp::create(b, nloc, j));
            Value raw = tensor::ExtractOp::create(b, nloc, indices, where);
            at.push_back(normalizedIndex(b, nloc, raw, inputSizes[j]));
          }
          for (int64_t d = outer; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, nloc, d));
          linalg::YieldOp::create(
              b, nloc, tensor::ExtractOp::create(b, nloc, input, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// One loop per dim of `type` (read from `shaped`), threading `init`; the
/// body gets the induction variables and the current tensor and returns
/// the next.
Value buildTensorLoopNest(
    OpBuilder &b, Location loc, Value shaped, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  auto type = cast<RankedTensorType>(shaped.getType());
  SmallVector<Value> lbs, ubs, steps;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    lbs.push_back(zero);
    ubs.push_back(linalg::createOrFoldDimOp(b, loc, shaped, d));
    steps.push_back(one);
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs,
          ValueRange iterArgs) -> scf::ValueVector {
        return {body(nb, nloc, ivs, iterArgs[0])};
      });
  return nest.results.front();
}

struct ScatterElementsLowering : OpRewritePattern<ts::ScatterElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ScatterElementsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getType().getRank();
    int64_t axis = *::tessera::normalizeAxis(op.getAxis(), rank);
    Value data = op.getData();
    Value axisSize = linalg::createOrFoldDimOp(rewriter, loc, data, axis);
    ts::ScatterReduction reduction = op.getReduction();
    Value result = buildTensorLoopNest(
        rewriter, loc, op.getIndices(), data,
        [&](OpBuilder &b, Location nloc, ValueRange ivs, Value current) {
          Value raw = tensor::ExtractOp::create(b, nloc, op.getIndices(), ivs);
          Value update =
              tensor::ExtractOp::create(b, nloc, op.getUpdates(), ivs);
          SmallVector<Value> at(ivs);
          at[axis] = normalizedIndex(b, nloc, raw, axisSize);
          if (reduction != ts::ScatterReduction::none)
            update = combine(b, nloc, reduction,
                             tensor::ExtractOp::create(b, nloc, current, at),
                             update);
          return tensor::InsertOp::create(b, nloc, update, current, at)
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// ScatterND: a loop over the index tuples (indices flattened to [T, k]),
/// each writing (or combining) one slice data[tuple] of shape data[k:].
struct ScatterNDLowering : OpRewritePattern<ts::ScatterNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ts::ScatterNDOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = op.getData();
    RankedTensorType dataType = op.getType();
    Value indices = op.getIndices(), updates = op.getUpdates();
    RankedTensorType idxType = op.getIndices().getType();
    RankedTensorType updType = op.getUpdates().getType();
    int64_t rank = dataType.getRank();
    int64_t k = idxType.getShape().back();
    int64_t outer = idxType.getRank() - 1;
    // Flatten the tuple dims of indices and updates into one (or add it).
    auto flatten = [&](Value v, int64_t keep) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (outer == 1)
        return v;
      SmallVector<ReassociationIndices> groups;
      if (outer == 0) {
        // One tuple: a leading unit dim.
        SmallVector<int64_t> shape{1};
        llvm::append_range(shape, type.getShape());
        groups.push_back({0, 1});
        for (int64_t d = 1; d < type.getRank(); ++d)
          groups.push_back({d + 1});
        if (type.getRank() == 0)
          groups.assign(1, {0});
        return tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
            v, type.getRank() ? groups : SmallVector<ReassociationIndices>{});
      }
      ReassociationIndices first;
      for (int64_t d = 0; d < outer; ++d)
        first.push_back(d);
      groups.push_back(first);
      for (int64_t d = 0; d < keep; ++d)
        groups.push_back({outer + d});
      return tensor::CollapseShapeOp::create(rewriter, loc, v, groups);
    };
    Value flatIdx = flatten(indices, 1);
    Value flatUpd = flatten(updates, updType.getRank() - outer);
    auto flatUpdType = cast<RankedTensorType>(flatUpd.getType());
    SmallVector<Value> dataSizes;
    for (int64_t d = 0; d < rank; ++d)
      dataSizes.push_back(linalg::createOrFoldDimOp(rewriter, loc, data, d));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value tuples = linalg::createOrFoldDimOp(rewriter, loc, flatIdx, 0);
    ts::ScatterReduction reduction = op.getReduction();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, tuples, one, ValueRange{data},
        [&](OpBuilder &b, Location nloc, Value t, ValueRange iterArgs) {
          Value current = iterArgs[0];
          // The slice of data this tuple addresses: [i_0, ..., i_k-1, :...].
          SmallVector<OpFoldResult> offsets, sizes, strides;
          for (int64_t j = 0; j < k; ++j) {
            Value raw = tensor::ExtractOp::create(
                b, nloc, flatIdx,
                ValueRange{t, arith::ConstantIndexOp::create(b, nloc, j)});
            offsets.push_back(normalizedIndex(b, nloc, raw, dataSizes[j]));
            sizes.push_back(b.getIndexAttr(1));
          }
          for (int64_t d = k; d < rank; ++d) {
            offsets.push_back(b.getIndexAttr(0));
            sizes.push_back(dataType.isDynamicDim(d)
                                ? OpFoldResult(dataSizes[d])
                                : OpFoldResult(b.getIndexAttr(
                                      dataType.getDimSize(d))));
          }
          strides.assign(rank, b.getIndexAttr(1));
          // The matching update slice, [t, :...] of the flattened updates.
          SmallVector<OpFoldResult> uOffsets{t}, uSizes{b.getIndexAttr(1)},
              uStrides(flatUpdType.getRank(), b.getIndexAttr(1));
          for (int64_t d = 1; d < flatUpdType.getRank(); ++d) {
            uOffsets.push_back(b.getIndexAttr(0));
            uSizes.push_back(sizes[k + d - 1]);
          }
          auto sliceType = RankedTensorType::get(
              dataType.getShape().drop_front(k), dataType.getElementType());
          Value update = tensor::ExtractSliceOp::create(
              b, nloc, sliceType, flatUpd, uOffsets, uSizes, uStrides);
          if (reduction != ts::ScatterReduction::none) {
            Value old = tensor::ExtractSliceOp::create(
                b, nloc, sliceType, current, offsets, sizes, strides);
            update = buildElementwise(
                b, nloc, sliceType, ValueRange{old, update},
                [&](OpBuilder &eb, Location eloc, ValueRange args) {
                  return combine(eb, eloc, reduction, args[0], args[1]);
                });
          }
          Value next = tensor::InsertSliceOp::create(
              b, nloc, update, current, offsets, sizes, strides);
          scf::YieldOp::create(b, nloc, next);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherElementsLowering, GatherNDLowering,
               ScatterElementsLowering, ScatterNDLowering>(
      patterns.getContext());
}

} // namespace tessera::to_linalg
