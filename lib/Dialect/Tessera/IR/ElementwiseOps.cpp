//===- ElementwiseOps.cpp - broadcasting type inference for elementwise ops ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tessera;

/// Broadcasts the shapes of all `operands` (ONNX multidirectional
/// broadcasting) into a tensor of `elementType`.
static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    StringRef opName, ValueRange operands,
                                    Type elementType,
                                    SmallVectorImpl<Type> &inferred) {
  ::tessera::Shape shape;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return emitInferError(loc, opName, "expects ranked tensor operands");
    auto broadcast = ::tessera::broadcastShapes(shape, type.getShape());
    if (!broadcast)
      return emitInferError(loc, opName, broadcast.takeError());
    shape = std::move(*broadcast);
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

static Type elementTypeOf(Value value) {
  return getElementTypeOrSelf(value.getType());
}

// Arithmetic and logical binary ops keep their operands' element type.
#define TESSERA_INFER_BINARY(OpClass)                                          \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr, OpaqueProperties, RegionRange,                           \
      SmallVectorImpl<Type> &inferred) {                                       \
    if (operands.size() != 2)                                                  \
      return emitInferError(loc, getOperationName(), "expects 2 operands");    \
    return inferBroadcast(loc, getOperationName(), operands,                   \
                          elementTypeOf(operands[0]), inferred);               \
  }

TESSERA_INFER_BINARY(AddOp)
TESSERA_INFER_BINARY(SubOp)
TESSERA_INFER_BINARY(MulOp)
TESSERA_INFER_BINARY(DivOp)
TESSERA_INFER_BINARY(PowOp)
TESSERA_INFER_BINARY(MaxOp)
TESSERA_INFER_BINARY(MinOp)
TESSERA_INFER_BINARY(AndOp)
TESSERA_INFER_BINARY(OrOp)
TESSERA_INFER_BINARY(XorOp)

#undef TESSERA_INFER_BINARY

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &inferred) {
  if (operands.size() != 2)
    return emitInferError(loc, getOperationName(), "expects 2 operands");
  return inferBroadcast(loc, getOperationName(), operands,
                        IntegerType::get(context, 1), inferred);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        ValueRange operands, DictionaryAttr,
                                        OpaqueProperties, RegionRange,
                                        SmallVectorImpl<Type> &inferred) {
  if (operands.size() != 3)
    return emitInferError(loc, getOperationName(), "expects 3 operands");
  Type elementType = elementTypeOf(operands[1]);
  if (elementType != elementTypeOf(operands[2]))
    return emitInferError(loc, getOperationName(),
                          "on_true and on_false element types differ");
  return inferBroadcast(loc, getOperationName(), operands, elementType,
                        inferred);
}
