//===- WarpReductions.cpp - row reductions as one warp per row ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A reduction over the innermost loop of a linalg.generic on buffers (a
// softmax's row maximum and sum, a norm's mean and variance, with the
// elementwise producers fused into it) would otherwise be one thread per
// row, each walking its whole row alone. Here a warp takes a row: its 32
// lanes step through the row 32 elements apart (adjacent lanes read
// adjacent elements), each folding its elements with the reduction's
// combiner, then the lanes' partial results are combined with five
// butterfly shuffles and lane 0 folds the total into the result. A block
// holds 4 warps (4 rows).
//
// A reduction over every loop into one value (a tensor's amax, sum or
// mean) is two launches: warps each reduce a contiguous chunk of the
// flattened loops into a partial result (up to kMaxPartials of them, in
// a temporary buffer), then one warp reduces the partial results and folds
// their total into the result. When the buffer it reduces is written by
// an elementwise op or a contraction just before (a normalization's
// output, attention's P·V product left off the tensor cores: amaxes fp8
// current scaling takes), the first launch computes that op's values,
// stores them and reduces them: the buffer is not read a second time and
// the op's own kernel is gone.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilding.h"

#include "tessera/Target/CUDA/BufferPlacement.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_WARPREDUCTIONSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

constexpr int64_t kWarpsPerBlock = 4;
/// Rows shorter than this stay one thread per row (most lanes would idle).
constexpr int64_t kMinRowLength = 64;
/// A full reduction: at most this many partial results (warps), each
/// over at least kMinChunk elements.
constexpr int64_t kMaxPartials = 1024, kMinChunk = 256;

/// A reduction the kernel computes: the combiner (the op that folds each
/// element's value into the result) and which of its operands is the
/// result's running value.
struct RowReduction {
  linalg::GenericOp op;
  Operation *combiner;
  unsigned accumulatorOperand;
  /// Every loop is a reduction (the result is one value).
  bool full = false;
  /// A full reduction's producer (elementwise or a contraction), computed
  /// in its first launch: it writes `op`'s input `produced` (null when
  /// there is none).
  linalg::GenericOp producer;
  OpOperand *produced = nullptr;
};

/// The value of the combiner's kind that leaves any other unchanged.
std::optional<double> identityOf(Operation *combiner) {
  if (isa<arith::AddFOp>(combiner))
    return 0.0;
  if (isa<arith::MulFOp>(combiner))
    return 1.0;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    return -INFINITY;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return INFINITY;
  return std::nullopt;
}

/// `op` as a row reduction: on buffers, f32, every loop parallel but the
/// last, which is a reduction of at least kMinRowLength (or dynamic); one
/// result indexed by exactly the parallel loops; a body that folds a value
/// computed from the inputs into the result with one associative combiner.
/// Or as a full reduction: every loop a reduction, of kMinRowLength
/// elements or more (or dynamic), into a result of rank 0.
std::optional<RowReduction> match(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op->getParentOfType<gpu::LaunchOp>())
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap resultMap = op.getMatchingIndexingMap(init);
  unsigned reductions = llvm::count(iterators, utils::IteratorType::reduction);
  bool full =
      loops >= 1 && reductions == loops && resultMap.getNumResults() == 0;
  if (full) {
    int64_t elements = 1;
    for (int64_t range : op.getStaticLoopRanges())
      elements = ShapedType::isDynamic(range) || ShapedType::isDynamic(elements)
                     ? ShapedType::kDynamic
                     : elements * range;
    if (!ShapedType::isDynamic(elements) && elements < kMinRowLength)
      return std::nullopt;
  } else {
    if (loops < 2 || iterators.back() != utils::IteratorType::reduction ||
        reductions != 1)
      return std::nullopt;
    int64_t length = op.getStaticLoopRanges().back();
    if (!ShapedType::isDynamic(length) && length < kMinRowLength)
      return std::nullopt;
    if (!resultMap.isProjectedPermutation() ||
        resultMap.getNumResults() != loops - 1 ||
        resultMap.isFunctionOfDim(loops - 1))
      return std::nullopt;
  }
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!llvm::all_of(map.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return std::nullopt;
  }
  Block *body = op.getBlock();
  BlockArgument accumulator = body->getArguments().back();
  Value yielded = body->getTerminator()->getOperand(0);
  Operation *combiner = yielded.getDefiningOp();
  if (!yielded.getType().isF32() || !combiner ||
      combiner->getBlock() != body || !identityOf(combiner) ||
      !accumulator.hasOneUse() || accumulator.use_begin()->getOwner() != combiner)
    return std::nullopt;
  unsigned accumulatorOperand =
      combiner->getOperand(0) == accumulator ? 0 : 1;
  if (combiner->getOperand(1 - accumulatorOperand) == accumulator)
    return std::nullopt;
  return RowReduction{op, combiner, accumulatorOperand, full};
}

/// Whether `op` may read or write `buffer` (or a view of it), or do
/// anything but read any of `inputs` (write or free them): effects whose
/// target it cannot name count.
bool touches(Operation *op, Value buffer, ValueRange inputs) {
  auto any = [](MemoryEffects::Effect *) { return true; };
  auto notRead = [](MemoryEffects::Effect *e) {
    return !isa<MemoryEffects::Read>(e);
  };
  return tessera::cuda::mayAffect(op, buffer, any) ||
         llvm::any_of(inputs, [&](Value input) {
           return tessera::cuda::mayAffect(op, input, notRead);
         });
}

/// Whether `producer`, which writes `buffer`, computes each element of it
/// on its own: one output (`buffer`) written by its parallel loops in
/// order (as many as `elements`, the buffer's rank), any other loop a
/// reduction (a contraction, whose body folds into the element's running
/// value), inputs read by loops and constants (the buffer itself only at
/// the same element, and never by a contraction) and a body of pure ops.
bool computesElements(linalg::GenericOp producer, Value buffer,
                      unsigned elements) {
  if (!producer.hasPureBufferSemantics() ||
      producer.getNumParallelLoops() != elements)
    return false;
  OpOperand *init = producer.getDpsInitOperand(0);
  AffineMap written = producer.getMatchingIndexingMap(init);
  SmallVector<utils::IteratorType> iterators = producer.getIteratorTypesArray();
  for (unsigned i = 0; i < written.getNumResults(); ++i) {
    auto dim = dyn_cast<AffineDimExpr>(written.getResult(i));
    // The parallel loops in order: the i-th of them writes dim i.
    if (!dim || iterators[dim.getPosition()] != utils::IteratorType::parallel ||
        (i && cast<AffineDimExpr>(written.getResult(i - 1)).getPosition() >=
                  dim.getPosition()))
      return false;
  }
  bool contraction = producer.getNumReductionLoops() != 0;
  if (written.getNumResults() != elements ||
      (!contraction && !producer.getMatchingBlockArgument(init).use_empty()))
    return false;
  if (!llvm::all_of(producer.getBlock()->without_terminator(),
                    [](Operation &inner) { return isPure(&inner); }))
    return false;
  return llvm::all_of(producer.getDpsInputOperands(), [&](OpOperand *operand) {
    AffineMap map = producer.getMatchingIndexingMap(operand);
    if (tessera::cuda::rootOf(operand->get()) == tessera::cuda::rootOf(buffer))
      return !contraction && operand->get() == buffer && map.isIdentity();
    return llvm::all_of(map.getResults(), [](AffineExpr e) {
      return isa<AffineDimExpr, AffineConstantExpr>(e);
    });
  });
}

/// Sets `r.producer` when a full reduction's input is written, earlier in
/// its block, by an op that its first launch can compute in its place: an
/// elementwise op, or a contraction (attention's P·V product, whose amax
/// fp8 current scaling takes before the output projection), computing
/// each element on its own (see computesElements) of a buffer the
/// reduction reads by a permutation; nothing between the two that reads
/// or writes the buffer or writes or frees the op's inputs, and no other
/// operand of the reduction in the buffer (its elements come from other
/// lanes).
void matchProducer(RowReduction &r) {
  linalg::GenericOp op = r.op;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value root = tessera::cuda::rootOf(input->get());
    if (llvm::any_of(op->getOpOperands(), [&](OpOperand &other) {
          return &other != input && tessera::cuda::rootOf(other.get()) == root;
        }))
      continue;
    for (Operation *before = op->getPrevNode(); before;
         before = before->getPrevNode()) {
      auto producer = dyn_cast<linalg::GenericOp>(before);
      if (!producer || producer.getNumDpsInits() != 1 ||
          producer.getDpsInits()[0] != input->get()) {
        if (touches(before, input->get(), {}))
          break;
        continue;
      }
      if (!op.getMatchingIndexingMap(input).isPermutation() ||
          !computesElements(producer, input->get(), op.getNumLoops()))
        break;
      SmallVector<Value> inputs = producer.getDpsInputs();
      bool clear = true;
      for (Operation *between = producer->getNextNode(); between != op;
           between = between->getNextNode())
        clear &= !touches(between, input->get(), inputs);
      if (clear) {
        r.producer = producer;
        r.produced = input;
      }
      return;
    }
  }
}

/// Builds the launch for one row reduction.
class WarpReductionBuilder : ::tessera::cuda::KernelArith {
public:
  WarpReductionBuilder(RowReduction &r, OpBuilder &b)
      : KernelArith(b, r.op.getLoc()), r(r) {}

  void build() {
    linalg::GenericOp op = r.op;
    unsigned loops = op.getNumLoops();
    for (unsigned d = 0; d < loops; ++d)
      sizes.push_back(loopSize(d));
    if (r.full)
      return buildFull();
    Value rows = cst(1);
    for (unsigned d = 0; d + 1 < loops; ++d)
      rows = mul(rows, sizes[d]);
    Value zero = cst(0);
    auto any = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rows, zero),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(any.thenBlock());
    Value one = cst(1);
    Value grid = arith::CeilDivUIOp::create(b, loc, rows, cst(kWarpsPerBlock));
    auto launch = gpu::LaunchOp::create(
        b, loc, grid, one, one, cst(kWarpsPerBlock * 32), one, one);
    launch->setAttr("tessera.cuda.kernel", b.getStringAttr("warp_reduction"));
    b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    lane = rem(tid, 32);
    Value row = add(mul(launch.getBlockIds().x, cst(kWarpsPerBlock)),
                    div(tid, 32));
    // The warp's row (the same for its 32 lanes: shuffles see them all).
    auto inside = scf::IfOp::create(b, loc, lt(row, rows), false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(inside.thenBlock());
      buildRow(row);
    }
    gpu::TerminatorOp::create(b, loc);
  }

private:
  /// A full reduction: `partials` warps each reduce a chunk of the
  /// flattened loops into `partial`, then one warp reduces those into the
  /// result.
  void buildFull() {
    Value elements = cst(1);
    for (Value size : sizes)
      elements = mul(elements, size);
    auto any = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, elements,
                              cst(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(any.thenBlock());
    Value chunk = arith::MaxUIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, elements, cst(kMaxPartials)),
        cst(kMinChunk));
    Value partials = arith::CeilDivUIOp::create(b, loc, elements, chunk);
    Value partial = memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
        ValueRange{partials});
    Value one = cst(1);
    {
      Value grid =
          arith::CeilDivUIOp::create(b, loc, partials, cst(kWarpsPerBlock));
      auto launch = gpu::LaunchOp::create(b, loc, grid, one, one,
                                          cst(kWarpsPerBlock * 32), one, one);
      launch->setAttr("tessera.cuda.kernel",
                      b.getStringAttr("warp_reduction_partials"));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      Value tid = launch.getThreadIds().x;
      lane = rem(tid, 32);
      Value warp =
          add(mul(launch.getBlockIds().x, cst(kWarpsPerBlock)), div(tid, 32));
      auto inside = scf::IfOp::create(b, loc, lt(warp, partials), false);
      {
        OpBuilder::InsertionGuard inWarp(b);
        b.setInsertionPointToStart(inside.thenBlock());
        Value start = mul(warp, chunk);
        Value end = arith::MinUIOp::create(b, loc, add(start, chunk), elements);
        Value total = reduceLanes(start, end, [&](Value flat) {
          // The loops' values, row-major from the flat index.
          SmallVector<Value> at(sizes.size());
          for (unsigned d = sizes.size(); d-- > 0;) {
            at[d] = d ? arith::RemUIOp::create(b, loc, flat, sizes[d]) : flat;
            if (d)
              flat = arith::DivUIOp::create(b, loc, flat, sizes[d]);
          }
          return elementAt(at);
        });
        ifFirstLane([&] {
          memref::StoreOp::create(b, loc, total, partial, ValueRange{warp});
        });
      }
      gpu::TerminatorOp::create(b, loc);
    }
    {
      auto launch =
          gpu::LaunchOp::create(b, loc, one, one, one, cst(32), one, one);
      launch->setAttr("tessera.cuda.kernel",
                      b.getStringAttr("warp_reduction_total"));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&launch.getBody().front());
      lane = launch.getThreadIds().x;
      Value total = reduceLanes(cst(0), partials, [&](Value i) -> Value {
        return memref::LoadOp::create(b, loc, partial, ValueRange{i});
      });
      ifFirstLane([&] { foldIntoResult(total, {}); });
      gpu::TerminatorOp::create(b, loc);
    }
    memref::DeallocOp::create(b, loc, partial);
  }

  /// The combiner folded over `value(i)` for i in [start, end), lane l
  /// taking start + l, start + l + 32, ...; then across the warp: every
  /// lane holds the total.
  Value reduceLanes(Value start, Value end,
                    llvm::function_ref<Value(Value)> value) {
    Value identity = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(*identityOf(r.combiner)));
    auto loop = scf::ForOp::create(b, loc, add(start, lane), end, cst(32),
                                   ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(b, loc,
                           combine(value(loop.getInductionVar()),
                                   loop.getRegionIterArgs().front()));
    }
    Value total = loop.getResult(0);
    for (int32_t offset : {16, 8, 4, 2, 1})
      total = combine(gpu::ShuffleOp::create(b, loc, total, offset, 32,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult(),
                      total);
    return total;
  }

  /// The body's value for the element at loop values `at` (what the
  /// combiner folds in), computed from the inputs.
  Value elementAt(ArrayRef<Value> at) {
    linalg::GenericOp op = r.op;
    Block *body = op.getBlock();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(input->getOperandNumber());
      if (input == r.produced)
        mapping.map(arg, produce(indicesOf(*input, at)));
      else if (!arg.use_empty())
        mapping.map(arg, memref::LoadOp::create(b, loc, input->get(),
                                                indicesOf(*input, at)));
    }
    for (Operation &inner : body->without_terminator()) {
      if (&inner == r.combiner)
        break;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), at[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping.lookupOrDefault(
        r.combiner->getOperand(1 - r.accumulatorOperand));
  }

  /// The producer's value at the element `at` of the buffer it writes
  /// (the values of its parallel loops, which write it in order), stored
  /// there. A contraction's reduction loops run here in order, from the
  /// element's value in the buffer (its fill), as the op would run them.
  Value produce(ArrayRef<Value> at) {
    linalg::GenericOp producer = r.producer;
    OpOperand *init = producer.getDpsInitOperand(0);
    SmallVector<Value> loops(producer.getNumLoops());
    AffineMap written = producer.getMatchingIndexingMap(init);
    for (unsigned i = 0; i < written.getNumResults(); ++i)
      loops[cast<AffineDimExpr>(written.getResult(i)).getPosition()] = at[i];
    if (producer.getNumReductionLoops() == 0)
      return store(bodyAt(loops, Value()), at);
    // One scf.for per reduction loop, innermost last, carrying the value;
    // their sizes read before the nest.
    SmallVector<unsigned> reductions;
    SmallVector<Value> extents;
    for (unsigned d = 0; d < loops.size(); ++d)
      if (!loops[d]) {
        reductions.push_back(d);
        extents.push_back(loopSizeOf(producer, d));
      }
    Value value = memref::LoadOp::create(b, loc, init->get(), at);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<scf::ForOp> nest;
    for (auto [d, extent] : llvm::zip_equal(reductions, extents)) {
      auto loop =
          scf::ForOp::create(b, loc, cst(0), extent, cst(1), ValueRange{value});
      if (!nest.empty())
        scf::YieldOp::create(b, loc, loop.getResult(0));
      nest.push_back(loop);
      b.setInsertionPointToStart(loop.getBody());
      loops[d] = loop.getInductionVar();
      value = loop.getRegionIterArgs().front();
    }
    scf::YieldOp::create(b, loc, bodyAt(loops, value));
    b.setInsertionPointAfter(nest.front());
    return store(nest.front().getResult(0), at);
  }

  /// `value` stored at `at` of the producer's buffer; returns it.
  Value store(Value value, ArrayRef<Value> at) {
    memref::StoreOp::create(b, loc, value, r.producer.getDpsInits()[0], at);
    return value;
  }

  /// The producer's body at its loop values `loops`, its output's block
  /// argument standing for `running` (a contraction's).
  Value bodyAt(ArrayRef<Value> loops, Value running) {
    linalg::GenericOp producer = r.producer;
    Block *body = producer.getBlock();
    IRMapping mapping;
    for (OpOperand *input : producer.getDpsInputOperands()) {
      BlockArgument arg = producer.getMatchingBlockArgument(input);
      if (arg.use_empty())
        continue;
      mapping.map(arg, memref::LoadOp::create(b, loc, input->get(),
                                              indicesOf(*input, loops)));
    }
    if (running)
      mapping.map(
          producer.getMatchingBlockArgument(producer.getDpsInitOperand(0)),
          running);
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), loops[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
  }

  /// Builds `then` for lane 0 only.
  void ifFirstLane(llvm::function_ref<void()> then) { ifLaneZero(lane, then); }

  /// The result at loop values `at` (its parallel loops) = combine(total,
  /// its value).
  void foldIntoResult(Value total, ArrayRef<Value> at) {
    OpOperand *init = r.op.getDpsInitOperand(0);
    SmallVector<Value> indices = indicesOf(*init, at);
    Value running = memref::LoadOp::create(b, loc, init->get(), indices);
    memref::StoreOp::create(b, loc, combine(total, running), init->get(),
                            indices);
  }

  /// The size of loop `dim` of the reduction.
  Value loopSize(unsigned dim) { return loopSizeOf(r.op, dim); }

  /// The size of loop `dim` of `op`, read off an operand that it indexes.
  Value loopSizeOf(linalg::GenericOp op, unsigned dim) {
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (unsigned i = 0; i < map.getNumResults(); ++i)
        if (auto d = dyn_cast<AffineDimExpr>(map.getResult(i));
            d && d.getPosition() == dim)
          return memref::DimOp::create(b, loc, operand.get(), i);
    }
    llvm_unreachable("every loop of a generic indexes an operand");
  }

  /// The indices of `operand` (of the reduction or its producer) at loop
  /// values `at`.
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> at) {
    auto owner = cast<linalg::LinalgOp>(operand.getOwner());
    SmallVector<Value> indices;
    for (AffineExpr e : owner.getMatchingIndexingMap(&operand).getResults())
      indices.push_back(isa<AffineDimExpr>(e)
                            ? at[cast<AffineDimExpr>(e).getPosition()]
                            : cst(cast<AffineConstantExpr>(e).getValue()));
    return indices;
  }

  /// The combiner on `element` (the value of an element or a lane's
  /// total) and `running`, in the body's operand order.
  Value combine(Value element, Value running) {
    IRMapping mapping;
    mapping.map(r.combiner->getOperand(r.accumulatorOperand), running);
    mapping.map(r.combiner->getOperand(1 - r.accumulatorOperand), element);
    return b.clone(*r.combiner, mapping)->getResult(0);
  }

  void buildRow(Value row) {
    linalg::GenericOp op = r.op;
    unsigned loops = op.getNumLoops();
    // The parallel loops' values, row-major from the row.
    SmallVector<Value> at(loops);
    for (unsigned d = loops - 1; d-- > 0;) {
      at[d] = d ? arith::RemUIOp::create(b, loc, row, sizes[d]) : row;
      if (d)
        row = arith::DivUIOp::create(b, loc, row, sizes[d]);
    }
    // This lane's elements: lane, lane + 32, ...; then across the warp.
    Value total = reduceLanes(cst(0), sizes.back(), [&](Value column) {
      at.back() = column;
      return elementAt(at);
    });
    ifFirstLane([&] { foldIntoResult(total, at); });
  }

  RowReduction &r;
  SmallVector<Value> sizes;
  Value lane;
};

struct WarpReductionsPass
    : ::tessera::cuda::impl::WarpReductionsPassBase<WarpReductionsPass> {
  void runOnOperation() override {
    SmallVector<RowReduction> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<RowReduction> r = match(op))
        found.push_back(*r);
    });
    for (RowReduction &r : found) {
      if (r.full)
        matchProducer(r);
      OpBuilder b(r.op);
      WarpReductionBuilder(r, b).build();
      r.op->erase();
      if (r.producer)
        r.producer->erase();
    }
  }
};

} // namespace
