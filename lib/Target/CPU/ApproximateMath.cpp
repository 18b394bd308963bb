//===- ApproximateMath.cpp - vectorizable f32 transcendental functions ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSwitch.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// The functions that otherwise become scalar libm calls (or LLVM
/// intrinsics that LLVM scalarizes without a vector math library).
bool isApproximated(StringRef name) {
  name.consume_front("math.");
  return llvm::StringSwitch<bool>(name)
      .Cases({"erf", "tanh", "exp", "expm1", "log", "log1p", "log2"}, true)
      .Default(false);
}

struct ApproximateMathPass
    : tessera::cpu::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
