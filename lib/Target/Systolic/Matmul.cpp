//===- Matmul.cpp - matmuls and their epilogues as GEMMs ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

#include "tessera/Target/Systolic/Emitter.h"

using namespace mlir;

namespace tessera::systolic {

/// A per-tensor scale (a constant of one element) with no zero point, or
/// a zero one.
static std::optional<float> perTensorScale(Value scale, Value zeroPoint) {
  std::optional<std::vector<float>> s = symmetricScales(scale, zeroPoint);
  if (!s || s->size() != 1)
    return std::nullopt;
  return s->front();
}

/// The array's format for quantized values of `element`.
static std::optional<sim::NumberFormat> quantizedFormat(Type element) {
  if (element.isInteger(8))
    return sim::NumberFormat::I8;
  if (isa<Float8E4M3FNType>(element))
    return sim::NumberFormat::F8E4M3FN;
  if (isa<Float8E5M2Type>(element))
    return sim::NumberFormat::F8E5M2;
  return std::nullopt;
}

/// `matmul` as tessera-assign-precision quantizes it: quantize(x) times
/// an i8 constant into i32, then a dequantize by sx * sw (per tensor or
/// per column); or quantize(x) times an fp8 constant into f32, scaled by
/// alpha = sx * sw. The weights untransposed (the caller transposes).
static std::optional<QuantizedMatmul> matchNarrowed(ts::MatmulOp matmul) {
  auto q = matmul.getLhs().getDefiningOp<ts::QuantizeOp>();
  auto w = matmul.getRhs().getDefiningOp<ts::ConstantOp>();
  if (!q || !w || matmul.getTransposeA())
    return std::nullopt;
  Type element = q.getType().getElementType();
  std::optional<sim::NumberFormat> format = quantizedFormat(element);
  auto wType = cast<RankedTensorType>(w.getType());
  std::optional<float> sx = perTensorScale(q.getScale(), q.getZeroPoint());
  std::optional<std::vector<float>> values = narrowValues(w.getResult());
  if (!format || wType.getElementType() != element || wType.getRank() != 2 ||
      !sx || !(*sx > 0) || !values)
    return std::nullopt;
  QuantizedMatmul match{*format, q.getInput(), *sx, {}, std::move(*values),
                        q,       {},           {},  {}};
  Type result = matmul.getType().getElementType();
  if (result.isF32() && *format != sim::NumberFormat::I8) {
    // fp8: alpha holds sx * sw; the drain multiplies by alpha * sx * sw.
    match.weightScales = {1.0f / *sx};
    return match;
  }
  if (!result.isInteger(32) || !matmul.getResult().hasOneUse())
    return std::nullopt;
  auto dq = dyn_cast<ts::DequantizeOp>(*matmul.getResult().getUsers().begin());
  int64_t n = wType.getDimSize(matmul.getTransposeB() ? 0 : 1);
  std::optional<std::vector<float>> scales =
      dq ? symmetricScales(dq.getScale(), dq.getZeroPoint(), n) : std::nullopt;
  if (!scales || !dq.getType().getElementType().isF32())
    return std::nullopt;
  if (scales->size() != 1) {
    int64_t rank = dq.getType().getRank();
    int64_t axis = dq.getAxis() ? int64_t(*dq.getAxis()) : 1;
    if ((axis < 0 ? axis + rank : axis) != rank - 1)
      return std::nullopt;
  }
  for (float &scale : *scales)
    scale /= *sx;
  match.weightScales = std::move(*scales);
  match.resultDequantize = dq;
  return match;
}

std::optional<QuantizedMatmul> matchQuantized(ts::MatmulOp matmul) {
  if (std::optional<QuantizedMatmul> narrowed = matchNarrowed(matmul))
    return narrowed;
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
  std::optional<sim::NumberFormat> format = quantizedFormat(element);
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
  std::optional<std::vector<float>> w = narrowValues(dw.getInput());
  if (!format || !sx || !sq || *sx != *sq || !sw || !w)
    return std::nullopt;
  return QuantizedMatmul{
      *format, q.getInput(), *sx, std::move(*sw), std::move(*w), q, dq, dw, {}};
}

/// A matmul with constant weights (transposed at compile time for
/// transpose_b), or of quantized operands (`quant`), as a GEMM step; its
/// bias add and ReLU go in the drain, the vector ops after them in the
/// epilogue.
LogicalResult Lowering::lowerMatmul(ts::MatmulOp matmul,
                                    const QuantizedMatmul *quant) {
  sim::NumberFormat format = sim::NumberFormat::F32;
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
    auto [it, inserted] = quantizedInputs.try_emplace(quant->quantize);
    if (inserted) {
      lhs = quantizeInput(matmul, quant->input, quant->inputScale, format);
      if (lhs)
        it->second = *lhs;
      else
        quantizedInputs.erase(it);
    } else {
      lhs = it->second;
    }
    values = quant->weights;
  } else {
    FailureOr<sim::NumberFormat> operands = operandFormatOf(matmul);
    if (failed(operands))
      return failure();
    format = *operands;
    lhs = matmul.getTransposeA()
              ? transposedLhs(matmul, format)
              : inFormat(castSource(matmul.getLhs()), format);
    auto weights = castSource(matmul.getRhs()).getDefiningOp<ts::ConstantOp>();
    if (!weights || rhsType.getRank() != 2)
      return error(matmul, "the systolic target needs constant 2-D weights");
    values = ::tessera::floatValues(weights.getValue());
    if (!values)
      values = narrowValues(weights.getResult());
    if (!values)
      return error(matmul, "the weights must be f32, bf16, f16 or fp8 "
                           "constants");
  }
  if (!lhs)
    return error(matmul, "the matmul's lhs must be an input or an earlier "
                         "result on the systolic target");
  if (quant && matmul.getTransposeA())
    return error(matmul, "transpose_a of a quantized matmul is not "
                         "supported on the systolic target yet");
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
      place(base + "/weights", Role::Constant, format, {k, n}, weightValue);

  // The epilogue: a bias row, then ReLU, each the only user.
  sim::GemmStep step;
  step.shape = {lhs->rows, n, k};
  step.format = format;
  // Dequantization in the drain; per-column weight scales multiply each
  // block in the epilogue (before any bias, which then joins the
  // epilogue too).
  std::optional<uint64_t> columnScales;
  // alpha scales the product in the drain, before the bias (ONNX Gemm's
  // alpha * A * B + C); with quantized operands, with the dequantization.
  float alpha = matmul.getAlpha().convertToFloat();
  if (alpha != 1.0f)
    step.scale = alpha;
  if (quant && quant->weightScales.size() == 1)
    step.scale = alpha * (quant->inputScale * quant->weightScales.front());
  else if (quant) {
    step.scale = alpha * quant->inputScale;
    auto scalesValue = DenseElementsAttr::get(
        RankedTensorType::get({n}, weightType.getElementType()),
        ArrayRef<float>(quant->weightScales));
    columnScales = tensors[place(base + "/scales", Role::Constant,
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
  // int8's i32 product: the drain dequantizes it, so the GEMM's result
  // is the dequantize's.
  if (quant && quant->resultDequantize) {
    ts::DequantizeOp dequantize = quant->resultDequantize;
    done.insert(dequantize);
    result = dequantize.getResult();
  }
  // The graph's epilogue region says what fuses: a bias add and a ReLU
  // that follow the product in it run in the drain.
  if (result.hasOneUse() && !columnScales &&
      sameRegion(matmul, *result.getUsers().begin()))
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
        size_t biasAt = place(base + "/bias", Role::Constant,
                              sim::NumberFormat::F32, {n}, biasValue);
        step.bias = tensors[biasAt].offset;
        done.insert(add);
        result = add.getResult();
      }
    }
  if (result.hasOneUse() && !columnScales &&
      sameRegion(matmul, *result.getUsers().begin()))
    if (auto relu = dyn_cast<ts::ReluOp>(*result.getUsers().begin())) {
      step.relu = true;
      done.insert(relu);
      result = relu.getResult();
    }
  Value product = result;
  result = attachEpilogue(matmul, step, result, columnScales);
  auto resultType = cast<RankedTensorType>(result.getType());
  auto out = outputs.find(result);
  bool isOutput = out != outputs.end();
  if (isOutput && !result.hasOneUse())
    return error(result.getDefiningOp(),
                 "a result returned and also used by another op is not "
                 "supported on the systolic target yet");
  step.outFormat =
      isOutput || (quant && result == product)
          ? sim::NumberFormat::F32
          : matmulOnlyFormat(result).value_or(sim::NumberFormat::F32);
  if (step.epilogue) {
    step.epilogue->outFormat = step.outFormat;
    std::string last = ts::onnxNodeName(result.getLoc());
    if (!last.empty())
      base = last;
  }
  size_t resultAt = place(isOutput ? out->second : base + "/result",
                          isOutput ? Role::Output : Role::Scratch, step.outFormat,
                          resultType.getShape());
  step.c = tensors[resultAt].offset;
  placed[result] = {resultAt, step.shape.m, n};
  if (auto why = sim::appendGemm(config, step, instructions))
    return error(matmul, *why);
  return success();
}

/// Fuses the vector ops that follow a GEMM's `result` in the graph's
/// epilogue region (what the accelerator fuses, its TargetInfo says) into
/// the GEMM's epilogue: each op the only user of the previous result and
/// not a model output,
/// its other operands already in memory or constant, its view the
/// GEMM's outputs (batch * M rows x N columns), and row reductions
/// (softmax, norms) only while N fits the array's columns. The products
/// stay on chip and only the last result goes to DRAM. With
/// `columnScales` (fp32, one per column, in DRAM) the epilogue first
/// multiplies the product by them (per-channel dequantization). Returns
/// the last fused value (`result` when nothing fuses).
Value Lowering::attachEpilogue(Operation *contraction, sim::GemmStep &step,
                               Value result,
                               std::optional<uint64_t> columnScales) {
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
      contraction, result, epilogue, onChip, out,
      [&](const sim::VectorStep &trial, int joined) {
        return trial.rows == rows && trial.cols == cols &&
               trial.slots[joined].shape == Shape::Full &&
               (cols <= config.array.cols ||
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

/// The format the IR gives `op`'s operands: both cast from fp32 to the
/// same bf16, f16 or fp8 format (the operand-format policy, later the
/// precision passes). An error at `op` when they are not, or when the
/// accelerator does not multiply that format (an int8-only accelerator
/// needs the model's matmuls quantized).
FailureOr<sim::NumberFormat> Lowering::operandFormatOf(Operation *op) {
  std::optional<sim::NumberFormat> lhs = castFormat(op->getOperand(0));
  std::optional<sim::NumberFormat> rhs = castFormat(op->getOperand(1));
  if (!lhs || lhs != rhs) {
    op->emitError() << "the systolic array multiplies bf16, f16 or fp8 "
                       "operands: cast this op's fp32 operands to one of "
                       "them (tessera-systolic-operand-formats does)";
    return failure();
  }
  if (!config.supports(*lhs)) {
    op->emitError()
        << "accelerator '" << config.name << "' has no float operand format '"
        << sim::formatName(*lhs)
        << "' (give --precision one it has: int8 and fp8 quantize "
           "the matmuls, --quantize-heads and --quantize-first-layers "
           "the output heads and first layers too)";
    return failure();
  }
  return *lhs;
}

/// `step` in `format`, behind the earlier stores.
LogicalResult Lowering::gemm(Operation *op, sim::NumberFormat format,
                             sim::GemmStep step) {
  step.format = format;
  step.fence = true;
  if (auto why = sim::appendGemm(config, step, instructions)) {
    op->emitError() << *why;
    return failure();
  }
  return success();
}

/// A GEMM in `format`, behind the earlier stores.
LogicalResult Lowering::gemm(Operation *op, sim::NumberFormat format,
                             uint64_t a, uint64_t b, uint64_t c, int64_t m,
                             int64_t n, int64_t k,
                             sim::NumberFormat outFormat,
                             std::optional<uint64_t> bias) {
  sim::GemmStep step;
  step.shape = {m, n, k};
  step.outFormat = outFormat;
  step.a = a;
  step.b = b;
  step.c = c;
  step.bias = bias;
  return gemm(op, format, std::move(step));
}

/// A matmul whose rhs is computed (attention's products): a batch of
/// GEMMs, one per batch index, the rhs loaded as weights from DRAM in
/// the operand format (a transpose_b through a transposing copy first).
LogicalResult Lowering::lowerComputedMatmul(ts::MatmulOp matmul) {
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
  bool ta = matmul.getTransposeA();
  float alpha = matmul.getAlpha().convertToFloat();
  int64_t m = lt.getDimSize(lt.getRank() - (ta ? 1 : 2));
  int64_t k = lt.getDimSize(lt.getRank() - (ta ? 2 : 1));
  int64_t n = type.getShape().back();
  int64_t batches = type.getNumElements() / (m * n);
  int64_t lhsBatches = lt.getNumElements() / (m * k);
  int64_t rhsBatches = rt.getNumElements() / (k * n);
  if ((lhsBatches != batches && lhsBatches != 1) ||
      (rhsBatches != batches && rhsBatches != 1))
    return error("broadcasts batch dims the systolic target does not "
                 "(each operand has all of them or none)");
  FailureOr<sim::NumberFormat> format = operandFormatOf(matmul);
  if (failed(format))
    return failure();
  std::optional<Placed> lhs =
      ta ? transposedLhs(matmul, *format)
         : inFormat(castSource(matmul.getLhs()), *format);
  if (!lhs)
    return error("the matmul's lhs must be an input or an earlier result "
                 "on the systolic target");
  uint64_t rhsAt;
  if (matmul.getTransposeB()) {
    std::optional<uint64_t> src = fp32Source(castSource(matmul.getRhs()));
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
                      Role::Scratch, *format, shape);
    if (failed(copy(matmul, *src, shape, strides, to, 0, rowMajor(shape))))
      return failure();
    rhsAt = tensors[to].offset;
  } else {
    std::optional<Placed> rhs = inFormat(castSource(matmul.getRhs()), *format);
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
  Value result = attachEpilogue(matmul, step, matmul.getResult());
  Operation *last = result.getDefiningOp();
  size_t to = placeResult(last, result);
  step.outFormat = tensors[to].format;
  if (step.epilogue)
    step.epilogue->outFormat = step.outFormat;
  int64_t size = sim::formatBytes(*format);
  int64_t outSize = sim::formatBytes(step.outFormat);
  // The batch's GEMMs are independent: one schedule, no fences between.
  step.a = tensors[lhs->index].offset;
  step.b = rhsAt;
  step.c = tensors[to].offset;
  step.aStride = uint64_t(lhsBatches == 1 ? 0 : m * k * size);
  step.bStride = uint64_t(rhsBatches == 1 ? 0 : k * n * size);
  step.cStride = uint64_t(m * n * outSize);
  if (failed(gemm(matmul, *format, std::move(step))))
    return failure();
  return success();
}

/// The lhs of a transpose_a matmul ([batch..., k, m]) as a new
/// [batch..., m, k] tensor in `format`: a transposing copy of its fp32
/// value (element by element: the innermost dim moves).
std::optional<Placed> Lowering::transposedLhs(ts::MatmulOp matmul,
                                              sim::NumberFormat format) {
  Value value = castSource(matmul.getLhs());
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape() || type.getRank() < 2)
    return std::nullopt;
  std::optional<uint64_t> src = fp32Source(value);
  if (!src)
    return std::nullopt;
  int64_t r = type.getRank();
  SmallVector<int64_t> shape(type.getShape()), strides = rowMajor(shape);
  std::swap(shape[r - 1], shape[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  std::string base = ts::onnxNodeName(matmul.getLoc());
  if (base.empty())
    base = "matmul_" + std::to_string(tensors.size());
  size_t to = place(base + "/lhs_transposed", Role::Scratch, format, shape);
  if (failed(copy(matmul, *src, shape, strides, to, 0, rowMajor(shape))))
    return std::nullopt;
  return Placed{to, type.getNumElements() / shape[r - 1], shape[r - 1]};
}

/// `value` (fp32) divided by `scale` and converted to `format` (i8 or
/// fp8) on the vector unit, as a new scratch tensor.
std::optional<Placed> Lowering::quantizeInput(Operation *op, Value value,
                                              float scale,
                                              sim::NumberFormat format) {
  std::optional<Placed> at = inFormat(value, sim::NumberFormat::F32);
  if (!at)
    return std::nullopt;
  size_t to = place(tensors[at->index].name + "/" + sim::formatName(format),
                    Role::Scratch, format, tensors[at->index].shape);
  if (auto why = mapStep(tensors[at->index].offset, at->rows, at->cols,
                         sim::VectorFn::Quantize, scale, tensors[to].offset,
                         format)) {
    op->emitError() << *why;
    return std::nullopt;
  }
  return Placed{to, at->rows, at->cols};
}

} // namespace tessera::systolic
