//===- ExpandMath.cpp - math functions as arithmetic for kernels ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Conversion/Passes.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_EXPANDMATHPASS
#define GEN_PASS_DEF_DECODEFP8PASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

struct ExpandMathPass
    : tessera::cuda::impl::ExpandMathPassBase<ExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    math::populateExpansionPatterns(patterns);
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct DecodeFp8Pass : tessera::cuda::impl::DecodeFp8PassBase<DecodeFp8Pass> {
  void runOnOperation() override {
    SmallVector<arith::ExtFOp> widenings;
    getOperation().walk([&](arith::ExtFOp ext) {
      if (isa<Float8E4M3FNType, Float8E5M2Type>(ext.getIn().getType()))
        widenings.push_back(ext);
    });
    for (arith::ExtFOp ext : widenings) {
      OpBuilder b(ext);
      ext.replaceAllUsesWith(
          tessera::castElement(b, ext.getLoc(), ext.getIn(), ext.getType()));
      ext.erase();
    }
  }
};

} // namespace
