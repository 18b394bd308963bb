//===- Vector.cpp - elementwise ops, softmax and norms on the vector unit -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace tessera::systolic {

/// The vector unit's function for a unary tessera op.
static std::optional<sim::VectorFn> unaryFn(Operation *op) {
  using F = sim::VectorFn;
  if (auto gelu = dyn_cast<ts::GeluOp>(op))
    return gelu.getApproximate() == ts::GeluApproximation::tanh ? F::GeluTanh
                                                                : F::GeluErf;
  return llvm::TypeSwitch<Operation *, std::optional<F>>(op)
      .Case([](ts::ExpOp) { return F::Exp; })
      .Case([](ts::TanhOp) { return F::Tanh; })
      .Case([](ts::ErfOp) { return F::Erf; })
      .Case([](ts::SigmoidOp) { return F::Sigmoid; })
      .Case([](ts::ReluOp) { return F::Relu; })
      .Case([](ts::SiluOp) { return F::Silu; })
      .Case([](ts::SqrtOp) { return F::Sqrt; })
      .Case([](ts::RsqrtOp) { return F::Rsqrt; })
      .Case([](ts::ReciprocalOp) { return F::Reciprocal; })
      .Case([](ts::NegOp) { return F::Neg; })
      .Case([](ts::AbsOp) { return F::Abs; })
      .Case([](ts::LogOp) { return F::Log; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The vector unit's function for a binary tessera op.
static std::optional<sim::VectorFn> binaryFn(Operation *op) {
  using F = sim::VectorFn;
  return llvm::TypeSwitch<Operation *, std::optional<F>>(op)
      .Case([](ts::AddOp) { return F::Add; })
      .Case([](ts::SubOp) { return F::Sub; })
      .Case([](ts::MulOp) { return F::Mul; })
      .Case([](ts::DivOp) { return F::Div; })
      .Case([](ts::MaxOp) { return F::Max; })
      .Case([](ts::MinOp) { return F::Min; })
      .Case([](ts::PowOp) { return F::Pow; })
      .Case([](ts::CompareOp compare) { return compareFn(compare.getDirection()); })
      // Booleans are held as 0.0 and 1.0.
      .Case([](ts::AndOp) { return F::Mul; })
      .Case([](ts::OrOp) { return F::Max; })
      .Case([](ts::XorOp) { return F::NotEqual; })
      .Default([](Operation *) { return std::nullopt; });
}

/// A cast between booleans and fp32 (both held as fp32 on the
/// accelerator).
static bool isBooleanCast(Operation *op) {
  auto cast = dyn_cast<ts::CastOp>(op);
  if (!cast)
    return false;
  auto in = dyn_cast<RankedTensorType>(cast.getInput().getType());
  auto out = dyn_cast<RankedTensorType>(cast.getType());
  return in && out && heldAsF32(in) && heldAsF32(out) &&
         in.getElementType() != out.getElementType();
}

bool isVectorOp(Operation *op) {
  return unaryFn(op) || binaryFn(op) || isBooleanCast(op) ||
         isa<ts::SoftmaxOp, ts::LayerNormOp, ts::RmsNormOp, ts::ReduceSumOp,
             ts::ReduceMeanOp, ts::ReduceMaxOp, ts::NotOp, ts::WhereOp>(op);
}

namespace {
/// How many trailing dims a sum, mean or maximum reduces (a global average
/// pool: the image's two), or nothing for other axes.
std::optional<int64_t> trailingReduction(Operation *op) {
  ArrayRef<int64_t> axes;
  if (auto r = dyn_cast<ts::ReduceSumOp>(op))
    axes = r.getAxes();
  else if (auto r = dyn_cast<ts::ReduceMeanOp>(op))
    axes = r.getAxes();
  else if (auto r = dyn_cast<ts::ReduceMaxOp>(op))
    axes = r.getAxes();
  else
    return std::nullopt;
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  SmallVector<int64_t> sorted;
  for (int64_t a : axes)
    sorted.push_back(a < 0 ? a + rank : a);
  llvm::sort(sorted);
  for (auto [k, a] : llvm::enumerate(sorted))
    if (a != rank - static_cast<int64_t>(sorted.size()) +
                 static_cast<int64_t>(k))
      return std::nullopt;
  return static_cast<int64_t>(sorted.size());
}
} // namespace

/// One step of one vector function over the rows x cols fp32 tensor at
/// `src` (with `immediate` for a binary one or quantize), into `out` in
/// `outFormat`.
std::optional<std::string>
Lowering::mapStep(uint64_t src, int64_t rows, int64_t cols, sim::VectorFn fn,
                  std::optional<float> immediate, uint64_t out,
                  sim::NumberFormat outFormat) {
  sim::VectorStep step;
  step.rows = rows;
  step.cols = cols;
  step.slots = {{sim::VectorStep::Shape::Full, src},
                {sim::VectorStep::Shape::Full, std::nullopt}};
  step.ops = {{fn, 1, 0, -1, immediate}};
  step.output = 1;
  step.out = out;
  step.outFormat = outFormat;
  return sim::appendVectorStep(config, step, instructions);
}

/// Lowers a vector op with the ops of its fusion region (the graph's
/// decision of what the accelerator fuses) as one step: results handed
/// from op to op stay in the unified buffer, only the region's result goes
/// to DRAM (a layer norm and its GELU, a residual add and its softmax).
/// A region that does not make one step (a view that changes midway) is
/// lowered as chains: each op whose result only the next one in the
/// region reads continues the chain. An op outside any region is a step
/// of its own.
LogicalResult Lowering::lowerVectorChain(Operation *first) {
  FailureOr<bool> whole = lowerRegionAsOneStep(first);
  if (failed(whole))
    return failure();
  if (*whole)
    return success();
  sim::VectorStep step;
  llvm::DenseMap<Value, int> onChip;
  FailureOr<int> out = appendVectorOps(first, step, onChip, true);
  if (failed(out))
    return failure();
  int slot = *out;
  Value last =
      extendVectorChain(first, first->getResult(0), step, onChip, slot,
                        [](const sim::VectorStep &, int) { return true; });
  return finishVectorStep(last.getDefiningOp(), step, slot);
}

FailureOr<bool> Lowering::lowerRegionAsOneStep(Operation *first) {
  auto region = regionOf.find(first);
  if (region == regionOf.end())
    return false;
  // The region's ops from `first` on, in program order.
  SmallVector<Operation *> members;
  for (Operation *op = first; op; op = op->getNextNode())
    if (auto it = regionOf.find(op);
        it != regionOf.end() && it->second == region->second && !done.count(op))
      members.push_back(op);
  if (members.size() < 2 ||
      !llvm::all_of(members, [](Operation *op) { return isVectorOp(op); }))
    return false;
  // Only the last op's result may leave the step.
  llvm::SmallPtrSet<Operation *, 8> inStep(members.begin(), members.end());
  for (Operation *op : ArrayRef(members).drop_back())
    for (Operation *user : op->getResult(0).getUsers())
      if (!inStep.contains(user) || outputs.count(op->getResult(0)))
        return false;
  sim::VectorStep step;
  llvm::DenseMap<Value, int> onChip;
  int out = -1;
  for (Operation *op : members) {
    if (llvm::any_of(op->getOperands(), [&](Value v) {
          return !onChip.count(v) && !placed.count(v) && !constantValues(v);
        }))
      return false;
    FailureOr<int> slot = appendVectorOps(op, step, onChip, false);
    if (failed(slot))
      return false;
    out = *slot;
    onChip[op->getResult(0)] = out;
  }
  for (Operation *op : members)
    done.insert(op);
  if (failed(finishVectorStep(members.back(), step, out)))
    return failure();
  return true;
}

/// Extends a vector step whose latest result `last` is in slot `out`
/// by the ops that follow it in `anchor`'s fusion region: each the only
/// user of the previous result (not a model output), in the same block,
/// its other operands on chip, in memory or constant, and `accept`ed once
/// appended (a trial on a copy: an op that does not fit leaves the step
/// as it is and reports its own errors when lowered on its own). Fused ops
/// go in `done`; returns the last result in the step.
Value Lowering::extendVectorChain(
    Operation *anchor, Value last, sim::VectorStep &step,
    llvm::DenseMap<Value, int> &onChip, int &out,
    llvm::function_ref<bool(const sim::VectorStep &, int)> accept) {
  onChip[last] = out;
  while (last.hasOneUse() && !outputs.count(last)) {
    Operation *next = *last.getUsers().begin();
    if (!sameRegion(anchor, next) ||
        next->getBlock() != last.getParentBlock() || !isVectorOp(next) ||
        llvm::any_of(next->getOperands(), [&](Value v) {
          return !onChip.count(v) && !placed.count(v) && !constantValues(v);
        }))
      break;
    sim::VectorStep trial = step;
    llvm::DenseMap<Value, int> trialOnChip = onChip;
    FailureOr<int> joined = appendVectorOps(next, trial, trialOnChip, false);
    if (failed(joined) || !accept(trial, *joined))
      break;
    step = std::move(trial);
    onChip = std::move(trialOnChip);
    out = *joined;
    done.insert(next);
    last = next->getResult(0);
    onChip[last] = out;
  }
  return last;
}

/// Stores the chain's last result from slot `out`.
LogicalResult Lowering::finishVectorStep(Operation *op,
                                         sim::VectorStep &step, int out) {
  Value result = op->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  // Where the result goes: an output (fp32), or scratch in fp32, or in
  // the operand format when only matmuls read it.
  step.output = out;
  auto named = outputs.find(result);
  bool isOutput = named != outputs.end();
  // One value per row (a reduction's) is stored as fp32: the store moves
  // four bytes a row.
  step.outFormat =
      isOutput || step.slots[out].shape == sim::VectorStep::Shape::Column
          ? sim::NumberFormat::F32
          : matmulOnlyFormat(result).value_or(sim::NumberFormat::F32);
  std::string base = ts::onnxNodeName(op->getLoc());
  if (base.empty())
    base = op->getName().stripDialect().str() + "_" +
           std::to_string(tensors.size());
  size_t at =
      place(isOutput ? named->second : base + "/result",
            isOutput ? Role::Output : Role::Scratch, step.outFormat, type.getShape());
  step.out = tensors[at].offset;
  if (auto why = sim::appendVectorStep(config, step, instructions)) {
    op->emitError() << "'" << op->getName() << "' " << *why;
    return failure();
  }
  placed[result] = {at, leadingRows(type), type.getShape().back()};
  return success();
}

/// Appends `op`'s vector instructions to `step` (whose view it sets when
/// empty, else must match) and returns the slot of its result; operands
/// in `onChip` are read from their slots. With `report`, failures are
/// diagnosed at the op.
FailureOr<int> Lowering::appendVectorOps(Operation *op,
                                         sim::VectorStep &step,
                                         llvm::DenseMap<Value, int> &onChip,
                                         bool report) {
  using Shape = sim::VectorStep::Shape;
  using F = sim::VectorFn;
  auto error = [&](const Twine &why) -> FailureOr<int> {
    if (report)
      op->emitError() << "'" << op->getName() << "' " << why;
    return failure();
  };
  Value result = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() || !heldAsF32(type) ||
      type.getRank() < 1)
    return error("needs a static f32 or boolean result on the systolic "
                 "target");
  for (Value operand : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(operand.getType());
        !t || !heldAsF32(t))
      return error("reads an operand that is neither f32 nor boolean on the "
                   "systolic target");
  // A reduction's view is its input's: rows of the reduced trailing dims,
  // one value per row out.
  std::optional<int64_t> reduced;
  if (isa<ts::ReduceSumOp, ts::ReduceMeanOp, ts::ReduceMaxOp>(op)) {
    reduced = trailingReduction(op);
    auto inType = cast<RankedTensorType>(op->getOperand(0).getType());
    if (!reduced || *reduced == 0 || !inType.hasStaticShape())
      return error("reduces on the vector unit over trailing axes only");
    type = inType;
  }
  int64_t rank = type.getRank();
  // The normalized (or reduced) trailing dims form the columns.
  int64_t axis = reduced ? rank - *reduced : rank - 1;
  if (auto norm = dyn_cast<ts::LayerNormOp>(op))
    axis = static_cast<int64_t>(norm.getAxis());
  else if (auto norm = dyn_cast<ts::RmsNormOp>(op))
    axis = static_cast<int64_t>(norm.getAxis());
  else if (auto softmax = dyn_cast<ts::SoftmaxOp>(op)) {
    auto a = static_cast<int64_t>(softmax.getAxis());
    if (a < 0)
      a += rank;
    if (a != rank - 1)
      return error("runs on the vector unit along the last axis only");
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return error("has an axis outside its rank");
  if (type.getNumElements() == 0)
    return error("has no elements (the vector unit needs at least one)");
  int64_t cols = 1;
  for (int64_t d = axis; d < rank; ++d)
    cols *= type.getDimSize(d);
  int64_t rows = type.getNumElements() / cols;

  if (step.ops.empty()) {
    step.rows = rows;
    step.cols = cols;
  } else if (step.rows != rows || step.cols != cols) {
    return error("does not share its rows and columns with the chain");
  }
  auto slot = [&](Shape shape, std::optional<uint64_t> dram = std::nullopt) {
    step.slots.push_back({shape, dram});
    return static_cast<int>(step.slots.size()) - 1;
  };
  // An operand's slot: the whole view, one row of cols values for every
  // row, or one value per row; a constant scalar is an immediate
  // (slot -1).
  auto operand = [&](Value v, std::optional<float> &immediate,
                     Shape &shape) -> std::optional<int> {
    auto vt = cast<RankedTensorType>(v.getType());
    if (auto it = onChip.find(v);
        it != onChip.end() && vt.getShape() == type.getShape()) {
      shape = Shape::Full;
      return it->second;
    }
    std::optional<std::vector<float>> values = constantValues(v);
    if (vt.getNumElements() == 1 && values) {
      immediate = values->front();
      return -1;
    }
    ArrayRef<int64_t> vs = vt.getShape();
    bool full = vt.getShape() == type.getShape();
    // Leading 1s, then exactly the normalized trailing dims.
    bool row = vt.getNumElements() == cols && !full;
    if (row) {
      SmallVector<int64_t> tail(type.getShape().drop_front(axis));
      ArrayRef<int64_t> vtail =
          vs.size() >= tail.size() ? vs.take_back(tail.size()) : vs;
      row = vtail == ArrayRef<int64_t>(tail);
      for (int64_t d : vs.drop_back(vtail.size()))
        row &= d == 1;
    }
    bool column =
        !full && !row && vt.getRank() == rank &&
        vt.getNumElements() == rows &&
        vs.drop_back(rank - axis) == type.getShape().drop_back(rank - axis);
    if (column)
      for (int64_t d : vs.take_back(rank - axis))
        column &= d == 1;
    if (!full && !row && !column) {
      // Any other numpy broadcast: materialized at the result's shape.
      std::optional<uint64_t> wide = broadcastTo(v, type);
      if (!wide)
        return std::nullopt;
      shape = Shape::Full;
      return slot(shape, *wide);
    }
    shape = full ? Shape::Full : row ? Shape::Row : Shape::Column;
    uint64_t dram;
    if (values) {
      dram = tensors[placeConstant(v, *values)].offset;
    } else {
      std::optional<Placed> at = inFormat(v, sim::NumberFormat::F32);
      if (!at)
        return std::nullopt;
      dram = tensors[at->index].offset;
    }
    return slot(shape, dram);
  };

  // The op's first operand as a whole-view slot.
  auto fullInput = [&]() -> std::optional<int> {
    std::optional<float> imm;
    Shape shape;
    std::optional<int> x = operand(op->getOperand(0), imm, shape);
    if (!x || shape != Shape::Full)
      return std::nullopt;
    return x;
  };
  int out = -1;
  if (std::optional<F> fn = unaryFn(op)) {
    std::optional<int> x = fullInput();
    if (!x)
      return error("reads an operand the vector unit cannot (it must be "
                   "in memory, as the result's shape)");
    out = slot(Shape::Full);
    step.ops.push_back({*fn, out, *x, -1, std::nullopt});
  } else if (std::optional<F> fn = binaryFn(op)) {
    std::optional<float> lhsImm, rhsImm;
    Shape lhsShape = Shape::Full, rhsShape = Shape::Full;
    std::optional<int> lhs = operand(op->getOperand(0), lhsImm, lhsShape);
    std::optional<int> rhs = operand(op->getOperand(1), rhsImm, rhsShape);
    if (!lhs || !rhs)
      return error("broadcasts in a way the vector unit does not (it "
                   "takes the result's shape, one row of the trailing "
                   "dims, one value per row, or a constant scalar)");
    out = slot(Shape::Full);
    bool lhsFull = *lhs >= 0 && lhsShape == Shape::Full;
    bool rhsFull = *rhs >= 0 && rhsShape == Shape::Full;
    auto binary = [&](F f, int a, int b, std::optional<float> imm) {
      step.ops.push_back({f, out, a, b, imm});
    };
    if (lhsFull) {
      binary(*fn, *lhs, *rhs, rhsImm);
    } else if (rhsFull) {
      switch (*fn) {
      case F::Add:
      case F::Mul:
      case F::Max:
      case F::Min:
      case F::Equal:
      case F::NotEqual:
        binary(*fn, *rhs, *lhs, lhsImm);
        break;
      case F::Less: // a < x = x > a
        binary(F::Greater, *rhs, *lhs, lhsImm);
        break;
      case F::LessEqual:
        binary(F::GreaterEqual, *rhs, *lhs, lhsImm);
        break;
      case F::Greater:
        binary(F::Less, *rhs, *lhs, lhsImm);
        break;
      case F::GreaterEqual:
        binary(F::LessEqual, *rhs, *lhs, lhsImm);
        break;
      case F::Sub: // a - x = -x + a
        step.ops.push_back({F::Neg, out, *rhs, -1, std::nullopt});
        binary(F::Add, out, *lhs, lhsImm);
        break;
      case F::Div: // a / x = (1 / x) * a
        step.ops.push_back({F::Reciprocal, out, *rhs, -1, std::nullopt});
        binary(F::Mul, out, *lhs, lhsImm);
        break;
      default:
        return error("with a broadcast base is not supported on the "
                     "vector unit");
      }
    } else {
      return error("needs an operand of the result's shape on the vector "
                   "unit");
    }
  } else if (isa<ts::NotOp>(op) || isBooleanCast(op)) {
    std::optional<int> x = fullInput();
    if (!x)
      return error("reads an operand the vector unit cannot (it must be "
                   "in memory, as the result's shape)");
    out = slot(Shape::Full);
    // not x = (x == 0); to a boolean: x != 0; from one: the same values.
    if (isa<ts::NotOp>(op))
      step.ops.push_back({F::Equal, out, *x, -1, 0.0f});
    else if (type.getElementType().isInteger(1))
      step.ops.push_back({F::NotEqual, out, *x, -1, 0.0f});
    else
      step.ops.push_back({F::Copy, out, *x, -1, std::nullopt});
  } else if (auto where = dyn_cast<ts::WhereOp>(op)) {
    // when(c, a) + unless(c, b): one of the two terms is zero. The
    // condition is read whole, broadcast to the result's shape first if
    // it is not.
    std::optional<float> cImm, aImm, bImm;
    Shape cShape = Shape::Full, aShape = Shape::Full, bShape = Shape::Full;
    std::optional<int> c;
    if (cast<RankedTensorType>(where.getCondition().getType()).getShape() ==
        type.getShape()) {
      c = operand(where.getCondition(), cImm, cShape);
    } else if (std::optional<uint64_t> wide =
                   broadcastTo(where.getCondition(), type)) {
      c = slot(Shape::Full, *wide);
    }
    if (c && *c < 0)
      return error("has a constant condition (folded before lowering)");
    std::optional<int> a = operand(where.getOnTrue(), aImm, aShape);
    std::optional<int> b = operand(where.getOnFalse(), bImm, bShape);
    if (!c || !a || !b)
      return error("broadcasts in a way the vector unit does not (it "
                   "takes the result's shape, one row of the trailing "
                   "dims, one value per row, or a constant scalar)");
    out = slot(Shape::Full);
    int other = slot(Shape::Full);
    step.ops.insert(step.ops.end(),
                    {{F::When, out, *c, *a, aImm},
                     {F::Unless, other, *c, *b, bImm},
                     {F::Add, out, out, other, std::nullopt}});
  } else if (reduced) {
    std::optional<int> x = fullInput();
    if (!x)
      return error("reads an operand the vector unit cannot");
    out = slot(Shape::Column);
    step.ops.push_back({isa<ts::ReduceMaxOp>(op) ? F::RowMax : F::RowSum, out,
                        *x, -1, std::nullopt});
    if (isa<ts::ReduceMeanOp>(op))
      step.ops.push_back(
          {F::Div, out, out, -1, static_cast<float>(cols)});
  } else if (isa<ts::SoftmaxOp>(op)) {
    std::optional<int> x = fullInput();
    if (!x)
      return error("reads an operand the vector unit cannot");
    out = slot(Shape::Full);
    int stat = slot(Shape::Column);
    step.ops.insert(step.ops.end(), {{F::RowMax, stat, *x, -1, std::nullopt},
                                     {F::Sub, out, *x, stat, std::nullopt},
                                     {F::Exp, out, out, -1, std::nullopt},
                                     {F::RowSum, stat, out, -1, std::nullopt},
                                     {F::Div, out, out, stat, std::nullopt}});
  } else {
    bool centered = isa<ts::LayerNormOp>(op);
    Value scale = centered ? cast<ts::LayerNormOp>(op).getScale()
                           : cast<ts::RmsNormOp>(op).getScale();
    Value bias = centered ? cast<ts::LayerNormOp>(op).getBias() : Value();
    float epsilon =
        centered ? cast<ts::LayerNormOp>(op).getEpsilon().convertToFloat()
                 : cast<ts::RmsNormOp>(op).getEpsilon().convertToFloat();
    std::optional<int> x = fullInput();
    if (!x)
      return error("reads an operand the vector unit cannot");
    out = slot(Shape::Full);
    int squares = slot(Shape::Full);
    int stat = slot(Shape::Column);
    auto n = static_cast<float>(cols);
    int centeredX = *x;
    if (centered) {
      step.ops.push_back({F::RowSum, stat, *x, -1, std::nullopt});
      step.ops.push_back({F::Div, stat, stat, -1, n});
      step.ops.push_back({F::Sub, out, *x, stat, std::nullopt});
      centeredX = out;
    }
    step.ops.push_back({F::Mul, squares, centeredX, centeredX, std::nullopt});
    step.ops.push_back({F::RowSum, stat, squares, -1, std::nullopt});
    step.ops.push_back({F::Div, stat, stat, -1, n});
    step.ops.push_back({F::Add, stat, stat, -1, epsilon});
    step.ops.push_back({F::Rsqrt, stat, stat, -1, std::nullopt});
    step.ops.push_back({F::Mul, out, centeredX, stat, std::nullopt});
    for (Value param : {scale, bias}) {
      if (!param)
        continue;
      std::optional<float> pImm;
      Shape pShape;
      std::optional<int> p = operand(param, pImm, pShape);
      if (!p || *p < 0 || pShape != Shape::Row)
        return error("needs its scale and bias shaped like the "
                     "normalized dims on the vector unit");
      step.ops.push_back(
          {param == scale ? F::Mul : F::Add, out, out, *p, std::nullopt});
    }
  }

  return out;
}

} // namespace tessera::systolic
