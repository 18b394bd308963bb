//===- Attention.cpp - attention as one tiled loop nest (online softmax) --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera.attention with static shapes lowers to a flash-attention loop
// nest: query blocks (and the leading dims) run in parallel, each walking
// the key/value blocks with a running row maximum `m`, row sum `l` and
// output accumulator:
//
//   s   = (scale * q_blk) @ k_blk^T (+ mask block, causal positions -inf)
//   m'  = max(m, rowmax(s));  p = exp(s - m');  c = exp(m - m')
//   l'  = l * c + rowsum(p);  acc' = acc * c + p @ v_blk
//   out = acc / l
//
// so that no sequence x sequence score matrix is ever materialized: each
// iteration holds one Bq x Bk block. Static sequences that no block
// divides end in one smaller block of the rest; dynamic ones are padded at
// run time. Causal attention stops at the last whole key block a query
// block can see, and takes the last smaller block only when it sees some
// of it. The block ops are ordinary linalg ops, which
// the backend's tiling and vectorization passes compile. Attention that a
// bf16 or fp16 policy left f32 with `tessera.narrow_products` takes that
// type for both products' operands (q, k and v rounded once, p per
// block), accumulating in f32.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// The block size for a static sequence of `size`: the `preferred` one (the
/// pass's options: 64 queries x 128 keys by default, measured best at
/// sequence 512 and 2048 with the AVX-512 register tile; the CPU target
/// takes 128 x 256 for AVX2, docs/Architecture.md), or half of it where
/// only that divides the sequence. A static sequence that no block
/// divides (197 tokens in a ViT) runs its whole blocks and then one block
/// of the rest, of any static size (5 queries, 69 keys): no padded copy of
/// q, k, v or the mask, no padded key masked.
int64_t blockFor(int64_t size, int64_t preferred) {
  return size % preferred != 0 && size % (preferred / 2) == 0 ? preferred / 2
                                                              : preferred;
}
/// Blocks for sequences known only at run time, which are padded up to
/// whole blocks (padded keys masked).
constexpr int64_t kDynamicQueryBlock = 32, kDynamicKeyBlock = 64;

using utils::IteratorType;

/// A linalg.generic over a 1-D or 2-D block.
Value blockGeneric(OpBuilder &b, Location loc, Value init, ValueRange inputs,
                   ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
                   BodyFn body) {
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type type,
             Value value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, type);
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

} // namespace

std::optional<std::string> whyAttentionNotTiled(ts::AttentionOp op) {
  RankedTensorType qType = op.getQuery().getType();
  RankedTensorType kType = op.getKey().getType();
  RankedTensorType vType = op.getValue().getType();
  RankedTensorType resultType = op.getType();
  int64_t rank = qType.getRank();
  // Sequences and leading dims may be dynamic (a symbolic batch or
  // sequence: the blocks stay static, padding and bounds follow the sizes
  // at run time); head dims must be static.
  auto staticF32 = [&](RankedTensorType type) {
    return type.getElementType().isF32() && type.getRank() == rank &&
           rank >= 2 && !type.isDynamicDim(rank - 1);
  };
  if (rank < 2 || !staticF32(qType) || !staticF32(kType) || !staticF32(vType) ||
      !staticF32(resultType))
    return std::string("not f32 of one rank with static head dims");
  int64_t lead = rank - 2;
  // Keys and values may be shared along leading dims (multi-query and
  // grouped-query attention: a static unit dim where the query's is not);
  // the query's leading dims are the result's.
  for (int64_t i = 0; i < lead; ++i) {
    int64_t extent = qType.getDimSize(i);
    if (resultType.getDimSize(i) != extent)
      return std::string("a query shared along a leading dim");
    for (RankedTensorType type : {kType, vType})
      if (type.getDimSize(i) != extent && type.getDimSize(i) != 1)
        return std::string("leading dims that broadcast other than as a "
                           "static unit dim of the keys and values");
  }
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (!maskType.getElementType().isF32() || maskType.getRank() > rank)
      return std::string("mask shape");
    SmallVector<int64_t> scoreShape(qType.getShape().take_front(lead));
    scoreShape.append({qType.getDimSize(rank - 2), kType.getDimSize(rank - 2)});
    for (int64_t i = 0; i < maskType.getRank(); ++i) {
      int64_t dim = maskType.getDimSize(maskType.getRank() - 1 - i);
      if (dim != 1 && dim != scoreShape[rank - 1 - i])
        return std::string("mask shape");
    }
  }
  return std::nullopt;
}

namespace {

struct FlashAttentionLowering : OpRewritePattern<ts::AttentionOp> {
  FlashAttentionLowering(MLIRContext *ctx, std::pair<int64_t, int64_t> blocks)
      : OpRewritePattern(ctx, /*benefit=*/2), blocks(blocks) {}
  /// The preferred (queries, keys) per block for static sequences.
  std::pair<int64_t, int64_t> blocks;

  LogicalResult matchAndRewrite(ts::AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (std::optional<std::string> why = whyAttentionNotTiled(op))
      return rewriter.notifyMatchFailure(op, *why);
    RankedTensorType qType = op.getQuery().getType();
    RankedTensorType kType = op.getKey().getType();
    RankedTensorType vType = op.getValue().getType();
    RankedTensorType resultType = op.getType();
    int64_t rank = qType.getRank();
    int64_t lead = rank - 2;
    int64_t sq = qType.getDimSize(rank - 2), d = qType.getDimSize(rank - 1);
    int64_t sk = kType.getDimSize(rank - 2), dv = vType.getDimSize(rank - 1);
    bool dynamicQueries = ShapedType::isDynamic(sq),
         dynamicKeys = ShapedType::isDynamic(sk);
    int64_t bq =
        dynamicQueries ? kDynamicQueryBlock : blockFor(sq, blocks.first);
    int64_t bk = dynamicKeys ? kDynamicKeyBlock : blockFor(sk, blocks.second);
    // Static sequences end in one smaller block; dynamic ones are padded
    // at run time.
    int64_t sqPadded = dynamicQueries ? ShapedType::kDynamic : sq;
    int64_t skPadded = dynamicKeys ? ShapedType::kDynamic : sk;
    bool padQueries = dynamicQueries, padKeys = dynamicKeys;
    int64_t queryTail = dynamicQueries ? 0 : sq % bq;
    int64_t keyTail = dynamicKeys ? 0 : sk % bk;
    SmallVector<int64_t> scoreShape(qType.getShape().take_front(lead));
    scoreShape.append({sq, sk});
    Value mask = op.getMask();
    RankedTensorType maskType;
    if (mask)
      maskType = cast<RankedTensorType>(mask.getType());
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(d));

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    // Under a bf16 or fp16 policy (tessera.narrow_products), both block
    // products take narrow operands and accumulate in f32: the scaled
    // query block, k^T and v are rounded once, each block's
    // probabilities before their product with v.
    Type operand = f32;
    if (auto products =
            op->getAttrOfType<TypeAttr>(::tessera::kNarrowProductsAttr);
        products && isa<BFloat16Type, Float16Type>(products.getValue()))
      operand = products.getValue();
    bool narrow = operand != f32;
    Value zero = scalarConstant(rewriter, loc, f32, 0.0);
    Value negInf = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value scaleValue = scalarConstant(rewriter, loc, f32, scale);

    // The sequence lengths, and dynamic ones padded up to whole blocks at
    // run time.
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    auto roundUp = [&](Value size, int64_t block) -> Value {
      Value blocks = arith::DivUIOp::create(
          rewriter, loc,
          arith::AddIOp::create(rewriter, loc, size, index(block - 1)),
          index(block));
      return arith::MulIOp::create(rewriter, loc, blocks, index(block));
    };
    Value sqValue = linalg::createOrFoldDimOp(rewriter, loc, op.getQuery(),
                                              rank - 2);
    Value skValue =
        linalg::createOrFoldDimOp(rewriter, loc, op.getKey(), rank - 2);
    Value sqPaddedValue = dynamicQueries ? roundUp(sqValue, bq) : Value();
    Value skPaddedValue = dynamicKeys ? roundUp(skValue, bk) : Value();
    // Dynamic sequences padded up to whole blocks with zeros.
    auto padRows = [&](Value value, int64_t dim, bool pad,
                       int64_t padded, Value paddedValue) -> Value {
      if (!pad)
        return value;
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(type.getShape());
      SmallVector<OpFoldResult> low(shape.size(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> high = low;
      high[dim] = getAsOpFoldResult(rewriter.createOrFold<arith::SubIOp>(
          loc, paddedValue,
          linalg::createOrFoldDimOp(rewriter, loc, value, dim)));
      shape[dim] = padded;
      return tensor::PadOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
          value, low, high, zero);
    };
    Value query =
        padRows(op.getQuery(), rank - 2, padQueries, sqPadded, sqPaddedValue);
    Value key = padRows(op.getKey(), rank - 2, padKeys, skPadded, skPaddedValue);
    Value value =
        padRows(op.getValue(), rank - 2, padKeys, skPadded, skPaddedValue);
    if (mask) {
      int64_t maskRank = maskType.getRank();
      if (maskRank >= 2 && maskType.getDimSize(maskRank - 2) != 1)
        mask = padRows(mask, maskRank - 2, padQueries, sqPadded,
                       sqPaddedValue);
      if (maskType.getDimSize(maskRank - 1) != 1)
        mask = padRows(mask, maskRank - 1, padKeys, skPadded, skPaddedValue);
      maskType = cast<RankedTensorType>(mask.getType());
    }
    // Leading dims of the query, key and result, as values where dynamic.
    auto mixedDims = [&](Value tensor) {
      return tensor::getMixedSizes(rewriter, loc, tensor);
    };

    // k^T once, so that each block of it is a (D x Bk) slice.
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    SmallVector<OpFoldResult> kTShape = mixedDims(key);
    std::swap(kTShape[rank - 2], kTShape[rank - 1]);
    Value kTInit = tensor::EmptyOp::create(rewriter, loc, kTShape, f32);
    Value kT = linalg::TransposeOp::create(rewriter, loc, key, kTInit,
                                           permutation)
                   ->getResult(0);
    // A whole tensor rounded to the products' type.
    auto rounded = [&](Value tensor) -> Value {
      if (!narrow)
        return tensor;
      auto type = cast<RankedTensorType>(tensor.getType());
      Value init = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, tensor), operand);
      AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
      return linalg::GenericOp::create(
                 rewriter, loc, init.getType(), ValueRange{tensor},
                 ValueRange{init}, ArrayRef<AffineMap>{id, id},
                 SmallVector<IteratorType>(type.getRank(),
                                           IteratorType::parallel),
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   linalg::YieldOp::create(
                       b, l,
                       arith::TruncFOp::create(b, l, operand, a[0])
                           .getResult());
                 })
          .getResult(0);
    };
    kT = rounded(kT);
    Value valueOperand = rounded(value);

    SmallVector<OpFoldResult> queryDims = mixedDims(query);
    SmallVector<OpFoldResult> outShape = queryDims;
    outShape[rank - 1] = rewriter.getIndexAttr(dv);
    Value out = tensor::EmptyOp::create(rewriter, loc, outShape, f32);
    OpFoldResult one = rewriter.getIndexAttr(1),
                 zeroIndex = rewriter.getIndexAttr(0);
    // Query i sees keys j <= i + (Sk - Sq).
    Value diagonal =
        rewriter.createOrFold<arith::SubIOp>(loc, skValue, sqValue);
    // The end of the whole key blocks (the padded length when dynamic).
    Value fullKeysEnd = dynamicKeys ? skPaddedValue : index(sk - keyTail);

    // Where a rows x cols block of a rank-`rank` tensor sits: at [ivs...,
    // row, col], unit sizes in the leading dims.
    struct Placement {
      SmallVector<OpFoldResult> offsets, sizes, strides;
    };
    // (`shared` says which leading dims the tensor broadcasts along: it
    // holds one entry there, at 0.)
    auto placement = [&](OpBuilder &b, ValueRange ivs, OpFoldResult row,
                         OpFoldResult col, int64_t rows, int64_t cols,
                         ArrayRef<bool> shared = {}) {
      Placement at;
      for (auto [i, iv] : llvm::enumerate(ivs)) {
        at.offsets.push_back(!shared.empty() && shared[i] ? zeroIndex
                                                          : OpFoldResult(iv));
        at.sizes.push_back(one);
      }
      at.offsets.append({row, col});
      at.sizes.append({b.getIndexAttr(rows), b.getIndexAttr(cols)});
      at.strides.assign(rank, one);
      return at;
    };
    // That block of `source`, as a 2-D tensor.
    auto block = [&](OpBuilder &b, ValueRange ivs, Value source,
                     OpFoldResult row, OpFoldResult col, int64_t rows,
                     int64_t cols) {
      auto type = cast<RankedTensorType>(source.getType());
      SmallVector<bool> shared;
      for (int64_t i = 0; i < lead; ++i)
        shared.push_back(type.getDimSize(i) == 1 && qType.getDimSize(i) != 1);
      Placement at = placement(b, ivs, row, col, rows, cols, shared);
      return tensor::ExtractSliceOp::create(
          b, loc,
          RankedTensorType::get({rows, cols}, getElementTypeOrSelf(source)),
          source, at.offsets, at.sizes, at.strides);
    };
    // a + b * c, the operands extended to f32 where they are narrow.
    auto multiplyAdd = [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      auto wide = [&](Value x) -> Value {
        Type f32 = nb.getF32Type();
        return x.getType() == f32
                   ? x
                   : arith::ExtFOp::create(nb, nl, f32, x).getResult();
      };
      Value product = arith::MulFOp::create(nb, nl, wide(a[0]), wide(a[1]));
      return arith::AddFOp::create(nb, nl, a[2], product);
    };

    AffineExpr i0 = getAffineDimExpr(0, ctx), i1 = getAffineDimExpr(1, ctx),
               i2 = getAffineDimExpr(2, ctx);
    auto map2 = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(2, 0, exprs, ctx);
    };
    auto map3 = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(3, 0, exprs, ctx);
    };
    SmallVector<IteratorType> par2 = {IteratorType::parallel,
                                      IteratorType::parallel};
    SmallVector<IteratorType> rowReduce = {IteratorType::parallel,
                                           IteratorType::reduction};
    SmallVector<IteratorType> contraction = {IteratorType::parallel,
                                             IteratorType::reduction,
                                             IteratorType::parallel};
    // -inf stays -inf in exponent shifts (a row that has seen no key yet).
    auto finite = [&](OpBuilder &b, Location l, Value x) -> Value {
      Value isInf =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, negInf);
      return arith::SelectOp::create(b, l, isInf, zero, x);
    };

    // The online-softmax step of one key block: `cols` keys from kj, for
    // the `rows` queries from qi at the leading indices ivs; state is
    // (m, l, acc) and the result the next state.
    auto attendKeys = [&](OpBuilder &b, Location l, ValueRange ivs, Value qi,
                          int64_t rows, Value qBlock, Value kj, int64_t cols,
                          ValueRange state) -> SmallVector<Value> {
      Value m = state[0], sum = state[1], acc = state[2];
      Value kTBlock = block(b, ivs, kT, zeroIndex, kj, d, cols);
      Value vBlock = block(b, ivs, valueOperand, kj, zeroIndex, cols, dv);
      // s = q_blk @ k_blk^T, loops (rows, d, keys).
      Value s = blockGeneric(b, l, filled(b, l, {rows, cols}, f32, zero),
                             {qBlock, kTBlock},
                             {map3({i0, i1}), map3({i1, i2}), map3({i0, i2})},
                             contraction, multiplyAdd);
      // The mask and causal and padded positions (the scale is in the
      // query block already).
      bool causal = op.getCausal();
      Value scores = s;
      SmallVector<Value> inputs = {s};
      SmallVector<AffineMap> maps = {map2({i0, i1})};
      if (mask) {
        // The mask block: unit dims stay (broadcast), others follow the
        // loop indices.
        int64_t maskRank = maskType.getRank();
        SmallVector<OpFoldResult> offsets, sizes;
        SmallVector<int64_t> blockShape;
        for (int64_t i = 0; i < maskRank; ++i) {
          int64_t dim = maskType.getDimSize(i);
          int64_t scoreDim = rank - maskRank + i;
          bool unit = dim == 1;
          OpFoldResult offset = zeroIndex;
          int64_t size = 1;
          if (!unit && scoreDim < lead)
            offset = ivs[scoreDim];
          else if (!unit && scoreDim == rank - 2) {
            offset = qi;
            size = rows;
          } else if (!unit && scoreDim == rank - 1) {
            offset = kj;
            size = cols;
          }
          offsets.push_back(offset);
          sizes.push_back(b.getIndexAttr(size));
          if (scoreDim >= rank - 2)
            blockShape.push_back(size);
        }
        while (blockShape.size() < 2)
          blockShape.insert(blockShape.begin(), 1);
        SmallVector<OpFoldResult> strides(maskRank, one);
        Value maskBlock;
        if (maskRank >= 2) {
          maskBlock = tensor::ExtractSliceOp::create(
              b, l, RankedTensorType::get(blockShape, f32), mask, offsets,
              sizes, strides);
        } else {
          Value row = tensor::ExtractSliceOp::create(
              b, l, RankedTensorType::get({blockShape[1]}, f32), mask,
              offsets, sizes, strides);
          maskBlock = tensor::ExpandShapeOp::create(
              b, l, RankedTensorType::get(blockShape, f32), row,
              ArrayRef<ReassociationIndices>{{0, 1}});
        }
        inputs.push_back(maskBlock);
        maps.push_back(
            map2({blockShape[0] == 1 ? getAffineConstantExpr(0, ctx) : i0,
                  blockShape[1] == 1 ? getAffineConstantExpr(0, ctx) : i1}));
      }
      maps.push_back(map2({i0, i1}));
      auto maskScores = [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value x = a[0];
        if (mask)
          x = arith::AddFOp::create(nb, nl, x, a[1]);
        if (!causal && !padKeys)
          return x;
        Value col = arith::AddIOp::create(
            nb, nl, linalg::IndexOp::create(nb, nl, 1), kj);
        if (padKeys) {
          // Padded keys take no weight.
          Value padding = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sge, col, skValue);
          x = arith::SelectOp::create(nb, nl, padding, negInf, x);
        }
        if (!causal)
          return x;
        Value row = arith::AddIOp::create(
            nb, nl, linalg::IndexOp::create(nb, nl, 0), qi);
        Value limit = arith::AddIOp::create(nb, nl, row, diagonal);
        Value hidden = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt,
                                             col, limit);
        return arith::SelectOp::create(nb, nl, hidden, negInf, x);
      };
      if (mask || causal || padKeys)
        scores = blockGeneric(
            b, l,
            tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, cols}, f32),
            inputs, maps, par2, maskScores);
      // m' = max(m, rowmax(s)).
      Value mNew = blockGeneric(
          b, l, m, {scores}, {map2({i0, i1}), map2({i0})}, rowReduce,
          [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::MaximumFOp::create(nb, nl, a[0], a[1]);
          });
      // p = exp(s - m').
      Value p = blockGeneric(
          b, l,
          tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, cols}, f32),
          {scores, mNew}, {map2({i0, i1}), map2({i0}), map2({i0, i1})}, par2,
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value shifted =
                arith::SubFOp::create(nb, nl, a[0], finite(nb, nl, a[1]));
            return math::ExpOp::create(nb, nl, shifted);
          });
      // c = exp(m - m'); l' = l * c + rowsum(p).
      SmallVector<IteratorType> par1 = {IteratorType::parallel};
      AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
      Value correction = blockGeneric(
          b, l, tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows}, f32),
          {m, mNew}, {id1, id1, id1}, par1,
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value shifted =
                arith::SubFOp::create(nb, nl, a[0], finite(nb, nl, a[1]));
            return math::ExpOp::create(nb, nl, shifted);
          });
      Value scaledSum = blockGeneric(
          b, l, tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows}, f32),
          {sum, correction}, {id1, id1, id1}, par1,
          [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::MulFOp::create(nb, nl, a[0], a[1]);
          });
      Value sumNew = blockGeneric(
          b, l, scaledSum, {p}, {map2({i0, i1}), map2({i0})}, rowReduce,
          [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::AddFOp::create(nb, nl, a[0], a[1]);
          });
      // acc' = acc * c + p @ v_blk, loops (rows, keys, dv).
      Value scaledAcc = blockGeneric(
          b, l, tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, dv}, f32),
          {acc, correction}, {map2({i0, i1}), map2({i0}), map2({i0, i1})},
          par2, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::MulFOp::create(nb, nl, a[0], a[1]);
          });
      // (The probabilities rounded for the product; their sum above is
      // of the f32 ones.)
      Value pOperand = p;
      if (narrow)
        pOperand = blockGeneric(
            b, l,
            tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, cols},
                                    operand),
            {p}, {map2({i0, i1}), map2({i0, i1})}, par2,
            [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
              return arith::TruncFOp::create(nb, nl, operand, a[0]);
            });
      Value accNew =
          blockGeneric(b, l, scaledAcc, {pOperand, vBlock},
                       {map3({i0, i1}), map3({i1, i2}), map3({i0, i2})},
                       contraction, multiplyAdd);
      return {mNew, sumNew, accNew};
    };

    // The output block of the `rows` queries from qi: the whole key blocks
    // in a loop (up to the last one a causal block sees), then the rest.
    auto attendQueries = [&](OpBuilder &b, Location l, ValueRange ivs, Value qi,
                             int64_t rows) -> Value {
      // The query block times the scale, once for all key blocks.
      // (Rounded to the products' type, when narrow.)
      Value qBlock = block(b, ivs, query, qi, zeroIndex, rows, d);
      if (scale != 1.0 || narrow)
        qBlock = blockGeneric(
            b, l,
            tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, d}, operand),
            {qBlock}, {map2({i0, i1}), map2({i0, i1})}, par2,
            [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
              Value x = a[0];
              if (scale != 1.0)
                x = arith::MulFOp::create(nb, nl, x, scaleValue);
              if (narrow)
                x = arith::TruncFOp::create(nb, nl, operand, x);
              return x;
            });
      SmallVector<Value> state = {filled(b, l, {rows}, f32, negInf),
                                  filled(b, l, {rows}, f32, zero),
                                  filled(b, l, {rows, dv}, f32, zero)};
      if (dynamicKeys || sk >= bk) {
        Value kvEnd = fullKeysEnd;
        if (op.getCausal()) {
          // end = min(full, roundup(qi + rows + sk - sq, bk)), at least
          // one block.
          Value reach = b.createOrFold<arith::AddIOp>(
              l, diagonal,
              arith::ConstantIndexOp::create(b, l, rows + bk - 1));
          Value last = arith::AddIOp::create(b, l, qi, reach);
          Value blocks = arith::DivUIOp::create(
              b, l, last, arith::ConstantIndexOp::create(b, l, bk));
          Value end = arith::MulIOp::create(
              b, l, blocks, arith::ConstantIndexOp::create(b, l, bk));
          end = arith::MaxSIOp::create(
              b, l, end, arith::ConstantIndexOp::create(b, l, bk));
          kvEnd = arith::MinSIOp::create(b, l, end, kvEnd);
        }
        auto loop = scf::ForOp::create(
            b, l, arith::ConstantIndexOp::create(b, l, 0), kvEnd,
            arith::ConstantIndexOp::create(b, l, bk), state,
            [&](OpBuilder &lb, Location ll, Value kj, ValueRange args) {
              scf::YieldOp::create(
                  lb, ll,
                  attendKeys(lb, ll, ivs, qi, rows, qBlock, kj, bk, args));
            });
        state.assign(loop.getResults().begin(), loop.getResults().end());
      }
      // The keys after the last whole block; a causal block takes them
      // only when its last row sees the first of them.
      if (keyTail && !op.getCausal()) {
        state = attendKeys(b, l, ivs, qi, rows, qBlock, fullKeysEnd, keyTail,
                           state);
      } else if (keyTail) {
        Value lastRow = arith::AddIOp::create(
            b, l, qi,
            b.createOrFold<arith::AddIOp>(
                l, diagonal, arith::ConstantIndexOp::create(b, l, rows - 1)));
        Value sees = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                           lastRow, fullKeysEnd);
        SmallVector<Value> before = state;
        auto ifOp = scf::IfOp::create(
            b, l, sees,
            [&](OpBuilder &tb, Location tl) {
              scf::YieldOp::create(tb, tl,
                                   attendKeys(tb, tl, ivs, qi, rows, qBlock,
                                              fullKeysEnd, keyTail, before));
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, before);
            });
        state.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      }
      // out_blk = acc / l.
      return blockGeneric(
          b, l, tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{rows, dv}, f32),
          {state[2], state[1]}, {map2({i0, i1}), map2({i0}), map2({i0, i1})},
          par2, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::DivFOp::create(nb, nl, a[0], a[1]);
          });
    };

    // The leading dims and the query blocks from `begin` to `end` in
    // parallel, each block `rows` queries, written into `init`.
    auto attendInParallel = [&](Value init, OpFoldResult begin,
                                OpFoldResult end, int64_t rows) -> Value {
      SmallVector<OpFoldResult> lbs(lead, zeroIndex), ubs, steps(lead, one);
      for (int64_t i = 0; i < lead; ++i)
        ubs.push_back(queryDims[i]);
      lbs.push_back(begin);
      ubs.push_back(end);
      steps.push_back(rewriter.getIndexAttr(rows));
      auto forall = scf::ForallOp::create(rewriter, loc, lbs, ubs, steps,
                                          ValueRange{init}, std::nullopt);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getTerminator());
      SmallVector<Value> ivs = llvm::to_vector(forall.getInductionVars());
      Value qi = ivs.back();
      ValueRange leadIvs = ValueRange(ivs).drop_back();
      Value result = attendQueries(rewriter, loc, leadIvs, qi, rows);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      Placement at = placement(rewriter, leadIvs, qi, zeroIndex, rows, dv);
      tensor::ParallelInsertSliceOp::create(rewriter, loc, result,
                                            forall.getRegionIterArgs()[0],
                                            at.offsets, at.sizes, at.strides);
      return forall.getResult(0);
    };

    Value attended = out;
    if (dynamicQueries || sq >= bq)
      attended = attendInParallel(
          out, zeroIndex,
          dynamicQueries ? getAsOpFoldResult(sqPaddedValue)
                         : rewriter.getIndexAttr(sq - queryTail),
          bq);
    if (queryTail)
      attended = attendInParallel(attended,
                                  rewriter.getIndexAttr(sq - queryTail),
                                  rewriter.getIndexAttr(sq), queryTail);
    if (padQueries) {
      SmallVector<OpFoldResult> zeros(rank, zeroIndex), strides(rank, one);
      SmallVector<OpFoldResult> sizes = mixedDims(op.getQuery());
      sizes[rank - 1] = rewriter.getIndexAttr(dv);
      attended = tensor::ExtractSliceOp::create(rewriter, loc, resultType,
                                                attended, zeros, sizes, strides);
    }
    rewriter.replaceOp(op, attended);
    return success();
  }
};

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns,
                               std::pair<int64_t, int64_t> blocks) {
  patterns.add<FlashAttentionLowering>(patterns.getContext(), blocks);
}

} // namespace tessera::to_linalg
