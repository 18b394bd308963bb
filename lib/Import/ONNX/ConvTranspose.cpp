//===- ConvTranspose.cpp - ONNX ConvTranspose as a convolution ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A transposed convolution is a convolution of the input with zeros
// inserted between its elements (stride - 1 of them), padded by
// dilation * (kernel - 1) less the ONNX pads, with the filter's channel
// dims swapped (per group) and its window flipped. The importer builds
// exactly that from reshape, pad, transpose, slice and tessera.conv2d, so
// every backend that runs a convolution runs it; 1-D goes through 2-D
// with a unit height.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

static LogicalResult convertConvTranspose(GraphImporter &im,
                                          const onnx::NodeProto &) {
  Value x = im.input(0), w = im.input(1);
  if (!x || !w)
    return failure();
  Value bias = im.optionalInput(2);
  RankedTensorType xType = tensorType(x), wType = tensorType(w);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return im.emitError() << "only 1-D and 2-D transposed convolutions (3-D "
                             "or 4-D input) are supported, got a rank-"
                          << rank << " input";
  if (wType.getRank() != rank)
    return im.emitError() << "the filter must have the input's rank " << rank;
  int64_t spatial = rank - 2;
  int64_t group = im.intAttr("group", 1);
  int64_t cin = xType.getDimSize(1);
  ArrayRef<int64_t> wShape = wType.getShape();
  if (!wType.hasStaticShape() || xType.isDynamicDim(1))
    return im.emitError() << "needs a static channel dim and a static filter";
  if (group < 1 || cin % group || wShape[0] != cin)
    return im.emitError() << "the filter's dim 0 (" << wShape[0]
                          << ") must be the input's channels (" << cin
                          << "), divisible by group " << group;
  SmallVector<int64_t> kernel(wShape.drop_front(2));
  if (std::optional<SmallVector<int64_t>> given = im.intsAttr("kernel_shape"))
    if (*given != kernel)
      return im.emitError() << "kernel_shape disagrees with the filter";
  auto ints = [&](StringRef name, int64_t fill,
                  int64_t count) -> FailureOr<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> v = im.intsAttr(name);
    if (!v)
      return SmallVector<int64_t>(count, fill);
    if (static_cast<int64_t>(v->size()) != count)
      return im.emitError() << name << " must give " << count << " values";
    return *v;
  };
  FailureOr<SmallVector<int64_t>> strides = ints("strides", 1, spatial);
  FailureOr<SmallVector<int64_t>> dilations = ints("dilations", 1, spatial);
  FailureOr<SmallVector<int64_t>> outputPadding =
      ints("output_padding", 0, spatial);
  FailureOr<SmallVector<int64_t>> pads = ints("pads", 0, 2 * spatial);
  if (failed(strides) || failed(dilations) || failed(outputPadding) ||
      failed(pads))
    return failure();
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return im.emitError() << "unknown auto_pad '" << autoPad << "'";
  std::optional<SmallVector<int64_t>> outputShape = im.intsAttr("output_shape");
  if (outputShape && static_cast<int64_t>(outputShape->size()) != spatial)
    return im.emitError() << "output_shape must give " << spatial
                          << " sizes, one per spatial dim";

  // Per spatial dim: how much of the full result to drop at the start and
  // to add (negative: drop) at the end (ONNX's output size rules).
  SmallVector<int64_t> begin(spatial), end(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = xType.getDimSize(2 + i);
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if ((outputShape || same) && ShapedType::isDynamic(in))
      return im.emitError() << "output_shape and SAME auto_pad need static "
                               "spatial dims";
    std::optional<int64_t> target;
    if (outputShape)
      target = (*outputShape)[i];
    else if (same)
      target = in * (*strides)[i];
    if (target) {
      int64_t full = (*strides)[i] * (in - 1) + (*outputPadding)[i] +
                     (kernel[i] - 1) * (*dilations)[i] + 1;
      int64_t total = full - *target;
      if (total < 0) {
        // A larger output than the kernel reaches: zeros (and the bias)
        // at the end.
        begin[i] = 0;
        end[i] = -total;
      } else if (autoPad == "SAME_UPPER") {
        begin[i] = total / 2;
        end[i] = -(total - total / 2);
      } else {
        begin[i] = total - total / 2;
        end[i] = -(total / 2);
      }
    } else if (autoPad == "VALID") {
      begin[i] = 0;
      end[i] = 0;
    } else {
      begin[i] = (*pads)[i];
      end[i] = -(*pads)[spatial + i];
    }
  }

  Builder b(&im.context());
  Type et = xType.getElementType();
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) -> Value {
    return im.create<ts::ReshapeOp>(RankedTensorType::get(shape, et), v,
                                    Value());
  };
  // 1-D: a unit height in front of the length.
  if (spatial == 1) {
    SmallVector<int64_t> xs(xType.getShape());
    xs.insert(xs.begin() + 2, 1);
    x = reshape(x, xs);
    SmallVector<int64_t> ws(wShape);
    ws.insert(ws.begin() + 2, 1);
    w = reshape(w, ws);
    kernel.insert(kernel.begin(), 1);
    strides->insert(strides->begin(), 1);
    dilations->insert(dilations->begin(), 1);
    outputPadding->insert(outputPadding->begin(), 0);
    begin.insert(begin.begin(), 0);
    end.insert(end.begin(), 0);
  }
  RankedTensorType x4 = tensorType(x);
  int64_t n = x4.getDimSize(0), h = x4.getDimSize(2), wd = x4.getDimSize(3);
  int64_t sh = (*strides)[0], sw = (*strides)[1];

  // Zeros between the elements: [N, C, H, 1, W, 1] padded to
  // [N, C, H, sh, W, sw], then [N, C, H*sh, W*sw] (sh-1 / sw-1 trailing
  // zeros that the padding below accounts for).
  Value spread = x;
  if (sh > 1 || sw > 1) {
    spread = reshape(x, {n, cin, h, 1, wd, 1});
    SmallVector<int64_t> zeros(12, 0);
    zeros[6 + 3] = sh - 1;
    zeros[6 + 5] = sw - 1;
    spread = im.inferred<ts::PadOp>(
        spread, b.getDenseI64ArrayAttr(zeros),
        ts::PadModeAttr::get(&im.context(), ts::PadMode::constant),
        b.getF64FloatAttr(0.0));
    if (!spread)
      return failure();
    auto times = [](int64_t size, int64_t by) {
      return ShapedType::isDynamic(size) ? size : size * by;
    };
    SmallVector<int64_t> spreadShape = {n, cin, times(h, sh), times(wd, sw)};
    if (llvm::none_of(spreadShape, ShapedType::isDynamic)) {
      spread = reshape(spread, spreadShape);
    } else {
      // Dynamic dims merge with the strides: the shape at run time is the
      // input's times [1, 1, sh, sw].
      auto i64 = im.builder().getI64Type();
      Value shape =
          im.create<ts::ShapeOp>(RankedTensorType::get({4}, i64), x);
      shape = im.inferred<ts::MulOp>(
          shape, im.constantI64({1, 1, sh, sw}, ArrayRef<int64_t>{4}));
      if (!shape)
        return failure();
      spread = im.create<ts::ReshapeOp>(RankedTensorType::get(spreadShape, et),
                                        spread, shape);
    }
  }

  // The filter: [Cin, Cout/g, kh, kw] -> [Cout, Cin/g, kh, kw], flipped.
  int64_t coutPerGroup = wShape[1], cinPerGroup = cin / group;
  Value filter;
  if (group == 1) {
    filter = im.inferred<ts::TransposeOp>(w, ArrayRef<int64_t>{1, 0, 2, 3});
  } else {
    Value grouped =
        reshape(w, {group, cinPerGroup, coutPerGroup, kernel[0], kernel[1]});
    grouped = im.inferred<ts::TransposeOp>(grouped,
                                           ArrayRef<int64_t>{0, 2, 1, 3, 4});
    if (!grouped)
      return failure();
    filter = reshape(grouped,
                     {group * coutPerGroup, cinPerGroup, kernel[0], kernel[1]});
  }
  if (!filter)
    return failure();
  filter = im.inferred<ts::SliceOp>(
      filter, b.getDenseI64ArrayAttr({-1, -1}),
      b.getDenseI64ArrayAttr({-kernel[0] - 1, -kernel[1] - 1}),
      b.getDenseI64ArrayAttr({2, 3}), b.getDenseI64ArrayAttr({-1, -1}));
  if (!filter)
    return failure();

  // Convolution pads: the full reach d*(k-1), less what ONNX drops, plus
  // output_padding at the end, less the trailing stride zeros. Negative
  // amounts are cropped from the convolution's result instead.
  SmallVector<int64_t> convPads(4), crop(4);
  for (int64_t i = 0; i < 2; ++i) {
    int64_t reach = (*dilations)[i] * (kernel[i] - 1);
    int64_t lead = reach - begin[i];
    int64_t trail = reach + end[i] + (*outputPadding)[i] -
                    ((*strides)[i] - 1);
    convPads[i] = std::max<int64_t>(lead, 0);
    convPads[2 + i] = std::max<int64_t>(trail, 0);
    crop[i] = std::max<int64_t>(-lead, 0);
    crop[2 + i] = std::max<int64_t>(-trail, 0);
  }
  Value y = im.inferred<ts::Conv2dOp>(
      spread, filter, bias, b.getDenseI64ArrayAttr({1, 1}),
      b.getDenseI64ArrayAttr(convPads), b.getDenseI64ArrayAttr(*dilations),
      b.getI64IntegerAttr(group));
  if (!y)
    return failure();
  // What ONNX drops beyond the convolution's reach, cropped from its
  // result: only where that result's size is static (the slice's bounds
  // are).
  SmallVector<int64_t> starts, ends, axes;
  ArrayRef<int64_t> convShape = tensorType(y).getShape();
  for (int64_t i = 0; i < 2; ++i) {
    if (crop[i] == 0 && crop[2 + i] == 0)
      continue;
    if (ShapedType::isDynamic(convShape[2 + i]))
      return im.emitError()
             << "the result is cropped along the "
             << (spatial == 1 ? "length"
                 : i == 0     ? "height"
                              : "width")
             << " (pads, or strides longer than the kernel's reach), whose "
                "size is symbolic; that is not supported: give it a static "
                "size";
    starts.push_back(crop[i]);
    ends.push_back(convShape[2 + i] - crop[2 + i]);
    axes.push_back(2 + i);
  }
  if (!axes.empty()) {
    y = im.inferred<ts::SliceOp>(
        y, b.getDenseI64ArrayAttr(starts), b.getDenseI64ArrayAttr(ends),
        b.getDenseI64ArrayAttr(axes), DenseI64ArrayAttr());
    if (!y)
      return failure();
  }
  if (spatial == 1) {
    SmallVector<int64_t> shape(tensorType(y).getShape());
    shape.erase(shape.begin() + 2);
    y = reshape(y, shape);
  }
  return im.setOutput(0, y);
}

void registerConvTransposeConverters(ConverterRegistry &r) {
  r["ConvTranspose"] = convertConvTranspose;
}

} // namespace tessera::onnx_import
