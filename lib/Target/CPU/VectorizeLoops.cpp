//===- VectorizeLoops.cpp - vectorize elementwise ops and row reductions --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "RowTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_VECTORIZELOOPSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;
using tessera::cpu::tileOp;

namespace {

/// Elements per vector step of an elementwise loop (four AVX-512 registers
/// of f32), and the longest row a reduction keeps in one vector.
constexpr int64_t kStep = 64, kLanes = 16, kMaxRow = 4096;

/// Elements per masked vector step of an elementwise loop whose innermost
/// range is dynamic (a symbolic image width).
constexpr int64_t kMaskedStep = 16;

/// The range of the innermost loop, or nothing when `op` is not a loop nest
/// with a static innermost loop whose only reduction, if any, is the
/// innermost loop. Outer loops may be dynamic (a symbolic batch or
/// sequence): they are tiled by one.
std::optional<int64_t> innerRange(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  if (loops == 0 || !op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()))
    return std::nullopt;
  // A loop whose range no operand dim gives (a window's) stays as it is.
  if (llvm::any_of(ranges, ShapedType::isDynamic) && !op.hasDynamicShape())
    return std::nullopt;
  // Memory holds i1 as bytes, vector<Nxi1> as bits: such loops stay scalar.
  // So do bf16 and f16 loops of fewer than 4 (the pair packing of a bf16
  // GEMM's rhs for vdpbf16ps, [K/2, W, 2]): their transposing reads would
  // lower to inserts at a variable index, which LLVM's x86 backend cannot
  // do on bf16 vectors.
  for (OpOperand &operand : op->getOpOperands()) {
    Type element = getElementTypeOrSelf(operand.get().getType());
    if (element.isInteger(1) ||
        (isa<BFloat16Type, Float16Type>(element) && ranges.back() < 4))
      return std::nullopt;
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < loops; ++i)
    if (!linalg::isParallelIterator(iterators[i]))
      return std::nullopt;
  return ranges.back();
}

/// The tile size of the innermost loop (0: the whole loop), or nothing when
/// it does not vectorize (see innerRange; a long row that no vector step
/// divides is split first, see splitRemainder).
std::optional<int64_t> innerTile(linalg::LinalgOp op) {
  std::optional<int64_t> range = innerRange(op);
  if (!range)
    return std::nullopt;
  int64_t inner = *range;
  if (linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return inner <= kMaxRow ? std::optional<int64_t>(0) : std::nullopt;
  if (inner <= kStep)
    return 0;
  if (inner % kStep == 0)
    return kStep;
  if (inner % kLanes == 0)
    return kLanes;
  return std::nullopt;
}

/// Whether `op` is plain: its operands indexed by loop dims (or 0 where
/// `broadcasts`), no linalg.index or tensor.extract in its body, which
/// vectorizes at the op's sizes with its dynamic loops at their tiles' (1,
/// or `row` for a dynamic innermost loop).
bool isPlain(linalg::LinalgOp op, bool broadcasts,
             std::optional<int64_t> row = std::nullopt) {
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [&](AffineMap map) {
                      return map.isProjectedPermutation(broadcasts);
                    }) ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty() ||
      !op.getBlock()->getOps<tensor::ExtractOp>().empty())
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  for (int64_t &size : sizes)
    if (ShapedType::isDynamic(size))
      size = 1;
  if (row)
    sizes.back() = *row;
  return succeeded(linalg::vectorizeOpPrecondition(op, sizes));
}

/// Whether `op` is a plain nest of parallel loops (broadcasts allowed)
/// whose innermost range is dynamic (the width of an image of symbolic
/// size): its rows vectorize in masked steps of kMaskedStep (before, such
/// loops ran scalar: a depthwise convolution over an image of symbolic
/// size took 6x the time of the same one over a static image).
bool maskedInner(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  if (loops == 0 || !op.hasPureTensorSemantics() ||
      !ShapedType::isDynamic(op.getStaticLoopRanges().back()) ||
      op.getNumParallelLoops() != loops)
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (getElementTypeOrSelf(operand.get().getType()).isInteger(1))
      return false;
  // Broadcasts included: a squeeze-and-excitation block's scale per
  // channel is read as [N, C, 0, 0]. So are transposed reads of the row
  // (a symbolic-size convolution's product [N, P, F] back to [N, F, P]):
  // each masked step is then 16 loads, which still beats the scalar loop
  // nest (PaddleOCR's classifier took 1.78 ms without them, 1.53 with).
  return isPlain(op, /*broadcasts=*/true, kMaskedStep);
}

/// Whether `op` reduces its trailing loops (after at least one parallel
/// loop) and its innermost range is dynamic (a global average pool over an
/// image of symbolic size, [N, C, H, W] to [N, C]): each output then takes
/// its rows in masked vector steps, a horizontal reduction each (before,
/// one scalar load, add and store per element: 2% of PaddleOCR's detector
/// for one squeeze-and-excitation block's pool).
bool maskedReduction(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  unsigned parallel = op.getNumParallelLoops();
  if (loops < 2 || parallel == 0 || parallel == loops ||
      !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      !ShapedType::isDynamic(op.getStaticLoopRanges().back()))
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i < loops; ++i)
    if (linalg::isParallelIterator(iterators[i]) != (i < parallel))
      return false;
  for (OpOperand &operand : op->getOpOperands())
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return false;
  return isPlain(op, /*broadcasts=*/true, kMaskedStep);
}

/// An elementwise loop nest whose row is longer than one step and that no
/// vector width divides (111 columns: a depthwise convolution computed at
/// stride 1 for a stride-2 output) split into the widest multiple of the
/// lanes and the rest (96 + 15), each of which vectorizes.
void splitRemainder(RewriterBase &rewriter, linalg::LinalgOp op) {
  std::optional<int64_t> range = innerRange(op);
  if (!range || innerTile(op) || *range <= kStep ||
      linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return;
  // A read through x floordiv f (an upsampling by a factor that does not
  // divide the lanes) does not split: the second part's map would read
  // (local x) floordiv f from the first part's end, not (end + x) floordiv
  // f (a nearest Resize by 3 to width 75 read the wrong pixels).
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/true);
      }))
    return;
  rewriter.setInsertionPoint(op);
  linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()),
                  op.getNumLoops() - 1,
                  rewriter.getIndexAttr(*range - *range % kLanes));
}

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
/// dim), with A or B dynamic. Examples: a symbolic-size convolution's
/// product [N, P, F] back to [N, F, P] (A = P, B = F), an image [N, C, H,
/// W] to [N, H, W, C] (A = C, B = W), a learned upsampling's blocks [N, H,
/// W*2, 2, F] to [N, F, H, 2, W*2] (A = W*2, B = F, two loops apart).
/// Their vector steps (see maskedInner) would read each output vector as
/// 16 strided loads, one lane at a time.
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
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return ShapedType::isDynamic(ranges[loops - 1]) ||
         ShapedType::isDynamic(ranges[blockRowLoop(op)]);
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

/// A masked step's horizontal reduction (see maskedReduction) of the
/// lanes the mask keeps, as an unmasked reduction of the vector whose other
/// lanes hold the combining kind's neutral element: LLVM lowers a masked
/// one in lane order, a scalar add per lane, and an unmasked one as a tree
/// of shuffles (the pass reassociates floating-point reductions).
struct UnmaskReduction : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto reduction =
        dyn_cast_if_present<vector::ReductionOp>(mask.getMaskableOp());
    if (!reduction || mask.hasPassthru() ||
        !reduction.getSourceVectorType().getElementType().isF32())
      return failure();
    // Each kind's exact identity: -0 for a sum (-0 + -0 is -0), NaN for
    // maxnum and minnum (which return the other operand), -inf and +inf
    // for the NaN-propagating maximum and minimum.
    float neutral;
    switch (reduction.getKind()) {
    case vector::CombiningKind::ADD:
      neutral = -0.0f;
      break;
    case vector::CombiningKind::MUL:
      neutral = 1.0f;
      break;
    case vector::CombiningKind::MAXNUMF:
    case vector::CombiningKind::MINNUMF:
      neutral = std::numeric_limits<float>::quiet_NaN();
      break;
    case vector::CombiningKind::MAXIMUMF:
      neutral = -std::numeric_limits<float>::infinity();
      break;
    case vector::CombiningKind::MINIMUMF:
      neutral = std::numeric_limits<float>::infinity();
      break;
    default:
      return failure();
    }
    Location loc = mask.getLoc();
    VectorType type = reduction.getSourceVectorType();
    Value neutrals = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(type, neutral));
    Value kept = arith::SelectOp::create(rewriter, loc, mask.getMask(),
                                         reduction.getVector(), neutrals);
    rewriter.replaceOpWithNewOp<vector::ReductionOp>(mask, reduction.getKind(),
                                                     kept, reduction.getAcc(),
                                                     reduction.getFastmath());
    return success();
  }
};

struct VectorizeLoopsPass
    : tessera::cpu::impl::VectorizeLoopsPassBase<VectorizeLoopsPass> {
  void runOnOperation() override {
    // A pad (of a convolution's input) as a fill and a copy of the input
    // into it, so that the fill vectorizes like any loop (bufferization
    // would fill it one element at a time).
    {
      RewritePatternSet patterns(&getContext());
      patterns.add<PadPlanes>(&getContext());
      linalg::populateDecomposePadPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      IRRewriter rewriter(&getContext());
      SmallVector<linalg::LinalgOp> longRows;
      getOperation().walk(
          [&](linalg::LinalgOp op) { longRows.push_back(op); });
      for (linalg::LinalgOp op : longRows)
        splitRemainder(rewriter, op);
    }
    {
      IRRewriter rewriter(&getContext());
      SmallVector<std::pair<linalg::GenericOp, int64_t>> upsamplings;
      getOperation().walk([&](linalg::GenericOp op) {
        if (std::optional<SmallVector<int64_t>> factors = upsamplingFactors(op))
          upsamplings.push_back({op, factors->back()});
      });
      for (auto [op, factor] : upsamplings)
        vectorizeUpsampling(rewriter, op, factor);
    }
    {
      IRRewriter rewriter(&getContext());
      SmallVector<linalg::LinalgOp> transposes;
      getOperation().walk([&](linalg::LinalgOp op) {
        if (isBlockTranspose(op))
          transposes.push_back(op);
      });
      for (linalg::LinalgOp op : transposes)
        vectorizeBlockTranspose(rewriter, op);
    }
    SmallVector<linalg::LinalgOp> targets, masked, reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (maskedInner(op)) {
        masked.push_back(op);
        return;
      }
      if (maskedReduction(op)) {
        reductions.push_back(op);
        return;
      }
      // With dynamic outer loops only the tile is static: plain elementwise
      // ops and row reductions only (operands indexed by loop dims, no
      // linalg.index or tensor.extract), whose body vectorizes at the
      // tile's sizes (one for the dynamic loops).
      if (innerTile(op) &&
          (op.hasDynamicShape()
               ? isPlain(op, /*broadcasts=*/false)
               : succeeded(linalg::vectorizeOpPrecondition(op))))
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> loopsToSimplify, maskedLoops;
    for (linalg::LinalgOp op : targets) {
      unsigned loops = op.getNumLoops();
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t inner = *innerTile(op);
      // Outer loops one step at a time on threads, the innermost in vector
      // steps. An op that is a single tile is vectorized as it is when a
      // loop holds it (a row of a fused reduction), else left alone.
      bool tiled = inner != 0;
      for (unsigned i = 0; i + 1 < loops; ++i)
        tiled |= ranges[i] != 1;
      if (!tiled) {
        if (!op->getParentOfType<scf::ForallOp>())
          continue;
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::VectorizationResult> vectorized =
            linalg::vectorize(rewriter, op);
        if (succeeded(vectorized)) {
          rewriter.replaceOp(op, vectorized->replacements);
          loopsToSimplify.push_back(
              rewriter.getInsertionBlock()->getParentOp());
        }
        continue;
      }
      SmallVector<int64_t> sizes(loops, 1);
      sizes.back() = inner;
      Operation *target =
          tileOp(rewriter, op, getAsIndexOpFoldResult(&getContext(), sizes),
                 /*parallel=*/true);
      if (!target)
        continue;
      auto loop = target->getParentOfType<scf::ForallOp>();
      rewriter.setInsertionPoint(target);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, target);
      if (failed(vectorized))
        continue;
      rewriter.replaceOp(target, vectorized->replacements);
      loopsToSimplify.push_back(loop);
    }
    // Rows of dynamic length: outer loops one step at a time on threads,
    // each row a loop of masked vector steps (the last one partial). The
    // row's steps are not on the threads too: OpenMP computes each
    // iteration's indices of a collapsed nest with divisions, which cost
    // more than a step of a short row. (A 1-D op's steps are the parallel
    // loop's iterations.)
    // `op` tiled by `rows` on an scf.forall, then by `steps` in scf.for
    // loops (when any is set), the last of them a masked vector step; the
    // forall, or null.
    auto maskedSteps = [&](linalg::LinalgOp op, ArrayRef<int64_t> rows,
                           ArrayRef<int64_t> steps) -> Operation * {
      unsigned loops = op.getNumLoops();
      Operation *target =
          tileOp(rewriter, op, getAsIndexOpFoldResult(&getContext(), rows),
                 /*parallel=*/true);
      if (!target)
        return nullptr;
      auto loop = target->getParentOfType<scf::ForallOp>();
      if (llvm::any_of(steps, [](int64_t step) { return step != 0; }))
        target = tileOp(rewriter, target,
                        getAsIndexOpFoldResult(&getContext(), steps),
                        /*parallel=*/false);
      if (!target)
        return nullptr;
      SmallVector<int64_t> vectorSizes(loops, 1);
      vectorSizes.back() = kMaskedStep;
      rewriter.setInsertionPoint(target);
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, target, vectorSizes, SmallVector<bool>(loops, false));
      if (failed(vectorized))
        return nullptr;
      rewriter.replaceOp(target, vectorized->replacements);
      return loop;
    };
    for (linalg::LinalgOp op : masked) {
      unsigned loops = op.getNumLoops();
      SmallVector<int64_t> rows(loops, 1), steps(loops, 0);
      rows.back() = loops == 1 ? kMaskedStep : 0;
      if (loops > 1)
        steps.back() = kMaskedStep;
      if (Operation *loop = maskedSteps(op, rows, steps))
        maskedLoops.push_back(loop);
    }
    // Reductions of dynamic rows: the parallel loops one step at a time on
    // threads, the reduced ones a loop nest of masked vector steps along
    // the innermost, each step's sum (or maximum) added to the output's.
    for (linalg::LinalgOp op : reductions) {
      unsigned loops = op.getNumLoops(), parallel = op.getNumParallelLoops();
      SmallVector<int64_t> rows(loops, 0), steps(loops, 0);
      for (unsigned i = 0; i < loops; ++i)
        (i < parallel ? rows : steps)[i] = 1;
      steps.back() = kMaskedStep;
      if (Operation *loop = maskedSteps(op, rows, steps))
        maskedLoops.push_back(loop);
    }
    // The masks on the transfers themselves (a masked load or store each),
    // which the patterns below and bufferization handle.
    {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
      FrozenRewritePatternSet frozen(std::move(patterns));
      for (Operation *loop : maskedLoops) {
        if (failed(applyPatternsGreedily(loop->getRegion(0), frozen)))
          return signalPassFailure();
        loopsToSimplify.push_back(loop);
      }
    }
    // Within the new loops: 1-D transfers (the unit dims of the tile
    // dropped) and reductions as vector.reduction over the row.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    patterns.add<UnmaskReduction>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (Operation *loop : loopsToSimplify)
      if (failed(applyPatternsGreedily(loop->getRegion(0), frozen)))
        return signalPassFailure();
  }
};

} // namespace
