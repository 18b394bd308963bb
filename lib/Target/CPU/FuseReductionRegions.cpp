//===- FuseReductionRegions.cpp - reduction regions as one row loop -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_FUSEREDUCTIONREGIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;
namespace ts = mlir::tessera;

namespace {

constexpr int64_t kRows = 16;

/// Moves the body of `region` in front of it and replaces its results by
/// the values its body yields.
void inlineRegion(RewriterBase &rewriter, ts::FusionOp region) {
  Block &body = region.getBody().front();
  auto yield = cast<ts::YieldOp>(body.getTerminator());
  SmallVector<Value> results(yield.getValues());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, region);
  rewriter.replaceOp(region, results);
}

/// Tiles the op that computes the region's result by one row (every loop
/// but the innermost) on an scf.forall and fuses into each row every
/// producer inside the region, so that the region runs as one loop nest
/// whose intermediates are single rows. False when the result does not
/// come from a tileable op of the region.
bool fuseRows(RewriterBase &rewriter, ts::FusionOp region) {
  auto yield = cast<ts::YieldOp>(region.getBody().front().getTerminator());
  if (yield.getValues().size() != 1)
    return false;
  auto consumer = yield.getValues()[0].getDefiningOp<linalg::LinalgOp>();
  if (!consumer || consumer->getParentOp() != region ||
      !consumer.hasPureTensorSemantics() || consumer.getNumLoops() < 2 ||
      consumer.getNumLoops() != consumer.getNumParallelLoops())
    return false;
  // Blocks of kRows rows where they divide the row count, so that the
  // rows' intermediate buffers are allocated once per block.
  SmallVector<OpFoldResult> sizes(consumer.getNumLoops(),
                                  rewriter.getIndexAttr(1));
  sizes.back() = rewriter.getIndexAttr(0);
  int64_t rows = consumer.getStaticLoopRanges().end()[-2];
  if (!ShapedType::isDynamic(rows) && rows % kRows == 0)
    sizes.end()[-2] = rewriter.getIndexAttr(kRows);
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(sizes);
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  // Only the region's own ops join the row loop: its inputs (a matmul, an
  // earlier region) are computed once, before it.
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (producer.getOwner()->getParentOp() != region)
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(consumer.getOperation()), options);
  if (failed(fused))
    return false;
  Value result = consumer->getResult(0);
  Value replacement = fused->replacements.lookup(result);
  if (!replacement)
    return false;
  rewriter.replaceAllUsesWith(result, replacement);
  return true;
}

struct FuseReductionRegionsPass
    : ::tessera::cpu::impl::FuseReductionRegionsPassBase<
          FuseReductionRegionsPass> {
  void runOnOperation() override {
    SmallVector<ts::FusionOp> regions;
    getOperation().walk([&](ts::FusionOp op) { regions.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (ts::FusionOp region : regions) {
      if (region.getKind() == ts::FusionKind::reduction)
        fuseRows(rewriter, region);
      // The producers the row loop recomputes are dead now.
      SmallVector<Operation *> ops;
      for (Operation &op : region.getBody().front().without_terminator())
        ops.push_back(&op);
      for (Operation *op : llvm::reverse(ops))
        if (isOpTriviallyDead(op))
          rewriter.eraseOp(op);
      inlineRegion(rewriter, region);
    }
    if (regions.empty())
      return;
    // Each use of a producer in the row loop fused its own copy (the
    // exponentials feed both the sum and the division): one of each
    // remains, and the whole-tensor originals go.
    DominanceInfo dominance;
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    if (failed(applyPatternsGreedily(getOperation(),
                                     RewritePatternSet(&getContext()))))
      return signalPassFailure();
  }
};

} // namespace
