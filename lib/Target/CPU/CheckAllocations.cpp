//===- CheckAllocations.cpp - stop a run whose allocation fails -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiled models allocate their buffers through the runtime's allocator,
// whose requests may be sized by the dims a caller passes. A request the
// allocator refuses returns null; this pass makes the code leave at that
// point instead of writing through the null pointer, and makes every
// enclosing region and caller leave after it. See the pass description.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_CHECKALLOCATIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kFailureCounter = "tesseraAllocationFailures";

bool isAllocation(LLVM::CallOp call) {
  std::optional<StringRef> callee = call.getCallee();
  return callee && (*callee == "_mlir_memref_to_llvm_alloc" ||
                    *callee == "_mlir_memref_to_llvm_aligned_alloc");
}

class AllocationChecker {
public:
  explicit AllocationChecker(ModuleOp module) : module(module) {}

  LogicalResult run();

private:
  /// A block that leaves `region` (created once per region), or null with
  /// an error when the region's parent is not one this pass knows.
  Block *exitBlock(Region &region, Location loc);
  /// Splits `op`'s block after it and branches to the region's exit when
  /// `failed` (built by `condition` at the end of the first half) holds.
  LogicalResult leaveAfter(Operation *op,
                           llvm::function_ref<Value(OpBuilder &)> condition);
  /// The failure counter's value on entry to `func` (read once, at the
  /// start of the entry block, which splitting keeps first).
  Value entryCount(LLVM::LLVMFuncOp func);
  Value readCounter(OpBuilder &b, Location loc);

  ModuleOp module;
  LLVM::LLVMFuncOp counter;
  llvm::DenseMap<Region *, Block *> exits;
  llvm::DenseMap<Operation *, Value> entryCounts;
};

Value AllocationChecker::readCounter(OpBuilder &b, Location loc) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value none = LLVM::ZeroOp::create(b, loc, ptr);
  return LLVM::CallOp::create(b, loc, counter, ValueRange{none}).getResult();
}

Value AllocationChecker::entryCount(LLVM::LLVMFuncOp func) {
  Value &count = entryCounts[func];
  if (!count) {
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    count = readCounter(b, func.getLoc());
  }
  return count;
}

/// Whether `parallel`'s region holds an OpenMP op that the whole team
/// reaches together (a worksharing loop's barrier, a barrier, a single).
static bool hasTeamSync(Operation *parallel) {
  bool sync = false;
  parallel->walk([&](Operation *op) {
    if (op != parallel && isa<omp::OpenMPDialect>(op->getDialect()) &&
        !isa<omp::TerminatorOp>(op))
      sync = true;
  });
  return sync;
}

Block *AllocationChecker::exitBlock(Region &region, Location loc) {
  Block *&exit = exits[&region];
  if (exit)
    return exit;
  Operation *parent = region.getParentOp();
  OpBuilder b(parent->getContext());
  auto create = [&] {
    exit = b.createBlock(&region, region.end());
    b.setInsertionPointToStart(exit);
  };
  if (auto func = dyn_cast<LLVM::LLVMFuncOp>(parent)) {
    create();
    Type result = func.getFunctionType().getReturnType();
    if (isa<LLVM::LLVMVoidType>(result)) {
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    } else {
      Value poison = LLVM::PoisonOp::create(b, loc, result);
      LLVM::ReturnOp::create(b, loc, poison);
    }
  } else if (isa<omp::LoopNestOp>(parent)) {
    // The iteration ends; the others run or fail on their own, and the
    // check after the parallel region stops the function.
    create();
    omp::YieldOp::create(b, loc, ValueRange{});
  } else if (isa<omp::ParallelOp>(parent) && !hasTeamSync(parent)) {
    // The thread's share of the iterations ends (tessera-cpu-static-chunks
    // put them in the region); the same check after the region stops the
    // function. Only without a worksharing loop or barrier in the region,
    // where the rest of the team would wait for this thread.
    create();
    omp::TerminatorOp::create(b, loc);
  } else {
    emitError(loc) << "cannot check an allocation inside '"
                   << parent->getName() << "'";
    return nullptr;
  }
  return exit;
}

LogicalResult AllocationChecker::leaveAfter(
    Operation *op, llvm::function_ref<Value(OpBuilder &)> condition) {
  Block *exit = exitBlock(*op->getParentRegion(), op->getLoc());
  if (!exit)
    return failure();
  Block *block = op->getBlock();
  Block *rest = block->splitBlock(std::next(op->getIterator()));
  OpBuilder b = OpBuilder::atBlockEnd(block);
  Value failed = condition(b);
  LLVM::CondBrOp::create(b, op->getLoc(), failed, exit, ValueRange{}, rest,
                         ValueRange{});
  return success();
}

LogicalResult AllocationChecker::run() {
  SmallVector<LLVM::CallOp> allocations;
  module.walk([&](LLVM::CallOp call) {
    if (isAllocation(call))
      allocations.push_back(call);
  });
  if (allocations.empty())
    return success();
  for (LLVM::CallOp call : allocations)
    if (!call->getParentOfType<LLVM::LLVMFuncOp>())
      return call.emitError("cannot check an allocation outside a function");

  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  counter = module.lookupSymbol<LLVM::LLVMFuncOp>(kFailureCounter);
  if (!counter) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    counter = LLVM::LLVMFuncOp::create(
        b, module.getLoc(), kFailureCounter,
        LLVM::LLVMFunctionType::get(i64, {ptr}));
  }

  // The functions that may fail: those that allocate and their callers.
  llvm::SetVector<Operation *> failing;
  for (LLVM::CallOp call : allocations)
    failing.insert(call->getParentOfType<LLVM::LLVMFuncOp>());
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    if (call.getCallee() && !isAllocation(call))
      calls.push_back(call);
  });
  SymbolTable symbols(module);
  llvm::SetVector<Operation *> failingCallSet;
  for (bool changed = true; changed;) {
    changed = false;
    for (LLVM::CallOp call : calls) {
      auto callee = symbols.lookup<LLVM::LLVMFuncOp>(*call.getCallee());
      if (!callee || !failing.contains(callee) ||
          !failingCallSet.insert(call))
        continue;
      changed |= failing.insert(call->getParentOfType<LLVM::LLVMFuncOp>());
    }
  }
  // In program order, as the walk found them.
  SmallVector<LLVM::CallOp> failingCalls;
  for (LLVM::CallOp call : calls)
    if (failingCallSet.contains(call))
      failingCalls.push_back(call);
  // An op of the function's body whose regions hold a failing op
  // (omp.parallel) gets a counter check after it. Inside OpenMP regions a
  // loop iteration ends early, or a thread's share in a region without a
  // worksharing loop or barrier: a thread that left a parallel region
  // before a worksharing loop the others enter would hang the team.
  llvm::SetVector<Operation *> regionOps;
  auto addOutermost = [&](Operation *op) {
    Operation *outer = op;
    while (!isa<LLVM::LLVMFuncOp>(outer->getParentOp()))
      outer = outer->getParentOp();
    if (outer != op)
      regionOps.insert(outer);
  };
  for (LLVM::CallOp call : allocations)
    addOutermost(call);
  for (LLVM::CallOp call : failingCalls)
    addOutermost(call);

  // Last first: a split moves the rest of its block, which is then only
  // what follows up to the previous split point (linear, not quadratic,
  // in a block holding thousands of allocations).
  for (LLVM::CallOp call : llvm::reverse(allocations)) {
    if (failed(leaveAfter(call, [&](OpBuilder &b) -> Value {
          Value none = LLVM::ZeroOp::create(b, call.getLoc(), ptr);
          return LLVM::ICmpOp::create(b, call.getLoc(),
                                      LLVM::ICmpPredicate::eq,
                                      call.getResult(), none);
        })))
      return failure();
  }
  auto counterChanged = [&](Operation *op) {
    return [this, op](OpBuilder &b) -> Value {
      auto func = op->getParentOfType<LLVM::LLVMFuncOp>();
      Value now = readCounter(b, op->getLoc());
      return LLVM::ICmpOp::create(b, op->getLoc(), LLVM::ICmpPredicate::ne,
                                  now, entryCount(func));
    };
  };
  // Each list is in program order (the walk's); checks go in last first.
  for (LLVM::CallOp call : llvm::reverse(failingCalls))
    if (failed(leaveAfter(call, counterChanged(call))))
      return failure();
  for (Operation *op : llvm::reverse(regionOps))
    if (failed(leaveAfter(op, counterChanged(op))))
      return failure();
  return success();
}

struct CheckAllocationsPass
    : tessera::cpu::impl::CheckAllocationsPassBase<CheckAllocationsPass> {
  void runOnOperation() override {
    if (failed(AllocationChecker(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
