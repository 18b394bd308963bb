//===- SystolicDialect.cpp - the systolic accelerator's program IR --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"
#include "tessera/Dialect/Tessera/IR/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::systolic;
using ::tessera::ElementType;

#include "tessera/Dialect/Systolic/IR/SystolicDialect.cpp.inc"
#include "tessera/Dialect/Systolic/IR/SystolicEnums.cpp.inc"

void SystolicDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Systolic/IR/SystolicOps.cpp.inc"
      >();
}

std::optional<ElementType> mlir::systolic::getNumberFormat(Type type) {
  std::optional<ElementType> format = ::tessera::elementTypeOf(type);
  if (!format || (!::tessera::isFloat(*format) && *format != ElementType::I8))
    return std::nullopt;
  return format;
}

Type mlir::systolic::getFormatType(MLIRContext *context, ElementType format) {
  return ::tessera::toMLIRType(format, context);
}

//===----------------------------------------------------------------------===//
// Verifiers: the instruction set's rules that hold on every accelerator (an
// accelerator's sizes are checked when the program is emitted for it).
//===----------------------------------------------------------------------===//

namespace {
/// The widths of an instruction's fields (docs/Systolic.md): the on-chip
/// addresses a, b, c are 32 bits, rows and depth 16, cols 16.
constexpr int64_t kMax32 = (int64_t(1) << 32) - 1;
constexpr int64_t kMax16 = (int64_t(1) << 16) - 1;

/// Checks that the field `name` of `op` fits in its instruction field.
LogicalResult checkWidth(Operation *op, StringRef name, int64_t value,
                         int64_t max) {
  if (value <= max)
    return success();
  return op->emitOpError() << "'" << name << "' is " << value
                           << ", beyond its instruction field (at most "
                           << max << ")";
}
} // namespace

// Runs after the tensors' own verifiers, so their formats and shapes hold.
LogicalResult ProgramOp::verifyRegions() {
  llvm::StringSet<> names;
  for (Operation &op : getBody().front()) {
    auto tensor = dyn_cast<TensorOp>(op);
    if (!tensor)
      continue;
    if (!names.insert(tensor.getName()).second)
      return tensor.emitOpError("a second tensor named '")
             << tensor.getName() << "'";
    if (tensor.getOffset() + tensor.getBytes() > getDramBytes())
      return tensor.emitOpError("bytes [")
             << tensor.getOffset() << ", "
             << tensor.getOffset() + tensor.getBytes()
             << ") lie beyond the DRAM image of " << getDramBytes()
             << " bytes";
  }
  return success();
}

int64_t TensorOp::getBytes() {
  std::optional<ElementType> format = getNumberFormat(getFormat());
  if (!format)
    return 0;
  int64_t count = 1;
  for (int64_t d : getShape())
    count *= d;
  return count * static_cast<int64_t>(::tessera::elementSize(*format));
}

LogicalResult TensorOp::verify() {
  if (llvm::any_of(getShape(), [](int64_t d) { return d <= 0; }))
    return emitOpError("dims must be positive");
  if ((getRole() == TensorRole::Constant) != getValue().has_value())
    return emitOpError("a constant needs a value, and only a constant has "
                       "one");
  if (auto value = getValue()) {
    if (!cast<ShapedType>(value->getType()).getElementType().isF32())
      return emitOpError("a constant's value must be f32 (it is converted "
                         "to the tensor's format)");
    int64_t count = 1;
    for (int64_t d : getShape())
      count *= d;
    if (value->getNumElements() != count)
      return emitOpError("value has ")
             << value->getNumElements() << " elements but the shape has "
             << count;
  }
  return success();
}

LogicalResult LoadOp::verify() {
  return success(succeeded(checkWidth(*this, "sram", getSram(), kMax32)) &&
                 succeeded(checkWidth(*this, "rows", getRows(), kMax16)) &&
                 succeeded(checkWidth(*this, "row_bytes", getRowBytes(),
                                      kMax32)) &&
                 succeeded(checkWidth(*this, "stride", getStride(), kMax32)));
}

LogicalResult StoreOp::verify() {
  if (getStride() < getRowBytes() && getRows() > 1)
    return emitOpError("rows of ")
           << getRowBytes() << " bytes overlap at a stride of " << getStride();
  return success(succeeded(checkWidth(*this, "sram", getSram(), kMax32)) &&
                 succeeded(checkWidth(*this, "rows", getRows(), kMax16)) &&
                 succeeded(checkWidth(*this, "row_bytes", getRowBytes(),
                                      kMax32)) &&
                 succeeded(checkWidth(*this, "stride", getStride(), kMax32)));
}

LogicalResult DrainOp::verify() {
  std::optional<ElementType> format = getNumberFormat(getFormat());
  bool narrow = format == ElementType::I8 || format == ElementType::F8E4M3FN ||
                format == ElementType::F8E5M2;
  if (narrow && format != ElementType::I8)
    return emitOpError("drains to f32, bf16, f16 or i8, not ")
           << getFormat();
  if (format == ElementType::I8 && !getScale())
    return emitOpError("an i8 drain needs its requantization scale");
  if (format == ElementType::I8 && getInt32())
    return emitOpError("an i8 drain requantizes; it takes no int32");
  return success(
      succeeded(checkWidth(*this, "acc_row", getAccRow(), kMax32)) &&
      succeeded(checkWidth(*this, "sram", getSram(), kMax32)) &&
      succeeded(checkWidth(*this, "rows", getRows(), kMax16)) &&
      succeeded(checkWidth(*this, "cols", getCols(), kMax16)) &&
      succeeded(
          checkWidth(*this, "bias", getBias().value_or(0), kMax32)));
}

LogicalResult VectorOp::verify() {
  uint32_t code = static_cast<uint32_t>(getFn());
  bool binary = code >= 32 && code < 64;
  bool reduction = code >= 64;
  std::optional<ElementType> format = getNumberFormat(getFormat());
  bool narrow = format == ElementType::I8 || format == ElementType::F8E4M3FN ||
                format == ElementType::F8E5M2;
  if (getFn() == VectorFn::Quantize) {
    if (!getImm())
      return emitOpError("quantize needs its scale as imm");
  } else if (narrow) {
    return emitOpError("only quantize writes ") << getFormat();
  }
  if (reduction && format != ElementType::F32)
    return emitOpError("a row reduction writes f32");
  if (!binary) {
    if (getMode() || getSrc2())
      return emitOpError("'") << stringifyVectorFn(getFn())
                              << "' takes one operand: no mode or src2";
    if (getImm() && getFn() != VectorFn::Quantize)
      return emitOpError("'") << stringifyVectorFn(getFn())
                              << "' takes no imm";
  } else {
    if (!getMode())
      return emitOpError("a binary function needs a mode: full, row, column "
                         "or immediate");
    bool immediate = *getMode() == OperandMode::Immediate;
    if (immediate && (!getImm() || getSrc2()))
      return emitOpError("an immediate operand needs imm and no src2");
    if (!immediate && (!getSrc2() || getImm()))
      return emitOpError("a '")
             << stringifyOperandMode(*getMode())
             << "' operand needs src2 and no imm";
  }
  return success(succeeded(checkWidth(*this, "src", getSrc(), kMax32)) &&
                 succeeded(checkWidth(*this, "dst", getDst(), kMax32)) &&
                 succeeded(checkWidth(*this, "src2", getSrc2().value_or(0),
                                      kMax32)) &&
                 succeeded(checkWidth(*this, "rows", getRows(), kMax16)) &&
                 succeeded(checkWidth(*this, "cols", getCols(), kMax16)));
}

#define GET_OP_CLASSES
#include "tessera/Dialect/Systolic/IR/SystolicOps.cpp.inc"
