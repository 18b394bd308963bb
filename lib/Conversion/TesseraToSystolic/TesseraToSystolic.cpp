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

#include <array>

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

/// Whether every use of `value` (through reshapes) is an operand of a
/// matmul (its rhs loaded as weights):
/// such a value is kept in the operand format, others in fp32 for the
/// vector unit.
bool onlyMatmulOperands(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto reshape = dyn_cast<ts::ReshapeOp>(user)) {
      if (!onlyMatmulOperands(reshape.getResult()))
        return false;
      continue;
    }
    auto matmul = dyn_cast<ts::MatmulOp>(user);
    if (!matmul)
      return false;
    // The rhs of a matmul is loaded as weights in the operand format, the
    // transpose_b of a computed rhs goes through a copy first.
    if (use.getOperandNumber() == 1 && matmul.getTransposeB())
      return false;
  }
  return !value.use_empty();
}

SmallVector<int64_t> rowMajor(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// The values of a constant, or of a where whose operands are all
/// constants (a causal mask), evaluated with numpy broadcasting.
std::optional<std::vector<float>> constantValues(Value value) {
  if (auto constant = value.getDefiningOp<ts::ConstantOp>())
    return ::tessera::floatValues(constant.getValue());
  auto where = value.getDefiningOp<ts::WhereOp>();
  if (!where)
    return std::nullopt;
  auto cond = where.getCondition().getDefiningOp<ts::ConstantOp>();
  auto condAttr = cond ? dyn_cast<DenseElementsAttr>(cond.getValue()) : nullptr;
  std::optional<std::vector<float>> x = constantValues(where.getOnTrue()),
                                    y = constantValues(where.getOnFalse());
  auto type = dyn_cast<RankedTensorType>(where.getType());
  if (!condAttr || !condAttr.getElementType().isInteger(1) || !x || !y ||
      !type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<bool> c(condAttr.getValues<bool>());
  ArrayRef<int64_t> shape = type.getShape();
  auto at = [&](Value operand, int64_t flat) {
    auto t = cast<RankedTensorType>(operand.getType());
    int64_t index = 0, stride = 1;
    for (int64_t d = t.getRank() - 1, o = int64_t(shape.size()) - 1; d >= 0;
         --d, --o) {
      int64_t outStride = 1;
      for (int64_t e = o + 1; e < int64_t(shape.size()); ++e)
        outStride *= shape[e];
      int64_t i = (flat / outStride) % shape[o];
      if (t.getDimSize(d) != 1)
        index += i * stride;
      stride *= t.getDimSize(d);
    }
    return index;
  };
  std::vector<float> out(type.getNumElements());
  for (int64_t n = 0; n < type.getNumElements(); ++n)
    out[n] = c[c.size() == 1 ? 0 : at(where.getCondition(), n)]
                 ? (*x)[x->size() == 1 ? 0 : at(where.getOnTrue(), n)]
                 : (*y)[y->size() == 1 ? 0 : at(where.getOnFalse(), n)];
  return out;
}

/// The values of an i8 or fp8 constant as floats (exact).
std::optional<std::vector<float>> quantizedValues(Value value) {
  auto constant = value.getDefiningOp<ts::ConstantOp>();
  if (!constant)
    return std::nullopt;
  ElementsAttr attr = constant.getValue();
  Type element = cast<ShapedType>(attr.getType()).getElementType();
  int64_t count = cast<ShapedType>(attr.getType()).getNumElements();
  std::vector<float> out;
  out.reserve(count);
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (element.isInteger(8)) {
      for (APInt v : dense.getValues<APInt>())
        out.push_back(static_cast<float>(v.getSExtValue()));
      return out;
    }
    if (isa<Float8E4M3FNType, Float8E5M2Type>(element)) {
      for (APFloat v : dense.getValues<APFloat>())
        out.push_back(v.convertToFloat());
      return out;
    }
    return std::nullopt;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || int64_t(blob->getData().size()) != count)
      return std::nullopt;
    for (char byte : blob->getData()) {
      auto bits = static_cast<uint8_t>(byte);
      if (element.isInteger(8))
        out.push_back(static_cast<float>(static_cast<int8_t>(bits)));
      else if (isa<Float8E4M3FNType>(element))
        out.push_back(sim::fromF8E4M3FN(bits));
      else if (isa<Float8E5M2Type>(element))
        out.push_back(sim::fromF8E5M2(bits));
      else
        return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

/// The constant scales of a symmetric (de)quantization (no zero point, or
/// zero points of 0): one value, or `count` values.
std::optional<std::vector<float>> symmetricScales(Value scale, Value zeroPoint,
                                                  size_t count = 1) {
  std::optional<std::vector<float>> s = constantValues(scale);
  if (!s || (s->size() != 1 && s->size() != count))
    return std::nullopt;
  if (zeroPoint) {
    std::optional<std::vector<float>> z = quantizedValues(zeroPoint);
    if (!z || llvm::any_of(*z, [](float v) { return v != 0; }))
      return std::nullopt;
  }
  return s;
}

/// A per-tensor scale (a constant of one element) with no zero point, or
/// a zero one.
std::optional<float> perTensorScale(Value scale, Value zeroPoint) {
  std::optional<std::vector<float>> s = symmetricScales(scale, zeroPoint);
  if (!s || s->size() != 1)
    return std::nullopt;
  return s->front();
}

/// A matmul of quantized operands (ONNX's QDQ form): the lhs a
/// dequantize of a quantize of an fp32 value, the rhs a dequantize of an
/// i8 or fp8 constant, both symmetric, in the same format; the input's
/// scale per tensor, the weights' per tensor or per output column.
struct QuantizedMatmul {
  sim::NumberFormat format;
  Value input;
  float inputScale;
  /// One scale, or one per column of the product.
  std::vector<float> weightScales;
  std::vector<float> weights;
  ts::QuantizeOp quantize;
  ts::DequantizeOp lhsDequantize, rhsDequantize;
};

std::optional<QuantizedMatmul> matchQuantized(ts::MatmulOp matmul) {
  auto dq = matmul.getLhs().getDefiningOp<ts::DequantizeOp>();
  auto dw = matmul.getRhs().getDefiningOp<ts::DequantizeOp>();
  if (!dq || !dw)
    return std::nullopt;
  auto q = dq.getInput().getDefiningOp<ts::QuantizeOp>();
  if (!q)
    return std::nullopt;
  Type element = q.getType().getElementType();
  if (element != dw.getInput().getType().getElementType())
    return std::nullopt;
  std::optional<sim::NumberFormat> format =
      element.isInteger(8)             ? sim::NumberFormat::I8
      : isa<Float8E4M3FNType>(element) ? sim::NumberFormat::F8E4M3FN
      : isa<Float8E5M2Type>(element) ? std::optional(sim::NumberFormat::F8E5M2)
                                     : std::nullopt;
  std::optional<float> sx = perTensorScale(q.getScale(), q.getZeroPoint());
  std::optional<float> sq = perTensorScale(dq.getScale(), dq.getZeroPoint());
  // Per-channel weight scales run along the product's columns: the
  // weights' dim 1, or dim 0 with transpose_b.
  auto wType = cast<RankedTensorType>(dw.getInput().getType());
  if (wType.getRank() != 2)
    return std::nullopt;
  int64_t columnsDim = matmul.getTransposeB() ? 0 : 1;
  std::optional<std::vector<float>> sw = symmetricScales(
      dw.getScale(), dw.getZeroPoint(), wType.getDimSize(columnsDim));
  if (sw && sw->size() != 1) {
    int64_t axis = dw.getAxis() ? int64_t(*dw.getAxis()) : 1;
    if ((axis < 0 ? axis + 2 : axis) != columnsDim)
      return std::nullopt;
  }
  std::optional<std::vector<float>> w = quantizedValues(dw.getInput());
  if (!format || !sx || !sq || *sx != *sq || !sw || !w)
    return std::nullopt;
  return QuantizedMatmul{
      *format, q.getInput(), *sx, std::move(*sw), std::move(*w), q, dq, dw};
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
        *operandFormat == sim::NumberFormat::I8) {
      module.emitError() << "'" << format
                         << "' is not a float operand format (bf16, f16, "
                            "f8E4M3FN or f8E5M2)";
      return signalPassFailure();
    }

    this->operandFormat = *operandFormat;
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      // Integer inputs are indices (token ids) that gathers read; the host
      // writes them as fp32 (exact below 2^24).
      bool indices = type && isa<IntegerType>(type.getElementType()) &&
                     !arg.use_empty() &&
                     llvm::all_of(arg.getUses(), [](OpOperand &use) {
                       return isa<ts::GatherOp>(use.getOwner()) &&
                              use.getOperandNumber() == 1;
                     });
      if (!type || !type.hasStaticShape() ||
          (!type.getElementType().isF32() && !indices) || type.getRank() < 1) {
        func.emitError() << "input " << i
                         << " must be a static f32 tensor (or integer "
                            "indices that only gathers read) on the "
                            "systolic target";
        return signalPassFailure();
      }
      std::string name = "input_" + std::to_string(i);
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "tessera.name"))
        name = attr.str();
      // Inputs only matmuls read come in the operand format, others in
      // fp32 (converted on chip for a matmul that also reads them).
      placed[arg] = {place(name, "input",
                           onlyMatmulOperands(arg) ? *operandFormat
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
    // Matmuls of quantized operands: their quantize and dequantize ops run
    // as part of them (the quantization on the vector unit, the
    // dequantization in the drain).
    llvm::DenseMap<Operation *, QuantizedMatmul> quantized;
    func.walk([&](ts::MatmulOp matmul) {
      std::optional<QuantizedMatmul> match = matchQuantized(matmul);
      if (!match)
        return;
      for (Operation *op : {match->lhsDequantize.getOperation(),
                            match->rhsDequantize.getOperation(),
                            match->quantize.getOperation()})
        if (op->getResult(0).hasOneUse())
          done.insert(op);
      quantized.try_emplace(matmul, std::move(*match));
    });
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
      if (auto matmul = dyn_cast<ts::MatmulOp>(op);
          matmul && quantized.count(matmul)) {
        if (failed(lowerMatmul(matmul, *operandFormat, config, placed, outputs,
                               done, instructions,
                               &quantized.find(matmul)->second)))
          return signalPassFailure();
        continue;
      }
      if (auto matmul = dyn_cast<ts::MatmulOp>(op)) {
        LogicalResult lowered =
            matmul.getRhs().getDefiningOp<ts::ConstantOp>()
                ? lowerMatmul(matmul, *operandFormat, config, placed, outputs,
                              done, instructions)
                : lowerComputedMatmul(matmul, done);
        if (failed(lowered))
          return signalPassFailure();
        continue;
      }
      // Constant masks are evaluated where they are read.
      if (isa<ts::WhereOp>(op) && constantValues(op.getResult(0)))
        continue;
      if (auto gather = dyn_cast<ts::GatherOp>(op);
          gather && !gather.getIndices().getDefiningOp<ts::ConstantOp>()) {
        if (failed(lowerLookup(gather)))
          return signalPassFailure();
        continue;
      }
      if (isa<ts::TransposeOp, ts::SliceOp, ts::ConcatOp, ts::GatherOp,
              ts::ExpandOp, ts::Conv2dOp>(op)) {
        if (failed(lowerDataMovement(&op)))
          return signalPassFailure();
        continue;
      }
      if (isVectorOp(&op)) {
        if (failed(lowerVectorChain(&op, done)))
          return signalPassFailure();
        continue;
      }
      return fail(&op, "cannot run on the systolic target yet: its "
                       "lowering handles matmuls, convolutions without "
                       "padding, elementwise ops, softmax, layer_norm, "
                       "rms_norm, transposes, slices, concatenations, "
                       "broadcasts and gathers of one constant index");
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
                            std::vector<sim::Instruction> &instructions,
                            const QuantizedMatmul *quant = nullptr) {
    auto error = [&](Operation *op, const Twine &why) {
      op->emitError() << why;
      return failure();
    };
    std::optional<Placed> lhs;
    std::optional<std::vector<float>> values;
    auto rhsType = matmul.getRhs().getType();
    if (quant) {
      // The lhs quantized on the vector unit, the weights as they are.
      format = quant->format;
      if (!config.supports(format))
        return error(matmul, Twine("accelerator '") + config.name +
                                 "' has no " + sim::formatName(format) +
                                 " operands for this quantized matmul");
      lhs = quantizeInput(matmul, quant->input, quant->inputScale, format);
      values = quant->weights;
    } else {
      if (failed(checkOperandFormat(matmul)))
        return failure();
      lhs = inFormat(matmul.getLhs(), format);
      auto weights = matmul.getRhs().getDefiningOp<ts::ConstantOp>();
      if (!weights || rhsType.getRank() != 2)
        return error(matmul, "the systolic target needs constant 2-D weights");
      values = ::tessera::floatValues(weights.getValue());
      if (!values)
        return error(matmul, "the weights must be f32 constants");
    }
    if (!lhs)
      return error(matmul, "the matmul's lhs must be an input or an earlier "
                           "result on the systolic target");
    if (matmul.getTransposeA() || !matmul.getAlpha().isExactlyValue(1.0))
      return error(matmul, "transpose_a and alpha are not supported on the "
                           "systolic target yet");
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
    // Dequantization in the drain; per-column weight scales multiply each
    // block in the epilogue (before any bias, which then joins the
    // epilogue too).
    std::optional<uint64_t> columnScales;
    if (quant && quant->weightScales.size() == 1)
      step.scale = quant->inputScale * quant->weightScales.front();
    else if (quant) {
      step.scale = quant->inputScale;
      auto scalesValue = DenseElementsAttr::get(
          RankedTensorType::get({n}, weightType.getElementType()),
          ArrayRef<float>(quant->weightScales));
      columnScales = tensors[place(base + "/scales", "constant",
                                   sim::NumberFormat::F32, {n}, scalesValue)]
                         .offset;
    }
    step.a = tensors[lhs->index].offset;
    step.b = tensors[weightsAt].offset;
    // Every matmul after the first starts behind the earlier stores: its
    // input may be their result, and its buffers (slots, accumulators) are
    // the ones the earlier matmul used until its last store.
    step.fence = !instructions.empty();
    Value result = matmul.getResult();
    done.insert(matmul);
    if (result.hasOneUse() && !columnScales)
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
    if (result.hasOneUse() && !columnScales)
      if (auto relu = dyn_cast<ts::ReluOp>(*result.getUsers().begin())) {
        step.relu = true;
        done.insert(relu);
        result = relu.getResult();
      }
    Value product = result;
    result = attachEpilogue(step, result, done, columnScales);
    auto resultType = cast<RankedTensorType>(result.getType());
    auto out = outputs.find(result);
    bool isOutput = out != outputs.end();
    if (isOutput && !result.hasOneUse())
      return error(result.getDefiningOp(),
                   "a result returned and also used by another op is not "
                   "supported on the systolic target yet");
    step.outFormat =
        isOutput || (quant && result == product) || !onlyMatmulOperands(result)
            ? sim::NumberFormat::F32
            : format;
    if (step.epilogue) {
      step.epilogue->outFormat = step.outFormat;
      std::string last = ts::onnxNodeName(result.getLoc());
      if (!last.empty())
        base = last;
    }
    size_t resultAt = place(isOutput ? out->second : base + "/result",
                            isOutput ? "output" : "scratch", step.outFormat,
                            resultType.getShape());
    step.c = tensors[resultAt].offset;
    placed[result] = {resultAt, step.shape.m, n};
    if (auto why = sim::appendGemm(config, step, instructions))
      return error(matmul, *why);
    return success();
  }

  /// Fuses the vector ops that follow a GEMM's `result` into its epilogue:
  /// each op the only user of the previous result and not a model output,
  /// its other operands already in memory or constant, its view the
  /// GEMM's outputs (batch * M rows x N columns), and row reductions
  /// (softmax, norms) only while N fits the array's columns. The products
  /// stay on chip and only the last result goes to DRAM. With
  /// `columnScales` (fp32, one per column, in DRAM) the epilogue first
  /// multiplies the product by them (per-channel dequantization). Returns
  /// the last fused value (`result` when nothing fuses).
  Value attachEpilogue(sim::GemmStep &step, Value result,
                       llvm::DenseSet<Operation *> &done,
                       std::optional<uint64_t> columnScales = std::nullopt) {
    using Shape = sim::VectorStep::Shape;
    int64_t rows = step.batch * step.shape.m, cols = step.shape.n;
    sim::VectorStep epilogue;
    epilogue.rows = rows;
    epilogue.cols = cols;
    epilogue.slots.push_back({Shape::Full, std::nullopt});
    int out = 0;
    if (columnScales) {
      epilogue.slots.push_back({Shape::Row, columnScales});
      epilogue.slots.push_back({Shape::Full, std::nullopt});
      epilogue.ops.push_back(
          {sim::VectorFn::Mul, 2, 0, 1, std::optional<float>()});
      out = 2;
    }
    llvm::DenseMap<Value, int> onChip;
    Value last = extendVectorChain(
        result, epilogue, onChip, out, done,
        [&](const sim::VectorStep &trial, int joined) {
          return trial.rows == rows && trial.cols == cols &&
                 trial.slots[joined].shape == Shape::Full &&
                 (cols <= config->array.cols ||
                  llvm::none_of(trial.ops, [](const sim::VectorStep::Op &op) {
                    return sim::isRowReduction(op.fn);
                  }));
        });
    if (epilogue.ops.empty())
      return result;
    epilogue.output = out;
    step.epilogue = std::move(epilogue);
    return last;
  }

  /// An fp32 constant (or constant-foldable value) placed once in DRAM.
  size_t placeConstant(Value value, ArrayRef<float> values) {
    Operation *key = value.getDefiningOp();
    auto known = placedConstants.find(key);
    if (known != placedConstants.end())
      return known->second;
    auto attr = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(values.size())},
                              Float32Type::get(value.getContext())),
        values);
    std::string name = ts::onnxNodeName(value.getLoc());
    size_t at = place((name.empty() ? "constant" : name) + "/f32_" +
                          std::to_string(tensors.size()),
                      "constant", sim::NumberFormat::F32,
                      {int64_t(values.size())}, attr);
    placedConstants[key] = at;
    return at;
  }

  /// `value` as an fp32 row-major view in DRAM: its byte offset.
  std::optional<uint64_t> fp32Source(Value value) {
    if (std::optional<std::vector<float>> values = constantValues(value))
      return tensors[placeConstant(value, *values)].offset;
    std::optional<Placed> at = inFormat(value, sim::NumberFormat::F32);
    if (!at)
      return std::nullopt;
    return tensors[at->index].offset;
  }

  /// Places `result` of `op`: an fp32 output, or scratch in the operand
  /// format when only matmuls read it, else in fp32.
  size_t placeResult(Operation *op, Value result) {
    auto type = cast<RankedTensorType>(result.getType());
    auto named = outputs.find(result);
    bool isOutput = named != outputs.end();
    sim::NumberFormat format = !isOutput && onlyMatmulOperands(result)
                                   ? operandFormat
                                   : sim::NumberFormat::F32;
    std::string base = ts::onnxNodeName(op->getLoc());
    if (base.empty())
      base = op->getName().stripDialect().str() + "_" +
             std::to_string(tensors.size());
    size_t at = place(isOutput ? named->second : base + "/result",
                      isOutput ? "output" : "scratch", format, type.getShape());
    placed[result] = {at, leadingRows(type), type.getShape().back()};
    return at;
  }

  /// `value` broadcast numpy-style to `type`, as a new fp32 tensor: its
  /// byte offset.
  std::optional<uint64_t> broadcastTo(Value value, RankedTensorType type) {
    auto vt = cast<RankedTensorType>(value.getType());
    if (!vt.hasStaticShape() || vt.getRank() > type.getRank())
      return std::nullopt;
    SmallVector<int64_t> own = rowMajor(vt.getShape());
    SmallVector<int64_t> strides(type.getRank(), 0);
    int64_t shift = type.getRank() - vt.getRank();
    for (int64_t d = 0; d < vt.getRank(); ++d) {
      int64_t size = vt.getDimSize(d);
      if (size != 1 && size != type.getDimSize(d + shift))
        return std::nullopt;
      strides[d + shift] = size == 1 ? 0 : own[d];
    }
    std::optional<uint64_t> src = fp32Source(value);
    if (!src)
      return std::nullopt;
    size_t at = place("broadcast_" + std::to_string(tensors.size()), "scratch",
                      sim::NumberFormat::F32, type.getShape());
    sim::CopyStep step;
    step.shape.assign(type.getShape().begin(), type.getShape().end());
    step.srcStrides.assign(strides.begin(), strides.end());
    SmallVector<int64_t> dst = rowMajor(type.getShape());
    step.dstStrides.assign(dst.begin(), dst.end());
    step.src = *src;
    step.dst = tensors[at].offset;
    if (sim::appendCopyStep(*config, step, instructions))
      return std::nullopt;
    return tensors[at].offset;
  }

  /// Copies a strided view into (part of) a placed tensor.
  LogicalResult copy(Operation *op, uint64_t src, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> srcStrides, size_t to,
                     uint64_t dstOffset, ArrayRef<int64_t> dstStrides) {
    sim::CopyStep step;
    step.shape.assign(shape.begin(), shape.end());
    step.srcStrides.assign(srcStrides.begin(), srcStrides.end());
    step.dstStrides.assign(dstStrides.begin(), dstStrides.end());
    step.src = src;
    step.dst = tensors[to].offset + dstOffset;
    step.dstFormat = tensors[to].format;
    if (auto why = sim::appendCopyStep(*config, step, instructions)) {
      op->emitError() << *why;
      return failure();
    }
    return success();
  }

  /// Transposes, slices, concatenations, broadcasts and gathers of one
  /// constant index as strided copies; a convolution without padding as
  /// an im2col copy, a GEMM and a transposing copy.
  LogicalResult lowerDataMovement(Operation *op) {
    auto error = [&](const Twine &why) {
      op->emitError() << "'" << op->getName() << "' " << why;
      return failure();
    };
    Value result = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return error("needs a static f32 result on the systolic target");
    if (auto concat = dyn_cast<ts::ConcatOp>(op)) {
      auto axis = static_cast<int64_t>(concat.getAxis());
      if (axis < 0)
        axis += type.getRank();
      size_t to = placeResult(op, result);
      SmallVector<int64_t> dst = rowMajor(type.getShape());
      int64_t offset = 0;
      for (Value input : concat.getInputs()) {
        auto it = cast<RankedTensorType>(input.getType());
        std::optional<uint64_t> src = fp32Source(input);
        if (!src)
          return error("reads a value the accelerator does not hold");
        if (failed(copy(op, *src, it.getShape(), rowMajor(it.getShape()), to,
                        uint64_t(offset * dst[axis]) *
                            sim::formatBytes(tensors[to].format),
                        dst)))
          return failure();
        offset += it.getDimSize(axis);
      }
      return success();
    }
    if (auto conv = dyn_cast<ts::Conv2dOp>(op))
      return lowerConv(conv);
    Value input = op->getOperand(0);
    auto inType = cast<RankedTensorType>(input.getType());
    if (!inType.hasStaticShape())
      return error("needs a static input on the systolic target");
    SmallVector<int64_t> in = rowMajor(inType.getShape());
    int64_t offset = 0;
    SmallVector<int64_t> strides;
    if (auto transpose = dyn_cast<ts::TransposeOp>(op)) {
      for (int64_t d : transpose.getPermutation())
        strides.push_back(in[d]);
    } else if (auto slice = dyn_cast<ts::SliceOp>(op)) {
      strides.assign(in.begin(), in.end());
      ArrayRef<int64_t> starts = slice.getStarts();
      SmallVector<int64_t> axes, steps;
      for (size_t i = 0; i < starts.size(); ++i) {
        axes.push_back(slice.getAxes() ? (*slice.getAxes())[i] : int64_t(i));
        steps.push_back(slice.getSteps() ? (*slice.getSteps())[i] : 1);
      }
      for (size_t i = 0; i < starts.size(); ++i) {
        int64_t axis = axes[i] < 0 ? axes[i] + inType.getRank() : axes[i];
        int64_t size = inType.getDimSize(axis), start = starts[i];
        if (steps[i] <= 0)
          return error("with a negative step is not supported on the "
                       "systolic target");
        if (start < 0)
          start += size;
        start = std::clamp<int64_t>(start, 0, size);
        offset += start * in[axis];
        strides[axis] = in[axis] * steps[i];
      }
    } else if (auto gather = dyn_cast<ts::GatherOp>(op)) {
      auto index = gather.getIndices().getDefiningOp<ts::ConstantOp>();
      auto indexAttr =
          index ? dyn_cast<DenseElementsAttr>(index.getValue()) : nullptr;
      if (!indexAttr || indexAttr.getNumElements() != 1 ||
          cast<RankedTensorType>(gather.getIndices().getType()).getRank() != 0)
        return error("gathers only one constant index on the systolic "
                     "target");
      auto axis = static_cast<int64_t>(gather.getAxis());
      if (axis < 0)
        axis += inType.getRank();
      int64_t i = (*indexAttr.getValues<APInt>().begin()).getSExtValue();
      if (i < 0)
        i += inType.getDimSize(axis);
      offset += i * in[axis];
      for (int64_t d = 0; d < inType.getRank(); ++d)
        if (d != axis)
          strides.push_back(in[d]);
    } else if (isa<ts::ExpandOp>(op)) {
      int64_t shift = type.getRank() - inType.getRank();
      strides.assign(type.getRank(), 0);
      for (int64_t d = 0; d < inType.getRank(); ++d)
        strides[d + shift] = inType.getDimSize(d) == 1 ? 0 : in[d];
    }
    std::optional<uint64_t> src = fp32Source(input);
    if (!src)
      return error("reads a value the accelerator does not hold");
    size_t to = placeResult(op, result);
    return copy(op, *src + uint64_t(offset) * 4, type.getShape(), strides, to,
                0, rowMajor(type.getShape()));
  }

  /// A gather along axis 0 with indices computed at run time (an
  /// embedding lookup of token ids): the gather instruction.
  LogicalResult lookup(ts::GatherOp gather, uint64_t indices) {
    auto error = [&](const Twine &why) {
      gather.emitError() << why;
      return failure();
    };
    auto table = cast<RankedTensorType>(gather.getInput().getType());
    auto type = cast<RankedTensorType>(gather.getType());
    if (gather.getAxis() != 0 || !table.hasStaticShape() ||
        !type.hasStaticShape() || !type.getElementType().isF32())
      return error("gathers computed indices along axis 0 of a static f32 "
                   "table only on the systolic target");
    std::optional<uint64_t> src = fp32Source(gather.getInput());
    if (!src)
      return error("reads a table the accelerator does not hold");
    size_t to = placeResult(gather, gather.getResult());
    sim::GatherStep step;
    step.table = *src;
    step.tableRows = table.getDimSize(0);
    step.rowElements = table.getNumElements() / table.getDimSize(0);
    step.count = type.getNumElements() / step.rowElements;
    step.indices = indices;
    step.out = tensors[to].offset;
    step.outFormat = tensors[to].format;
    if (auto why = sim::appendGatherStep(*config, step, instructions))
      return error(*why);
    return success();
  }

  LogicalResult lowerLookup(ts::GatherOp gather) {
    auto it = placed.find(gather.getIndices());
    if (it == placed.end()) {
      gather.emitError("the gather's indices must be an input of the model "
                       "on the systolic target");
      return failure();
    }
    return lookup(gather, tensors[it->second.index].offset);
  }

  /// One GEMM step: A (m x k at `a`) x B (k x n at `b`), both in the
  /// operand format, into C at `c` in `outFormat`.
  /// Whether the accelerator multiplies the float operand format; an
  /// error at `op` when not (an int8-only accelerator needs the model's
  /// matmuls quantized).
  LogicalResult checkOperandFormat(Operation *op) {
    if (config->supports(operandFormat))
      return success();
    op->emitError() << "accelerator '" << config->name
                    << "' has no float operand format '"
                    << sim::formatName(operandFormat)
                    << "' (quantize the model's matmuls to a format it has)";
    return failure();
  }

  /// `step` in the operand format, behind the earlier stores.
  LogicalResult gemm(Operation *op, sim::GemmStep step) {
    if (failed(checkOperandFormat(op)))
      return failure();
    step.format = operandFormat;
    step.fence = true;
    if (auto why = sim::appendGemm(*config, step, instructions)) {
      op->emitError() << *why;
      return failure();
    }
    return success();
  }

  /// A GEMM in the operand format, behind the earlier stores.
  LogicalResult gemm(Operation *op, uint64_t a, uint64_t b, uint64_t c,
                     int64_t m, int64_t n, int64_t k,
                     sim::NumberFormat outFormat,
                     std::optional<uint64_t> bias = std::nullopt) {
    sim::GemmStep step;
    step.shape = {m, n, k};
    step.outFormat = outFormat;
    step.a = a;
    step.b = b;
    step.c = c;
    step.bias = bias;
    return gemm(op, std::move(step));
  }

  /// A matmul whose rhs is computed (attention's products): a batch of
  /// GEMMs, one per batch index, the rhs loaded as weights from DRAM in
  /// the operand format (a transpose_b through a transposing copy first).
  LogicalResult lowerComputedMatmul(ts::MatmulOp matmul,
                                    llvm::DenseSet<Operation *> &done) {
    auto error = [&](const Twine &why) {
      matmul.emitError() << why;
      return failure();
    };
    auto type = cast<RankedTensorType>(matmul.getType());
    auto lt = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rt = cast<RankedTensorType>(matmul.getRhs().getType());
    if (!type.hasStaticShape() || !lt.hasStaticShape() ||
        !rt.hasStaticShape() || lt.getRank() < 2 || rt.getRank() < 2)
      return error("the systolic target needs static matmul operands of "
                   "rank 2 or more");
    if (matmul.getTransposeA())
      return error("transpose_a is not supported on the systolic target "
                   "yet");
    float alpha = matmul.getAlpha().convertToFloat();
    int64_t m = lt.getDimSize(lt.getRank() - 2), k = lt.getShape().back();
    int64_t n = type.getShape().back();
    int64_t batches = type.getNumElements() / (m * n);
    int64_t lhsBatches = lt.getNumElements() / (m * k);
    int64_t rhsBatches = rt.getNumElements() / (k * n);
    if ((lhsBatches != batches && lhsBatches != 1) ||
        (rhsBatches != batches && rhsBatches != 1))
      return error("broadcasts batch dims the systolic target does not "
                   "(each operand has all of them or none)");
    std::optional<Placed> lhs = inFormat(matmul.getLhs(), operandFormat);
    if (!lhs)
      return error("the matmul's lhs must be an input or an earlier result "
                   "on the systolic target");
    uint64_t rhsAt;
    if (matmul.getTransposeB()) {
      std::optional<uint64_t> src = fp32Source(matmul.getRhs());
      if (!src)
        return error("the matmul's rhs must be an earlier result on the "
                     "systolic target");
      // [batch..., n, k] -> [batch..., k, n] in the operand format.
      SmallVector<int64_t> shape(rt.getShape()), in = rowMajor(rt.getShape());
      int64_t r = rt.getRank();
      std::swap(shape[r - 1], shape[r - 2]);
      SmallVector<int64_t> strides(in);
      std::swap(strides[r - 1], strides[r - 2]);
      size_t to = place("matmul_rhs_" + std::to_string(tensors.size()),
                        "scratch", operandFormat, shape);
      if (failed(copy(matmul, *src, shape, strides, to, 0, rowMajor(shape))))
        return failure();
      rhsAt = tensors[to].offset;
    } else {
      std::optional<Placed> rhs = inFormat(matmul.getRhs(), operandFormat);
      if (!rhs)
        return error("the matmul's rhs must be an earlier result on the "
                     "systolic target");
      rhsAt = tensors[rhs->index].offset;
    }
    // The scale (attention's 1/sqrt(d)) in the drain, and the ops that
    // follow (the mask, the softmax) in the epilogue, on chip.
    sim::GemmStep step;
    step.shape = {m, n, k};
    step.batch = batches;
    if (alpha != 1.0f)
      step.scale = alpha;
    Value result = attachEpilogue(step, matmul.getResult(), done);
    Operation *last = result.getDefiningOp();
    size_t to = placeResult(last, result);
    step.outFormat = tensors[to].format;
    if (step.epilogue)
      step.epilogue->outFormat = step.outFormat;
    int64_t size = sim::formatBytes(operandFormat);
    int64_t outSize = sim::formatBytes(step.outFormat);
    // The batch's GEMMs are independent: one schedule, no fences between.
    step.a = tensors[lhs->index].offset;
    step.b = rhsAt;
    step.c = tensors[to].offset;
    step.aStride = uint64_t(lhsBatches == 1 ? 0 : m * k * size);
    step.bStride = uint64_t(rhsBatches == 1 ? 0 : k * n * size);
    step.cStride = uint64_t(m * n * outSize);
    if (failed(gemm(matmul, std::move(step))))
      return failure();
    return success();
  }

  /// conv2d (one group, no padding, no dilation) as an im2col copy into an
  /// [N*OH*OW, C*KH*KW] matrix, a GEMM with the filter as a constant
  /// [C*KH*KW, F] matrix (bias in the drain), and a copy to [N, F, OH, OW].
  LogicalResult lowerConv(ts::Conv2dOp conv) {
    auto error = [&](const Twine &why) {
      conv.emitError() << why;
      return failure();
    };
    auto in = cast<RankedTensorType>(conv.getInput().getType());
    auto type = cast<RankedTensorType>(conv.getType());
    auto filter = conv.getFilter().getDefiningOp<ts::ConstantOp>();
    if (!filter || !in.hasStaticShape())
      return error("the systolic target needs a constant filter and a "
                   "static input");
    if (conv.getGroup() != 1 ||
        llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
        llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
      return error("runs on the systolic target without groups, padding "
                   "or dilation only");
    std::optional<std::vector<float>> w =
        ::tessera::floatValues(filter.getValue());
    std::optional<uint64_t> src = fp32Source(conv.getInput());
    if (!w || !src)
      return error("reads values the accelerator does not hold");
    auto ft = cast<RankedTensorType>(filter.getType());
    int64_t batch = in.getDimSize(0), c = in.getDimSize(1),
            h = in.getDimSize(2), wd = in.getDimSize(3);
    int64_t f = ft.getDimSize(0), kh = ft.getDimSize(2), kw = ft.getDimSize(3);
    int64_t oh = type.getDimSize(2), ow = type.getDimSize(3);
    ArrayRef<int64_t> stride = conv.getStrides();
    int64_t depth = c * kh * kw, rows = batch * oh * ow;
    std::string base = ts::onnxNodeName(conv.getLoc());
    if (base.empty())
      base = "conv_" + std::to_string(tensors.size());
    size_t cols =
        place(base + "/im2col", "scratch", operandFormat, {rows, depth});
    if (failed(copy(conv, *src, {batch, oh, ow, c, kh, kw},
                    {c * h * wd, stride[0] * wd, stride[1], h * wd, wd, 1},
                    cols, 0, rowMajor({batch, oh, ow, c, kh, kw}))))
      return failure();
    std::vector<float> weights(size_t(depth * f));
    for (int64_t r = 0; r < depth; ++r)
      for (int64_t j = 0; j < f; ++j)
        weights[r * f + j] = (*w)[j * depth + r];
    size_t filterAt =
        place(base + "/weights", "constant", operandFormat, {depth, f},
              DenseElementsAttr::get(
                  RankedTensorType::get({depth, f},
                                        Float32Type::get(conv.getContext())),
                  ArrayRef<float>(weights)));
    std::optional<uint64_t> bias;
    if (Value b = conv.getBias()) {
      std::optional<std::vector<float>> values = constantValues(b);
      if (!values || int64_t(values->size()) != f)
        return error("the systolic target needs a constant bias per filter");
      bias = tensors[placeConstant(b, *values)].offset;
    }
    size_t product =
        place(base + "/product", "scratch", sim::NumberFormat::F32, {rows, f});
    if (failed(gemm(conv, tensors[cols].offset, tensors[filterAt].offset,
                    tensors[product].offset, rows, f, depth,
                    sim::NumberFormat::F32, bias)))
      return failure();
    // [N, OH*OW, F] -> [N, F, OH, OW].
    size_t to = placeResult(conv, conv.getResult());
    return copy(conv, tensors[product].offset, {batch, f, oh, ow},
                {oh * ow * f, 1, ow * f, f}, to, 0,
                rowMajor({batch, f, oh, ow}));
  }

  /// One step of one vector function over the rows x cols fp32 tensor at
  /// `src` (with `immediate` for a binary one or quantize), into `out` in
  /// `outFormat`.
  std::optional<std::string> mapStep(uint64_t src, int64_t rows, int64_t cols,
                                     sim::VectorFn fn,
                                     std::optional<float> immediate,
                                     uint64_t out,
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
    return sim::appendVectorStep(*config, step, instructions);
  }

  /// `value` (fp32) divided by `scale` and converted to `format` (i8 or
  /// fp8) on the vector unit, as a new scratch tensor.
  std::optional<Placed> quantizeInput(Operation *op, Value value, float scale,
                                      sim::NumberFormat format) {
    std::optional<Placed> at = inFormat(value, sim::NumberFormat::F32);
    if (!at)
      return std::nullopt;
    size_t to = place(tensors[at->index].name + "/" + sim::formatName(format),
                      "scratch", format, tensors[at->index].shape);
    if (auto why = mapStep(tensors[at->index].offset, at->rows, at->cols,
                           sim::VectorFn::Quantize, scale, tensors[to].offset,
                           format)) {
      op->emitError() << *why;
      return std::nullopt;
    }
    return Placed{to, at->rows, at->cols};
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
    if (mapStep(tensors[at.index].offset, at.rows, at.cols, sim::VectorFn::Copy,
                std::nullopt, tensors[to].offset, format))
      return std::nullopt;
    Placed result{to, at.rows, at.cols};
    converted[value] = result;
    return result;
  }

  /// Lowers an elementwise op, softmax, layer_norm or rms_norm to one
  /// vector step over the result viewed as rows x cols.
  /// Lowers a chain of vector ops as one step: each op whose result only
  /// the next one reads (and that is not a model output) hands it over in
  /// the unified buffer, so the chain's intermediates stay on chip (a
  /// layer norm and its GELU, a residual add and its softmax). An op joins
  /// when its rows x columns view is the chain's and every other operand
  /// is already in memory or constant.
  LogicalResult lowerVectorChain(Operation *first,
                                 llvm::DenseSet<Operation *> &done) {
    sim::VectorStep step;
    llvm::DenseMap<Value, int> onChip;
    FailureOr<int> out = appendVectorOps(first, step, onChip, true);
    if (failed(out))
      return failure();
    int slot = *out;
    Value last =
        extendVectorChain(first->getResult(0), step, onChip, slot, done,
                          [](const sim::VectorStep &, int) { return true; });
    return finishVectorStep(last.getDefiningOp(), step, slot);
  }

  /// Extends a vector step whose latest result `last` is in slot `out`
  /// by the ops that follow it: each the only user of the previous result
  /// (not a model output), in the same block, its other operands on chip,
  /// in memory or constant, and `accept`ed once appended (a trial on a
  /// copy: an op that does not fit leaves the step as it is and reports
  /// its own errors when lowered on its own). Fused ops go in `done`;
  /// returns the last result in the step.
  Value extendVectorChain(
      Value last, sim::VectorStep &step, llvm::DenseMap<Value, int> &onChip,
      int &out, llvm::DenseSet<Operation *> &done,
      llvm::function_ref<bool(const sim::VectorStep &, int)> accept) {
    onChip[last] = out;
    while (last.hasOneUse() && !outputs.count(last)) {
      Operation *next = *last.getUsers().begin();
      if (next->getBlock() != last.getParentBlock() || !isVectorOp(next) ||
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

  static bool isVectorOp(Operation *op) {
    return unaryFn(op) || binaryFn(op) ||
           isa<ts::SoftmaxOp, ts::LayerNormOp, ts::RmsNormOp>(op);
  }

  /// Stores the chain's last result from slot `out`.
  LogicalResult finishVectorStep(Operation *op, sim::VectorStep &step,
                                 int out) {
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    // Where the result goes: an output (fp32), or scratch in fp32, or in
    // the operand format when only matmuls read it.
    step.output = out;
    auto named = outputs.find(result);
    bool isOutput = named != outputs.end();
    step.outFormat = !isOutput && onlyMatmulOperands(result)
                         ? operandFormat
                         : sim::NumberFormat::F32;
    std::string base = ts::onnxNodeName(op->getLoc());
    if (base.empty())
      base = op->getName().stripDialect().str() + "_" +
             std::to_string(tensors.size());
    size_t at =
        place(isOutput ? named->second : base + "/result",
              isOutput ? "output" : "scratch", step.outFormat, type.getShape());
    step.out = tensors[at].offset;
    if (auto why = sim::appendVectorStep(*config, step, instructions)) {
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
  FailureOr<int> appendVectorOps(Operation *op, sim::VectorStep &step,
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
};
} // namespace
