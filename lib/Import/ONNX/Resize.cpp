//===- Resize.cpp - ONNX Resize (nearest, linear, cubic) -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Resize becomes tessera.resize with one scale per dim. Scales come from
// the `scales` input, or from `sizes` as size / input size (ONNX's rule).
// Sizes known only at run time (or an input of symbolic size) go on the op
// as its `sizes` operand, the result's shape at run time. Scales that are
// not constants need the output's shape declared in the model (value_info
// or a graph output): it fixes the result, and runtime scales still drive
// the coordinates.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;
using ::tessera::kDynamicDim;

template <typename Enum>
static std::optional<Enum> parseEnum(GraphImporter &im, StringRef attr,
                                     StringRef defaultValue,
                                     std::optional<Enum> (*symbolize)(StringRef),
                                     StringRef accepted) {
  std::string value = im.stringAttr(attr, defaultValue);
  std::optional<Enum> parsed = symbolize(value);
  if (!parsed)
    im.emitError() << attr << " '" << value << "' is not supported ("
                   << accepted << " are)";
  return parsed;
}

static LogicalResult buildResize(GraphImporter &im, const onnx::NodeProto &node,
                                 Value x, Value roi, Value scales, Value sizes,
                                 ts::ResizeMode mode,
                                 ts::ResizeCoordinateMode coordinates,
                                 ts::ResizeNearestMode nearest);

static LogicalResult convertResize(GraphImporter &im,
                                   const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  auto mode = parseEnum<ts::ResizeMode>(im, "mode", "nearest",
                                        ts::symbolizeResizeMode,
                                        "nearest, linear and cubic");
  if (!mode)
    return failure();
  auto coordinates = parseEnum<ts::ResizeCoordinateMode>(
      im, "coordinate_transformation_mode", "half_pixel",
      ts::symbolizeResizeCoordinateMode,
      "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, "
      "asymmetric, tf_half_pixel_for_nn and tf_crop_and_resize");
  if (!coordinates)
    return failure();
  auto nearest = parseEnum<ts::ResizeNearestMode>(
      im, "nearest_mode", "round_prefer_floor", ts::symbolizeResizeNearestMode,
      "round_prefer_floor, round_prefer_ceil, floor and ceil");
  if (!nearest)
    return failure();
  if (im.intAttr("antialias", 0) != 0)
    return im.emitError() << "antialias is not supported";
  std::string policy = im.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return im.emitError() << "keep_aspect_ratio_policy '" << policy
                          << "' is not supported (stretch is)";
  if (im.attr("axes"))
    return im.emitError() << "the axes attribute is not supported; give "
                             "scales or sizes for every dim";

  // Opset 10 had (X, scales) only; 11 on (X, roi, scales, sizes).
  bool old = im.opset() < 11;
  Value roi = old ? Value() : im.optionalInput(1);
  Value scales = im.optionalInput(old ? 1 : 2);
  Value sizes = old ? Value() : im.optionalInput(3);
  return buildResize(im, node, x, roi, scales, sizes, *mode, *coordinates,
                     *nearest);
}

/// tessera.resize from scales or sizes (exactly one given), the output's
/// shape from them when constant, else from the model's declaration.
static LogicalResult buildResize(GraphImporter &im, const onnx::NodeProto &node,
                                 Value x, Value roi, Value scales, Value sizes,
                                 ts::ResizeMode mode,
                                 ts::ResizeCoordinateMode coordinates,
                                 ts::ResizeNearestMode nearest) {
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  ArrayRef<int64_t> in = type.getShape();
  // An empty scales tensor stands for "absent" (opset 11 and 12 models).
  if (scales && tensorType(scales).getRank() == 1 &&
      tensorType(scales).getDimSize(0) == 0)
    scales = {};
  if (!scales == !sizes)
    return im.emitError() << "expects exactly one of scales and sizes";
  Value given = scales ? scales : sizes;
  RankedTensorType givenType = tensorType(given);
  if (givenType.getRank() != 1 ||
      !::tessera::dimsCompatible(givenType.getDimSize(0), rank))
    return im.emitError() << (scales ? "scales" : "sizes") << " must have "
                          << rank << " entries, one per dim";

  std::optional<ArrayRef<int64_t>> declared =
      im.declaredShape(node.output(0));
  if (declared && static_cast<int64_t>(declared->size()) != rank)
    declared = std::nullopt;
  Builder b(&im.context());
  auto f32 = b.getF32Type();
  SmallVector<int64_t> out(rank, kDynamicDim);
  Value scaleOperand, runtimeSizes;
  std::optional<SmallVector<int64_t>> knownSizes =
      sizes ? im.constantInts(sizes) : std::nullopt;
  bool staticSizes = knownSizes && llvm::none_of(in, ShapedType::isDynamic);
  if (sizes && !staticSizes) {
    // Sizes known only at run time (interpolate(size=x.shape[-2:]) with a
    // symbolic image size), or constant sizes of an input of symbolic size:
    // the result's shape at run time, its ratios to the input's as scales.
    if (tensorType(sizes).getElementType() != b.getI64Type())
      return im.emitError() << "sizes must be int64";
    std::optional<ArrayRef<int64_t>> partial = im.knownInts(sizes);
    for (int64_t d = 0; d < rank; ++d) {
      if (partial && static_cast<int64_t>(partial->size()) == rank &&
          (*partial)[d] != kDynamicDim)
        out[d] = (*partial)[d];
      else if (declared && !ShapedType::isDynamic((*declared)[d]))
        out[d] = (*declared)[d];
      if (!ShapedType::isDynamic(out[d]) && out[d] <= 0)
        return im.emitError()
               << "size " << out[d] << " of dim " << d << " must be positive";
    }
    auto ratios = RankedTensorType::get({rank}, f32);
    Value shape = im.create<ts::ShapeOp>(
        RankedTensorType::get({rank}, b.getI64Type()), x);
    scaleOperand = im.inferred<ts::DivOp>(im.create<ts::CastOp>(ratios, sizes),
                                          im.create<ts::CastOp>(ratios, shape));
    runtimeSizes = sizes;
  } else if (sizes) {
    out.assign(knownSizes->begin(), knownSizes->end());
    SmallVector<float> values;
    for (int64_t d = 0; d < rank; ++d) {
      if (out[d] <= 0 || in[d] == 0)
        return im.emitError() << "size " << out[d] << " of dim " << d
                              << " must be positive";
      values.push_back(static_cast<float>(static_cast<double>(out[d]) /
                                          static_cast<double>(in[d])));
    }
    auto scalesType = RankedTensorType::get({rank}, f32);
    scaleOperand = im.create<ts::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(scalesType,
                                                  ArrayRef<float>(values))));
  } else {
    if (elementType(scales) != f32)
      return im.emitError() << "scales must be float32";
    if (std::optional<SmallVector<double>> known = im.constantFloats(scales)) {
      for (int64_t d = 0; d < rank; ++d) {
        double s = (*known)[d];
        if (!(s > 0))
          return im.emitError() << "scale " << s << " of dim " << d
                                << " must be positive";
        // ONNX: output size = floor(input size * scale), which must fit
        // in int64_t (converting a larger double is undefined: found by
        // the importer fuzzer).
        if (!ShapedType::isDynamic(in[d])) {
          double size = std::floor(static_cast<double>(in[d]) * s);
          if (!(size < 9.2e18))
            return im.emitError() << "scale " << s << " of dim " << d
                                  << " makes an output dim of " << size
                                  << ", which does not fit in 64 bits";
          out[d] = static_cast<int64_t>(size);
        }
      }
    } else if (declared) {
      out.assign(declared->begin(), declared->end());
    } else {
      return im.emitError()
             << "input "
             << (node.op_type() == "Upsample" || im.opset() < 11 ? 1 : 2)
             << " (scales) must be a constant, or the output's shape "
                "declared in the model";
    }
    scaleOperand = scales;
  }
  if (coordinates != ts::ResizeCoordinateMode::tf_crop_and_resize) {
    roi = {};
  } else if (!roi) {
    return im.emitError() << "tf_crop_and_resize needs input 1 (roi)";
  } else if (elementType(roi) != f32) {
    return im.emitError() << "roi must be float32";
  }
  if (mode != ts::ResizeMode::nearest && !isa<FloatType>(type.getElementType()))
    return im.emitError() << im.stringAttr("mode", "") << " interpolation of "
                          << type.getElementType()
                          << " is not supported (floating-point only)";

  auto result = im.create<ts::ResizeOp>(
      RankedTensorType::get(out, type.getElementType()), x, scaleOperand, roi,
      runtimeSizes, mode, coordinates, nearest,
      APFloat(static_cast<double>(im.floatAttr("cubic_coeff_a", -0.75f))),
      im.intAttr("exclude_outside", 0) != 0,
      APFloat(static_cast<double>(im.floatAttr("extrapolation_value", 0.0f))));
  return im.setOutput(0, result);
}

/// Upsample (opsets 7 to 9): Resize with asymmetric coordinates, nearest
/// rounding down; scales from the attribute (7) or input 1 (9).
static LogicalResult convertUpsample(GraphImporter &im,
                                     const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  std::string name = im.stringAttr("mode", "nearest");
  std::optional<ts::ResizeMode> mode = ts::symbolizeResizeMode(
      name == "bilinear" ? "linear" : name);
  if (!mode || *mode == ts::ResizeMode::cubic)
    return im.emitError() << "mode '" << name
                          << "' is not supported (nearest and linear are)";
  Value scales;
  if (const onnx::AttributeProto *attr = im.attr("scales")) {
    SmallVector<float> values(attr->floats().begin(), attr->floats().end());
    auto type = RankedTensorType::get(
        {static_cast<int64_t>(values.size())},
        Builder(&im.context()).getF32Type());
    scales = im.create<ts::ConstantOp>(cast<ElementsAttr>(
        DenseElementsAttr::get(type, ArrayRef<float>(values))));
  } else {
    scales = im.input(1);
    if (!scales)
      return failure();
  }
  return buildResize(im, node, x, Value(), scales, Value(), *mode,
                     ts::ResizeCoordinateMode::asymmetric,
                     ts::ResizeNearestMode::floor);
}

void registerResizeConverters(ConverterRegistry &r) {
  r["Resize"] = convertResize;
  r["Upsample"] = convertUpsample;
}

} // namespace tessera::onnx_import
