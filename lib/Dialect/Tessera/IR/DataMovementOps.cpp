//===- DataMovementOps.cpp - shapes of reshape, transpose, slice and friends //
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::formatShape;

/// A runtime `shape` operand must be 1-D with one entry per result dim.
static LogicalResult verifyShapeOperand(Operation *op, Value shape,
                                        RankedTensorType resultType) {
  if (!shape)
    return success();
  auto shapeType = cast<RankedTensorType>(shape.getType());
  if (shapeType.getRank() != 1 ||
      !::tessera::dimsCompatible(shapeType.getDimSize(0),
                                 resultType.getRank()))
    return op->emitOpError("shape operand must be 1-D with ")
           << resultType.getRank() << " entries, got "
           << formatShape(shapeType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (failed(verifyShapeOperand(*this, getShape(), resultType)))
    return failure();
  std::optional<int64_t> in =
      ::tessera::staticElementCount(inputType.getShape());
  std::optional<int64_t> out =
      ::tessera::staticElementCount(resultType.getShape());
  if (in && out && *in != *out)
    return emitOpError("cannot reshape ")
           << formatShape(inputType.getShape()) << " (" << *in
           << " elements) to " << formatShape(resultType.getShape()) << " ("
           << *out << " elements)";
  // One unknown result dim is implied by the element count, and a reshape
  // that only inserts or drops unit dims carries the unknown dims over in
  // order; anything else needs the runtime shape.
  if (!getShape() && resultType.getNumDynamicDims() > 1 &&
      !onlyUnitDimsChange(inputType.getShape(), resultType.getShape()))
    return emitOpError("a result with ")
           << resultType.getNumDynamicDims()
           << " dynamic dimensions needs a shape operand";
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitInferError(loc, getOperationName(),
                          "permutation has " + Twine(perm.size()) +
                              " entries for an input of rank " +
                              Twine(type.getRank()));
  SmallVector<bool> used(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= type.getRank() || used[dim])
      return emitInferError(loc, getOperationName(),
                            "permutation " + formatShape(perm) +
                                " is not a permutation of [0, " +
                                Twine(type.getRank()) + ")");
    used[dim] = true;
    shape.push_back(type.getDimSize(dim));
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (failed(verifyShapeOperand(*this, getShape(), resultType)))
    return failure();
  if (!::tessera::isBroadcastableTo(inputType.getShape(),
                                    resultType.getShape()))
    return emitOpError("input shape ")
           << formatShape(inputType.getShape()) << " does not broadcast to "
           << formatShape(resultType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  StringRef name = getOperationName();
  if (operands.empty())
    return emitInferError(loc, name, "expects at least one input");
  auto first = cast<RankedTensorType>(operands[0].getType());
  std::optional<int64_t> axis =
      ::tessera::normalizeAxis(adaptor.getAxis(), first.getRank());
  if (!axis)
    return emitInferError(loc, name,
                          "axis " + Twine(adaptor.getAxis()) +
                              " is out of range for rank " +
                              Twine(first.getRank()));
  SmallVector<int64_t> shape(first.getShape());
  for (Value operand : operands.drop_front()) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != first.getRank())
      return emitInferError(loc, name, "inputs have different ranks");
    for (int64_t dim = 0; dim < first.getRank(); ++dim) {
      int64_t size = type.getDimSize(dim);
      if (dim == *axis) {
        shape[dim] = ShapedType::isDynamic(shape[dim]) ||
                             ShapedType::isDynamic(size)
                         ? ShapedType::kDynamic
                         : shape[dim] + size;
      } else if (!::tessera::dimsCompatible(shape[dim], size)) {
        return emitInferError(loc, name,
                              "inputs differ in dimension " + Twine(dim) +
                                  " (" + Twine(shape[dim]) + " vs " +
                                  Twine(size) + "), which is not the axis");
      } else if (ShapedType::isDynamic(shape[dim])) {
        shape[dim] = size;
      }
    }
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::verify() {
  RankedTensorType inputType = getInput().getType();
  std::optional<int64_t> axis =
      ::tessera::normalizeAxis(getAxis(), inputType.getRank());
  if (!axis)
    return emitOpError("axis ") << getAxis() << " is out of range for rank "
                                << inputType.getRank();
  size_t count = getResults().size();
  if (count == 0)
    return emitOpError("expects at least one result");
  int64_t dimSize = inputType.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (std::optional<ArrayRef<int64_t>> given = getSizes()) {
    if (given->size() != count)
      return emitOpError("has ") << given->size() << " sizes for " << count
                                 << " results";
    if (llvm::any_of(*given, [](int64_t s) { return s < 0; }))
      return emitOpError("sizes must be non-negative");
    int64_t total = 0;
    for (int64_t s : *given)
      if (__builtin_add_overflow(total, s, &total))
        return emitOpError("sizes overflow when added");
    if (!ShapedType::isDynamic(dimSize) && total != dimSize)
      return emitOpError("sizes add up to ")
             << total << " but dimension " << *axis << " has " << dimSize;
    sizes.assign(given->begin(), given->end());
  } else if (!ShapedType::isDynamic(dimSize)) {
    if (dimSize % static_cast<int64_t>(count) != 0)
      return emitOpError("dimension ")
             << *axis << " of size " << dimSize << " does not split into "
             << count << " equal pieces";
    sizes.assign(count, dimSize / static_cast<int64_t>(count));
  } else {
    sizes.assign(count, ShapedType::kDynamic);
  }
  for (auto [index, result] : llvm::enumerate(getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> expected(inputType.getShape());
    expected[*axis] = sizes[index];
    if (type.getElementType() != inputType.getElementType() ||
        failed(verifyCompatibleShape(type.getShape(), expected)))
      return emitOpError("result ")
             << index << " has type " << type << ", expected shape "
             << formatShape(expected) << " of "
             << inputType.getElementType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  StringRef name = getOperationName();
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds();
  if (starts.size() != ends.size())
    return emitInferError(loc, name,
                          "has " + Twine(starts.size()) + " starts but " +
                              Twine(ends.size()) + " ends");
  SmallVector<int64_t> axes;
  if (std::optional<ArrayRef<int64_t>> given = adaptor.getAxes()) {
    if (given->size() != starts.size())
      return emitInferError(loc, name,
                            "has " + Twine(given->size()) + " axes for " +
                                Twine(starts.size()) + " starts");
    auto normalized = normalizeAxes(loc, name, *given, type.getRank());
    if (failed(normalized))
      return failure();
    axes = std::move(*normalized);
  } else {
    if (static_cast<int64_t>(starts.size()) > type.getRank())
      return emitInferError(loc, name,
                            "has " + Twine(starts.size()) +
                                " starts for an input of rank " +
                                Twine(type.getRank()));
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts.size()));
  }
  SmallVector<int64_t> steps(starts.size(), 1);
  if (std::optional<ArrayRef<int64_t>> given = adaptor.getSteps()) {
    if (given->size() != starts.size())
      return emitInferError(loc, name,
                            "has " + Twine(given->size()) + " steps for " +
                                Twine(starts.size()) + " starts");
    if (llvm::is_contained(*given, 0))
      return emitInferError(loc, name, "steps must be non-zero");
    steps.assign(given->begin(), given->end());
  }
  SmallVector<int64_t> shape(type.getShape());
  for (auto [i, axis] : llvm::enumerate(axes))
    shape[axis] = ::tessera::sliceDimSize(type.getDimSize(axis), starts[i],
                                          ends[i], steps[i]);
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  std::optional<int64_t> axis =
      ::tessera::normalizeAxis(adaptor.getAxis(), type.getRank());
  if (!axis)
    return emitInferError(loc, getOperationName(),
                          "axis " + Twine(adaptor.getAxis()) +
                              " is out of range for rank " +
                              Twine(type.getRank()));
  SmallVector<int64_t> shape(type.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, type.getShape().drop_front(*axis + 1));
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ShapeOp and RangeOp
//===----------------------------------------------------------------------===//

LogicalResult ShapeOp::verify() {
  int64_t rank = getInput().getType().getRank();
  if (!::tessera::dimsCompatible(getType().getDimSize(0), rank))
    return emitOpError("result has ")
           << getType().getDimSize(0) << " entries for an input of rank "
           << rank;
  return success();
}

LogicalResult RangeOp::verify() {
  if (getType().getElementType() != getStart().getType().getElementType())
    return emitOpError("result element type ")
           << getType().getElementType() << " differs from the operands' "
           << getStart().getType().getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  StringRef name = getOperationName();
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> pads = adaptor.getPads();
  if (static_cast<int64_t>(pads.size()) != 2 * rank ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitInferError(loc, name,
                          "pads must be " + Twine(2 * rank) +
                              " non-negative values (begins, then ends)");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size)) {
      shape.push_back(size);
      continue;
    }
    int64_t before = pads[d], after = pads[rank + d];
    // ONNX: reflect mirrors without the edge, so needs pads < dim; edge
    // needs an element to repeat.
    if (adaptor.getMode() == PadMode::reflect &&
        (before >= size || after >= size) && (before || after))
      return emitInferError(loc, name,
                            "reflect pads of dim " + Twine(d) + " (" +
                                Twine(before) + ", " + Twine(after) +
                                ") must be smaller than its size " +
                                Twine(size));
    if (adaptor.getMode() == PadMode::edge && size == 0 && (before || after))
      return emitInferError(loc, name,
                            "edge padding of dim " + Twine(d) +
                                ", which is empty");
    shape.push_back(size + before + after);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}
