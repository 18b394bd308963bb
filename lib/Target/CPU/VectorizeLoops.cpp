//===- VectorizeLoops.cpp - vectorize elementwise ops and row reductions --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "RowTiles.h"
#include "VectorizeCopies.h"

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
constexpr int64_t kStep = 64, kLanes = tessera::cpu::kF32Lanes, kMaxRow = 4096;

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
      tessera::cpu::populatePadPlanesPattern(patterns);
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
      tessera::cpu::vectorizeUpsamplings(rewriter, getOperation());
      tessera::cpu::vectorizeBlockTransposes(rewriter, getOperation());
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
      // ops and row reductions only (operands indexed by loop dims or 0, no
      // linalg.index or tensor.extract), whose body vectorizes at the
      // tile's sizes (one for the dynamic loops). A broadcast operand (a
      // squeeze-and-excitation gate [N, C, 1, 1] read by (n, c, 0, 0)) is
      // one too: with a symbolic batch, PaddleOCR's recognizer ran a 5 x 5
      // depthwise convolution times its gate one element at a time, 17% of
      // its time.
      if (innerTile(op) &&
          (op.hasDynamicShape()
               ? isPlain(op, /*broadcasts=*/true)
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
