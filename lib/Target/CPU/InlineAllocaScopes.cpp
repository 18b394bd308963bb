//===- InlineAllocaScopes.cpp - inline alloca scopes without allocas ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_INLINEALLOCASCOPESPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// Whether `scope` itself holds a stack allocation (not counting those of
/// nested automatic allocation scopes).
bool holdsAlloca(memref::AllocaScopeOp scope) {
  return scope
      ->walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op == scope)
          return WalkResult::advance();
        if (isa<memref::AllocaOp>(op))
          return WalkResult::interrupt();
        if (op->hasTrait<OpTrait::AutomaticAllocationScope>())
          return WalkResult::skip();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

struct InlineAllocaScopesPass
    : tessera::cpu::impl::InlineAllocaScopesPassBase<InlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      if (scope->getNumResults() == 0 && scope.getBodyRegion().hasOneBlock() &&
          !holdsAlloca(scope))
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      Operation *terminator = body->getTerminator();
      rewriter.eraseOp(terminator);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.eraseOp(scope);
    }
  }
};

} // namespace
