//===- PrecisionOps.cpp - verifiers of quantize and dequantize ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::formatShape;

/// Shared rules of ONNX QuantizeLinear/DequantizeLinear: the scale is
/// per-tensor (one element) without `axis` or per-channel (1-D, one entry per
/// slice of `axis`) with it; the zero point mirrors the scale's shape, has
/// the quantized element type, and exists only for integer types.
static LogicalResult verifyQuantParams(Operation *op, Type quantElementType,
                                       Value scale, Value zeroPoint,
                                       std::optional<int64_t> axis) {
  auto inputType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (inputType.getShape() != resultType.getShape())
    return op->emitOpError("input shape ")
           << formatShape(inputType.getShape()) << " and result shape "
           << formatShape(resultType.getShape()) << " differ";
  auto scaleType = cast<RankedTensorType>(scale.getType());
  if (axis) {
    std::optional<int64_t> dim =
        ::tessera::normalizeAxis(*axis, inputType.getRank());
    if (!dim)
      return op->emitOpError("axis ")
             << *axis << " is out of range for rank " << inputType.getRank();
    int64_t channels = inputType.getDimSize(*dim);
    if (scaleType.getRank() != 1 ||
        !::tessera::dimsCompatible(scaleType.getDimSize(0), channels))
      return op->emitOpError("a per-channel scale must be 1-D with ")
             << channels << " entries (dimension " << *dim
             << "), got " << formatShape(scaleType.getShape());
  } else if (scaleType.getRank() > 1 ||
             (scaleType.getRank() == 1 && scaleType.getDimSize(0) != 1)) {
    return op->emitOpError("a per-tensor scale must have one element, got "
                           "shape ")
           << formatShape(scaleType.getShape())
           << "; set axis for a per-channel scale";
  }
  if (!zeroPoint)
    return success();
  auto zeroType = cast<RankedTensorType>(zeroPoint.getType());
  if (!isa<IntegerType>(quantElementType) ||
      quantElementType.isInteger(32))
    return op->emitOpError("a zero point needs an i8 quantized type, not ")
           << quantElementType;
  if (zeroType.getElementType() != quantElementType)
    return op->emitOpError("zero point element type ")
           << zeroType.getElementType() << " differs from the quantized type "
           << quantElementType;
  if (zeroType.getShape() != scaleType.getShape())
    return op->emitOpError("zero point shape ")
           << formatShape(zeroType.getShape()) << " differs from scale shape "
           << formatShape(scaleType.getShape());
  return success();
}

LogicalResult QuantizeOp::verify() {
  return verifyQuantParams(*this, getResult().getType().getElementType(),
                           getScale(), getZeroPoint(), getAxis());
}

LogicalResult DequantizeOp::verify() {
  return verifyQuantParams(*this, getInput().getType().getElementType(),
                           getScale(), getZeroPoint(), getAxis());
}
