//===- VectorizeCopies.cpp - copies that move data in vector steps --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Copies that tessera-cpu-vectorize-loops takes before its elementwise and
// reduction loops: their generic vector steps would read through a
// division (an upsampling), one lane at a time (a transpose), or write
// most of a tensor twice (a pad).
//
//===----------------------------------------------------------------------===//
#include "VectorizeCopies.h"

#include "RowTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using tessera::cpu::tileOp;

namespace {

constexpr int64_t kLanes = tessera::cpu::kF32Lanes;

/// The factors of a nearest upsampling by whole factors (the Resize
/// lowering's copy whose input map reads each dim d as d or d floordiv
/// f_d, its output as it is), or nothing for another op. The innermost
/// factor divides the lanes.
std::optional<SmallVector<int64_t>> upsamplingFactors(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() ||
      op.getNumLoops() != op.getNumParallelLoops() || op.getNumLoops() == 0)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0] != op.getBlock()->getArgument(0) ||
      getElementTypeOrSelf(op.getDpsInputs()[0].getType()) != element ||
      element.isInteger(1) || !VectorType::isValidElementType(element))
    return std::nullopt;
  AffineMap read = op.getIndexingMapsArray()[0];
  if (!op.getIndexingMapsArray()[1].isIdentity() ||
      read.getNumResults() != op.getNumLoops())
    return std::nullopt;
  SmallVector<int64_t> factors;
  for (auto [d, expr] : llvm::enumerate(read.getResults())) {
    AffineExpr dim = getAffineDimExpr(d, op.getContext());
    if (expr == dim) {
      factors.push_back(1);
      continue;
    }
    auto division = dyn_cast<AffineBinaryOpExpr>(expr);
    auto factor = division ? dyn_cast<AffineConstantExpr>(division.getRHS())
                           : AffineConstantExpr();
    if (!division || division.getKind() != AffineExprKind::FloorDiv ||
        division.getLHS() != dim || !factor || factor.getValue() < 1)
      return std::nullopt;
    factors.push_back(factor.getValue());
  }
  if (llvm::all_of(factors, [](int64_t f) { return f == 1; }) ||
      kLanes % factors.back() != 0)
    return std::nullopt;
  return factors;
}

/// A nearest upsampling (see upsamplingFactors) one output row per
/// iteration of an scf.forall, each row in steps of kLanes outputs:
/// kLanes / f inputs read and each repeated f times by a shuffle, the
/// last step masked. As a generic it ran one element at a time, with a
/// division per index (PaddleOCR's detector spent 8% of its time there).
void vectorizeUpsampling(RewriterBase &rewriter, linalg::GenericOp op,
                         int64_t factor) {
  MLIRContext *ctx = rewriter.getContext();
  unsigned loops = op.getNumLoops();
  SmallVector<int64_t> rows(loops, 1);
  rows.back() = 0;
  auto tile = dyn_cast_if_present<linalg::GenericOp>(
      tileOp(rewriter, op, getAsIndexOpFoldResult(ctx, rows),
             /*parallel=*/true));
  if (!tile)
    return;
  Value input = tile.getDpsInputs()[0], init = tile.getDpsInits()[0];
  Type element = getElementTypeOrSelf(init.getType());
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  int64_t reads = kLanes / factor;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value width = tensor::DimOp::create(rewriter, loc, init, loops - 1);
  Value inputWidth = tensor::DimOp::create(rewriter, loc, input, loops - 1);
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, width,
      arith::ConstantIndexOp::create(rewriter, loc, kLanes), ValueRange{init},
      [&](OpBuilder &b, Location l, Value at, ValueRange row) {
        Value from = arith::DivUIOp::create(
            b, l, at, arith::ConstantIndexOp::create(b, l, factor));
        auto maskOf = [&](int64_t lanes, Value size, Value offset) {
          return vector::CreateMaskOp::create(
              b, l, VectorType::get({lanes}, b.getI1Type()),
              ValueRange{arith::SubIOp::create(b, l, size, offset)});
        };
        SmallVector<Value> indices(loops, zero);
        indices.back() = from;
        Value pad = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
        Value values = vector::TransferReadOp::create(
            b, l, VectorType::get({reads}, element), input, indices,
            AffineMapAttr::get(AffineMap::getMinorIdentityMap(loops, 1, ctx)),
            pad, maskOf(reads, inputWidth, from), b.getBoolArrayAttr({true}));
        if (factor > 1) {
          SmallVector<int64_t> repeat;
          for (int64_t lane = 0; lane < kLanes; ++lane)
            repeat.push_back(lane / factor);
          values = vector::ShuffleOp::create(b, l, values, values, repeat);
        }
        indices.back() = at;
        Value written =
            vector::TransferWriteOp::create(
                b, l, values, row[0], indices,
                AffineMapAttr::get(
                    AffineMap::getMinorIdentityMap(loops, 1, ctx)),
                maskOf(kLanes, width, at), b.getBoolArrayAttr({true}))
                .getResult();
        scf::YieldOp::create(b, l, written);
      });
  rewriter.replaceOp(tile, loop.getResults());
}

/// The loop B of a block transpose (see isBlockTranspose): the one that
/// `op`'s input reads as its innermost dim.
unsigned blockRowLoop(linalg::LinalgOp op) {
  AffineMap read = op.getIndexingMapsArray()[0];
  return read.getDimPosition(read.getNumResults() - 1);
}

/// Whether `op` is a transposing copy of 32-bit floats that a block
/// transpose takes: loops in the output's order, whose input's innermost
/// dim is a loop B other than the last loop (A, the output's innermost
/// dim), with A or B dynamic or both at least a block. Examples: a
/// symbolic-size convolution's product [N, P, F] back to [N, F, P] (A = P, B =
/// F), an image [N, C, H, W] to [N, H, W, C] (A = C, B = W), a learned
/// upsampling's blocks [N, H, W*2, 2, F] to [N, F, H, 2, W*2] (A = W*2, B = F,
/// two loops apart). Their vector steps (see maskedInner) would read each
/// output vector as 16 strided loads, one lane at a time.
bool isBlockTranspose(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() < 2)
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0] != op.getBlock()->getArgument(0) ||
      getElementTypeOrSelf(op.getDpsInputs()[0].getType()) != element ||
      !element.isF32())
    return false;
  unsigned loops = op.getNumLoops();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[1].isIdentity() || !maps[0].isPermutation() ||
      blockRowLoop(op) == loops - 1)
    return false;
  // Static extents take it when both are at least a block (a
  // convolution's product with its pixels as rows, [1, 196, 384] back to
  // [1, 384, 196], took a quarter of a 64-to-384 pointwise convolution's
  // time one lane at a time on one thread).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t a = ranges[loops - 1], b = ranges[blockRowLoop(op)];
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) ||
         (a >= kLanes && b >= kLanes);
}

/// A block transpose (see isBlockTranspose) in blocks of kLanes x kLanes
/// on threads (one scf.forall over the outer loops, B in kLanes and A in
/// kTransposeRows), each block kLanes row loads along B, one
/// vector.transpose in registers, and kLanes row stores along A. Full
/// blocks' masks depend on B's extent only (hoisted out of the loop); the
/// last, partial block along A masks its rows too. PaddleOCR's
/// recognizer, whose convolutions run over images of symbolic width,
/// spent about 8% of its time in these copies.
void vectorizeBlockTranspose(RewriterBase &rewriter, linalg::LinalgOp op) {
  constexpr int64_t kTransposeRows = 128;
  MLIRContext *ctx = rewriter.getContext();
  unsigned loops = op.getNumLoops(), rowLoop = blockRowLoop(op);
  AffineMap read = op.getIndexingMapsArray()[0];
  SmallVector<int64_t> sizes(loops, 1);
  sizes[rowLoop] = kLanes;
  sizes[loops - 1] = kTransposeRows;
  Operation *tile = tileOp(rewriter, op, getAsIndexOpFoldResult(ctx, sizes),
                           /*parallel=*/true);
  auto block = dyn_cast_if_present<linalg::LinalgOp>(tile);
  if (!block)
    return;
  Value input = block.getDpsInputs()[0], init = block.getDpsInits()[0];
  Location loc = block.getLoc();
  rewriter.setInsertionPoint(block);
  Type f32 = rewriter.getF32Type();
  auto row = VectorType::get({kLanes}, f32);
  auto square = VectorType::get({kLanes, kLanes}, f32);
  auto rowMask = VectorType::get({kLanes}, rewriter.getI1Type());
  auto index = [&](OpBuilder &b, Location l, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, l, value);
  };
  Value zero = index(rewriter, loc, 0), step = index(rewriter, loc, kLanes);
  Value columns = tensor::DimOp::create(rewriter, loc, init, rowLoop);
  Value width = tensor::DimOp::create(rewriter, loc, init, loops - 1);
  AffineMap minor = AffineMap::getMinorIdentityMap(loops, 1, ctx);
  // One block at `at` along A, of `left` rows (kLanes or fewer).
  auto transposeBlock = [&](OpBuilder &b, Location l, Value at, Value left,
                            Value result) -> Value {
    Value pad = arith::ConstantOp::create(b, l, b.getZeroAttr(f32));
    // A row (lane i) beyond the block's rows, or a column beyond its
    // columns, is masked off entirely.
    auto inside = [&](int64_t lane, Value bound) -> Value {
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                   index(b, l, lane), bound);
    };
    auto sizeIf = [&](int64_t lane, Value bound, Value size) -> Value {
      return arith::SelectOp::create(b, l, inside(lane, bound), size,
                                     index(b, l, 0));
    };
    Value values = arith::ConstantOp::create(
        b, l, DenseElementsAttr::get(square, b.getZeroAttr(f32)));
    SmallVector<Value> point(loops, zero);
    for (int64_t i = 0; i < kLanes; ++i) {
      // A masked-off row is read at the block's first row (in bounds).
      point[loops - 1] = arith::SelectOp::create(
          b, l, inside(i, left),
          arith::AddIOp::create(b, l, at, index(b, l, i)), at);
      point[rowLoop] = zero;
      SmallVector<Value> indices;
      for (unsigned d = 0; d < loops; ++d)
        indices.push_back(point[read.getDimPosition(d)]);
      Value mask = vector::CreateMaskOp::create(
          b, l, rowMask, ValueRange{sizeIf(i, left, columns)});
      Value loaded = vector::TransferReadOp::create(
          b, l, row, input, indices, AffineMapAttr::get(minor), pad, mask,
          b.getBoolArrayAttr({true}));
      values = vector::InsertOp::create(b, l, loaded, values, i);
    }
    Value transposed =
        vector::TransposeOp::create(b, l, values, ArrayRef<int64_t>{1, 0});
    for (int64_t j = 0; j < kLanes; ++j) {
      point[rowLoop] = arith::SelectOp::create(b, l, inside(j, columns),
                                               index(b, l, j), zero);
      point[loops - 1] = at;
      Value mask = vector::CreateMaskOp::create(
          b, l, rowMask, ValueRange{sizeIf(j, columns, left)});
      Value column = vector::ExtractOp::create(b, l, transposed, j);
      result = vector::TransferWriteOp::create(b, l, column, result, point,
                                               AffineMapAttr::get(minor), mask,
                                               b.getBoolArrayAttr({true}))
                   .getResult();
    }
    return result;
  };
  // Full blocks, then the partial one (a loop of at most one iteration).
  Value full = affine::makeComposedAffineApply(
      rewriter, loc, getAffineSymbolExpr(0, ctx).floorDiv(kLanes) * kLanes,
      {width});
  auto fullBlocks = scf::ForOp::create(
      rewriter, loc, zero, full, step, ValueRange{init},
      [&](OpBuilder &b, Location l, Value at, ValueRange carried) {
        scf::YieldOp::create(
            b, l, transposeBlock(b, l, at, index(b, l, kLanes), carried[0]));
      });
  auto partial = scf::ForOp::create(
      rewriter, loc, full, width, step, fullBlocks.getResults(),
      [&](OpBuilder &b, Location l, Value at, ValueRange carried) {
        Value left = arith::SubIOp::create(b, l, width, at);
        scf::YieldOp::create(b, l, transposeBlock(b, l, at, left, carried[0]));
      });
  rewriter.replaceOp(block, partial.getResults());
}

/// A pad of an image's two innermost dims by a constant (a convolution's
/// input: [N, C, H, W] to [N, C, lh + H + hh, lw + W + hw]) as one
/// parallel loop over the planes, each plane's source copied into the
/// middle of its padded plane and only the border filled (rows above and
/// below, then columns left and right of the source's rows). Upstream's
/// decomposition fills the whole tensor, then copies the source over most
/// of it, two loops on threads: PaddleOCR's recognizer spent 7% of its
/// time writing zeros that the copy then overwrote.
struct PadPlanes : OpRewritePattern<tensor::PadOp> {
  PadPlanes(MLIRContext *context)
      : OpRewritePattern<tensor::PadOp>(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    Value padding = pad.getConstantPaddingValue();
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    int64_t rank = pad.getResultType().getRank();
    // f32 only: bf16 and f16 border columns would be vectors of one narrow
    // element, which LLVM's x86 backend cannot always store.
    if (!padding || rank < 3 || !padding.getType().isF32() ||
        llvm::any_of(low, ShapedType::isDynamic) ||
        llvm::any_of(high, ShapedType::isDynamic))
      return failure();
    for (int64_t d = 0; d < rank - 2; ++d)
      if (low[d] != 0 || high[d] != 0)
        return failure();
    if (llvm::all_of(low, [](int64_t l) { return l == 0; }) &&
        llvm::all_of(high, [](int64_t h) { return h == 0; }))
      return failure();
    Location loc = pad.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value source = pad.getSource();
    Type element = pad.getResultType().getElementType();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, source);
    AffineExpr s0;
    bindSymbols(ctx, s0);
    SmallVector<OpFoldResult> padded(sizes);
    for (int64_t d = rank - 2; d < rank; ++d)
      padded[d] = affine::makeComposedFoldedAffineApply(
          rewriter, loc, s0 + low[d] + high[d], {sizes[d]});
    Value empty = tensor::EmptyOp::create(rewriter, loc, padded, element);
    SmallVector<OpFoldResult> planes(sizes.begin(), sizes.end() - 2);
    auto index = [&](int64_t value) -> OpFoldResult {
      return rewriter.getIndexAttr(value);
    };
    auto loop = scf::ForallOp::create(
        rewriter, loc, planes, ValueRange{empty}, std::nullopt,
        [&](OpBuilder &b, Location l, ValueRange arguments) {
          // The plane's indices, then the padded tensor.
          SmallVector<OpFoldResult> plane(arguments.drop_back()),
              inPlane(rank - 2, index(0)), unit(rank, index(1));
          Value out = arguments.back();
          // Offsets and sizes of the slice [1, .., 1, rows, columns] at
          // (row, column) of the plane at `outer`.
          auto slice = [&](ArrayRef<OpFoldResult> outer, OpFoldResult row,
                           OpFoldResult column, OpFoldResult rows,
                           OpFoldResult columns) {
            SmallVector<OpFoldResult> offsets(outer),
                extent(rank - 2, index(1));
            offsets.append({row, column});
            extent.append({rows, columns});
            return std::make_pair(offsets, extent);
          };
          auto [whole, wholeSize] = slice(plane, index(0), index(0),
                                          padded[rank - 2], padded[rank - 1]);
          Value result =
              tensor::ExtractSliceOp::create(b, l, out, whole, wholeSize, unit);
          // The source's plane, copied (a linalg.copy vectorizes; a slice
          // inserted would be a strided memref.copy, element by element).
          auto [from, fromSize] = slice(plane, index(0), index(0),
                                        sizes[rank - 2], sizes[rank - 1]);
          Value sourcePlane = tensor::ExtractSliceOp::create(b, l, source, from,
                                                             fromSize, unit);
          // Writes the part of the padded plane at (row, column) by `fill`.
          auto region = [&](OpFoldResult row, OpFoldResult rows,
                            OpFoldResult column, OpFoldResult columns,
                            auto fill) {
            auto [at, extent] = slice(inPlane, row, column, rows, columns);
            Value slot =
                tensor::ExtractSliceOp::create(b, l, result, at, extent, unit);
            result = tensor::InsertSliceOp::create(b, l, fill(slot), result, at,
                                                   extent, unit);
          };
          region(index(low[rank - 2]), sizes[rank - 2], index(low[rank - 1]),
                 sizes[rank - 1], [&](Value slot) {
                   return linalg::CopyOp::create(b, l, sourcePlane, slot)
                       .getResult(0);
                 });
          auto fillSlot = [&](Value slot) {
            return linalg::FillOp::create(b, l, padding, slot).getResult(0);
          };
          OpFoldResult below = affine::makeComposedFoldedAffineApply(
              b, l, s0 + low[rank - 2], {sizes[rank - 2]});
          OpFoldResult right = affine::makeComposedFoldedAffineApply(
              b, l, s0 + low[rank - 1], {sizes[rank - 1]});
          if (low[rank - 2])
            region(index(0), index(low[rank - 2]), index(0), padded[rank - 1],
                   fillSlot);
          if (high[rank - 2])
            region(below, index(high[rank - 2]), index(0), padded[rank - 1],
                   fillSlot);
          if (low[rank - 1])
            region(index(low[rank - 2]), sizes[rank - 2], index(0),
                   index(low[rank - 1]), fillSlot);
          if (high[rank - 1])
            region(index(low[rank - 2]), sizes[rank - 2], right,
                   index(high[rank - 1]), fillSlot);
          auto terminator = scf::InParallelOp::create(b, l);
          b.setInsertionPointToStart(terminator.getBody());
          tensor::ParallelInsertSliceOp::create(b, l, result, out, whole,
                                                wholeSize, unit);
        });
    // The pad may declare a dim static that the source's sizes leave
    // dynamic (or the other way round).
    Value result = loop.getResult(0);
    if (result.getType() != pad.getResultType())
      result =
          tensor::CastOp::create(rewriter, loc, pad.getResultType(), result);
    rewriter.replaceOp(pad, result);
    return success();
  }
};

} // namespace

void tessera::cpu::vectorizeUpsamplings(RewriterBase &rewriter,
                                        func::FuncOp func) {
  SmallVector<std::pair<linalg::GenericOp, int64_t>> upsamplings;
  func.walk([&](linalg::GenericOp op) {
    if (std::optional<SmallVector<int64_t>> factors = upsamplingFactors(op))
      upsamplings.push_back({op, factors->back()});
  });
  for (auto [op, factor] : upsamplings)
    vectorizeUpsampling(rewriter, op, factor);
}

void tessera::cpu::vectorizeBlockTransposes(RewriterBase &rewriter,
                                            func::FuncOp func) {
  SmallVector<linalg::LinalgOp> transposes;
  func.walk([&](linalg::LinalgOp op) {
    if (isBlockTranspose(op))
      transposes.push_back(op);
  });
  for (linalg::LinalgOp op : transposes)
    vectorizeBlockTranspose(rewriter, op);
}

void tessera::cpu::populatePadPlanesPattern(RewritePatternSet &patterns) {
  patterns.add<PadPlanes>(patterns.getContext());
}
