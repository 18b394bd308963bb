//===- FreeForallAllocations.cpp - free per-iteration forall buffers ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_FREEFORALLALLOCATIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

struct FreeForallAllocationsPass
    : tessera::cpu::impl::FreeForallAllocationsPassBase<
          FreeForallAllocationsPass> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForallOp forall) {
      Block *body = forall.getBody();
      Operation *terminator = body->getTerminator();
      // Nothing to free, or wrapped already (the region and the
      // terminator only).
      if (&body->front() == terminator ||
          (isa<scf::ExecuteRegionOp>(body->front()) &&
           body->front().getNextNode() == terminator))
        return;
      Location loc = forall.getLoc();
      OpBuilder b(forall.getContext());
      b.setInsertionPointToStart(body);
      auto scope = scf::ExecuteRegionOp::create(b, loc, TypeRange{});
      Block *inner = b.createBlock(&scope.getRegion());
      inner->getOperations().splice(inner->end(), body->getOperations(),
                                    std::next(scope->getIterator()),
                                    terminator->getIterator());
      b.setInsertionPointToEnd(inner);
      scf::YieldOp::create(b, loc);
    });
  }
};

} // namespace
