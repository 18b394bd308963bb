//===- TesseraToSystolic.cpp - a model's matmuls as an accelerator program ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Conversion/Passes.h"
#include "tessera/Conversion/SystolicEmitter.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Sim/Simulator.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

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

struct ConvertTesseraToSystolicPass
    : ::tessera::impl::ConvertTesseraToSystolicPassBase<
          ConvertTesseraToSystolicPass> {
  using ConvertTesseraToSystolicPassBase::ConvertTesseraToSystolicPassBase;

  SmallVector<TensorEntry> tensors;
  uint64_t dramBytes = 0;

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
    std::optional<sim::NumberFormat> operandFormat = sim::parseFormat(format);
    if (!operandFormat || *operandFormat == sim::NumberFormat::F32 ||
        *operandFormat == sim::NumberFormat::I8 ||
        !config.supports(*operandFormat)) {
      module.emitError() << "accelerator '" << config.name
                         << "' has no float operand format '" << format
                         << "' (quantized int8 models are not supported yet)";
      return signalPassFailure();
    }

    llvm::DenseMap<Value, Placed> placed;
    std::vector<sim::Instruction> instructions;
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
      placed[arg] = {place(name, "input", *operandFormat, type.getShape()),
                     leadingRows(type), type.getShape().back()};
    }
    // Values the function returns, with their output names.
    auto returnOp = cast<func::ReturnOp>(func.getBody().front().back());
    llvm::DenseMap<Value, std::string> outputs;
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
      auto matmul = dyn_cast<ts::MatmulOp>(op);
      if (!matmul)
        return fail(&op, "cannot run on the systolic target yet: its "
                         "lowering handles matmuls with constant weights "
                         "and their bias and ReLU epilogues");
      if (failed(lowerMatmul(matmul, *operandFormat, config, placed, outputs,
                             done, instructions)))
        return signalPassFailure();
    }
    for (Value value : returnOp.getOperands()) {
      auto it = placed.find(value);
      if (it == placed.end() || tensors[it->second.index].role != "output") {
        returnOp.emitError("each result must be the result of a matmul (an "
                           "input returned as it is is not supported)");
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
    auto lhs = placed.find(matmul.getLhs());
    if (lhs == placed.end())
      return error(matmul, "the matmul's lhs must be an input or an earlier "
                           "matmul's result on the systolic target");
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
    if (lhs->second.cols != k)
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
    step.shape = {lhs->second.rows, n, k};
    step.format = format;
    step.a = tensors[lhs->second.index].offset;
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
    step.outFormat = isOutput ? sim::NumberFormat::F32 : format;
    size_t resultAt = place(isOutput ? out->second : base + "/result",
                            isOutput ? "output" : "scratch", step.outFormat,
                            resultType.getShape());
    step.c = tensors[resultAt].offset;
    placed[result] = {resultAt, step.shape.m, n};
    if (auto why = sim::appendGemm(config, step, instructions))
      return error(matmul, *why);
    return success();
  }
};

} // namespace
