//===- Upsampling.h - transposed convolutions whose windows do not overlap -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TRANSFORMS_UPSAMPLING_H
#define TESSERA_TRANSFORMS_UPSAMPLING_H

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace tessera {

/// A tessera.conv2d as the importer writes an ONNX ConvTranspose whose
/// kernel equals its stride, with no padding, dilation, groups or
/// output_padding (a learned upsampling, as segmentation decoders use): the
/// input spread with zeros (a reshape to [N, C, H, 1, W, 1], a pad of
/// sh - 1 and sw - 1 zeros after the unit dims, a reshape to
/// [N, C, H*sh, W*sw]) convolved with the transposed, flipped filter
/// [F, C, sh, sw] padded by sh - 1 and sw - 1 before. Every output
/// element then takes exactly one input element and one tap:
///
///   y[n, f, i*sh + a, j*sw + b] = sum_c x[n, c, i, j] w[c, f, a, b] + bias[f]
struct UpsamplingConvolution {
  /// The ConvTranspose's input x, [N, C, H, W].
  mlir::Value input;
  /// The stride, which is the kernel.
  int64_t sh = 0, sw = 0;
  /// The reshape, pad and reshape that spread the input with zeros.
  llvm::SmallVector<mlir::Operation *, 3> spreading;
};

/// `conv` as such a transposed convolution, or nothing. Batch and spatial
/// dims may be dynamic; the channels and the filter are static. A
/// tessera.cast may stand between the spread input and `conv`.
std::optional<UpsamplingConvolution>
matchUpsamplingConvolution(mlir::tessera::Conv2dOp conv);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_UPSAMPLING_H
