//===- TesseraToSystolic.cpp - a model's matmuls as an accelerator program ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Conversion/Passes.h"
#include "tessera/Conversion/SystolicEmitter.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Sim/Simulator.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tessera {
#define GEN_PASS_DEF_CONVERTTESSERATOSYSTOLICPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace tessera

using namespace mlir;
namespace ts = mlir::tessera;
namespace sim = ::tessera::sim;

namespace {

/// A tensor of the program, viewed as rows x cols (leading dims folded).
struct Placed {
  size_t index;
  int64_t rows, cols;
};

struct TensorEntry {
  std::string name, role;
  sim::NumberFormat format;
  SmallVector<int64_t> shape;
  uint64_t offset;
  ElementsAttr value;
};

int64_t leadingRows(RankedTensorType type) {
  int64_t rows = 1;
  for (int64_t d : type.getShape().drop_back())
    rows *= d;
  return rows;
}

/// Whether every use of `value` (through reshapes) is the lhs of a matmul:
/// such a value is kept in the operand format, others in fp32 for the
/// vector unit.
bool onlyMatmulLhs(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto reshape = dyn_cast<ts::ReshapeOp>(user)) {
      if (!onlyMatmulLhs(reshape.getResult()))
        return false;
      continue;
    }
    if (!isa<ts::MatmulOp>(user) || use.getOperandNumber() != 0)
      return false;
  }
  return !value.use_empty();
}

/// The vector unit's function for a unary tessera op.
std::optional<sim::VectorFn> unaryFn(Operation *op) {
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
std::optional<sim::VectorFn> binaryFn(Operation *op) {
  using F = sim::VectorFn;
  return llvm::TypeSwitch<Operation *, std::optional<F>>(op)
      .Case([](ts::AddOp) { return F::Add; })
      .Case([](ts::SubOp) { return F::Sub; })
      .Case([](ts::MulOp) { return F::Mul; })
      .Case([](ts::DivOp) { return F::Div; })
      .Case([](ts::MaxOp) { return F::Max; })
      .Case([](ts::MinOp) { return F::Min; })
      .Case([](ts::PowOp) { return F::Pow; })
      .Default([](Operation *) { return std::nullopt; });
}

struct ConvertTesseraToSystolicPass
    : ::tessera::impl::ConvertTesseraToSystolicPassBase<
          ConvertTesseraToSystolicPass> {
  using ConvertTesseraToSystolicPassBase::ConvertTesseraToSystolicPassBase;

  SmallVector<TensorEntry> tensors;
  uint64_t dramBytes = 0;
  sim::NumberFormat operandFormat = sim::NumberFormat::BF16;
  const sim::AcceleratorConfig *config = nullptr;
  std::vector<sim::Instruction> instructions;
  llvm::DenseMap<Value, Placed> placed;
  /// Values converted to the operand format for a matmul.
  llvm::DenseMap<Value, Placed> converted;
  /// Constants placed in DRAM as fp32, by op.
  llvm::DenseMap<Operation *, size_t> placedConstants;
  /// The values the function returns, with their output names.
  llvm::DenseMap<Value, std::string> outputs;

  size_t place(StringRef name, StringRef role, sim::NumberFormat format,
               ArrayRef<int64_t> shape, ElementsAttr value = {}) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    uint64_t offset = (dramBytes + 63) / 64 * 64;
    dramBytes = offset + uint64_t(count) * sim::formatBytes(format);
    tensors.push_back({name.str(), role.str(), format,
                       SmallVector<int64_t>(shape), offset, value});
    return tensors.size() - 1;
  }

  void runOnOperation() override {
    tensors.clear();
    dramBytes = 0;
    instructions.clear();
    placed.clear();
    converted.clear();
    placedConstants.clear();
    outputs.clear();
    ModuleOp module = getOperation();
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError("the systolic target compiles a module with one "
                       "function, not ")
          << funcs.size();
      return signalPassFailure();
    }
    func::FuncOp func = funcs.front();
    sim::Result<sim::AcceleratorConfig> loaded = sim::loadConfig(accel);
    if (auto *error = std::get_if<std::string>(&loaded)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    const sim::AcceleratorConfig &config =
        std::get<sim::AcceleratorConfig>(loaded);
    this->config = &config;
    std::optional<sim::NumberFormat> operandFormat = sim::parseFormat(format);
    if (!operandFormat || *operandFormat == sim::NumberFormat::F32 ||
        *operandFormat == sim::NumberFormat::I8 ||
        !config.supports(*operandFormat)) {
      module.emitError() << "accelerator '" << config.name
                         << "' has no float operand format '" << format
                         << "' (quantized int8 models are not supported yet)";
      return signalPassFailure();
    }

    this->operandFormat = *operandFormat;
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
          type.getRank() < 1) {
        func.emitError() << "input " << i
                         << " must be a static f32 tensor on the systolic "
                            "target";
        return signalPassFailure();
      }
      std::string name = "input_" + std::to_string(i);
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "tessera.name"))
        name = attr.str();
      // Inputs only matmuls read come in the operand format, others in
      // fp32 (converted on chip for a matmul that also reads them).
      placed[arg] = {place(name, "input",
                           onlyMatmulLhs(arg) ? *operandFormat
                                              : sim::NumberFormat::F32,
                           type.getShape()),
                     leadingRows(type), type.getShape().back()};
    }
    // Values the function returns, with their output names.
    auto returnOp = cast<func::ReturnOp>(func.getBody().front().back());
    for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
      std::string name = "output_" + std::to_string(i);
      if (auto attr = func.getResultAttrOfType<StringAttr>(i, "tessera.name"))
        name = attr.str();
      outputs[value] = name;
    }

    llvm::DenseSet<Operation *> done;
    for (Operation &op : func.getBody().front()) {
      if (done.contains(&op) || isa<ts::ConstantOp, func::ReturnOp>(op))
        continue;
      if (auto reshape = dyn_cast<ts::ReshapeOp>(op)) {
        auto it = placed.find(reshape->getOperand(0));
        auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
        if (it == placed.end() || !type.hasStaticShape())
          return fail(&op, "reshapes only what is already in memory");
        placed[reshape->getResult(0)] = {it->second.index, leadingRows(type),
                                         type.getShape().back()};
        continue;
      }
      if (auto matmul = dyn_cast<ts::MatmulOp>(op)) {
        if (failed(lowerMatmul(matmul, *operandFormat, config, placed,
                               outputs, done, instructions)))
          return signalPassFailure();
        continue;
      }
      if (unaryFn(&op) || binaryFn(&op) ||
          isa<ts::SoftmaxOp, ts::LayerNormOp, ts::RmsNormOp>(op)) {
        if (failed(lowerVector(&op)))
          return signalPassFailure();
        continue;
      }
      return fail(&op, "cannot run on the systolic target yet: its "
                       "lowering handles matmuls with constant weights, "
                       "elementwise ops, softmax, layer_norm and rms_norm");
    }
    for (Value value : returnOp.getOperands()) {
      auto it = placed.find(value);
      if (it == placed.end() || tensors[it->second.index].role != "output") {
        returnOp.emitError("each result must be computed on the accelerator "
                           "(an input or constant returned as it is is not "
                           "supported)");
        return signalPassFailure();
      }
    }

    // The program replaces the function.
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    Location loc = func.getLoc();
    auto program = systolic::ProgramOp::create(
        builder, loc, builder.getStringAttr(config.name),
        builder.getI64IntegerAttr(static_cast<int64_t>(dramBytes)));
    Block *body = new Block;
    program.getBody().push_back(body);
    builder.setInsertionPointToStart(body);
    for (const TensorEntry &t : tensors)
      systolic::TensorOp::create(
          builder, loc, builder.getStringAttr(t.name),
          builder.getStringAttr(t.role),
          builder.getStringAttr(sim::formatName(t.format)),
          builder.getDenseI64ArrayAttr(t.shape),
          builder.getI64IntegerAttr(static_cast<int64_t>(t.offset)), t.value);
    for (const sim::Instruction &i : instructions)
      ::tessera::buildInstructionOp(builder, loc, i);
    func.erase();
  }

  void fail(Operation *op, const Twine &why) {
    op->emitError() << "'" << op->getName() << "' " << why;
    signalPassFailure();
  }

  LogicalResult lowerMatmul(ts::MatmulOp matmul, sim::NumberFormat format,
                            const sim::AcceleratorConfig &config,
                            llvm::DenseMap<Value, Placed> &placed,
                            llvm::DenseMap<Value, std::string> &outputs,
                            llvm::DenseSet<Operation *> &done,
                            std::vector<sim::Instruction> &instructions) {
    auto error = [&](Operation *op, const Twine &why) {
      op->emitError() << why;
      return failure();
    };
    std::optional<Placed> lhs = inFormat(matmul.getLhs(), format);
    if (!lhs)
      return error(matmul, "the matmul's lhs must be an input or an earlier "
                           "result on the systolic target");
    auto weights = matmul.getRhs().getDefiningOp<ts::ConstantOp>();
    auto rhsType = matmul.getRhs().getType();
    if (!weights || rhsType.getRank() != 2)
      return error(matmul, "the systolic target needs constant 2-D weights");
    if (matmul.getTransposeA() || !matmul.getAlpha().isExactlyValue(1.0))
      return error(matmul, "transpose_a and alpha are not supported on the "
                           "systolic target yet");
    std::optional<std::vector<float>> values =
        ::tessera::floatValues(weights.getValue());
    if (!values)
      return error(matmul, "the weights must be f32 constants");
    int64_t k = rhsType.getDimSize(matmul.getTransposeB() ? 1 : 0);
    int64_t n = rhsType.getDimSize(matmul.getTransposeB() ? 0 : 1);
    if (lhs->cols != k)
      return error(matmul, "the lhs does not have the weights' depth");
    if (matmul.getTransposeB()) {
      std::vector<float> transposed(values->size());
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < n; ++c)
          transposed[r * n + c] = (*values)[c * k + r];
      values = std::move(transposed);
    }
    auto weightType =
        RankedTensorType::get({k, n}, Float32Type::get(matmul.getContext()));
    auto weightValue =
        DenseElementsAttr::get(weightType, ArrayRef<float>(*values));
    std::string base = ts::onnxNodeName(matmul.getLoc());
    if (base.empty())
      base = "matmul_" + std::to_string(tensors.size());
    size_t weightsAt =
        place(base + "/weights", "constant", format, {k, n}, weightValue);

    // The epilogue: a bias row, then ReLU, each the only user.
    sim::GemmStep step;
    step.shape = {lhs->rows, n, k};
    step.format = format;
    step.a = tensors[lhs->index].offset;
    step.b = tensors[weightsAt].offset;
    // Every matmul after the first starts behind the earlier stores: its
    // input may be their result, and its buffers (slots, accumulators) are
    // the ones the earlier matmul used until its last store.
    step.fence = !instructions.empty();
    Value result = matmul.getResult();
    done.insert(matmul);
    if (result.hasOneUse())
      if (auto add = dyn_cast<ts::AddOp>(*result.getUsers().begin())) {
        Value other = add.getLhs() == result ? add.getRhs() : add.getLhs();
        auto bias = other.getDefiningOp<ts::ConstantOp>();
        auto biasType = cast<RankedTensorType>(other.getType());
        std::optional<std::vector<float>> biasValues =
            bias ? ::tessera::floatValues(bias.getValue()) : std::nullopt;
        if (biasValues && biasType.getNumElements() == n &&
            biasType.getShape().back() == n &&
            add.getType() == matmul.getType()) {
          auto biasValue = DenseElementsAttr::get(
              RankedTensorType::get({n}, weightType.getElementType()),
              ArrayRef<float>(*biasValues));
          size_t biasAt = place(base + "/bias", "constant",
                                sim::NumberFormat::F32, {n}, biasValue);
          step.bias = tensors[biasAt].offset;
          done.insert(add);
          result = add.getResult();
        }
      }
    if (result.hasOneUse())
      if (auto relu = dyn_cast<ts::ReluOp>(*result.getUsers().begin())) {
        step.relu = true;
        done.insert(relu);
        result = relu.getResult();
      }
    auto resultType = cast<RankedTensorType>(result.getType());
    auto out = outputs.find(result);
    bool isOutput = out != outputs.end();
    if (isOutput && !result.hasOneUse())
      return error(result.getDefiningOp(),
                   "a result returned and also used by another op is not "
                   "supported on the systolic target yet");
    step.outFormat = isOutput || !onlyMatmulLhs(result)
                         ? sim::NumberFormat::F32
                         : format;
    size_t resultAt = place(isOutput ? out->second : base + "/result",
                            isOutput ? "output" : "scratch", step.outFormat,
                            resultType.getShape());
    step.c = tensors[resultAt].offset;
    placed[result] = {resultAt, step.shape.m, n};
    if (auto why = sim::appendGemm(config, step, instructions))
      return error(matmul, *why);
    return success();
  }

  /// `value` in DRAM in `format`: as placed, or for a matmul reading an
  /// fp32 value, a copy converted on the vector unit (once per value).
  std::optional<Placed> inFormat(Value value, sim::NumberFormat format) {
    auto it = placed.find(value);
    if (it == placed.end())
      return std::nullopt;
    Placed at = it->second;
    sim::NumberFormat held = tensors[at.index].format;
    if (held == format)
      return at;
    if (held != sim::NumberFormat::F32)
      return std::nullopt;
    if (auto done = converted.find(value); done != converted.end())
      return done->second;
    size_t to = place(tensors[at.index].name + "/" + sim::formatName(format),
                      "scratch", format, tensors[at.index].shape);
    sim::VectorStep step;
    step.rows = at.rows;
    step.cols = at.cols;
    step.slots = {{sim::VectorStep::Shape::Full, tensors[at.index].offset},
                  {sim::VectorStep::Shape::Full, std::nullopt}};
    step.ops = {{sim::VectorFn::Copy, 1, 0, -1, std::nullopt}};
    step.output = 1;
    step.out = tensors[to].offset;
    step.outFormat = format;
    if (sim::appendVectorStep(*config, step, instructions))
      return std::nullopt;
    Placed result{to, at.rows, at.cols};
    converted[value] = result;
    return result;
  }

  /// Lowers an elementwise op, softmax, layer_norm or rms_norm to one
  /// vector step over the result viewed as rows x cols.
  LogicalResult lowerVector(Operation *op) {
    using Shape = sim::VectorStep::Shape;
    using F = sim::VectorFn;
    auto error = [&](const Twine &why) {
      op->emitError() << "'" << op->getName() << "' " << why;
      return failure();
    };
    Value result = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
        type.getRank() < 1)
      return error("needs a static f32 result on the systolic target");
    int64_t rank = type.getRank();
    // The normalized (or reduced) trailing dims form the columns.
    int64_t axis = rank - 1;
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
    int64_t cols = 1;
    for (int64_t d = axis; d < rank; ++d)
      cols *= type.getDimSize(d);
    int64_t rows = type.getNumElements() / cols;

    sim::VectorStep step;
    step.rows = rows;
    step.cols = cols;
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
      auto constant = v.getDefiningOp<ts::ConstantOp>();
      std::optional<std::vector<float>> values =
          constant ? ::tessera::floatValues(constant.getValue())
                   : std::nullopt;
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
      bool column = !full && !row && vt.getRank() == rank &&
                    vt.getNumElements() == rows &&
                    vs.drop_back(rank - axis) ==
                        type.getShape().drop_back(rank - axis);
      if (column)
        for (int64_t d : vs.take_back(rank - axis))
          column &= d == 1;
      if (!full && !row && !column)
        return std::nullopt;
      shape = full ? Shape::Full : row ? Shape::Row : Shape::Column;
      uint64_t dram;
      if (values) {
        auto known = placedConstants.find(constant);
        if (known == placedConstants.end()) {
          auto attr = DenseElementsAttr::get(
              RankedTensorType::get({vt.getNumElements()},
                                    Float32Type::get(op->getContext())),
              ArrayRef<float>(*values));
          std::string name = ts::onnxNodeName(constant.getLoc());
          known = placedConstants
                      .try_emplace(constant,
                                   place((name.empty() ? "constant" : name) +
                                             "/f32_" +
                                             std::to_string(tensors.size()),
                                         "constant", sim::NumberFormat::F32,
                                         {vt.getNumElements()}, attr))
                      .first;
        }
        dram = tensors[known->second].offset;
      } else {
        std::optional<Placed> at = inFormat(v, sim::NumberFormat::F32);
        if (!at)
          return std::nullopt;
        dram = tensors[at->index].offset;
      }
      return slot(shape, dram);
    };

    int out = -1;
    if (std::optional<F> fn = unaryFn(op)) {
      std::optional<float> imm;
      Shape shape;
      std::optional<int> x = operand(op->getOperand(0), imm, shape);
      if (!x || shape != Shape::Full)
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
          binary(*fn, *rhs, *lhs, lhsImm);
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
    } else if (isa<ts::SoftmaxOp>(op)) {
      std::optional<float> imm;
      Shape shape;
      std::optional<int> x = operand(op->getOperand(0), imm, shape);
      if (!x || shape != Shape::Full)
        return error("reads an operand the vector unit cannot");
      out = slot(Shape::Full);
      int stat = slot(Shape::Column);
      step.ops = {{F::RowMax, stat, *x, -1, std::nullopt},
                  {F::Sub, out, *x, stat, std::nullopt},
                  {F::Exp, out, out, -1, std::nullopt},
                  {F::RowSum, stat, out, -1, std::nullopt},
                  {F::Div, out, out, stat, std::nullopt}};
    } else {
      bool centered = isa<ts::LayerNormOp>(op);
      Value scale = centered ? cast<ts::LayerNormOp>(op).getScale()
                             : cast<ts::RmsNormOp>(op).getScale();
      Value bias = centered ? cast<ts::LayerNormOp>(op).getBias() : Value();
      float epsilon =
          centered
              ? cast<ts::LayerNormOp>(op).getEpsilon().convertToFloat()
              : cast<ts::RmsNormOp>(op).getEpsilon().convertToFloat();
      std::optional<float> imm;
      Shape shape;
      std::optional<int> x = operand(op->getOperand(0), imm, shape);
      if (!x || shape != Shape::Full)
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
        step.ops.push_back({param == scale ? F::Mul : F::Add, out, out, *p,
                            std::nullopt});
      }
    }

    // Where the result goes: an output (fp32), or scratch in fp32, or in
    // the operand format when only matmuls read it.
    step.output = out;
    auto named = outputs.find(result);
    bool isOutput = named != outputs.end();
    step.outFormat = !isOutput && onlyMatmulLhs(result)
                         ? operandFormat
                         : sim::NumberFormat::F32;
    std::string base = ts::onnxNodeName(op->getLoc());
    if (base.empty())
      base = op->getName().stripDialect().str() + "_" +
             std::to_string(tensors.size());
    size_t at = place(isOutput ? named->second : base + "/result",
                      isOutput ? "output" : "scratch", step.outFormat,
                      type.getShape());
    step.out = tensors[at].offset;
    if (auto why = sim::appendVectorStep(*config, step, instructions))
      return error(*why);
    placed[result] = {at, leadingRows(type), type.getShape().back()};
    return success();
  }
};

} // namespace
