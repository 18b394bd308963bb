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
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_CONVOLUTIONGEMMSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

struct NarrowConvolutionToGemm : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    auto input = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto filter = cast<RankedTensorType>(op.getInputs()[1].getType());
    auto output = cast<RankedTensorType>(op.getOutputs()[0].getType());
    Type element = input.getElementType();
    if (!isa<BFloat16Type, Float16Type>(element) ||
        filter.getElementType() != element || !output.getElementType().isF32())
      return rewriter.notifyMatchFailure(
          op, "not narrow operands accumulated in f32");
    if (!input.hasStaticShape() || !filter.hasStaticShape() ||
        !output.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "a dynamic dim");
    if (failed(linalg::rewriteInIm2Col(rewriter, op)))
      return rewriter.notifyMatchFailure(op, "no im2col form");
    return success();
  }
};

struct ConvolutionGemmsPass
    : tessera::cuda::impl::ConvolutionGemmsPassBase<ConvolutionGemmsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<NarrowConvolutionToGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
