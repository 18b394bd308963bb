//===- ReductionOps.cpp - reductions, softmax and normalization -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

using namespace mlir;
using namespace mlir::tessera;

/// Shape of a reduction of `input` over `axes`, keeping reduced dims as 1
/// when `keepdims` is set.
static LogicalResult inferReduction(std::optional<Location> loc,
                                    StringRef opName, Value input,
                                    ArrayRef<int64_t> axes, bool keepdims,
                                    SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(input.getType());
  if (axes.empty())
    return emitInferError(loc, opName, "expects at least one axis");
  auto normalized = normalizeAxes(loc, opName, axes, type.getRank());
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    if (!llvm::is_contained(*normalized, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

#define TESSERA_INFER_REDUCTION(OpClass)                                       \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferred) {                  \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    return inferReduction(loc, getOperationName(), adaptor.getInput(),         \
                          adaptor.getAxes(), adaptor.getKeepdims(), inferred); \
  }

TESSERA_INFER_REDUCTION(ReduceSumOp)
TESSERA_INFER_REDUCTION(ReduceMeanOp)
TESSERA_INFER_REDUCTION(ReduceMaxOp)
TESSERA_INFER_REDUCTION(ReduceMinOp)

#undef TESSERA_INFER_REDUCTION

#define TESSERA_INFER_ARG_REDUCTION(OpClass)                                   \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *context, std::optional<Location> loc, ValueRange operands,  \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferred) {                  \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    SmallVector<Type, 1> reduced;                                              \
    int64_t axis = adaptor.getAxis();                                          \
    if (failed(inferReduction(loc, getOperationName(), adaptor.getInput(),     \
                              ArrayRef<int64_t>(axis), adaptor.getKeepdims(),  \
                              reduced)))                                       \
      return failure();                                                        \
    inferred.push_back(RankedTensorType::get(                                  \
        cast<RankedTensorType>(reduced.front()).getShape(),                    \
        IntegerType::get(context, 64)));                                       \
    return success();                                                          \
  }

TESSERA_INFER_ARG_REDUCTION(ArgMaxOp)
TESSERA_INFER_ARG_REDUCTION(ArgMinOp)

#undef TESSERA_INFER_ARG_REDUCTION

static LogicalResult verifyAxis(Operation *op, int64_t axis, Value input) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  if (!::tessera::normalizeAxis(axis, rank))
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

/// Checks that `axis` is valid for a normalization of `input` and that each
/// affine parameter broadcasts to the normalized (trailing) shape.
static LogicalResult verifyNormalization(Operation *op, Value input,
                                         int64_t axis, float epsilon,
                                         ArrayRef<std::pair<Value, StringRef>>
                                             params) {
  if (failed(verifyAxis(op, axis, input)))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  int64_t start = *::tessera::normalizeAxis(axis, type.getRank());
  if (!(epsilon >= 0.0f))
    return op->emitOpError("epsilon must be non-negative, got ") << epsilon;
  ArrayRef<int64_t> normalized = type.getShape().drop_front(start);
  for (auto [param, name] : params) {
    if (!param)
      continue;
    ArrayRef<int64_t> shape = cast<RankedTensorType>(param.getType()).getShape();
    if (!::tessera::isBroadcastableTo(shape, normalized))
      return op->emitOpError()
             << name << " shape " << ::tessera::formatShape(shape)
             << " does not broadcast to the normalized shape "
             << ::tessera::formatShape(normalized);
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNormalization(*this, getInput(), getAxis(),
                             getEpsilon().convertToFloat(),
                             {{getScale(), "scale"}, {getBias(), "bias"}});
}

LogicalResult RmsNormOp::verify() {
  return verifyNormalization(*this, getInput(), getAxis(),
                             getEpsilon().convertToFloat(),
                             {{getScale(), "scale"}});
}
