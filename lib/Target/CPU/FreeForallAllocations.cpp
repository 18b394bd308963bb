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
      SmallVector<memref::AllocOp> allocs(body->getOps<memref::AllocOp>());
      for (memref::AllocOp alloc : allocs) {
        bool freed = llvm::any_of(alloc->getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp>(user);
        });
        if (freed)
          continue;
        OpBuilder b(body->getTerminator());
        memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
      }
    });
  }
};

} // namespace
