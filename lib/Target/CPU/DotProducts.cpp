//===- DotProducts.cpp - register tiles on x86 dot-product instructions -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "DotProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace tessera::cpu {
namespace {

/// Whether `op` (a contraction, see isContraction) multiplies `operand`
/// operands into an `accumulator` one: its body adds the product of its
/// two operands, each extended (extf, or extsi for integers), to the
/// accumulator.
bool isWidenedProduct(linalg::GenericOp op, Type operand, Type accumulator) {
  if (getElementTypeOrSelf(op.getDpsInputs()[0]) != operand ||
      getElementTypeOrSelf(op.getDpsInputs()[1]) != operand ||
      getElementTypeOrSelf(op.getDpsInits()[0]) != accumulator)
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *add = yield.getValues()[0].getDefiningOp();
  bool isFloat = isa<FloatType>(accumulator);
  if (!add || !(isFloat ? isa<arith::AddFOp>(add) : isa<arith::AddIOp>(add)))
    return false;
  BlockArgument sum = body.getArgument(2);
  Value product = add->getOperand(0) == sum   ? add->getOperand(1)
                  : add->getOperand(1) == sum ? add->getOperand(0)
                                              : Value();
  Operation *multiply = product ? product.getDefiningOp() : nullptr;
  if (!multiply || !(isFloat ? isa<arith::MulFOp>(multiply)
                             : isa<arith::MulIOp>(multiply)))
    return false;
  auto extended = [&](Value value) {
    if (auto extend = value.getDefiningOp<arith::ExtFOp>(); extend && isFloat)
      return extend.getIn();
    if (auto extend = value.getDefiningOp<arith::ExtSIOp>();
        extend && !isFloat)
      return extend.getIn();
    return value;
  };
  Value lhs = extended(multiply->getOperand(0)),
        rhs = extended(multiply->getOperand(1));
  return (lhs == body.getArgument(0) && rhs == body.getArgument(1)) ||
         (lhs == body.getArgument(1) && rhs == body.getArgument(0));
}

/// Whether `map` reads only loop dims, among them `inner` as its last
/// result and `outer`, but not `absent`.
bool readsAlong(AffineMap map, unsigned inner, unsigned outer,
                unsigned absent) {
  if (map.getNumResults() == 0 || !map.isProjectedPermutation() ||
      map.getResults().back() != getAffineDimExpr(inner, map.getContext()))
    return false;
  return map.isFunctionOfDim(outer) && !map.isFunctionOfDim(absent);
}

/// The intrinsic of vpdpbusd on 512-bit vectors.
constexpr llvm::StringLiteral kVpdpbusd = "llvm.x86.avx512.vpdpbusd.512";

/// Memory effects for llvm.call_intrinsic, which declares none (so that
/// bufferization's deallocation refuses it): none for vpdpbusd, which only
/// computes; a read and a write of memory for any other intrinsic.
struct CallIntrinsicEffects
    : MemoryEffectOpInterface::ExternalModel<CallIntrinsicEffects,
                                             LLVM::CallIntrinsicOp> {
  void getEffects(
      Operation *op,
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
          &effects) const {
    if (cast<LLVM::CallIntrinsicOp>(op).getIntrin() == kVpdpbusd)
      return;
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// One dot-product step of `kind`: `accumulator` plus the products of the
/// groups in `lhs` and `rhs` (64-byte vectors), lane by lane.
Value dotStep(OpBuilder &b, Location loc, DotProduct kind, Value accumulator,
              Value lhs, Value rhs) {
  if (kind == DotProduct::BF16)
    return x86vector::DotBF16Op::create(b, loc, accumulator.getType(),
                                        accumulator, lhs, rhs);
  return LLVM::CallIntrinsicOp::create(
             b, loc, accumulator.getType(), b.getStringAttr(kVpdpbusd),
             ValueRange{accumulator, lhs, rhs})
      .getResult(0);
}

/// The 64-byte vectors of the `group` k values of rhs columns [16j,
/// 16j + 16) at row `index` of `groups` ([K/group, group * W]).
SmallVector<Value> readGroups(OpBuilder &b, Location loc, Value groups,
                              Value index, int64_t group, int64_t vectors) {
  Type element = getElementTypeOrSelf(groups);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  SmallVector<Value> rhs;
  for (int64_t j = 0; j < vectors; ++j)
    rhs.push_back(vector::TransferReadOp::create(
        b, loc, VectorType::get({16 * group}, element), groups,
        ValueRange{index,
                   arith::ConstantIndexOp::create(b, loc, 16 * group * j)},
        zero, ArrayRef<bool>{true}));
  return rhs;
}

} // namespace

int64_t groupOf(DotProduct kind) { return kind == DotProduct::Int8 ? 4 : 2; }

/// The dot product the contraction `op` takes with panels `width` wide
/// (see emitGroupTile), where `bf16` and `int8` allow them: bf16 operands
/// into f32 on vdpbf16ps, i8 operands into i32 on vpdpbusd; k a multiple of the
/// group, whole 16-column vectors, the lhs read along k, the accumulator
/// along the columns, and the rhs as (k, columns). None otherwise.
DotProduct dotProductFor(linalg::GenericOp op, int64_t width, bool bf16,
                         bool int8) {
  MLIRContext *ctx = op.getContext();
  DotProduct kind = DotProduct::None;
  if (bf16 && isWidenedProduct(op, BFloat16Type::get(ctx), Float32Type::get(ctx)))
    kind = DotProduct::BF16;
  else if (int8 && isWidenedProduct(op, IntegerType::get(ctx, 8),
                                    IntegerType::get(ctx, 32)))
    kind = DotProduct::Int8;
  if (kind == DotProduct::None)
    return kind;
  unsigned loops = op.getNumLoops();
  int64_t k = op.getStaticLoopRanges()[loops - 2];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned m = loops - 3, r = loops - 2, n = loops - 1;
  AffineMap rhs = maps[1];
  unsigned rank = rhs.getNumResults();
  bool fits = k % groupOf(kind) == 0 && width % 16 == 0 &&
              readsAlong(maps[0], r, m, n) && readsAlong(maps[2], n, m, r) &&
              readsAlong(rhs, n, r, m) && rank >= 2 &&
              rhs.getResult(rank - 2) == getAffineDimExpr(r, ctx);
  return fits ? kind : DotProduct::None;
}

/// The panel `rhs` ([1..., K, W], read as (k, columns)) with its rows in
/// groups of `group`, [K/group, group * W] (element (k, c) at
/// [k / group][group * c + k % group]), made at run time by a transpose.
Value groupRows(RewriterBase &rewriter, Location loc, Value rhs,
                int64_t group) {
  auto type = cast<RankedTensorType>(rhs.getType());
  unsigned rank = type.getRank();
  int64_t k = type.getDimSize(rank - 2), width = type.getDimSize(rank - 1);
  Type element = type.getElementType();
  // [1..., K, W] -> [K/group, group, W] (the unit dims go with the group
  // index).
  ReassociationIndices first = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  Value matrix = rhs;
  if (rank > 2)
    matrix = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({k, width}, element), rhs,
        ArrayRef<ReassociationIndices>{first, {rank - 1}});
  Value split = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({k / group, group, width}, element),
      matrix, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value init = tensor::EmptyOp::create(
      rewriter, loc, ArrayRef<int64_t>{k / group, width, group}, element);
  Value groups = linalg::TransposeOp::create(rewriter, loc, split, init,
                                             ArrayRef<int64_t>{0, 2, 1})
                     ->getResult(0);
  return tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({k / group, group * width}, element),
      groups, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

/// vpdpbusd multiplies unsigned bytes by signed ones: the int8 lhs is read
/// as x + 128 (its sign bit flipped), so each sum gains 128 times its rhs
/// column's sum. Those `width` / 16 vectors of 128 * sum_k rhs[k, c], for
/// the panel `groups` ([K/4, 4W]), computed once per panel.
SmallVector<Value> columnOffsets(RewriterBase &rewriter, Location loc,
                                 Value groups, int64_t width) {
  auto type = cast<RankedTensorType>(groups.getType());
  int64_t vectors = width / 16;
  auto lanes = VectorType::get({16}, rewriter.getI32Type());
  Value zero = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(lanes, rewriter.getI32IntegerAttr(0)));
  Value bias = arith::ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(VectorType::get({64}, rewriter.getI8Type()),
                             rewriter.getIntegerAttr(rewriter.getI8Type(), -128)));
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value).getResult();
  };
  auto loop = scf::ForOp::create(
      rewriter, loc, index(0), index(type.getDimSize(0)), index(1),
      SmallVector<Value>(vectors, zero),
      [&](OpBuilder &b, Location loc, Value step, ValueRange carried) {
        SmallVector<Value> rhs = readGroups(b, loc, groups, step, 4, vectors);
        SmallVector<Value> sums;
        for (int64_t j = 0; j < vectors; ++j)
          sums.push_back(
              dotStep(b, loc, DotProduct::Int8, carried[j], bias, rhs[j]));
        scf::YieldOp::create(b, loc, sums);
      });
  return SmallVector<Value>(loop.getResults());
}

/// Replaces the tile `rows` (a contraction that takes `kind`, see
/// dotProductFor, with static sizes: R <= 8 rows, unit batch dims, W
/// columns) by a loop over the K/G groups of k (G = 2 for bf16, 4 for
/// int8) that carries its R x W/16 accumulators as 16-lane vectors: each
/// step reads the W/16 rhs vectors of the group from `groups` ([K/G,
/// G * W]), broadcasts each row's G lhs values as one 32-bit lane and
/// accumulates their products with the dot-product instruction. For int8,
/// `offsets` (see columnOffsets) are subtracted at the end.
bool emitGroupTile(RewriterBase &rewriter, linalg::GenericOp rows,
                   DotProduct kind, Value groups, ArrayRef<Value> offsets) {
  unsigned loops = rows.getNumLoops();
  SmallVector<int64_t> ranges = rows.getStaticLoopRanges();
  int64_t group = groupOf(kind);
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      llvm::any_of(ArrayRef(ranges).drop_back(3),
                   [](int64_t size) { return size != 1; }))
    return false;
  int64_t tileRows = ranges[loops - 3], k = ranges[loops - 2],
          width = ranges[loops - 1];
  if (tileRows > 8 || k % group != 0 || width % 16 != 0)
    return false;
  Location loc = rows.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(rows);
  SmallVector<AffineMap> maps = rows.getIndexingMapsArray();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // The indices of the element that `map` reads at row m, k and column n.
  auto at = [&](AffineMap map, Value m, Value kIndex, Value n) {
    SmallVector<Value> indices;
    for (AffineExpr result : map.getResults()) {
      unsigned dim = cast<AffineDimExpr>(result).getPosition();
      indices.push_back(dim == loops - 3   ? m
                        : dim == loops - 2 ? kIndex
                        : dim == loops - 1 ? n
                                           : zero);
    }
    return indices;
  };
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value).getResult();
  };
  Value lhs = rows.getDpsInputs()[0], init = rows.getDpsInits()[0];
  Type operand = getElementTypeOrSelf(lhs),
       accumulator = getElementTypeOrSelf(init), i32 = rewriter.getI32Type();
  auto accumulatorType = VectorType::get({16}, accumulator);
  Value accumulatorZero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(accumulator));
  int64_t vectors = width / 16;
  SmallVector<Value> accumulators;
  for (int64_t r = 0; r < tileRows; ++r)
    for (int64_t j = 0; j < vectors; ++j)
      accumulators.push_back(vector::TransferReadOp::create(
          rewriter, loc, accumulatorType, init,
          at(maps[2], index(r), zero, index(16 * j)), accumulatorZero,
          ArrayRef<bool>{true}));
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, index(k / group), index(1), accumulators,
      [&](OpBuilder &b, Location loc, Value step, ValueRange carried) {
        Value kIndex = arith::MulIOp::create(
            b, loc, step, arith::ConstantIndexOp::create(b, loc, group));
        Value operandZero =
            arith::ConstantOp::create(b, loc, b.getZeroAttr(operand));
        SmallVector<Value> rhs =
            readGroups(b, loc, groups, step, group, vectors);
        // int8: each lhs byte's sign bit flipped (x + 128, unsigned).
        Value signBits;
        if (kind == DotProduct::Int8)
          signBits = arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(
                  VectorType::get({16}, i32),
                  b.getI32IntegerAttr(static_cast<int32_t>(0x80808080u))));
        SmallVector<Value> sums;
        for (int64_t r = 0; r < tileRows; ++r) {
          Value values = vector::TransferReadOp::create(
              b, loc, VectorType::get({group}, operand), lhs,
              at(maps[0], arith::ConstantIndexOp::create(b, loc, r), kIndex,
                 zero),
              operandZero, ArrayRef<bool>{true});
          Value lane = vector::BitCastOp::create(
              b, loc, VectorType::get({1}, i32), values);
          Value lanes = vector::BroadcastOp::create(
              b, loc, VectorType::get({16}, i32), lane);
          if (signBits)
            lanes = arith::XOrIOp::create(b, loc, lanes, signBits);
          Value broadcast = vector::BitCastOp::create(
              b, loc, VectorType::get({16 * group}, operand), lanes);
          for (int64_t j = 0; j < vectors; ++j)
            sums.push_back(dotStep(b, loc, kind, carried[r * vectors + j],
                                   broadcast, rhs[j]));
        }
        scf::YieldOp::create(b, loc, sums);
      });
  Value result = init;
  for (int64_t r = 0; r < tileRows; ++r)
    for (int64_t j = 0; j < vectors; ++j) {
      Value sum = loop.getResult(r * vectors + j);
      if (kind == DotProduct::Int8)
        sum = arith::SubIOp::create(rewriter, loc, sum, offsets[j]);
      result = vector::TransferWriteOp::create(
                   rewriter, loc, sum, result,
                   at(maps[2], index(r), zero, index(16 * j)),
                   ArrayRef<bool>{true})
                   .getResult();
    }
  rewriter.replaceOp(rows, result);
  return true;
}

void registerDotProductEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, LLVM::LLVMDialect *) {
    LLVM::CallIntrinsicOp::attachInterface<CallIntrinsicEffects>(*ctx);
  });
}

} // namespace tessera::cpu
