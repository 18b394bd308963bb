//===- Indexing.cpp - ONNX GatherElements, GatherND, ScatterND, ScatterElements //
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// When every input is known at import time (shape arithmetic, masks built
// from constants, as shifted-window attention computes its mask), the
// result folds to a constant here; otherwise the op is kept for the
// backend.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// Row-major strides of a static shape.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// An index read from the model checked against a dim of `size`; negative
/// counts from the back. Reports and returns nullopt when out of range.
static std::optional<int64_t> checkIndex(GraphImporter &im, int64_t index,
                                         int64_t size) {
  if (index < -size || index >= size) {
    im.emitError() << "index " << index << " is out of range for a dim of "
                   << size;
    return std::nullopt;
  }
  return index < 0 ? index + size : index;
}

/// The elements of a constant input as attributes, or, for integers known
/// from shape arithmetic, as integer attributes.
static std::optional<SmallVector<Attribute>> knownElements(GraphImporter &im,
                                                           Value value) {
  RankedTensorType type = tensorType(value);
  if (!type.hasStaticShape())
    return std::nullopt;
  if (DenseElementsAttr dense = im.constantElements(value))
    return llvm::to_vector(dense.getValues<Attribute>());
  if (std::optional<SmallVector<int64_t>> ints = im.constantInts(value)) {
    auto intType = dyn_cast<IntegerType>(type.getElementType());
    if (!intType)
      return std::nullopt;
    return llvm::to_vector(llvm::map_range(*ints, [&](int64_t v) -> Attribute {
      return IntegerAttr::get(intType, v);
    }));
  }
  return std::nullopt;
}

/// Defines output 0 as a constant of `elements` with `type`, recording
/// integer values for later shape arithmetic.
static LogicalResult setConstantOutput(GraphImporter &im, RankedTensorType type,
                                       ArrayRef<Attribute> elements) {
  auto attr = DenseElementsAttr::get(type, elements);
  Value constant = im.create<ts::ConstantOp>(cast<ElementsAttr>(attr));
  if (isa<IntegerType>(type.getElementType()) && type.getRank() <= 1 &&
      !type.getElementType().isInteger(1))
    im.setKnownInts(constant,
                    llvm::to_vector(llvm::map_range(
                        elements, [](Attribute a) {
                          return cast<IntegerAttr>(a).getValue().getSExtValue();
                        })));
  return im.setOutput(0, constant);
}

static LogicalResult convertGatherElements(GraphImporter &im,
                                           const onnx::NodeProto &) {
  Value x = im.input(0), indices = im.input(1);
  if (!x || !indices)
    return failure();
  int64_t axis = im.intAttr("axis", 0);
  Value result = im.inferred<ts::GatherElementsOp>(x, indices, axis);
  if (!result)
    return failure();
  std::optional<SmallVector<Attribute>> data = knownElements(im, x);
  std::optional<SmallVector<int64_t>> idx = im.constantInts(indices);
  if (!idx)
    if (DenseElementsAttr dense = im.constantElements(indices))
      idx = llvm::to_vector(llvm::map_range(
          dense.getValues<APInt>(),
          [](const APInt &v) { return v.getSExtValue(); }));
  auto resultType = cast<RankedTensorType>(result.getType());
  if (!data || !idx || !resultType.hasStaticShape())
    return im.setOutput(0, result);
  // Folded: every input is known.
  ArrayRef<int64_t> inShape = tensorType(x).getShape();
  ArrayRef<int64_t> idxShape = resultType.getShape();
  int64_t rank = inShape.size();
  int64_t dim = *::tessera::normalizeAxis(axis, rank);
  SmallVector<int64_t> inStrides = stridesOf(inShape),
                       idxStrides = stridesOf(idxShape);
  SmallVector<Attribute> picked;
  for (int64_t flat = 0; flat < static_cast<int64_t>(idx->size()); ++flat) {
    std::optional<int64_t> i = checkIndex(im, (*idx)[flat], inShape[dim]);
    if (!i)
      return failure();
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coord = (flat / idxStrides[d]) % idxShape[d];
      offset += (d == dim ? *i : coord) * inStrides[d];
    }
    picked.push_back((*data)[offset]);
  }
  result.getDefiningOp()->erase();
  return setConstantOutput(im, resultType, picked);
}

static LogicalResult convertGatherND(GraphImporter &im,
                                     const onnx::NodeProto &) {
  Value x = im.input(0), indices = im.input(1);
  if (!x || !indices)
    return failure();
  return im.setOutput(0, im.inferred<ts::GatherNDOp>(
                             x, indices, im.intAttr("batch_dims", 0)));
}

static std::optional<ts::ScatterReduction> scatterReduction(GraphImporter &im) {
  std::string name = im.stringAttr("reduction", "none");
  std::optional<ts::ScatterReduction> reduction =
      ts::symbolizeScatterReduction(name);
  if (!reduction)
    im.emitError() << "reduction '" << name
                   << "' is not supported (none, add, mul, max and min are)";
  return reduction;
}

static LogicalResult convertScatterND(GraphImporter &im,
                                      const onnx::NodeProto &) {
  Value data = im.input(0), indices = im.input(1), updates = im.input(2);
  if (!data || !indices || !updates)
    return failure();
  std::optional<ts::ScatterReduction> reduction = scatterReduction(im);
  if (!reduction)
    return failure();
  auto op = im.create<ts::ScatterNDOp>(data.getType(), data, indices, updates,
                                       *reduction);
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  // Folded when data, indices and updates are all known (reduction none).
  RankedTensorType type = tensorType(data);
  std::optional<SmallVector<Attribute>> base = knownElements(im, data);
  std::optional<SmallVector<Attribute>> values = knownElements(im, updates);
  std::optional<SmallVector<int64_t>> idx = im.constantInts(indices);
  if (!idx)
    if (DenseElementsAttr dense = im.constantElements(indices))
      idx = llvm::to_vector(llvm::map_range(
          dense.getValues<APInt>(),
          [](const APInt &v) { return v.getSExtValue(); }));
  if (*reduction != ts::ScatterReduction::none || !base || !values || !idx)
    return im.setOutput(0, op);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t k = tensorType(indices).getShape().back();
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t sliceSize = k < static_cast<int64_t>(shape.size())
                          ? strides[k - 1]
                          : 1;
  int64_t tuples = static_cast<int64_t>(idx->size()) / k;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      std::optional<int64_t> i = checkIndex(im, (*idx)[t * k + j], shape[j]);
      if (!i)
        return failure();
      offset += *i * strides[j];
    }
    for (int64_t e = 0; e < sliceSize; ++e)
      (*base)[offset + e] = (*values)[t * sliceSize + e];
  }
  op->erase();
  return setConstantOutput(im, type, *base);
}

static LogicalResult convertScatterElements(GraphImporter &im,
                                            const onnx::NodeProto &) {
  Value data = im.input(0), indices = im.input(1), updates = im.input(2);
  if (!data || !indices || !updates)
    return failure();
  std::optional<ts::ScatterReduction> reduction = scatterReduction(im);
  if (!reduction)
    return failure();
  auto op = im.create<ts::ScatterElementsOp>(data.getType(), data, indices,
                                             updates, im.intAttr("axis", 0),
                                             *reduction);
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  return im.setOutput(0, op);
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] elements
/// of each batch entry b reversed, the rest kept: a gather_elements with
/// index t < len[b] ? len[b] - 1 - t : t.
static LogicalResult convertReverseSequence(GraphImporter &im,
                                            const onnx::NodeProto &) {
  Value x = im.input(0), lens = im.input(1);
  if (!x || !lens)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t batchAxis = im.intAttr("batch_axis", 1);
  int64_t timeAxis = im.intAttr("time_axis", 0);
  if (type.getRank() < 2 || !type.hasStaticShape() ||
      !((batchAxis == 0 && timeAxis == 1) ||
        (batchAxis == 1 && timeAxis == 0)))
    return im.emitError() << "expects a static input of rank 2 or more and "
                             "batch and time axes 0 and 1";
  Type it = elementType(lens);
  int64_t steps = type.getDimSize(timeAxis);
  SmallVector<int64_t> timeShape(type.getRank(), 1), lenShape(type.getRank(), 1);
  timeShape[timeAxis] = steps;
  lenShape[batchAxis] = type.getDimSize(batchAxis);
  Value t = im.create<ts::CastOp>(
      RankedTensorType::get(timeShape, it),
      im.constantI64(llvm::to_vector(llvm::seq<int64_t>(0, steps)),
                     timeShape));
  Value len = im.create<ts::ReshapeOp>(RankedTensorType::get(lenShape, it),
                                       lens, Value());
  Value inside = im.inferred<ts::CompareOp>(ts::CompareDirection::lt, t, len);
  Value last =
      im.inferred<ts::SubOp>(len, im.constantScalar(1.0, it));
  Value mirrored = last ? im.inferred<ts::SubOp>(last, t) : Value();
  Value index =
      inside && mirrored ? im.inferred<ts::WhereOp>(inside, mirrored, t)
                         : Value();
  if (!index)
    return failure();
  index = im.create<ts::ExpandOp>(RankedTensorType::get(type.getShape(), it),
                                  index, Value());
  return im.setOutput(
      0, im.inferred<ts::GatherElementsOp>(x, index, timeAxis));
}

/// OneHot: `values[1]` where the position along `axis` equals the index
/// (negative ones counted from depth), `values[0]` elsewhere; a compare
/// with the positions and a select. depth is a constant, or the size the
/// model declares for the output along `axis`.
static LogicalResult convertOneHot(GraphImporter &im,
                                   const onnx::NodeProto &node) {
  Value indices = im.input(0), depth = im.input(1), values = im.input(2);
  if (!indices || !depth || !values)
    return failure();
  RankedTensorType idxType = tensorType(indices);
  int64_t rank = idxType.getRank() + 1;
  int64_t axis = im.intAttr("axis", -1);
  std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, rank);
  if (!dim)
    return im.emitError() << "axis " << axis << " is out of range for rank "
                          << rank;
  int64_t size;
  std::optional<ArrayRef<int64_t>> declared = im.declaredShape(node.output(0));
  if (std::optional<double> known = im.constantFloat(depth))
    size = static_cast<int64_t>(*known);
  else if (declared && static_cast<int64_t>(declared->size()) == rank &&
           !ShapedType::isDynamic((*declared)[*dim]))
    size = (*declared)[*dim];
  else
    return im.emitError() << "input 1 (depth) must be a constant, or the "
                             "output's shape declared in the model";
  if (size < 1)
    return im.emitError() << "depth must be positive, got " << size;
  if (tensorType(values).getRank() != 1 ||
      tensorType(values).getDimSize(0) != 2)
    return im.emitError() << "values must be [off, on], 2 entries";
  Type i64 = IntegerType::get(&im.context(), 64);
  Value idx = indices;
  if (elementType(idx) != i64)
    idx = im.create<ts::CastOp>(
        RankedTensorType::get(idxType.getShape(), i64), idx);
  Value depthValue = im.constantScalar(static_cast<double>(size), i64);
  Value negative = im.inferred<ts::CompareOp>(ts::CompareDirection::lt, idx,
                                              im.constantScalar(0, i64));
  Value wrapped = im.inferred<ts::AddOp>(idx, depthValue);
  idx = negative && wrapped ? im.inferred<ts::WhereOp>(negative, wrapped, idx)
                            : Value();
  if (!idx)
    return failure();
  SmallVector<int64_t> withAxis(idxType.getShape());
  withAxis.insert(withAxis.begin() + *dim, 1);
  idx = im.create<ts::ReshapeOp>(RankedTensorType::get(withAxis, i64), idx,
                                 Value());
  SmallVector<int64_t> positionsShape(rank, 1);
  positionsShape[*dim] = size;
  Value positions = im.constantI64(
      llvm::to_vector(llvm::seq<int64_t>(0, size)), positionsShape);
  Value hit =
      im.inferred<ts::CompareOp>(ts::CompareDirection::eq, idx, positions);
  Value off = im.inferred<ts::GatherOp>(values, im.constantScalar(0, i64), 0);
  Value on = im.inferred<ts::GatherOp>(values, im.constantScalar(1, i64), 0);
  if (!hit || !off || !on)
    return failure();
  return im.setOutput(0, im.inferred<ts::WhereOp>(hit, on, off));
}

/// Tile: the input repeated along each dim, as a broadcast of the input
/// with a unit dim before each of its dims, reshaped. The repeats are a
/// constant, or what the model declares for the output (output / input).
static LogicalResult convertTile(GraphImporter &im,
                                 const onnx::NodeProto &node) {
  Value x = im.input(0), repeats = im.input(1);
  if (!x || !repeats)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape())
    return im.emitError() << "needs a static input";
  SmallVector<int64_t> times;
  std::optional<ArrayRef<int64_t>> declared = im.declaredShape(node.output(0));
  if (std::optional<SmallVector<int64_t>> known = im.constantInts(repeats)) {
    times = *known;
  } else if (declared && static_cast<int64_t>(declared->size()) == rank &&
             llvm::all_of(llvm::zip(*declared, type.getShape()), [](auto p) {
               return !ShapedType::isDynamic(std::get<0>(p)) &&
                      std::get<1>(p) > 0 &&
                      std::get<0>(p) % std::get<1>(p) == 0;
             })) {
    for (auto [out, in] : llvm::zip(*declared, type.getShape()))
      times.push_back(out / in);
  } else {
    return im.emitError() << "input 1 (repeats) must be a constant, or the "
                             "output's shape declared in the model";
  }
  if (static_cast<int64_t>(times.size()) != rank ||
      llvm::any_of(times, [](int64_t t) { return t < 0; }))
    return im.emitError() << "repeats must give " << rank
                          << " non-negative counts";
  SmallVector<int64_t> spread, broadcast, result;
  for (int64_t d = 0; d < rank; ++d) {
    spread.append({1, type.getDimSize(d)});
    broadcast.append({times[d], type.getDimSize(d)});
    result.push_back(times[d] * type.getDimSize(d));
  }
  Type et = type.getElementType();
  Value view =
      im.create<ts::ReshapeOp>(RankedTensorType::get(spread, et), x, Value());
  Value expanded = im.create<ts::ExpandOp>(
      RankedTensorType::get(broadcast, et), view, Value());
  return im.setOutput(0, im.create<ts::ReshapeOp>(
                             RankedTensorType::get(result, et), expanded,
                             Value()));
}

void registerIndexingConverters(ConverterRegistry &r) {
  r["GatherElements"] = convertGatherElements;
  r["GatherND"] = convertGatherND;
  r["ScatterND"] = convertScatterND;
  r["ScatterElements"] = convertScatterElements;
  r["ReverseSequence"] = convertReverseSequence;
  r["OneHot"] = convertOneHot;
  r["Tile"] = convertTile;
  // Scatter (opsets 9 and 10) is ScatterElements under its old name.
  r["Scatter"] = convertScatterElements;
}

} // namespace tessera::onnx_import
