//===- Scans.cpp - ONNX CumSum and TopK: masks and selections on one axis -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Ops that relate the elements along one axis to each other, imported as
// compositions: CumSum as a sum under a triangular mask, TopK as k
// selections. A symbolic axis gets its positions from a range at run time
// (positionsAlong, which Trilu reads too).
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include <limits>

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

Value positionsAlong(GraphImporter &im, Value x, int64_t axis) {
  RankedTensorType type = tensorType(x);
  auto i64 = im.builder().getI64Type();
  Value shape =
      im.create<ts::ShapeOp>(RankedTensorType::get({type.getRank()}, i64), x);
  Value size = im.inferred<ts::GatherOp>(
      shape, im.constantI64({axis}, ArrayRef<int64_t>{}), int64_t(0));
  if (!size)
    return {};
  return im.create<ts::RangeOp>(
      RankedTensorType::get({type.getDimSize(axis)}, i64),
      im.constantI64({0}, ArrayRef<int64_t>{}), size,
      im.constantI64({1}, ArrayRef<int64_t>{}));
}

/// CumSum along `axis` (a constant): each output element is the sum of the
/// elements before it (exclusive: strictly before; reverse: after), as a
/// masked sum: the input moved so that the axis is last, spread to
/// [..., n, n] under the mask j <= i (a constant, or from two ranges when n
/// is symbolic, a sequence's position ids), summed over j, moved back.
/// O(n^2) work per row; the fusion pass keeps the spread out of memory.
static LogicalResult convertCumSum(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), axisValue = im.input(1);
  if (!x || !axisValue)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> axes = im.constantInts(axisValue);
  if (!axes || axes->size() != 1)
    return im.emitError() << "axis must be a constant scalar";
  std::optional<int64_t> axis = ::tessera::normalizeAxis((*axes)[0], rank);
  if (!axis || rank == 0)
    return im.emitError() << "axis " << (*axes)[0]
                          << " is out of range for rank " << rank;
  bool exclusive = im.intAttr("exclusive", 0) != 0;
  bool reverse = im.intAttr("reverse", 0) != 0;
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  Value moved = *axis == rank - 1 ? x : im.inferred<ts::TransposeOp>(x, perm);
  if (!moved)
    return failure();
  RankedTensorType movedType = tensorType(moved);
  int64_t n = movedType.getDimSize(rank - 1);
  // Include j for output i when j <= i (j < i exclusive; >=, > reverse).
  ts::CompareDirection include =
      reverse
          ? (exclusive ? ts::CompareDirection::gt : ts::CompareDirection::ge)
          : (exclusive ? ts::CompareDirection::lt : ts::CompareDirection::le);
  auto i64 = im.builder().getI64Type();
  Value mask;
  if (ShapedType::isDynamic(n)) {
    Value positions = positionsAlong(im, moved, rank - 1);
    if (!positions)
      return failure();
    Value rows = im.create<ts::ReshapeOp>(RankedTensorType::get({n, 1}, i64),
                                          positions, Value());
    mask = im.inferred<ts::CompareOp>(include, positions, rows);
  } else {
    SmallVector<bool> bits;
    bits.reserve(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        bits.push_back(reverse ? (exclusive ? j > i : j >= i)
                               : (exclusive ? j < i : j <= i));
    mask = im.create<ts::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({n, n}, im.builder().getI1Type()), bits)));
  }
  SmallVector<int64_t> spreadShape(movedType.getShape());
  spreadShape.insert(spreadShape.end() - 1, 1);
  Value row = im.create<ts::ReshapeOp>(
      RankedTensorType::get(spreadShape, type.getElementType()), moved,
      Value());
  Value zero = im.constantScalar(0.0, type.getElementType());
  Value spread = mask ? im.inferred<ts::WhereOp>(mask, row, zero) : Value();
  Value sums =
      spread
          ? im.inferred<ts::ReduceSumOp>(spread, ArrayRef<int64_t>{-1}, false)
          : Value();
  if (!sums)
    return failure();
  return im.setOutput(0, *axis == rank - 1
                             ? sums
                             : im.inferred<ts::TransposeOp>(sums, inverse));
}

/// The most elements TopK selects: each is one pass over the input.
constexpr int64_t kMaxTopK = 64;

/// TopK with a constant k (up to kMaxTopK; a mixture of experts' router,
/// top-5 of a classifier) as k selections: the first largest (smallest)
/// element's index by arg_max (arg_min), its value gathered, and the
/// element taken out for the next selection (-inf, +inf for smallest).
/// Ties go to the lower index, as ONNX wants; the outputs come sorted
/// (sorted = 0 leaves the order free, so sorted is fine too). When the
/// input itself holds -inf (+inf), a selection can land on an element
/// already taken: the lowest one not taken yet is the right one then.
static LogicalResult convertTopK(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), kValue = im.input(1);
  if (!x || !kValue)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  std::optional<SmallVector<int64_t>> ks = im.constantInts(kValue);
  if (!ks || ks->size() != 1)
    return im.emitError() << "k must be a constant (one value)";
  int64_t k = (*ks)[0];
  std::optional<int64_t> axis =
      ::tessera::normalizeAxis(im.intAttr("axis", -1), rank);
  if (!axis)
    return im.emitError() << "axis " << im.intAttr("axis", -1)
                          << " is out of range for rank " << rank;
  int64_t size = type.getDimSize(*axis);
  if (k < 1 || k > kMaxTopK)
    return im.emitError() << "k = " << k << " is not supported (1 to "
                          << kMaxTopK << ")";
  if (!ShapedType::isDynamic(size) && k > size)
    return im.emitError() << "k = " << k << " exceeds the axis' size " << size;
  if (!isa<FloatType>(type.getElementType()))
    return im.emitError() << "expects floating-point values, got "
                          << type.getElementType();
  bool largest = im.intAttr("largest", 1) != 0;
  // Positions along the axis, to take a selected element out.
  auto i64 = im.builder().getI64Type();
  SmallVector<int64_t> iotaShape(rank, 1);
  iotaShape[*axis] = size;
  Value iota;
  if (ShapedType::isDynamic(size)) {
    iota = positionsAlong(im, x, *axis);
    if (iota)
      iota = im.create<ts::ReshapeOp>(RankedTensorType::get(iotaShape, i64),
                                      iota, Value());
  } else {
    iota = im.constantI64(llvm::to_vector(llvm::seq<int64_t>(0, size)),
                          iotaShape);
  }
  if (!iota)
    return failure();
  Value gone =
      im.constantScalar(largest ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity(),
                        type.getElementType());
  SmallVector<Value> values, indices;
  Value remaining = x;
  // 1 where an element is still there, 0 where it was taken.
  Value one = im.constantScalar(1.0, type.getElementType());
  Value zero = im.constantScalar(0.0, type.getElementType());
  Value left;
  for (int64_t i = 0; i < k; ++i) {
    Value index =
        largest ? im.inferred<ts::ArgMaxOp>(remaining, *axis, true, false)
                : im.inferred<ts::ArgMinOp>(remaining, *axis, true, false);
    if (index && left) {
      Value there = im.inferred<ts::GatherElementsOp>(left, index, *axis);
      Value taken = there ? im.inferred<ts::CompareOp>(ts::CompareDirection::eq,
                                                       there, zero)
                          : Value();
      Value firstLeft = im.inferred<ts::ArgMaxOp>(left, *axis, true, false);
      index = taken && firstLeft
                  ? im.inferred<ts::WhereOp>(taken, firstLeft, index)
                  : Value();
    }
    Value value =
        index ? im.inferred<ts::GatherElementsOp>(x, index, *axis) : Value();
    if (!value)
      return failure();
    values.push_back(value);
    indices.push_back(index);
    if (i + 1 < k) {
      Value hit =
          im.inferred<ts::CompareOp>(ts::CompareDirection::eq, index, iota);
      if (!hit)
        return failure();
      remaining = im.inferred<ts::WhereOp>(hit, gone, remaining);
      left = im.inferred<ts::WhereOp>(hit, zero, left ? left : one);
      if (!remaining || !left)
        return failure();
    }
  }
  auto join = [&](SmallVector<Value> &parts) -> Value {
    return parts.size() == 1 ? parts.front()
                             : im.inferred<ts::ConcatOp>(parts, *axis);
  };
  Value joinedValues = join(values), joinedIndices = join(indices);
  if (!joinedValues || !joinedIndices || failed(im.setOutput(0, joinedValues)))
    return failure();
  return im.setOutput(1, joinedIndices);
}

void registerScanConverters(ConverterRegistry &r) {
  r["CumSum"] = convertCumSum;
  r["TopK"] = convertTopK;
}

} // namespace tessera::onnx_import
