//===- Slice.cpp - ONNX Slice, folded on known values or at run time -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A Slice of known integer values (shapes, pads computed from shapes)
// folds; one with constant bounds is a tessera.slice; one whose bounds are
// known only at run time is a gather of a runtime range per axis.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;
using ::tessera::kDynamicDim;

/// The known values of every element of `x` (an integer tensor of static
/// shape whose values the importer follows, at any rank), or nothing.
std::optional<ArrayRef<int64_t>> knownIntElements(GraphImporter &im, Value x) {
  std::optional<ArrayRef<int64_t>> known = im.knownInts(x);
  RankedTensorType type = tensorType(x);
  if (!known || !isa<IntegerType>(type.getElementType()) ||
      !type.hasStaticShape() ||
      static_cast<int64_t>(known->size()) != type.getNumElements())
    return std::nullopt;
  return known;
}

/// A slice whose starts or ends are known only at run time (a causal mask
/// sliced to the sequence, `bias[:, :, :T, :T]`, with a symbolic T): per
/// sliced axis, the indices ONNX's clamping gives, as a range computed at
/// run time, and a gather of them. Axes and steps must be constants.
static LogicalResult convertRuntimeSlice(GraphImporter &im, Value x,
                                         Value starts, Value ends) {
  std::optional<SmallVector<int64_t>> axes, steps;
  if (Value a = im.optionalInput(3); a && !(axes = im.constantInts(a)))
    return im.emitError() << "input 3 (axes) must be a constant";
  if (Value st = im.optionalInput(4); st && !(steps = im.constantInts(st)))
    return im.emitError() << "input 4 (steps) must be a constant";
  RankedTensorType bounds = tensorType(starts);
  if (bounds.getRank() != 1 || bounds.isDynamicDim(0) ||
      tensorType(ends) != bounds)
    return im.emitError() << "runtime starts and ends must be 1-D of one "
                             "static length";
  int64_t count = bounds.getDimSize(0);
  int64_t rank = tensorType(x).getRank();
  if ((axes && static_cast<int64_t>(axes->size()) != count) ||
      (steps && static_cast<int64_t>(steps->size()) != count))
    return im.emitError() << "axes and steps must have one entry per start";
  Type i64 = IntegerType::get(&im.context(), 64);
  auto asI64 = [&](Value v) -> Value {
    if (elementType(v) == i64)
      return v;
    return im.create<ts::CastOp>(tensorType(v).clone(i64), v);
  };
  Value startsI64 = asI64(starts), endsI64 = asI64(ends);
  Value shape = im.create<ts::ShapeOp>(RankedTensorType::get({rank}, i64), x);
  auto entry = [&](Value vector, int64_t i) -> Value {
    return im.inferred<ts::GatherOp>(vector, im.constantScalar(i, i64), 0);
  };
  auto scalar = [&](int64_t v) { return im.constantScalar(v, i64); };
  SmallVector<bool> seen(rank, false);
  Value result = x;
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axes ? (*axes)[i] : i;
    if (axis < 0)
      axis += rank;
    int64_t step = steps ? (*steps)[i] : 1;
    if (axis < 0 || axis >= rank || seen[axis])
      return im.emitError() << "axis " << (axes ? (*axes)[i] : i)
                            << " is out of range or repeated";
    if (step == 0)
      return im.emitError() << "steps must be non-zero";
    seen[axis] = true;
    Value dim = tensorType(x).isDynamicDim(axis)
                    ? entry(shape, axis)
                    : scalar(tensorType(x).getDimSize(axis));
    // Negative bounds count from the back, then clamp: to [0, dim] going
    // forwards; to [0, dim - 1] (start) and [-1, dim - 1] (end) backwards.
    auto bound = [&](Value v, int64_t low, int64_t highBelowDim) -> Value {
      Value negative =
          im.inferred<ts::CompareOp>(ts::CompareDirection::lt, v, scalar(0));
      Value fromBack = im.inferred<ts::AddOp>(v, dim);
      Value shifted = im.inferred<ts::WhereOp>(negative, fromBack, v);
      Value high = im.inferred<ts::SubOp>(dim, scalar(-highBelowDim));
      return im.inferred<ts::MinOp>(
          im.inferred<ts::MaxOp>(shifted, scalar(low)), high);
    };
    Value start = bound(entry(startsI64, i), 0, step > 0 ? 0 : -1);
    Value end = bound(entry(endsI64, i), step > 0 ? 0 : -1, step > 0 ? 0 : -1);
    if (!start || !end)
      return failure();
    Value indices = im.create<ts::RangeOp>(
        RankedTensorType::get({kDynamicDim}, i64), start, end, scalar(step));
    result = im.inferred<ts::GatherOp>(result, indices, axis);
    if (!result)
      return failure();
  }
  return im.setOutput(0, result);
}

/// Slice: bounds are inputs from opset 10 on (so always here).
static LogicalResult convertSlice(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  if (im.opset() >= 10) {
    Value starts = im.optionalInput(1), ends = im.optionalInput(2);
    if (starts && ends && (!im.constantInts(starts) || !im.constantInts(ends)))
      return convertRuntimeSlice(im, x, starts, ends);
  }
  auto starts = im.intsAttrOrInput("starts", 1, 10);
  auto ends = im.intsAttrOrInput("ends", 2, 10);
  auto axes = im.intsAttrOrInput("axes", 3, 10);
  auto steps = im.intsAttrOrInput("steps", 4, 10);
  if (failed(starts) || failed(ends) || failed(axes) || failed(steps))
    return failure();
  if (!*starts || !*ends)
    return im.emitError() << "needs starts and ends";
  Builder b(&im.context());
  auto optionalArray = [&](const std::optional<SmallVector<int64_t>> &v) {
    return v ? b.getDenseI64ArrayAttr(*v) : DenseI64ArrayAttr();
  };
  auto build = [&] {
    return im.inferred<ts::SliceOp>(
        x, b.getDenseI64ArrayAttr(**starts), b.getDenseI64ArrayAttr(**ends),
        optionalArray(*axes), optionalArray(*steps));
  };
  // Slicing a known integer value (a shape, or pads computed from shapes)
  // stays known.
  std::optional<ArrayRef<int64_t>> known = knownIntElements(im, x);
  size_t ranges = (**starts).size();
  // Malformed slices (axes or steps of another length, an axis twice or
  // out of range, a zero step) are built as they are: the op reports them.
  if (!known || (**ends).size() != ranges ||
      (*axes && (**axes).size() != ranges) ||
      (*steps && (**steps).size() != ranges))
    return im.setOutput(0, build());
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  int64_t rank = shape.size();
  // Per dim of x: first index taken, step, count.
  SmallVector<int64_t> first(rank, 0), step(rank, 1), count(shape);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < ranges; ++i) {
    int64_t axis = *axes ? (**axes)[i] : static_cast<int64_t>(i);
    if (axis < 0)
      axis += rank;
    int64_t s = *steps ? (**steps)[i] : 1;
    if (axis < 0 || axis >= rank || seen[axis] || s == 0)
      return im.setOutput(0, build());
    seen[axis] = true;
    int64_t start = (**starts)[i];
    count[axis] = ::tessera::sliceDimSize(shape[axis], start, (**ends)[i], s);
    if (count[axis] == 0)
      continue;
    first[axis] = ::tessera::sliceFirstIndex(shape[axis], start, s);
    step[axis] = s;
  }
  SmallVector<int64_t> taken;
  if (computeProduct(count) != 0) {
    SmallVector<int64_t> strides = computeStrides(shape),
                         countStrides = computeStrides(count);
    for (int64_t i = 0, e = computeProduct(count); i < e; ++i) {
      SmallVector<int64_t> at = delinearize(i, countStrides);
      for (int64_t d = 0; d < rank; ++d)
        at[d] = first[d] + at[d] * step[d];
      taken.push_back((*known)[linearize(at, strides)]);
    }
  }
  return im.setIntsOutput(taken, count, build, elementType(x));
}

void registerSliceConverters(ConverterRegistry &r) {
  r["Slice"] = convertSlice;
}

} // namespace tessera::onnx_import
