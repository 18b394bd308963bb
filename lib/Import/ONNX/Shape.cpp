//===- Shape.cpp - ONNX Constant, Shape, Size, ConstantOfShape, EyeLike, Range ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;
using ::tessera::kDynamicDim;

static LogicalResult convertConstant(GraphImporter &im,
                                     const onnx::NodeProto &node) {
  Builder b(&im.context());
  if (node.attribute_size() != 1)
    return im.emitError() << "expects exactly one value attribute";
  const onnx::AttributeProto &attr = node.attribute(0);
  Value result;
  if (attr.name() == "value") {
    FailureOr<ElementsAttr> value = im.convertTensorAttr(attr.t());
    if (failed(value))
      return failure();
    result = im.create<ts::ConstantOp>(*value);
    if (auto dense = dyn_cast<DenseIntElementsAttr>(*value))
      if (dense.getType().getRank() <= 1 && !dense.getElementType().isInteger(1))
        im.setKnownInts(result, llvm::to_vector(llvm::map_range(
                                    dense.getValues<APInt>(),
                                    [](const APInt &v) {
                                      return v.getSExtValue();
                                    })));
  } else if (attr.name() == "value_float") {
    result = im.constantScalar(attr.f(), b.getF32Type());
  } else if (attr.name() == "value_int") {
    result = im.constantI64({attr.i()}, ArrayRef<int64_t>{});
  } else if (attr.name() == "value_ints") {
    result = im.constantI64(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end()));
  } else if (attr.name() == "value_floats") {
    SmallVector<float> floats(attr.floats().begin(), attr.floats().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(floats.size())},
                                      b.getF32Type());
    result = im.create<ts::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef(floats))));
  } else {
    return im.emitError() << "attribute '" << attr.name()
                          << "' is not supported";
  }
  return im.setOutput(0, result);
}

/// Shape (with opset 15's start and end): static dims are known entries.
static LogicalResult convertShape(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  ArrayRef<int64_t> dims = tensorType(x).getShape();
  int64_t rank = dims.size();
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampIndex(im.intAttr("start", 0));
  int64_t end = clampIndex(im.intAttr("end", rank));
  SmallVector<int64_t> entries(dims.begin() + start,
                               dims.begin() + std::max(start, end));
  return im.setIntsOutput(
      entries, {static_cast<int64_t>(entries.size())}, [&]() -> Value {
        auto type = RankedTensorType::get({rank}, im.builder().getI64Type());
        Value shape = im.create<ts::ShapeOp>(type, x);
        if (start == 0 && end == rank)
          return shape;
        Builder b(&im.context());
        return im.inferred<ts::SliceOp>(shape, b.getDenseI64ArrayAttr({start}),
                                        b.getDenseI64ArrayAttr({end}),
                                        DenseI64ArrayAttr(),
                                        DenseI64ArrayAttr());
      });
}

/// Size: the element count, a product of dims when some are dynamic.
static LogicalResult convertSize(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  if (std::optional<int64_t> count =
          ::tessera::staticElementCount(type.getShape()))
    return im.setOutput(0, im.constantI64({*count}, ArrayRef<int64_t>{}));
  auto i64 = im.builder().getI64Type();
  Value shape = im.create<ts::ShapeOp>(
      RankedTensorType::get({type.getRank()}, i64), x);
  Value product;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    Value dim = im.inferred<ts::GatherOp>(
        shape, im.constantI64({i}, ArrayRef<int64_t>{}), int64_t(0));
    product = product ? im.inferred<ts::MulOp>(product, dim) : dim;
  }
  return im.setOutput(0, product);
}

/// EyeLike: ones on diagonal k of a 2-D tensor shaped like the input, a
/// constant (the input's values do not matter).
static LogicalResult convertEyeLike(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  if (type.getRank() != 2 || !type.hasStaticShape())
    return im.emitError() << "expects a static 2-D input";
  Type elementType = type.getElementType();
  if (const onnx::AttributeProto *dtype = im.attr("dtype")) {
    elementType = convertElementType(dtype->i(), im.context());
    if (!elementType)
      return im.emitError() << "dtype " << dataTypeName(dtype->i())
                            << " is not supported";
  }
  int64_t k = im.intAttr("k", 0);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  Builder b(&im.context());
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      bool one = j - i == k;
      if (isa<FloatType>(elementType))
        values.push_back(b.getFloatAttr(elementType, one ? 1.0 : 0.0));
      else
        values.push_back(b.getIntegerAttr(elementType, one ? 1 : 0));
    }
  auto resultType = RankedTensorType::get({rows, cols}, elementType);
  return im.setOutput(0, im.create<ts::ConstantOp>(cast<ElementsAttr>(
                             DenseElementsAttr::get(resultType, values))));
}

/// ConstantOfShape: a splat of `value` (default float 0).
static LogicalResult convertConstantOfShape(GraphImporter &im,
                                            const onnx::NodeProto &) {
  Value shape = im.input(0);
  if (!shape)
    return failure();
  Builder b(&im.context());
  Attribute element = b.getF32FloatAttr(0.0f);
  if (const onnx::AttributeProto *attr = im.attr("value")) {
    FailureOr<ElementsAttr> value = im.convertTensorAttr(attr->t());
    if (failed(value))
      return failure();
    if (value->getNumElements() != 1)
      return im.emitError() << "value must hold exactly one element";
    element = *value->getValues<Attribute>().begin();
  }
  Type elementType = cast<TypedAttr>(element).getType();
  std::optional<ArrayRef<int64_t>> dims = im.knownInts(shape);
  if (dims && !llvm::is_contained(*dims, kDynamicDim)) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return im.emitError() << "shape " << ::tessera::formatShape(*dims)
                            << " has a negative dimension";
    auto type = RankedTensorType::get(*dims, elementType);
    Value result = im.create<ts::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(type, element)));
    if (auto intAttr = dyn_cast<IntegerAttr>(element);
        intAttr && dims->size() == 1 && (*dims)[0] <= 64 &&
        !elementType.isInteger(1))
      im.setKnownInts(result,
                      SmallVector<int64_t>((*dims)[0], intAttr.getInt()));
    return im.setOutput(0, result);
  }
  // Dynamic: broadcast a scalar to the runtime shape.
  if (tensorType(shape).getRank() != 1 || tensorType(shape).isDynamicDim(0))
    return im.emitError() << "the shape input must be 1-D with a static "
                             "length";
  SmallVector<int64_t> resultDims =
      dims ? SmallVector<int64_t>(*dims)
           : SmallVector<int64_t>(tensorType(shape).getDimSize(0), kDynamicDim);
  Value scalar = im.create<ts::ConstantOp>(cast<ElementsAttr>(
      DenseElementsAttr::get(RankedTensorType::get({}, elementType), element)));
  return im.setOutput(0, im.create<ts::ExpandOp>(
                             RankedTensorType::get(resultDims, elementType),
                             scalar, shape));
}

/// Range: folds to a constant when its scalars are known.
static LogicalResult convertRange(GraphImporter &im, const onnx::NodeProto &) {
  Value start = im.input(0), limit = im.input(1), delta = im.input(2);
  if (!start || !limit || !delta)
    return failure();
  Type type = elementType(start);
  auto s = im.constantFloat(start), l = im.constantFloat(limit),
       d = im.constantFloat(delta);
  if (s && l && d) {
    if (*d == 0.0)
      return im.emitError() << "delta must not be zero";
    double length = std::ceil((*l - *s) / *d);
    if (!(length < 1e8))
      return im.emitError() << "the range is too long";
    // A negative length is an empty range (converting a huge negative
    // double to int64_t is undefined: found by the importer fuzzer).
    int64_t count = length > 0 ? static_cast<int64_t>(length) : 0;
    // Integer elements are computed in int64_t: every one must fit.
    if (isa<IntegerType>(type) &&
        !(std::fabs(*s) + static_cast<double>(count) * std::fabs(*d) < 9.2e18))
      return im.emitError() << "the range's values do not fit in 64 bits";
    auto resultType = RankedTensorType::get({count}, type);
    if (isa<IntegerType>(type)) {
      SmallVector<int64_t> values;
      for (int64_t i = 0; i < count; ++i)
        values.push_back(static_cast<int64_t>(*s) +
                         i * static_cast<int64_t>(*d));
      SmallVector<APInt> ints = llvm::to_vector(llvm::map_range(
          values, [&](int64_t v) {
            return APInt(type.getIntOrFloatBitWidth(), v, /*isSigned=*/true);
          }));
      Value result = im.create<ts::ConstantOp>(
          cast<ElementsAttr>(DenseElementsAttr::get(resultType, ints)));
      if (count <= 64)
        im.setKnownInts(result, values);
      return im.setOutput(0, result);
    }
    SmallVector<APFloat> floats;
    for (int64_t i = 0; i < count; ++i) {
      APFloat v(*s + i * *d);
      bool lost;
      v.convert(cast<FloatType>(type).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      floats.push_back(v);
    }
    return im.setOutput(0, im.create<ts::ConstantOp>(cast<ElementsAttr>(
                               DenseElementsAttr::get(resultType, floats))));
  }
  auto resultType = RankedTensorType::get({kDynamicDim}, type);
  return im.setOutput(
      0, im.create<ts::RangeOp>(resultType, start, limit, delta));
}

void registerShapeConverters(ConverterRegistry &r) {
  r["Constant"] = convertConstant;
  r["Shape"] = convertShape;
  r["Size"] = convertSize;
  r["ConstantOfShape"] = convertConstantOfShape;
  r["EyeLike"] = convertEyeLike;
  r["Range"] = convertRange;
}

} // namespace tessera::onnx_import
