//===- FoldTransposes.cpp - transposes read through their consumers' maps -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_FOLDTRANSPOSESPASS
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

/// A linalg.generic input produced by linalg.transpose reads the
/// transpose's input instead, through its map composed with the
/// permutation: element [i_0, ..., i_n] of the transposed tensor is
/// element i_j at dim perm[j] of its input.
struct FoldTransposeIntoGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    bool changed = false;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto transpose = input.getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      AffineMap map = maps[i];
      SmallVector<AffineExpr> results(permutation.size());
      for (auto [j, dim] : llvm::enumerate(permutation))
        results[dim] = map.getResult(j);
      maps[i] = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                               results, op.getContext());
      inputs[i] = transpose.getInput();
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct FoldTransposesPass
    : tessera::cuda::impl::FoldTransposesPassBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoGeneric>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// Elementwise producers computed inside their consumers, except inside a
/// contraction: there the producer would run once per step of the
/// reduction (K times per element) instead of once, and a product of
/// narrow operands would no longer be one the tensor-core kernel takes.
/// A tensor.dim of a result (a symbolic size read for the next op's
/// tensor.empty) is computed from the op's operands instead, so that it
/// does not count as a second use.
struct FuseElementwisePass
    : tessera::cuda::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    linalg::ControlFusionFn control = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
      return producer && producer->hasOneUse() && consumer &&
             !linalg::isaContractionOpInterface(consumer);
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
