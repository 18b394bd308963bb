//===- FuseElementwise.cpp - elementwise fusion that never recomputes -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {
/// The most ops one fused body holds. Each fusion clones both bodies, so
/// fusing a chain of n elementwise ops into one costs O(n^2) (a chain of
/// 2,000 took 18 s); capped, a long chain becomes loops of about this many
/// ops each, at the cost of one extra pass over memory per loop.
constexpr size_t kMaxFusedOps = 64;

/// Whether `map` reads its operand through a division or remainder (a
/// nearest upsampling's x floordiv f).
bool readsThroughDivision(AffineMap map) {
  return llvm::any_of(map.getResults(), [](AffineExpr expr) {
    bool divides = false;
    expr.walk([&](AffineExpr sub) {
      divides |= sub.getKind() == AffineExprKind::FloorDiv ||
                 sub.getKind() == AffineExprKind::CeilDiv ||
                 sub.getKind() == AffineExprKind::Mod;
    });
    return divides;
  });
}

struct FuseElementwisePass
    : tessera::cpu::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
          if (!consumer ||
              consumer.getNumLoops() != consumer.getNumParallelLoops())
            return false;
          auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
          // A nearest upsampling (the Resize lowering's copy, read through
          // x floordiv f) stays a copy of its own, which the vectorizer
          // takes: fused, its reads would make the consumer's loop nest
          // scalar (PaddleOCR's detector at a static size spent 10% of its
          // time in three upsamplings fused into the adds after them).
          if (readsThroughDivision(consumer.getMatchingIndexingMap(operand)) ||
              (producer && llvm::any_of(producer.getIndexingMapsArray(),
                                        readsThroughDivision)))
            return false;
          return !producer ||
                 producer.getBlock()->getOperations().size() +
                         consumer.getBlock()->getOperations().size() <=
                     kMaxFusedOps;
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
