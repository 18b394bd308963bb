//===- ConvolutionGemms.cpp - narrow convolutions as GEMMs
//-----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A bf16/f16 convolution that accumulates in f32 becomes an im2col gather
// and a contraction the tensor-core kernel takes (upstream's
// linalg::rewriteInIm2Col for the NCHW/FCHW layout Tessera lowers to).
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_CONVOLUTIONGEMMSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

/// Why `op` keeps its direct form, or nothing: it must be on tensors, with
/// bf16/f16 input and filter summed in an f32 result, all of static shape.
std::optional<StringRef> whyDirect(linalg::Conv2DNchwFchwOp op) {
  if (!op.hasPureTensorSemantics())
    return StringRef("not on tensors");
  auto input = cast<RankedTensorType>(op.getInputs()[0].getType());
  auto filter = cast<RankedTensorType>(op.getInputs()[1].getType());
  auto output = cast<RankedTensorType>(op.getOutputs()[0].getType());
  Type element = input.getElementType();
  if (!isa<BFloat16Type, Float16Type>(element) ||
      filter.getElementType() != element || !output.getElementType().isF32())
    return StringRef("not narrow operands accumulated in f32");
  if (!input.hasStaticShape() || !filter.hasStaticShape() ||
      !output.hasStaticShape())
    return StringRef("a dynamic dim");
  return std::nullopt;
}

/// The GEMM that `result` (the im2col rewrite's expansion of its result)
/// reads starts from zeros of its own shape, filled right before it,
/// rather than from a fill of the convolution's result collapsed (filled
/// before the im2col gather): after bufferization its result is then a
/// buffer of its own, zero-filled just before it, which the tensor-core
/// kernel takes as its accumulators' zero start (with an epilogue).
void startFromOwnZeros(RewriterBase &rewriter, Operation *result) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(result);
  auto gemm = expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>()
                     : linalg::GenericOp();
  if (!gemm || gemm.getNumDpsInits() != 1)
    return;
  // The fill of the convolution's result, collapsed (or not yet).
  Value init = gemm.getDpsInits()[0];
  auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse && collapse->hasOneUse())
    init = collapse.getSrc();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  auto type = dyn_cast<RankedTensorType>(gemm.getDpsInits()[0].getType());
  if (!fill || !fill->hasOneUse() || !type || !type.hasStaticShape())
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(gemm);
  Location loc = gemm.getLoc();
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  Value zeros =
      linalg::FillOp::create(rewriter, loc, fill.getDpsInputs()[0], empty)
          .getResult(0);
  rewriter.modifyOpInPlace(gemm, [&] { gemm.setDpsInitOperand(0, zeros); });
  if (collapse && collapse->use_empty())
    rewriter.eraseOp(collapse);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
}

/// Rewrites only the convolutions it takes and what reads their results
/// (the greedy driver visits only those consumers: nothing else in the
/// function is folded or visited again).
struct ConvolutionGemmsPass
    : tessera::cuda::impl::ConvolutionGemmsPassBase<ConvolutionGemmsPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp op) {
      if (!whyDirect(op))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> results;
    for (linalg::Conv2DNchwFchwOp op : convs) {
      rewriter.setInsertionPoint(op);
      // A form upstream has no im2col for (dilated) stays direct.
      auto rewritten = linalg::rewriteInIm2Col(rewriter, op);
      if (succeeded(rewritten)) {
        results.push_back(rewritten->second);
        startFromOwnZeros(rewriter, rewritten->second);
      }
    }
    // The GEMM's result is [N, F, OH*OW], expanded to [N, F, OH, OW] for
    // what reads it. Elementwise consumers (the convolution's bias, an
    // activation, and theirs in turn) are collapsed to [N, F, OH*OW]
    // instead, reading the GEMM's result as it is: fused into one, the
    // tensor-core kernel then computes them in its epilogue.
    llvm::SmallPtrSet<Value, 8> flat;
    for (Operation *result : results)
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(result))
        flat.insert(expand.getSrc());
    auto elementwise = [](Operation *op) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      return generic && generic.getNumReductionLoops() == 0;
    };
    for (;;) {
      SmallVector<Operation *> consumers;
      for (Value value : flat)
        for (Operation *user : value.getUsers())
          if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
            for (Operation *consumer : expand->getUsers())
              if (elementwise(consumer) &&
                  !llvm::is_contained(consumers, consumer))
                consumers.push_back(consumer);
      if (consumers.empty())
        return;
      RewritePatternSet patterns(&getContext());
      linalg::populateFoldReshapeOpsByCollapsingPatterns(
          patterns, [&](OpOperand *operand) {
            auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
            return expand && flat.contains(expand.getSrc()) &&
                   llvm::is_contained(consumers, operand->getOwner());
          });
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingOps);
      bool changed = false;
      (void)applyOpPatternsGreedily(consumers, std::move(patterns), config,
                                    &changed);
      if (!changed)
        return;
      // The collapsed consumers read the flat values themselves (a
      // collapse of their expansion is the value).
      for (Value value : flat)
        for (Operation *user : llvm::make_early_inc_range(value.getUsers()))
          if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
            for (Operation *inner :
                 llvm::make_early_inc_range(expand->getUsers()))
              if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(inner);
                  collapse && collapse.getType() == value.getType() &&
                  collapse.getReassociationIndices() ==
                      expand.getReassociationIndices())
                rewriter.replaceOp(collapse, value);
      // The collapsed consumers' results are flat in turn.
      SmallVector<Value> reached(flat.begin(), flat.end());
      for (Value value : reached)
        for (Operation *user : value.getUsers())
          if (elementwise(user))
            for (Value r : user->getResults())
              if (cast<ShapedType>(r.getType()).getRank() ==
                  cast<ShapedType>(value.getType()).getRank())
                flat.insert(r);
    }
  }
};

} // namespace
