//===- IndexingOps.cpp - shapes of gathers, scatters and resize -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::dimsCompatible;
using ::tessera::formatShape;

//===----------------------------------------------------------------------===//
// GatherElementsOp
//===----------------------------------------------------------------------===//

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  StringRef name = getOperationName();
  // ONNX GatherElements: indices has the input's rank.
  if (indices.getRank() != type.getRank())
    return emitInferError(loc, name,
                          "indices have rank " + Twine(indices.getRank()) +
                              ", the input rank " + Twine(type.getRank()));
  std::optional<int64_t> axis =
      ::tessera::normalizeAxis(adaptor.getAxis(), type.getRank());
  if (!axis)
    return emitInferError(loc, name,
                          "axis " + Twine(adaptor.getAxis()) +
                              " is out of range for rank " +
                              Twine(type.getRank()));
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t in = type.getDimSize(d), idx = indices.getDimSize(d);
    if (d != *axis && !ShapedType::isDynamic(in) &&
        !ShapedType::isDynamic(idx) && idx > in)
      return emitInferError(loc, name,
                            "indices " + formatShape(indices.getShape()) +
                                " exceed the input " +
                                formatShape(type.getShape()) + " in dim " +
                                Twine(d));
  }
  inferred.push_back(
      RankedTensorType::get(indices.getShape(), type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherNDOp
//===----------------------------------------------------------------------===//

LogicalResult GatherNDOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  StringRef name = getOperationName();
  int64_t batch = adaptor.getBatchDims();
  // ONNX GatherND: indices.shape[-1] is static and at most
  // rank - batch_dims; the batch dims agree.
  if (indices.getRank() < 1 || batch < 0 || batch >= indices.getRank() ||
      batch >= type.getRank())
    return emitInferError(loc, name,
                          "batch_dims " + Twine(batch) +
                              " must be below the ranks of input and indices");
  int64_t k = indices.getShape().back();
  if (ShapedType::isDynamic(k) || k < 1 || batch + k > type.getRank())
    return emitInferError(loc, name,
                          "the last dim of indices must be static and in [1, " +
                              Twine(type.getRank() - batch) + "]");
  for (int64_t d = 0; d < batch; ++d)
    if (!dimsCompatible(type.getDimSize(d), indices.getDimSize(d)))
      return emitInferError(loc, name,
                            "batch dim " + Twine(d) +
                                " differs between input and indices");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, type.getShape().drop_front(batch + k));
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterNDOp and ScatterElementsOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterNDOp::verify() {
  RankedTensorType data = getData().getType(), indices = getIndices().getType(),
                   updates = getUpdates().getType();
  if (updates.getElementType() != data.getElementType())
    return emitOpError("updates have element type ")
           << updates.getElementType() << ", data "
           << data.getElementType();
  int64_t k = indices.getRank() ? indices.getShape().back() : 0;
  if (indices.getRank() < 1 || ShapedType::isDynamic(k) || k < 1 ||
      k > data.getRank())
    return emitOpError("the last dim of indices must be static and in [1, ")
           << data.getRank() << "]";
  // ONNX ScatterND: updates.shape = indices.shape[:-1] + data.shape[k:].
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (static_cast<int64_t>(expected.size()) != updates.getRank() ||
      !llvm::all_of(llvm::zip(expected, updates.getShape()), [](auto p) {
        return dimsCompatible(std::get<0>(p), std::get<1>(p));
      }))
    return emitOpError("updates must have shape ")
           << formatShape(expected) << ", got "
           << formatShape(updates.getShape());
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  RankedTensorType data = getData().getType(), indices = getIndices().getType(),
                   updates = getUpdates().getType();
  if (updates.getElementType() != data.getElementType())
    return emitOpError("updates have element type ")
           << updates.getElementType() << ", data "
           << data.getElementType();
  if (!::tessera::normalizeAxis(getAxis(), data.getRank()))
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << data.getRank();
  // ONNX ScatterElements: indices and updates share a shape of data's rank.
  if (indices.getRank() != data.getRank() ||
      updates.getRank() != data.getRank() ||
      !llvm::all_of(llvm::zip(indices.getShape(), updates.getShape()),
                    [](auto p) {
                      return dimsCompatible(std::get<0>(p), std::get<1>(p));
                    }))
    return emitOpError("indices ")
           << formatShape(indices.getShape()) << " and updates "
           << formatShape(updates.getShape())
           << " must have one shape of the data's rank " << data.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// ResizeOp
//===----------------------------------------------------------------------===//

LogicalResult ResizeOp::verify() {
  int64_t rank = getInput().getType().getRank();
  if (getType().getRank() != rank)
    return emitOpError("result rank ")
           << getType().getRank() << " differs from the input's " << rank;
  if (!dimsCompatible(getScales().getType().getDimSize(0), rank))
    return emitOpError("scales must have ")
           << rank << " entries, one per dim";
  bool crop = getCoordinateMode() == ResizeCoordinateMode::tf_crop_and_resize;
  if (crop != static_cast<bool>(getRoi()))
    return emitOpError(crop ? "tf_crop_and_resize needs a roi"
                            : "a roi applies to tf_crop_and_resize only");
  if (getRoi() &&
      !dimsCompatible(getRoi().getType().getDimSize(0), 2 * rank))
    return emitOpError("roi must have ") << 2 * rank << " entries";
  if (getSizes() && !dimsCompatible(getSizes().getType().getDimSize(0), rank))
    return emitOpError("sizes must have ") << rank << " entries, one per dim";
  if (getMode() != ResizeMode::nearest &&
      !isa<FloatType>(getType().getElementType()))
    return emitOpError("interpolates ")
           << stringifyResizeMode(getMode())
           << " on floating-point tensors only, not "
           << getType().getElementType();
  return success();
}
