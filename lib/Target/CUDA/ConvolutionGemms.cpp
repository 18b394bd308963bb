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

/// Rewrites only the convolutions it takes (no greedy driver: nothing else
/// in the function is folded or visited again).
struct ConvolutionGemmsPass
    : tessera::cuda::impl::ConvolutionGemmsPassBase<ConvolutionGemmsPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp op) {
      if (!whyDirect(op))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp op : convs) {
      rewriter.setInsertionPoint(op);
      // A form upstream has no im2col for (dilated) stays direct.
      (void)linalg::rewriteInIm2Col(rewriter, op);
    }
  }
};

} // namespace
