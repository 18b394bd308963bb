//===- Pooling.cpp - ONNX MaxPool, AveragePool, global pools and MaxUnpool ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

LogicalResult autoPads(GraphImporter &im, StringRef autoPad,
                       ArrayRef<int64_t> spatial, ArrayRef<int64_t> kernel,
                       ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                       SmallVectorImpl<int64_t> &pads) {
  size_t n = spatial.size();
  pads.assign(2 * n, 0);
  if (autoPad == "NOTSET" || autoPad == "VALID")
    return success();
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return im.emitError() << "unknown auto_pad '" << autoPad << "'";
  for (size_t i = 0; i < n; ++i) {
    if (ShapedType::isDynamic(spatial[i]) || ShapedType::isDynamic(kernel[i]))
      return im.emitError() << "auto_pad " << autoPad
                            << " needs static spatial dimensions";
    int64_t out = (spatial[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 -
               spatial[i]);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[n + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return success();
}

/// MaxPool and AveragePool: the window attributes resolved (auto_pad into
/// explicit pads, defaults of ones and zeros), then tessera.max_pool or
/// tessera.avg_pool.
template <typename OpTy>
static LogicalResult convertPool(GraphImporter &im,
                                 const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  constexpr bool isMax = std::is_same_v<OpTy, ts::MaxPoolOp>;
  if (isMax && node.output_size() > 1 && !node.output(1).empty())
    return im.emitError() << "the Indices output is not supported";
  int64_t rank = tensorType(x).getRank();
  if (rank < 3)
    return im.emitError() << "expects an input of rank 3 or more (N x C x "
                             "spatial dims), got rank "
                          << rank;
  size_t spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = im.intsAttr("kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return im.emitError() << "kernel_shape must give " << spatial
                          << " sizes, one per spatial dim";
  auto ints = [&](StringRef name, int64_t fill,
                  size_t count) -> std::optional<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> v = im.intsAttr(name);
    if (!v)
      return SmallVector<int64_t>(count, fill);
    if (v->size() != count) {
      im.emitError() << name << " must give " << count << " values, got "
                     << v->size();
      return std::nullopt;
    }
    return v;
  };
  std::optional<SmallVector<int64_t>> strides = ints("strides", 1, spatial);
  std::optional<SmallVector<int64_t>> dilations =
      ints("dilations", 1, spatial);
  if (!strides || !dilations)
    return failure();
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  SmallVector<int64_t> pads;
  if (autoPad == "NOTSET") {
    std::optional<SmallVector<int64_t>> given = ints("pads", 0, 2 * spatial);
    if (!given)
      return failure();
    pads = *given;
  } else if (failed(autoPads(im, autoPad,
                             tensorType(x).getShape().drop_front(2), *kernel,
                             *strides, *dilations, pads))) {
    return failure();
  }
  // ONNX's SAME rule sizes the output as ceil(in / stride) from the pads it
  // chose; ceil_mode applies to explicit pads.
  bool ceil = autoPad == "NOTSET" && im.intAttr("ceil_mode", 0) != 0;
  Builder b(&im.context());
  auto attr = [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); };
  UnitAttr ceilAttr = ceil ? b.getUnitAttr() : UnitAttr();
  Value result;
  if constexpr (isMax)
    result = im.inferred<ts::MaxPoolOp>(x, attr(*kernel), attr(*strides),
                                        attr(pads), attr(*dilations),
                                        ceilAttr);
  else
    result = im.inferred<ts::AvgPoolOp>(
        x, attr(*kernel), attr(*strides), attr(pads), attr(*dilations),
        ceilAttr,
        im.intAttr("count_include_pad", 0) ? b.getUnitAttr() : UnitAttr());
  return im.setOutput(0, result);
}

/// GlobalAveragePool and GlobalMaxPool: a mean or maximum over every
/// spatial dim, kept as size 1.
template <typename OpTy>
static LogicalResult convertGlobalPool(GraphImporter &im,
                                       const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorType(x).getRank();
  if (rank < 3)
    return im.emitError() << "expects an input of rank 3 or more (N x C x "
                             "spatial dims), got rank "
                          << rank;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  return im.setOutput(0, im.inferred<OpTy>(x, axes, true));
}

/// MaxUnpool: zeros with each input value written at its index (a position
/// in the flattened output that the window attributes imply, as MaxPool's
/// Indices give it): a scatter_elements over the flattened tensors. A
/// larger output_shape (constant, or as the model declares the output)
/// pads that result with zeros at the end of each dim, as ONNX Runtime
/// does.
static LogicalResult convertMaxUnpool(GraphImporter &im,
                                      const onnx::NodeProto &node) {
  Value x = im.input(0), indices = im.input(1);
  if (!x || !indices)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  if (rank < 3 || !type.hasStaticShape() ||
      tensorType(indices).getShape() != type.getShape())
    return im.emitError() << "expects static X and I of one shape, rank 3 "
                             "or more";
  size_t spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = im.intsAttr("kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return im.emitError() << "kernel_shape must give " << spatial
                          << " sizes, one per spatial dim";
  SmallVector<int64_t> strides =
      im.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads =
      im.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || pads.size() != 2 * spatial)
    return im.emitError() << "strides and pads must give one value per "
                             "spatial dim (pads: two)";
  SmallVector<int64_t> implied(type.getShape());
  for (size_t i = 0; i < spatial; ++i)
    implied[2 + i] = (type.getDimSize(2 + i) - 1) * strides[i] +
                     (*kernel)[i] - pads[i] - pads[spatial + i];
  SmallVector<int64_t> out = implied;
  if (Value given = im.optionalInput(2)) {
    std::optional<ArrayRef<int64_t>> declared =
        im.declaredShape(node.output(0));
    if (std::optional<SmallVector<int64_t>> known = im.constantInts(given))
      out.assign(known->begin(), known->end());
    else if (declared && ::tessera::staticElementCount(*declared))
      out.assign(declared->begin(), declared->end());
    else
      return im.emitError() << "input 2 (output_shape) must be a constant, "
                               "or the output's shape declared in the model";
    if (static_cast<int64_t>(out.size()) != rank ||
        llvm::any_of(llvm::zip(out, implied), [](auto p) {
          return std::get<0>(p) < std::get<1>(p);
        }))
      return im.emitError() << "output_shape " << ::tessera::formatShape(out)
                            << " must have rank " << rank
                            << " and be at least "
                            << ::tessera::formatShape(implied);
  }
  std::optional<int64_t> count = ::tessera::staticElementCount(implied);
  if (!count || *count <= 0)
    return im.emitError() << "the output shape "
                          << ::tessera::formatShape(implied)
                          << " must be positive";
  Type et = type.getElementType();
  Builder b(&im.context());
  auto flatType = RankedTensorType::get({*count}, et);
  Value zeros = im.create<ts::ConstantOp>(cast<ElementsAttr>(
      DenseElementsAttr::get(flatType, b.getZeroAttr(et))));
  int64_t inCount = type.getNumElements();
  Value flatX = im.create<ts::ReshapeOp>(RankedTensorType::get({inCount}, et),
                                         x, Value());
  Value flatI = im.create<ts::ReshapeOp>(
      RankedTensorType::get({inCount}, elementType(indices)), indices,
      Value());
  Value scattered = im.create<ts::ScatterElementsOp>(
      flatType, zeros, flatI, flatX, 0, ts::ScatterReduction::none);
  Value result = im.create<ts::ReshapeOp>(RankedTensorType::get(implied, et),
                                          scattered, Value());
  if (out != implied) {
    SmallVector<int64_t> padding(2 * rank, 0);
    for (int64_t d = 0; d < rank; ++d)
      padding[rank + d] = out[d] - implied[d];
    result = im.inferred<ts::PadOp>(
        result, b.getDenseI64ArrayAttr(padding),
        ts::PadModeAttr::get(&im.context(), ts::PadMode::constant),
        b.getF64FloatAttr(0.0));
  }
  return im.setOutput(0, result);
}

void registerPoolingConverters(ConverterRegistry &r) {
  r["MaxPool"] = convertPool<ts::MaxPoolOp>;
  r["AveragePool"] = convertPool<ts::AvgPoolOp>;
  r["GlobalAveragePool"] = convertGlobalPool<ts::ReduceMeanOp>;
  r["GlobalMaxPool"] = convertGlobalPool<ts::ReduceMaxOp>;
  r["MaxUnpool"] = convertMaxUnpool;
}

} // namespace tessera::onnx_import
