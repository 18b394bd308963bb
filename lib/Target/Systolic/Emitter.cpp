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

Operation *tessera::buildInstructionOp(OpBuilder &b, Location loc,
                                       const sim::Instruction &i) {
  auto i64 = [&](uint64_t v) {
    return b.getI64IntegerAttr(static_cast<int64_t>(v));
  };
  Operation *op = nullptr;
  switch (i.opcode) {
  case sim::Opcode::Load: {
    auto load = systolic::LoadOp::create(
        b, loc, b.getStringAttr((i.flags & 1) ? "weights" : "unified"),
        i64(i.dram), i64(i.a), i64(i.rows), i64(i.c), i64(i.b), i64(0), i64(0),
        (i.flags & sim::kLoadFence) ? b.getUnitAttr() : UnitAttr());
    op = load;
    break;
  }
  case sim::Opcode::Store:
    op = systolic::StoreOp::create(b, loc, i64(i.dram), i64(i.a), i64(i.rows),
                                   i64(i.c), i64(i.b), i64(0), i64(0));
    break;
  case sim::Opcode::Matmul:
    op = systolic::MatmulOp::create(
        b, loc, b.getStringAttr(sim::formatName(i.format)), i64(i.a), i64(i.b),
        i64(i.c), i64(i.rows), i64(i.depth), i64(i.cols),
        (i.flags & 1) ? b.getUnitAttr() : UnitAttr(), i64(0), i64(0));
    break;
  case sim::Opcode::Drain: {
    float scale;
    std::memcpy(&scale, &i.c, 4);
    bool scaled = (i.flags & sim::kDrainScale) ||
                  (i.format == sim::NumberFormat::I8 && i.c != 0);
    op = systolic::DrainOp::create(
        b, loc, b.getStringAttr(sim::formatName(i.format)), i64(i.a), i64(i.b),
        i64(i.rows), i64(i.cols),
        (i.flags & sim::kDrainBias) ? i64(i.dram) : IntegerAttr(),
        (i.flags & sim::kDrainRelu) ? b.getUnitAttr() : UnitAttr(),
        scaled ? b.getF32FloatAttr(scale) : FloatAttr(),
        (i.flags & sim::kDrainInt32) ? b.getUnitAttr() : UnitAttr(), i64(0),
        i64(0));
    break;
  }
  case sim::Opcode::Gather:
    op = systolic::GatherOp::create(
        b, loc, i64(i.dram), i64(i.a), i64(i.b), i64(i.rows), i64(i.c),
        i64(uint64_t(i.cols) + 65536 * uint64_t(i.depth)),
        (i.flags & sim::kLoadFence) ? b.getUnitAttr() : UnitAttr(), i64(0),
        i64(0));
    break;
  case sim::Opcode::Vector: {
    auto fn = static_cast<sim::VectorFn>(i.depth);
    auto mode = static_cast<sim::VectorMode>(i.flags);
    StringAttr modeName;
    IntegerAttr src2;
    FloatAttr imm;
    if (fn == sim::VectorFn::Quantize) {
      float value;
      uint32_t bits = static_cast<uint32_t>(i.dram);
      std::memcpy(&value, &bits, 4);
      imm = b.getF32FloatAttr(value);
    }
    if (sim::isBinary(fn)) {
      static const char *modes[] = {"full", "row", "column", "immediate"};
      modeName = b.getStringAttr(modes[static_cast<int>(mode) & 3]);
      if (mode == sim::VectorMode::Immediate) {
        float value;
        uint32_t bits = static_cast<uint32_t>(i.dram);
        std::memcpy(&value, &bits, 4);
        imm = b.getF32FloatAttr(value);
      } else {
        src2 = i64(i.b);
      }
    }
    op = systolic::VectorOp::create(
        b, loc, b.getStringAttr(sim::vectorFnName(fn)),
        b.getStringAttr(sim::formatName(i.format)), i64(i.a), i64(i.c),
        i64(i.rows), i64(i.cols), modeName, src2, imm, i64(0), i64(0));
    break;
  }
  }
  op->setAttr("wait", i64(i.waitMask));
  op->setAttr("signal", i64(i.signalMask));
  return op;
}

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
  auto fail = [&](Operation *op, const Twine &why) {
    op->emitError(why);
    return failure();
  };
  for (Operation &op : programOp.getBody().front()) {
    if (auto tensor = dyn_cast<systolic::TensorOp>(op)) {
      sim::TensorInfo info;
      info.name = tensor.getName().str();
      StringRef role = tensor.getRole();
      info.role = role == "input"      ? sim::TensorInfo::Role::Input
                  : role == "output"   ? sim::TensorInfo::Role::Output
                  : role == "constant" ? sim::TensorInfo::Role::Constant
                                       : sim::TensorInfo::Role::Scratch;
      info.format = *sim::parseFormat(tensor.getFormat().str());
      info.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
      info.offset = static_cast<uint64_t>(tensor.getOffset());
      if (info.offset + static_cast<uint64_t>(info.bytes()) >
          program.dram.size())
        return fail(tensor, "lies beyond the DRAM image");
      if (auto value = tensor.getValue()) {
        std::optional<std::vector<float>> values = floatValues(*value);
        if (!values)
          return fail(tensor, "constant values must be f32");
        sim::writeTensor(program, info, values->data());
      }
      program.tensors.push_back(std::move(info));
      continue;
    }
    sim::Instruction i;
    auto field = [&](StringRef name) -> uint64_t {
      auto attr = op.getAttrOfType<IntegerAttr>(name);
      return attr ? static_cast<uint64_t>(attr.getInt()) : 0;
    };
    i.waitMask = static_cast<uint8_t>(field("wait"));
    i.signalMask = static_cast<uint8_t>(field("signal"));
    if (auto load = dyn_cast<systolic::LoadOp>(op)) {
      i.opcode = sim::Opcode::Load;
      i.flags = (load.getBuffer() == "weights" ? 1 : 0) |
                (load.getFence() ? sim::kLoadFence : 0);
      i.dram = field("dram");
      i.a = field("sram");
      i.rows = field("rows");
      i.c = field("row_bytes");
      i.b = field("stride");
    } else if (isa<systolic::StoreOp>(op)) {
      i.opcode = sim::Opcode::Store;
      i.dram = field("dram");
      i.a = field("sram");
      i.rows = field("rows");
      i.c = field("row_bytes");
      i.b = field("stride");
    } else if (auto matmul = dyn_cast<systolic::MatmulOp>(op)) {
      i.opcode = sim::Opcode::Matmul;
      i.format = *sim::parseFormat(matmul.getFormat().str());
      i.a = field("weights");
      i.b = field("activations");
      i.c = field("acc_row");
      i.rows = field("rows");
      i.depth = field("depth");
      i.cols = field("cols");
      i.flags = matmul.getAccumulate() ? 1 : 0;
    } else if (auto drain = dyn_cast<systolic::DrainOp>(op)) {
      i.opcode = sim::Opcode::Drain;
      std::optional<sim::NumberFormat> f =
          sim::parseFormat(drain.getFormat().str());
      if (!f)
        return fail(drain, "unknown format");
      i.format = *f;
      i.a = field("acc_row");
      i.b = field("sram");
      i.rows = field("rows");
      i.cols = field("cols");
      if (auto bias = drain.getBias()) {
        i.flags |= sim::kDrainBias;
        i.dram = static_cast<uint64_t>(*bias);
      }
      if (drain.getRelu())
        i.flags |= sim::kDrainRelu;
      if (drain.getInt32())
        i.flags |= sim::kDrainInt32;
      if (auto scale = drain.getScale()) {
        float value = scale->convertToFloat();
        std::memcpy(&i.c, &value, 4);
        if (i.format != sim::NumberFormat::I8)
          i.flags |= sim::kDrainScale;
      }
    } else if (auto gather = dyn_cast<systolic::GatherOp>(op)) {
      i.opcode = sim::Opcode::Gather;
      i.flags = gather.getFence() ? sim::kLoadFence : 0;
      i.dram = field("dram");
      i.a = field("sram");
      i.b = field("indices");
      i.rows = field("rows");
      i.c = field("row_bytes");
      uint64_t tableRows = field("table_rows");
      if (tableRows == 0 || tableRows >= (uint64_t(1) << 32))
        return fail(gather, "table_rows must be in [1, 2^32)");
      i.cols = static_cast<uint32_t>(tableRows % 65536);
      i.depth = static_cast<uint32_t>(tableRows / 65536);
    } else if (auto vector = dyn_cast<systolic::VectorOp>(op)) {
      i.opcode = sim::Opcode::Vector;
      std::optional<sim::VectorFn> fn =
          sim::parseVectorFn(vector.getFn().str());
      if (!fn)
        return fail(vector, "unknown vector function '" + vector.getFn() + "'");
      std::optional<sim::NumberFormat> f =
          sim::parseFormat(vector.getFormat().str());
      if (!f)
        return fail(vector, "unknown format");
      i.format = *f;
      i.depth = static_cast<uint32_t>(*fn);
      i.a = field("src");
      i.c = field("dst");
      i.rows = field("rows");
      i.cols = field("cols");
      if (*fn == sim::VectorFn::Quantize) {
        if (!vector.getImm())
          return fail(vector, "quantize needs its scale as imm");
        float value = vector.getImm()->convertToFloat();
        uint32_t bits;
        std::memcpy(&bits, &value, 4);
        i.dram = bits;
      }
      if (sim::isBinary(*fn)) {
        StringRef mode = vector.getMode() ? *vector.getMode() : "";
        if (mode == "full" || mode == "row" || mode == "column") {
          i.flags = mode == "full" ? 0 : mode == "row" ? 1 : 2;
          if (!vector.getSrc2())
            return fail(vector, "a '" + mode + "' operand needs src2");
          i.b = field("src2");
        } else if (mode == "immediate") {
          if (!vector.getImm())
            return fail(vector, "an immediate operand needs imm");
          i.flags = 3;
          float value = vector.getImm()->convertToFloat();
          uint32_t bits;
          std::memcpy(&bits, &value, 4);
          i.dram = bits;
        } else {
          return fail(vector, "a binary function needs mode full, row, "
                              "column or immediate");
        }
      }
    } else {
      return fail(&op, "is not an instruction of the systolic program");
    }
    program.instructions.push_back(i);
  }
  if (auto error = sim::validateProgram(program, config))
    return fail(programOp, "invalid program for accelerator '" + config.name +
                               "': " + *error);
  return program;
}
