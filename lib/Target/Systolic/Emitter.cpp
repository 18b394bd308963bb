//===- SystolicEmitter.cpp - systolic programs between IR and instructions ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Systolic/Emitter.h"
#include "tessera/Sim/Simulator.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
namespace sim = ::tessera::sim;

std::optional<std::vector<float>> tessera::floatValues(ElementsAttr value) {
  auto type = cast<ShapedType>(value.getType());
  if (!type.getElementType().isF32())
    return std::nullopt;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(value)) {
    std::vector<float> out;
    out.reserve(type.getNumElements());
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(v.convertToFloat());
    return out;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob ||
        blob->getData().size() != size_t(type.getNumElements()) * sizeof(float))
      return std::nullopt;
    std::vector<float> out(type.getNumElements());
    std::memcpy(out.data(), blob->getData().data(), blob->getData().size());
    return out;
  }
  return std::nullopt;
}

namespace {
/// The fp32 bits of an instruction field holding a float.
float floatField(uint64_t bits) {
  uint32_t word = static_cast<uint32_t>(bits);
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
} // namespace

Operation *tessera::buildInstructionOp(OpBuilder &b, Location loc,
                                       const sim::Instruction &i) {
  auto i64 = [&](uint64_t v) { return static_cast<int64_t>(v); };
  auto format = [&] {
    return TypeAttr::get(systolic::getFormatType(b.getContext(), i.format));
  };
  int64_t wait = i.waitMask, signal = i.signalMask;
  switch (i.opcode) {
  case sim::Opcode::Load:
    return systolic::LoadOp::create(
        b, loc,
        (i.flags & 1) ? systolic::Buffer::Weights : systolic::Buffer::Unified,
        i64(i.dram), i64(i.a), i64(i.rows), i64(i.c), i64(i.b), wait, signal,
        (i.flags & sim::kLoadFence) != 0);
  case sim::Opcode::Store:
    return systolic::StoreOp::create(b, loc, i64(i.dram), i64(i.a),
                                     i64(i.rows), i64(i.c), i64(i.b), wait,
                                     signal);
  case sim::Opcode::Matmul:
    return systolic::MatmulOp::create(
        b, loc, format().getValue(), i64(i.a), i64(i.b), i64(i.c), i64(i.rows),
        i64(i.depth), i64(i.cols), (i.flags & 1) != 0, wait, signal);
  case sim::Opcode::Drain: {
    bool scaled = (i.flags & sim::kDrainScale) ||
                  (i.format == sim::NumberFormat::I8 && i.c != 0);
    return systolic::DrainOp::create(
        b, loc, format().getValue(), i64(i.a), i64(i.b), i64(i.rows),
        i64(i.cols),
        (i.flags & sim::kDrainBias) ? b.getI64IntegerAttr(i64(i.dram))
                                    : IntegerAttr(),
        (i.flags & sim::kDrainRelu) != 0,
        scaled ? b.getF32FloatAttr(floatField(i.c)) : FloatAttr(),
        (i.flags & sim::kDrainInt32) != 0, wait, signal);
  }
  case sim::Opcode::Gather:
    return systolic::GatherOp::create(
        b, loc, i64(i.dram), i64(i.a), i64(i.b), i64(i.rows), i64(i.c),
        i64(uint64_t(i.cols) + 65536 * uint64_t(i.depth)),
        (i.flags & sim::kLoadFence) != 0, wait, signal);
  case sim::Opcode::Vector: {
    auto fn = static_cast<systolic::VectorFn>(i.depth);
    systolic::OperandModeAttr mode;
    IntegerAttr src2;
    FloatAttr imm;
    if (fn == systolic::VectorFn::Quantize)
      imm = b.getF32FloatAttr(floatField(i.dram));
    if (sim::isBinary(static_cast<sim::VectorFn>(i.depth))) {
      auto m = static_cast<systolic::OperandMode>(i.flags & 3);
      mode = systolic::OperandModeAttr::get(b.getContext(), m);
      if (m == systolic::OperandMode::Immediate)
        imm = b.getF32FloatAttr(floatField(i.dram));
      else
        src2 = b.getI64IntegerAttr(i64(i.b));
    }
    return systolic::VectorOp::create(
        b, loc, systolic::VectorFnAttr::get(b.getContext(), fn), format(),
        b.getI64IntegerAttr(i64(i.a)), b.getI64IntegerAttr(i64(i.c)),
        b.getI64IntegerAttr(i64(i.rows)), b.getI64IntegerAttr(i64(i.cols)),
        mode, src2, imm, b.getI64IntegerAttr(wait),
        b.getI64IntegerAttr(signal));
  }
  }
  llvm_unreachable("unknown opcode");
}

namespace {

/// The instruction an op of the program is (its verifier has checked its
/// fields).
sim::Instruction toInstruction(Operation &op) {
  sim::Instruction i;
  auto formatOf = [](Type type) { return *systolic::getNumberFormat(type); };
  auto masks = [&](auto typed) {
    i.waitMask = static_cast<uint8_t>(typed.getWait());
    i.signalMask = static_cast<uint8_t>(typed.getSignal());
  };
  if (auto load = dyn_cast<systolic::LoadOp>(op)) {
    masks(load);
    i.opcode = sim::Opcode::Load;
    i.flags = (load.getBuffer() == systolic::Buffer::Weights ? 1 : 0) |
              (load.getFence() ? sim::kLoadFence : 0);
    i.dram = load.getDram();
    i.a = load.getSram();
    i.rows = load.getRows();
    i.c = load.getRowBytes();
    i.b = load.getStride();
  } else if (auto store = dyn_cast<systolic::StoreOp>(op)) {
    masks(store);
    i.opcode = sim::Opcode::Store;
    i.dram = store.getDram();
    i.a = store.getSram();
    i.rows = store.getRows();
    i.c = store.getRowBytes();
    i.b = store.getStride();
  } else if (auto matmul = dyn_cast<systolic::MatmulOp>(op)) {
    masks(matmul);
    i.opcode = sim::Opcode::Matmul;
    i.format = formatOf(matmul.getFormat());
    i.a = matmul.getWeights();
    i.b = matmul.getActivations();
    i.c = matmul.getAccRow();
    i.rows = matmul.getRows();
    i.depth = matmul.getDepth();
    i.cols = matmul.getCols();
    i.flags = matmul.getAccumulate() ? 1 : 0;
  } else if (auto drain = dyn_cast<systolic::DrainOp>(op)) {
    masks(drain);
    i.opcode = sim::Opcode::Drain;
    i.format = formatOf(drain.getFormat());
    i.a = drain.getAccRow();
    i.b = drain.getSram();
    i.rows = drain.getRows();
    i.cols = drain.getCols();
    if (std::optional<uint64_t> bias = drain.getBias()) {
      i.flags |= sim::kDrainBias;
      i.dram = *bias;
    }
    if (drain.getRelu())
      i.flags |= sim::kDrainRelu;
    if (drain.getInt32())
      i.flags |= sim::kDrainInt32;
    if (std::optional<APFloat> scale = drain.getScale()) {
      i.c = floatBits(scale->convertToFloat());
      if (i.format != sim::NumberFormat::I8)
        i.flags |= sim::kDrainScale;
    }
  } else if (auto gather = dyn_cast<systolic::GatherOp>(op)) {
    masks(gather);
    i.opcode = sim::Opcode::Gather;
    i.flags = gather.getFence() ? sim::kLoadFence : 0;
    i.dram = gather.getDram();
    i.a = gather.getSram();
    i.b = gather.getIndices();
    i.rows = gather.getRows();
    i.c = gather.getRowBytes();
    uint64_t tableRows = gather.getTableRows();
    i.cols = static_cast<uint32_t>(tableRows % 65536);
    i.depth = static_cast<uint32_t>(tableRows / 65536);
  } else {
    auto vector = cast<systolic::VectorOp>(op);
    masks(vector);
    i.opcode = sim::Opcode::Vector;
    i.format = formatOf(vector.getFormat());
    i.depth = static_cast<uint32_t>(vector.getFn());
    i.a = vector.getSrc();
    i.c = vector.getDst();
    i.rows = vector.getRows();
    i.cols = vector.getCols();
    if (std::optional<systolic::OperandMode> mode = vector.getMode())
      i.flags = static_cast<uint8_t>(*mode);
    if (std::optional<uint64_t> src2 = vector.getSrc2())
      i.b = *src2;
    if (std::optional<APFloat> imm = vector.getImm())
      i.dram = floatBits(imm->convertToFloat());
  }
  return i;
}

} // namespace

FailureOr<sim::Program>
tessera::emitSystolicProgram(ModuleOp module,
                             const sim::AcceleratorConfig &config) {
  auto programs = llvm::to_vector(module.getOps<systolic::ProgramOp>());
  if (programs.size() != 1)
    return module.emitError("expected one systolic.program, found ")
           << programs.size();
  systolic::ProgramOp programOp = programs.front();
  sim::Program program;
  program.dram.resize(static_cast<size_t>(programOp.getDramBytes()));
  for (Operation &op : programOp.getBody().front()) {
    auto tensor = dyn_cast<systolic::TensorOp>(op);
    if (!tensor) {
      program.instructions.push_back(toInstruction(op));
      continue;
    }
    sim::TensorInfo info;
    info.name = tensor.getName().str();
    switch (tensor.getRole()) {
    case systolic::TensorRole::Input:
      info.role = sim::TensorInfo::Role::Input;
      break;
    case systolic::TensorRole::Output:
      info.role = sim::TensorInfo::Role::Output;
      break;
    case systolic::TensorRole::Constant:
      info.role = sim::TensorInfo::Role::Constant;
      break;
    case systolic::TensorRole::Scratch:
      info.role = sim::TensorInfo::Role::Scratch;
      break;
    }
    info.format = *systolic::getNumberFormat(tensor.getFormat());
    info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    info.offset = static_cast<uint64_t>(tensor.getOffset());
    if (auto value = tensor.getValue()) {
      std::optional<std::vector<float>> values = floatValues(*value);
      if (!values)
        return tensor.emitError("constant values must be dense f32 data");
      sim::writeTensor(program, info, values->data());
    }
    program.tensors.push_back(std::move(info));
  }
  if (auto error = sim::validateProgram(program, config)) {
    programOp.emitError() << "invalid program for accelerator '"
                          << config.name << "': " << *error;
    return failure();
  }
  return program;
}
