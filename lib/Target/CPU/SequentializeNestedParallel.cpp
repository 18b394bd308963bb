//===- SequentializeNestedParallel.cpp - OpenMP parallel regions ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// How loop nests become OpenMP parallel regions, and what each costs: one
// fork per loop nest (nested parallel loops sequential), a fork only for
// enough work (an `if` on regions of dynamic bounds), and each thread's
// share of a region's iterations computed in the region instead of by the
// OpenMP runtime.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SEQUENTIALIZENESTEDPARALLELPASS
#define GEN_PASS_DEF_PARALLELIFENOUGHWORKPASS
#define GEN_PASS_DEF_STATICCHUNKSPASS
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

std::optional<int64_t> blockWork(Block &block, int64_t limit);

/// The ops `op` runs: one, plus its regions' ops, times its iterations when
/// it is a loop; nullopt when a loop has dynamic bounds or the count
/// reaches `limit`.
std::optional<int64_t> opWork(Operation &op, int64_t limit) {
  // A call's work is unknown: the loop stays parallel.
  if (isa<CallOpInterface>(op))
    return std::nullopt;
  int64_t trips = 1;
  if (auto loop = dyn_cast<LoopLikeOpInterface>(op)) {
    std::optional<SmallVector<OpFoldResult>> lbs = loop.getLoopLowerBounds(),
                                             ubs = loop.getLoopUpperBounds(),
                                             steps = loop.getLoopSteps();
    if (!lbs || !ubs || !steps)
      return std::nullopt;
    for (auto [lb, ub, step] : llvm::zip(*lbs, *ubs, *steps)) {
      std::optional<int64_t> l = getConstantIntValue(lb),
                             u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *s <= 0)
        return std::nullopt;
      if (*u <= *l)
        return 0;
      // Both factors are below `limit` here: no overflow.
      int64_t n = llvm::divideCeil(*u - *l, *s);
      if (n >= limit || (trips *= n) >= limit)
        return std::nullopt;
    }
  }
  // An op on vectors counts once per 16 lanes (an AVX-512 register) of
  // its widest vector, result or operand (a store of a row of 58 is 4), a
  // copy once per 16 elements it moves (a dynamic one is unknown work).
  int64_t inner = 1;
  for (Type type :
       llvm::concat<const Type>(op.getResultTypes(), op.getOperandTypes()))
    if (auto vector = dyn_cast<VectorType>(type);
        vector && vector.hasStaticShape())
      inner = std::max<int64_t>(inner,
                                llvm::divideCeil(vector.getNumElements(), 16));
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto type = cast<MemRefType>(copy.getSource().getType());
    if (!type.hasStaticShape())
      return std::nullopt;
    inner = std::max<int64_t>(inner,
                              llvm::divideCeil(type.getNumElements(), 16));
  }
  for (Region &region : op.getRegions())
    for (Block &block : region) {
      std::optional<int64_t> work = blockWork(block, limit);
      if (!work)
        return std::nullopt;
      inner += *work;
    }
  if (inner >= limit || trips * inner >= limit)
    return std::nullopt;
  return trips * inner;
}

/// The ops `block` runs (see opWork).
std::optional<int64_t> blockWork(Block &block, int64_t limit) {
  int64_t work = 0;
  for (Operation &op : block) {
    std::optional<int64_t> n = opWork(op, limit);
    if (!n || (work += *n) >= limit)
      return std::nullopt;
  }
  return work;
}

/// A bound on the work opWork counts (past it, unknown).
constexpr int64_t kWorkCountLimit = int64_t(1) << 50;

struct SequentializeNestedParallelPass
    : tessera::cpu::impl::SequentializeNestedParallelPassBase<
          SequentializeNestedParallelPass> {
  using SequentializeNestedParallelPassBase::
      SequentializeNestedParallelPassBase;
  void runOnOperation() override {
    // Nested ones, and with min-parallel-work the small outermost ones.
    SmallVector<scf::ParallelOp> nested;
    getOperation().walk([&](scf::ParallelOp op) {
      Operation *parent = op->getParentOp();
      bool inLoop = false, inParallel = false;
      for (; parent && !isa<func::FuncOp>(parent);
           parent = parent->getParentOp()) {
        inLoop |= isa<scf::ParallelOp, scf::ForOp>(parent);
        inParallel |= isa<scf::ParallelOp>(parent);
      }
      if (op.getNumResults() != 0 || !op.getInitVals().empty())
        return;
      // Inside sequential loops only, a loop whose work is known and
      // enough forks once per iteration of theirs (a GEMM per image of a
      // convolution over a symbolic batch ran on one thread).
      if (inLoop && !inParallel && minParallelWork > 0) {
        std::optional<int64_t> work = opWork(*op, kWorkCountLimit);
        if (work && *work >= minParallelWork)
          return;
      }
      if (inLoop) {
        nested.push_back(op);
        return;
      }
      if (minParallelWork > 0 && opWork(*op, minParallelWork))
        nested.push_back(op);
    });
    // Innermost first (walk order is post-order), so clones stay valid.
    for (scf::ParallelOp op : nested)
      sequentialize(op);
  }
};

/// Whether `value` is defined outside `parallel`, so that code before it
/// can read it.
bool definedAbove(Value value, omp::ParallelOp parallel) {
  return !parallel->isAncestor(value.getParentBlock()->getParentOp());
}

/// ceil(max(ub - lb, 0) / step) for index bounds and a constant step > 0,
/// built at `b`'s insertion point; null otherwise.
Value iterations(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  std::optional<int64_t> constant = getConstantIntValue(step);
  if (!constant || *constant <= 0 || !lb.getType().isIndex() ||
      !ub.getType().isIndex())
    return {};
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value range = arith::SubIOp::create(b, loc, ub, lb);
  range = arith::MaxSIOp::create(b, loc, range, zero);
  return arith::CeilDivSIOp::create(
      b, loc, range, arith::ConstantIndexOp::create(b, loc, *constant));
}

struct ParallelIfEnoughWorkPass
    : tessera::cpu::impl::ParallelIfEnoughWorkPassBase<
          ParallelIfEnoughWorkPass> {
  using ParallelIfEnoughWorkPassBase::ParallelIfEnoughWorkPassBase;
  void runOnOperation() override {
    getOperation().walk([&](omp::ParallelOp parallel) {
      if (parallel.getIfExpr())
        return;
      SmallVector<omp::LoopNestOp> nests;
      parallel.walk([&](omp::LoopNestOp loop) { nests.push_back(loop); });
      if (nests.size() != 1)
        return;
      omp::LoopNestOp loop = nests.front();
      // Exclusive bounds, all loops collapsed into one iteration space,
      // every bound defined outside the region (computed before it), at
      // least one of them unknown at compile time.
      if (loop.getLoopInclusive() || loop.getTileSizes() ||
          (loop.getNumLoops() > 1 &&
           loop.getCollapseNumLoops() != loop.getNumLoops()))
        return;
      bool dynamic = false;
      for (Value bound : loop->getOperands()) {
        if (!definedAbove(bound, parallel))
          return;
        dynamic |= !getConstantIntValue(bound);
      }
      if (!dynamic)
        return;
      OpBuilder b(parallel);
      Location loc = loop.getLoc();
      Value trips = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [lb, ub, step] :
           llvm::zip(loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                     loop.getLoopSteps())) {
        Value n = iterations(b, loc, lb, ub, step);
        if (!n)
          return;
        trips = arith::MulIOp::create(b, loc, trips, n);
      }
      // Parallel when there are two iterations or more and, when the
      // body's work is known at compile time, the iterations times it reach
      // minParallelWork. A body whose work is known only at run time (a
      // row of an image of symbolic size as a loop of masked steps, a block
      // of a product's rows) forks with two iterations: counting such rows'
      // work at run time, to run the small ones on the calling thread, was
      // no faster on PaddleOCR's classifier and detector (1.51 and 8.2 ms
      // either way, 3 alternating rounds).
      Value two = arith::ConstantIndexOp::create(b, loc, 2);
      Value enough =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, trips, two);
      std::optional<int64_t> body =
          blockWork(loop.getRegion().front(), minParallelWork);
      if (body && *body > 0) {
        Value least = arith::ConstantIndexOp::create(
            b, loc, llvm::divideCeil(minParallelWork, *body));
        enough = arith::AndIOp::create(
            b, loc, enough,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, trips,
                                  least));
      }
      parallel.getIfExprMutable().assign(enough);
    });
  }
};

/// The loop nest of `wsloop` when the pass may compute its threads' shares
/// itself: a worksharing loop with no clause but a static schedule without
/// chunk (no reductions, private or linear values, allocations, ordered
/// iterations), the last op of its parallel region, wrapping one loop nest
/// of exclusive index bounds, positive constant steps, every loop
/// collapsed, and a body of one block.
omp::LoopNestOp plainStaticLoop(omp::WsloopOp wsloop) {
  auto parallel = dyn_cast<omp::ParallelOp>(wsloop->getParentOp());
  if (!parallel || !parallel.getRegion().hasOneBlock() ||
      wsloop->getNextNode() != parallel.getRegion().front().getTerminator())
    return {};
  if (!wsloop.getReductionVars().empty() || !wsloop.getPrivateVars().empty() ||
      !wsloop.getLinearVars().empty() || !wsloop.getAllocateVars().empty() ||
      wsloop.getOrdered() || wsloop.getScheduleChunk() ||
      (wsloop.getScheduleKind() &&
       *wsloop.getScheduleKind() != omp::ClauseScheduleKind::Static))
    return {};
  // One wrapper: a nested one (simd) would bring clauses of its own.
  if (wsloop.getNestedWrapper())
    return {};
  auto loop = dyn_cast<omp::LoopNestOp>(wsloop.getWrappedLoop());
  if (!loop || loop.getLoopInclusive() || loop.getTileSizes() ||
      (loop.getNumLoops() > 1 &&
       loop.getCollapseNumLoops() != loop.getNumLoops()) ||
      !loop.getRegion().hasOneBlock())
    return {};
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                 loop.getLoopSteps())) {
    std::optional<int64_t> constant = getConstantIntValue(step);
    if (!lb.getType().isIndex() || !ub.getType().isIndex() || !constant ||
        *constant <= 0)
      return {};
  }
  auto yield = dyn_cast<omp::YieldOp>(loop.getRegion().front().getTerminator());
  if (!yield || yield->getNumOperands() != 0)
    return {};
  return loop;
}

/// `name` (an OpenMP runtime query taking nothing and returning i32),
/// declared in `module` when it is not yet; null when another symbol has
/// that name.
func::FuncOp declareQuery(ModuleOp module, StringRef name) {
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    return func && func.getFunctionType() ==
                       FunctionType::get(
                           module.getContext(), {},
                           {IntegerType::get(module.getContext(), 32)})
               ? func
               : func::FuncOp();
  }
  auto b = OpBuilder::atBlockEnd(module.getBody());
  auto query = func::FuncOp::create(b, module.getLoc(), name,
                                    b.getFunctionType({}, {b.getI32Type()}));
  query.setPrivate();
  return query;
}

struct StaticChunksPass
    : tessera::cpu::impl::StaticChunksPassBase<StaticChunksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<omp::WsloopOp, omp::LoopNestOp>> loops;
    // In this module's own functions (the queries are declared in it).
    module.walk([&](omp::WsloopOp wsloop) {
      if (wsloop->getParentOfType<ModuleOp>() != module)
        return;
      if (omp::LoopNestOp loop = plainStaticLoop(wsloop))
        loops.emplace_back(wsloop, loop);
    });
    if (loops.empty())
      return;
    func::FuncOp threadNum = declareQuery(module, "omp_get_thread_num");
    func::FuncOp numThreads = declareQuery(module, "omp_get_num_threads");
    if (!threadNum || !numThreads)
      return;
    for (auto [wsloop, loop] : loops) {
      OpBuilder b(wsloop);
      Location loc = loop.getLoc();
      // The iterations of the collapsed nest, in order (the last loop
      // innermost), and this thread's share of them: [total * t / n,
      // total * (t + 1) / n), as OpenMP's static schedule divides them
      // (its shares differ by one iteration at most, too).
      SmallVector<Value> trips;
      Value total = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [lb, ub, step] :
           llvm::zip(loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                     loop.getLoopSteps())) {
        trips.push_back(iterations(b, loc, lb, ub, step));
        total = arith::MulIOp::create(b, loc, total, trips.back());
      }
      auto asIndex = [&](func::FuncOp query) -> Value {
        Value i32 = func::CallOp::create(b, loc, query).getResult(0);
        return arith::IndexCastOp::create(b, loc, b.getIndexType(), i32);
      };
      Value thread = asIndex(threadNum);
      Value threads = asIndex(numThreads);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto share = [&](Value t) {
        return arith::DivUIOp::create(
            b, loc, arith::MulIOp::create(b, loc, total, t), threads);
      };
      Value begin = share(thread);
      Value end = share(arith::AddIOp::create(b, loc, thread, one));
      // The nest's indices at `begin` (divisions once), carried through
      // the iterations as a counter with one digit per loop: the innermost
      // steps, a digit that reaches its loop's trips wraps to 0 and
      // carries (a division per iteration cost more than the body of a
      // small elementwise loop).
      // (A loop of no trips divides by one: the share is empty then.)
      SmallVector<Value> start(trips.size());
      Value rest = begin;
      for (int64_t d = static_cast<int64_t>(trips.size()) - 1; d >= 0; --d) {
        start[d] = rest;
        if (d > 0) {
          Value divisor = arith::MaxUIOp::create(b, loc, trips[d], one);
          start[d] = arith::RemUIOp::create(b, loc, rest, divisor);
          rest = arith::DivUIOp::create(b, loc, rest, divisor);
        }
      }
      ValueRange carried = trips.size() > 1 ? ValueRange(start) : ValueRange();
      auto forOp = scf::ForOp::create(b, loc, begin, end, one, carried);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> indices =
          trips.size() > 1 ? SmallVector<Value>(forOp.getRegionIterArgs())
                           : SmallVector<Value>{forOp.getInductionVar()};
      SmallVector<Value> ivs;
      for (auto [index, lb, step] :
           llvm::zip(indices, loop.getLoopLowerBounds(), loop.getLoopSteps()))
        ivs.push_back(arith::AddIOp::create(
            b, loc, lb, arith::MulIOp::create(b, loc, index, step)));
      IRMapping mapping;
      mapping.map(loop.getIVs(), ivs);
      for (Operation &op : loop.getRegion().front().without_terminator())
        b.clone(op, mapping);
      if (trips.size() > 1) {
        Value carry = arith::ConstantIntOp::create(b, loc, 1, 1);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        SmallVector<Value> next(indices.size());
        for (int64_t d = static_cast<int64_t>(indices.size()) - 1; d >= 0;
             --d) {
          Value stepped = arith::AddIOp::create(b, loc, indices[d], one);
          Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              stepped, trips[d]);
          Value moved = arith::SelectOp::create(b, loc, wraps, zero, stepped);
          next[d] = arith::SelectOp::create(b, loc, carry, moved, indices[d]);
          carry = arith::AndIOp::create(b, loc, carry, wraps);
        }
        scf::YieldOp::create(b, loc, next);
      }
      wsloop.erase();
    }
  }
};

} // namespace
