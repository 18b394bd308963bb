//===- SequentializeNestedParallel.cpp - one OpenMP fork per loop nest ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SEQUENTIALIZENESTEDPARALLELPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// Replaces `op` (no results, no reductions) by nested scf.for loops.
void sequentialize(scf::ParallelOp op) {
  OpBuilder b(op);
  Block *body = op.getBody();
  scf::buildLoopNest(
      b, op.getLoc(), op.getLowerBound(), op.getUpperBound(), op.getStep(),
      [&](OpBuilder &nb, Location, ValueRange ivs) {
        IRMapping mapping;
        mapping.map(op.getInductionVars(), ivs);
        for (Operation &nested : body->without_terminator())
          nb.clone(nested, mapping);
      });
  op.erase();
}

struct SequentializeNestedParallelPass
    : tessera::cpu::impl::SequentializeNestedParallelPassBase<
          SequentializeNestedParallelPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> nested;
    getOperation().walk([&](scf::ParallelOp op) {
      Operation *parent = op->getParentOp();
      bool inLoop = false;
      for (; parent && !isa<func::FuncOp>(parent);
           parent = parent->getParentOp())
        inLoop |= isa<scf::ParallelOp, scf::ForOp>(parent);
      if (inLoop && op.getNumResults() == 0 && op.getInitVals().empty())
        nested.push_back(op);
    });
    // Innermost first (walk order is post-order), so clones stay valid.
    for (scf::ParallelOp op : nested)
      sequentialize(op);
  }
};

} // namespace
