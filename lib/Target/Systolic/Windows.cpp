//===- Windows.cpp - convolutions and pooling over sliding windows --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A convolution is an im2col copy and GEMMs on the array; pooling is a
// copy of its windows into rows and a row reduction on the vector unit.
// Both read a padded input: a constant tensor of the padding value (zero,
// or -inf for a maximum) into whose interior each run copies the input,
// so that the windows never leave it.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tessera/Target/Systolic/Emitter.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tessera::systolic {


/// The two window dims of an NCHW op with `kernel` (H, W), ONNX `pads`
/// ([top, left, bottom, right]), `strides` and `dilations`, whose input is
/// `in` and result `out`.
static SmallVector<WindowDim, 2>
windowDims(RankedTensorType in, RankedTensorType out, ArrayRef<int64_t> kernel,
           ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
           ArrayRef<int64_t> dilations) {
  SmallVector<WindowDim, 2> dims(2);
  for (int d = 0; d < 2; ++d) {
    dims[d].size = in.getDimSize(2 + d);
    dims[d].kernel = kernel[d];
    dims[d].stride = strides.empty() ? 1 : strides[d];
    dims[d].dilation = dilations.empty() ? 1 : dilations[d];
    dims[d].padBegin = pads.empty() ? 0 : pads[d];
    dims[d].padEnd = pads.empty() ? 0 : pads[2 + d];
    dims[d].out = out.getDimSize(2 + d);
  }
  return dims;
}

/// `input` (fp32, [N, C, H, W]) in DRAM with every window of `dims` inside
/// it: the input itself when it needs no padding, else a copy into the
/// interior of a constant tensor of `fill`. Returns its byte offset.
std::optional<uint64_t>
Lowering::paddedWindows(Operation *op, Value input, ArrayRef<WindowDim> dims,
                        float fill, StringRef base) {
  std::optional<uint64_t> src = fp32Source(input);
  if (!src)
    return std::nullopt;
  auto in = cast<RankedTensorType>(input.getType());
  int64_t batch = in.getDimSize(0), c = in.getDimSize(1);
  int64_t h = dims[0].size, w = dims[1].size;
  int64_t ph = dims[0].padded(), pw = dims[1].padded();
  if (ph == h && pw == w)
    return src;
  auto type = RankedTensorType::get({batch, c, ph, pw},
                                    Float32Type::get(op->getContext()));
  size_t padded = place(base.str() + "/padded", Role::Constant,
                        sim::NumberFormat::F32, type.getShape(),
                        DenseElementsAttr::get(type, fill));
  if (failed(copy(op, *src, {batch, c, h, w}, {c * h * w, h * w, w, 1}, padded,
                  uint64_t(dims[0].padBegin * pw + dims[1].padBegin) * 4,
                  {c * ph * pw, ph * pw, pw, 1})))
    return std::nullopt;
  return tensors[padded].offset;
}

/// conv2d as an im2col copy of each group's windows into a [G, N*OH*OW,
/// C/G*KH*KW] matrix, a GEMM per group with its filters as a constant
/// [C/G*KH*KW, F/G] matrix (bias in the drain), and a copy to
/// [N, F, OH, OW].
LogicalResult Lowering::lowerConv(ts::Conv2dOp conv) {
  auto error = [&](const Twine &why) {
    conv.emitError() << why;
    return failure();
  };
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  auto type = cast<RankedTensorType>(conv.getType());
  Value filter = castSource(conv.getFilter());
  std::optional<std::vector<float>> w = constantValues(filter);
  if (!w || !in.hasStaticShape() || !type.hasStaticShape())
    return error("the systolic target needs a constant filter and static "
                 "shapes");
  FailureOr<sim::NumberFormat> format = operandFormatOf(conv);
  if (failed(format))
    return failure();
  auto ft = cast<RankedTensorType>(filter.getType());
  int64_t groups = static_cast<int64_t>(conv.getGroup());
  int64_t batch = in.getDimSize(0), c = in.getDimSize(1);
  int64_t f = ft.getDimSize(0), kh = ft.getDimSize(2), kw = ft.getDimSize(3);
  int64_t oh = type.getDimSize(2), ow = type.getDimSize(3);
  SmallVector<WindowDim, 2> dims =
      windowDims(in, type, {kh, kw}, conv.getStrides(), conv.getPads(),
                 conv.getDilations());
  std::string base = ts::onnxNodeName(conv.getLoc());
  if (base.empty())
    base = "conv_" + std::to_string(tensors.size());
  std::optional<uint64_t> src =
      paddedWindows(conv, castSource(conv.getInput()), dims, 0.0f, base);
  if (!src)
    return error("reads values the accelerator does not hold");
  int64_t ph = dims[0].padded(), pw = dims[1].padded();
  int64_t cg = c / groups, fg = f / groups;
  int64_t depth = cg * kh * kw, rows = batch * oh * ow;
  size_t cols = place(base + "/im2col", Role::Scratch, *format,
                      {groups, rows, depth});
  if (failed(copy(conv, *src, {groups, batch, oh, ow, cg, kh, kw},
                  {cg * ph * pw, c * ph * pw, dims[0].stride * pw,
                   dims[1].stride, ph * pw, dims[0].dilation * pw,
                   dims[1].dilation},
                  cols, 0, rowMajor({groups, batch, oh, ow, cg, kh, kw}))))
    return failure();
  // Each group's filters as a [depth, F/G] matrix, the groups stacked.
  std::vector<float> weights(static_cast<size_t>(groups * depth * fg));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < depth; ++r)
      for (int64_t j = 0; j < fg; ++j)
        weights[(g * depth + r) * fg + j] = (*w)[(g * fg + j) * depth + r];
  size_t filterAt = place(
      base + "/weights", Role::Constant, *format, {groups, depth, fg},
      DenseElementsAttr::get(
          RankedTensorType::get({groups, depth, fg},
                                Float32Type::get(conv.getContext())),
          ArrayRef<float>(weights)));
  std::optional<uint64_t> bias;
  if (Value b = conv.getBias()) {
    std::optional<std::vector<float>> values = constantValues(b);
    if (!values || int64_t(values->size()) != f)
      return error("the systolic target needs a constant bias per filter");
    bias = tensors[placeConstant(b, *values)].offset;
  }
  size_t product = place(base + "/product", Role::Scratch,
                         sim::NumberFormat::F32, {groups, rows, fg});
  int64_t size = sim::formatBytes(*format);
  for (int64_t g = 0; g < groups; ++g) {
    std::optional<uint64_t> groupBias;
    if (bias)
      groupBias = *bias + uint64_t(g * fg * 4);
    if (failed(gemm(conv, *format,
                    tensors[cols].offset + uint64_t(g * rows * depth * size),
                    tensors[filterAt].offset + uint64_t(g * depth * fg * size),
                    tensors[product].offset + uint64_t(g * rows * fg * 4),
                    rows, fg, depth, sim::NumberFormat::F32, groupBias)))
      return failure();
  }
  // [G, N, OH*OW, F/G] -> [N, F, OH, OW].
  size_t to = placeConvolutionResult(conv);
  return copy(conv, tensors[product].offset, {batch, groups, fg, oh, ow},
              {oh * ow * fg, rows * fg, 1, ow * fg, fg}, to, 0,
              rowMajor({batch, groups, fg, oh, ow}));
}

/// max_pool and avg_pool over [N, C, H, W]: each window copied into a row
/// of an [N*C*OH*OW, KH*KW] matrix, then a row maximum or sum on the
/// vector unit (a sum divided by the window's count: constant, or per
/// output position where the pads or ceil mode make windows shorter).
LogicalResult Lowering::lowerPool(Operation *op) {
  auto error = [&](const Twine &why) {
    op->emitError() << "'" << op->getName() << "' " << why;
    return failure();
  };
  Value input = op->getOperand(0);
  auto in = cast<RankedTensorType>(input.getType());
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!in.hasStaticShape() || !type.hasStaticShape() ||
      !in.getElementType().isF32() || in.getRank() != 4)
    return error("runs on the systolic target over static f32 "
                 "[N, C, H, W] tensors only");
  bool isMax = isa<ts::MaxPoolOp>(op);
  auto attr = [&](StringRef name) {
    return cast<DenseI64ArrayAttr>(op->getAttr(name)).asArrayRef();
  };
  SmallVector<WindowDim, 2> dims =
      windowDims(in, type, attr("kernel_shape"), attr("strides"), attr("pads"),
                 attr("dilations"));
  std::string base = ts::onnxNodeName(op->getLoc());
  if (base.empty())
    base = op->getName().stripDialect().str() + "_" +
           std::to_string(tensors.size());
  float fill = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  std::optional<uint64_t> src = paddedWindows(op, input, dims, fill, base);
  if (!src)
    return error("reads values the accelerator does not hold");
  int64_t batch = in.getDimSize(0), c = in.getDimSize(1);
  int64_t ph = dims[0].padded(), pw = dims[1].padded();
  int64_t oh = dims[0].out, ow = dims[1].out;
  int64_t kh = dims[0].kernel, kw = dims[1].kernel;
  int64_t rows = batch * c * oh * ow, cols = kh * kw;
  size_t windows = place(base + "/windows", Role::Scratch,
                         sim::NumberFormat::F32, {rows, cols});
  if (failed(copy(op, *src, {batch, c, oh, ow, kh, kw},
                  {c * ph * pw, ph * pw, dims[0].stride * pw, dims[1].stride,
                   dims[0].dilation * pw, dims[1].dilation},
                  windows, 0, rowMajor({batch, c, oh, ow, kh, kw}))))
    return failure();

  using Shape = sim::VectorStep::Shape;
  sim::VectorStep step;
  step.rows = rows;
  step.cols = cols;
  step.slots = {{Shape::Full, tensors[windows].offset}, {Shape::Column, {}}};
  step.ops.push_back({isMax ? sim::VectorFn::RowMax : sim::VectorFn::RowSum,
                      1, 0, -1, std::nullopt});
  if (!isMax) {
    // Elements in the window that count: the input's, and with
    // count_include_pad its pads' (never what ceil mode adds beyond them).
    bool includePad = op->hasAttr("count_include_pad");
    auto counted = [&](const WindowDim &d, int64_t o) {
      int64_t n = 0;
      for (int64_t i = 0; i < d.kernel; ++i) {
        int64_t at = o * d.stride - d.padBegin + i * d.dilation;
        n += includePad ? at >= -d.padBegin && at < d.size + d.padEnd
                        : at >= 0 && at < d.size;
      }
      return n;
    };
    std::vector<int64_t> counts(static_cast<size_t>(oh * ow));
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        counts[y * ow + x] = counted(dims[0], y) * counted(dims[1], x);
    if (llvm::all_equal(counts)) {
      step.ops.push_back(
          {sim::VectorFn::Div, 1, 1, -1, float(counts.front())});
    } else {
      std::vector<float> perRow(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r)
        perRow[r] = 1.0f / float(counts[r % (oh * ow)]);
      auto scaleType = RankedTensorType::get(
          {rows}, Float32Type::get(op->getContext()));
      size_t at = place(base + "/scales", Role::Constant,
                        sim::NumberFormat::F32, {rows},
                        DenseElementsAttr::get(scaleType,
                                               ArrayRef<float>(perRow)));
      step.slots.push_back({Shape::Column, tensors[at].offset});
      step.ops.push_back({sim::VectorFn::Mul, 1, 1, 2, std::nullopt});
    }
  }
  return finishVectorStep(op, step, 1);
}

/// A constant-mode pad: a constant tensor of the pad value into whose
/// interior each run copies the input (copied whole into the output when
/// the pad is one of the model's results).
LogicalResult Lowering::lowerPad(ts::PadOp pad) {
  auto error = [&](const Twine &why) {
    pad.emitError() << "'" << pad->getName() << "' " << why;
    return failure();
  };
  auto in = cast<RankedTensorType>(pad.getInput().getType());
  auto type = cast<RankedTensorType>(pad.getType());
  if (!in.hasStaticShape() || !type.hasStaticShape() ||
      !in.getElementType().isF32())
    return error("runs on the systolic target over static f32 tensors only");
  if (pad.getMode() != ts::PadMode::constant)
    return error("pads with a constant only on the systolic target (not '" +
                 ts::stringifyPadMode(pad.getMode()) + "')");
  std::optional<uint64_t> src = fp32Source(pad.getInput());
  if (!src)
    return error("reads a value the accelerator does not hold");
  std::string base = ts::onnxNodeName(pad.getLoc());
  if (base.empty())
    base = "pad_" + std::to_string(tensors.size());
  auto f32 = RankedTensorType::get(type.getShape(),
                                   Float32Type::get(pad.getContext()));
  size_t filled =
      place(base + "/filled", Role::Constant, sim::NumberFormat::F32,
            type.getShape(),
            DenseElementsAttr::get(f32, float(pad.getValue().convertToDouble())));
  SmallVector<int64_t> strides = rowMajor(type.getShape());
  size_t to = filled;
  if (outputs.count(pad.getResult())) {
    to = placeResult(pad, pad.getResult());
    if (failed(copy(pad, tensors[filled].offset, type.getShape(), strides, to,
                    0, strides)))
      return failure();
  } else {
    placed[pad.getResult()] = {filled, leadingRows(type),
                               type.getShape().back()};
  }
  int64_t offset = 0;
  for (int64_t d = 0; d < in.getRank(); ++d)
    offset += pad.getPads()[d] * strides[d];
  return copy(pad, *src, in.getShape(), rowMajor(in.getShape()), to,
              uint64_t(offset) * 4, strides);
}

} // namespace tessera::systolic
