//===- ConvTranspose.cpp - transposed convolutions as one GEMM ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The importer writes ONNX's ConvTranspose as a convolution over the input
// spread with zeros (a reshape to [N, C, H, 1, W, 1], a pad of sh - 1 and
// sw - 1 zeros, a reshape to [N, C, H*sh, W*sw]) against the flipped,
// transposed filter. Im2col would multiply all those zeros. When the
// kernel equals the stride (PaddleOCR's 2x2 at stride 2 upsampling) and
// nothing is cropped, every output element takes exactly one input
// element and one tap:
//
//   y[n, f, i*sh + a, j*sw + b] = sum_c x[n, c, i, j] w[c, f, a, b] + bias[f]
//
// so it is one GEMM of the input as [N*H*W, C] (a transposing copy in the
// operand format) against the filter as a constant [C, F*sh*sw] matrix
// (bias in the drain, repeated per tap), whose columns a strided copy
// scatters to [N, F, H*sh, W*sw]. Other transposed convolutions run as
// the importer wrote them (zero insertion, im2col).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "tessera/Target/Systolic/Emitter.h"
#include "tessera/Transforms/Upsampling.h"

using namespace mlir;

namespace tessera::systolic {

std::optional<ConvTransposeMatch> matchConvTranspose(ts::Conv2dOp conv) {
  // The shared matcher (include/tessera/Transforms/Upsampling.h), for the
  // static fp32 shapes and constant filter this lowering reads.
  std::optional<UpsamplingConvolution> match =
      matchUpsamplingConvolution(conv);
  if (!match)
    return std::nullopt;
  auto x = cast<RankedTensorType>(match->input.getType());
  if (!x.hasStaticShape() || !x.getElementType().isF32() ||
      !constantValues(castSource(conv.getFilter())))
    return std::nullopt;
  return ConvTransposeMatch{match->input, match->sh, match->sw,
                            match->spreading};
}

LogicalResult Lowering::lowerConvTranspose(ts::Conv2dOp conv,
                                           const ConvTransposeMatch &match) {
  auto error = [&](const Twine &why) {
    conv.emitError() << why;
    return failure();
  };
  FailureOr<sim::NumberFormat> format = operandFormatOf(conv);
  if (failed(format))
    return failure();
  auto in = cast<RankedTensorType>(match.input.getType());
  Value filter = castSource(conv.getFilter());
  std::optional<std::vector<float>> values = constantValues(filter);
  if (!values)
    return error("reads values the accelerator does not hold");
  std::optional<uint64_t> src = fp32Source(match.input);
  if (!src)
    return error("reads values the accelerator does not hold");
  int64_t n = in.getDimSize(0), c = in.getDimSize(1), h = in.getDimSize(2),
          w = in.getDimSize(3);
  int64_t sh = match.sh, sw = match.sw, taps = sh * sw;
  int64_t f = cast<RankedTensorType>(filter.getType()).getDimSize(0);
  int64_t rows = n * h * w, cols = f * taps;
  std::string base = ts::onnxNodeName(conv.getLoc());
  if (base.empty())
    base = "conv_transpose_" + std::to_string(tensors.size());

  // The input as [N*H*W, C] in the operand format: per image, the
  // order whose strided side moves fewer DMA rows.
  size_t lhs = place(base + "/nhwc", Role::Scratch, *format, {rows, c});
  LogicalResult copied =
      h * w <= c * h ? copy(conv, *src, {n, h, w, c}, {c * h * w, w, 1, h * w},
                            lhs, 0, rowMajor({n, h, w, c}))
                     : copy(conv, *src, {n, c, h, w}, {c * h * w, h * w, w, 1},
                            lhs, 0, {h * w * c, 1, w * c, c});
  if (failed(copied))
    return failure();
  // The filter: the convolution's is ConvTranspose's, transposed and
  // flipped; column f*taps + a*sw + b holds w[c, f, a, b].
  std::vector<float> weights(static_cast<size_t>(c * cols));
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t fi = 0; fi < f; ++fi)
      for (int64_t a = 0; a < sh; ++a)
        for (int64_t b = 0; b < sw; ++b)
          weights[ci * cols + fi * taps + a * sw + b] =
              (*values)[((fi * c + ci) * sh + (sh - 1 - a)) * sw +
                        (sw - 1 - b)];
  auto f32 = Float32Type::get(conv.getContext());
  size_t rhs =
      place(base + "/weights", Role::Constant, *format, {c, cols},
            DenseElementsAttr::get(RankedTensorType::get({c, cols}, f32),
                                   ArrayRef<float>(weights)));
  std::optional<uint64_t> bias;
  if (Value b = conv.getBias()) {
    std::optional<std::vector<float>> perFilter = constantValues(b);
    if (!perFilter || int64_t(perFilter->size()) != f)
      return error("the systolic target needs a constant bias per filter");
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t j = 0; j < cols; ++j)
      row[j] = (*perFilter)[j / taps];
    bias =
        tensors[place(base + "/bias", Role::Constant, sim::NumberFormat::F32,
                      {cols},
                      DenseElementsAttr::get(RankedTensorType::get({cols}, f32),
                                             ArrayRef<float>(row)))]
            .offset;
  }
  size_t product = place(base + "/product", Role::Scratch,
                         sim::NumberFormat::F32, {rows, cols});
  if (failed(gemm(conv, *format, tensors[lhs].offset, tensors[rhs].offset,
                  tensors[product].offset, rows, cols, c,
                  sim::NumberFormat::F32, bias)))
    return failure();
  // [N, H, W, F, sh, sw] -> [N, F, H, sh, W, sw].
  size_t to = placeConvolutionResult(conv);
  return copy(conv, tensors[product].offset, {n, f, h, sh, w, sw},
              {h * w * cols, taps, w * cols, sw, cols, 1}, to, 0,
              rowMajor({n, f, h, sh, w, sw}));
}

} // namespace tessera::systolic
