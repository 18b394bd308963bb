//===- TileContractions.cpp - register tiles for matmul-like loops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_TILECONTRACTIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

constexpr int64_t kRows = 8, kColumns = 32;

/// Loops [batch..., rows, k, columns] (the order Tessera's matmul lowering
/// produces), static, with the register tile dividing rows and columns.
bool isTileableContraction(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (loops < 3 || op.getNumReductionLoops() != 1 ||
      !linalg::isReductionIterator(op.getIteratorTypesArray()[loops - 2]) ||
      op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 2)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  return ranges[loops - 3] % kRows == 0 && ranges[loops - 1] % kColumns == 0;
}

struct TileContractionsPass
    : tessera::cpu::impl::TileContractionsPassBase<TileContractionsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::GenericOp> targets;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isTileableContraction(op))
        targets.push_back(op);
    });
    IRRewriter rewriter(ctx);
    for (linalg::GenericOp op : targets) {
      unsigned loops = op.getNumLoops();
      // Parallel loops first (scf.forall, run on threads later)...
      SmallVector<OpFoldResult> outer(loops, rewriter.getIndexAttr(1));
      outer[loops - 3] = rewriter.getIndexAttr(kRows);
      outer[loops - 2] = rewriter.getIndexAttr(0);
      outer[loops - 1] = rewriter.getIndexAttr(kColumns);
      scf::SCFTilingOptions forall;
      forall.setTileSizes(outer).setLoopType(
          scf::SCFTilingOptions::LoopType::ForallOp);
      rewriter.setInsertionPoint(op);
      auto first = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), forall);
      if (failed(first))
        continue;
      rewriter.replaceOp(op, first->replacements);
      // ...then k, one step at a time, innermost.
      SmallVector<OpFoldResult> inner(loops, rewriter.getIndexAttr(0));
      inner[loops - 2] = rewriter.getIndexAttr(1);
      scf::SCFTilingOptions sequential;
      sequential.setTileSizes(inner);
      Operation *tile = first->tiledOps.front();
      rewriter.setInsertionPoint(tile);
      auto second = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(tile), sequential);
      if (failed(second))
        continue;
      rewriter.replaceOp(tile, second->replacements);
      Operation *body = second->tiledOps.front();
      rewriter.setInsertionPoint(body);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, body, {}, {}, false, false, false,
                            /*createNamedContraction=*/false);
      if (succeeded(vectorized))
        rewriter.replaceOp(body, vectorized->replacements);
    }
    // Vectorized reductions over k become contractions.
    RewritePatternSet patterns(ctx);
    // Broadcasting reads become reads plus broadcasts, which then fold into
    // the contraction's maps: a (rows x k) by (k x columns) product.
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateFoldArithExtensionPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
