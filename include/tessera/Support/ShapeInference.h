//===- ShapeInference.h - shape rules shared by ops, importer and tests ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Pure functions over shapes (no MLIR types), so that the dialect, the ONNX
// importer and the unit tests apply one rule. A dimension equal to
// kDynamicDim is unknown until run time.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SUPPORT_SHAPEINFERENCE_H
#define TESSERA_SUPPORT_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace tessera {

/// The value of an unknown dimension; equal to mlir::ShapedType::kDynamic.
constexpr int64_t kDynamicDim = std::numeric_limits<int64_t>::min();

using Shape = llvm::SmallVector<int64_t, 6>;

/// Prints a shape as "[2, ?, 4]" for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Whether two dimensions can be equal at run time.
bool dimsCompatible(int64_t a, int64_t b);

/// Numpy-style broadcast of two shapes: shapes align at the trailing
/// dimension and a 1 stretches to the other size. An unknown dimension
/// against a static size N > 1 becomes N; against 1 or unknown it stays
/// unknown. Fails with a message when two static sizes differ and neither
/// is 1.
llvm::Expected<Shape> broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                      llvm::ArrayRef<int64_t> rhs);

/// Whether `from` broadcasts (unidirectionally) to exactly `to`.
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Maps an axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Result shape of ONNX MatMul (with Gemm's optional transposes of the last
/// two dimensions): rank-1 operands act as a row (lhs) or column (rhs)
/// vector whose unit dimension is dropped; batch dimensions broadcast.
llvm::Expected<Shape> inferMatmulShape(llvm::ArrayRef<int64_t> lhs,
                                       llvm::ArrayRef<int64_t> rhs,
                                       bool transposeLhs, bool transposeRhs);

/// Number of elements ONNX Slice takes from a dimension of size `dim`
/// (clamping starts and ends as ONNX does); kDynamicDim when `dim` is.
/// `step` must be non-zero.
int64_t sliceDimSize(int64_t dim, int64_t start, int64_t end, int64_t step);

/// The first index ONNX Slice takes from a dimension of size `dim` > 0:
/// `start` counted from the back when negative, then clamped to [0, dim]
/// going forwards and to [0, dim - 1] going backwards (`step` < 0).
int64_t sliceFirstIndex(int64_t dim, int64_t start, int64_t step);

/// Output size of a convolution along one spatial dimension; kDynamicDim
/// when `input` is; a value < 1 means the window does not fit.
int64_t convOutputSize(int64_t input, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation);

/// Output size of a pooling window along one dim (ONNX MaxPool/AveragePool):
/// as convOutputSize, or rounded up with `ceilMode`, where a last window
/// that would start in the end padding is dropped (PyTorch's rule). 0 when
/// the window does not fit.
int64_t poolOutputSize(int64_t input, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation,
                       bool ceilMode);

/// Product of the dimensions; nullopt when one is unknown or it overflows.
std::optional<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape);

} // namespace tessera

#endif // TESSERA_SUPPORT_SHAPEINFERENCE_H
