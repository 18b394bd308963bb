//===- SplitEmptyTensors.cpp - one tensor.empty per use -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SPLITEMPTYTENSORSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

struct SplitEmptyTensorsPass
    : tessera::cpu::impl::SplitEmptyTensorsPassBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        shared.push_back(empty);
    });
    for (tensor::EmptyOp empty : shared) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      // The first use keeps the original; each other gets a clone next to
      // it (where the original is, so that a use inside a loop does not
      // allocate on every step).
      OpBuilder b(empty);
      b.setInsertionPointAfter(empty);
      for (OpOperand *use : llvm::drop_begin(uses))
        use->set(b.clone(*empty)->getResult(0));
    }
  }
};

} // namespace
