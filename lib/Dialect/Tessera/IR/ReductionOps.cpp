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
TESSERA_INFER_REDUCTION(ReduceProdOp)

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

//===----------------------------------------------------------------------===//
// MaxPoolOp, AvgPoolOp
//===----------------------------------------------------------------------===//

static LogicalResult inferPool(std::optional<Location> loc, StringRef opName,
                               Value input, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads,
                               ArrayRef<int64_t> dilations, bool ceilMode,
                               SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t spatial = type.getRank() - 2;
  if (spatial < 1)
    return emitInferError(loc, opName,
                          "expects an input of rank 3 or more (N x C x "
                          "spatial dims), got rank " +
                              Twine(type.getRank()));
  auto positive = [](ArrayRef<int64_t> v) {
    return llvm::all_of(v, [](int64_t x) { return x >= 1; });
  };
  if (static_cast<int64_t>(kernel.size()) != spatial || !positive(kernel))
    return emitInferError(loc, opName,
                          "kernel_shape must be " + Twine(spatial) +
                              " positive values, one per spatial dim");
  if (static_cast<int64_t>(strides.size()) != spatial || !positive(strides))
    return emitInferError(loc, opName,
                          "strides must be " + Twine(spatial) +
                              " positive values");
  if (static_cast<int64_t>(dilations.size()) != spatial ||
      !positive(dilations))
    return emitInferError(loc, opName,
                          "dilations must be " + Twine(spatial) +
                              " positive values");
  if (static_cast<int64_t>(pads.size()) != 2 * spatial ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitInferError(loc, opName,
                          "pads must be " + Twine(2 * spatial) +
                              " non-negative values (begins, then ends)");
  SmallVector<int64_t> shape(type.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    // ONNX: a pad must be smaller than the window, or windows see only pad.
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    if (pads[i] >= span || pads[spatial + i] >= span)
      return emitInferError(loc, opName,
                            "pads of spatial dim " + Twine(i) +
                                " must be smaller than the window (" +
                                Twine(span) + ")");
    int64_t size = ::tessera::poolOutputSize(
        type.getDimSize(2 + i), kernel[i], strides[i], pads[i],
        pads[spatial + i], dilations[i], ceilMode);
    if (size == 0)
      return emitInferError(loc, opName,
                            "the window does not fit in spatial dim " +
                                Twine(i) + " of the input");
    shape.push_back(size);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

#define TESSERA_INFER_POOL(OpClass)                                            \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferred) {                  \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    return inferPool(loc, getOperationName(), adaptor.getInput(),              \
                     adaptor.getKernelShape(), adaptor.getStrides(),           \
                     adaptor.getPads(), adaptor.getDilations(),                \
                     adaptor.getCeilMode(), inferred);                         \
  }

TESSERA_INFER_POOL(MaxPoolOp)
TESSERA_INFER_POOL(AvgPoolOp)

#undef TESSERA_INFER_POOL

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
