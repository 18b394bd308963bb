//===- ShapeInference.cpp - shape rules shared by ops, importer and tests -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Support/ShapeInference.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tessera;
using llvm::ArrayRef;

std::string tessera::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (dim == kDynamicDim)
      os << '?';
    else
      os << dim;
  });
  os << ']';
  return text;
}

bool tessera::dimsCompatible(int64_t a, int64_t b) {
  return a == b || a == kDynamicDim || b == kDynamicDim;
}

static llvm::Error shapeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Broadcasts one aligned pair of dimensions; nullopt when incompatible.
static std::optional<int64_t> broadcastDim(int64_t a, int64_t b) {
  if (a == b)
    return a;
  if (a == 1)
    return b;
  if (b == 1)
    return a;
  if (a == kDynamicDim)
    return b;
  if (b == kDynamicDim)
    return a;
  return std::nullopt;
}

llvm::Expected<Shape> tessera::broadcastShapes(ArrayRef<int64_t> lhs,
                                               ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Walk from the trailing dimension; a missing leading dim acts as 1.
    int64_t a = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t b = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    std::optional<int64_t> dim = broadcastDim(a, b);
    if (!dim)
      return shapeError("shapes " + formatShape(lhs) + " and " +
                        formatShape(rhs) + " do not broadcast (dimension " +
                        llvm::Twine(a) + " vs " + llvm::Twine(b) + ")");
    result[rank - 1 - i] = *dim;
  }
  return result;
}

bool tessera::isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && !dimsCompatible(from[i], to[offset + i]))
      return false;
  return true;
}

std::optional<int64_t> tessera::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

llvm::Expected<Shape> tessera::inferMatmulShape(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs,
                                                bool transposeLhs,
                                                bool transposeRhs) {
  if (lhs.empty() || rhs.empty())
    return shapeError("operands must have rank >= 1, got " + formatShape(lhs) +
                      " and " + formatShape(rhs));
  if ((transposeLhs && lhs.size() < 2) || (transposeRhs && rhs.size() < 2))
    return shapeError("a transposed operand must have rank >= 2");
  Shape a(lhs.begin(), lhs.end()), b(rhs.begin(), rhs.end());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (transposeLhs)
    std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (transposeRhs)
    std::swap(b[b.size() - 1], b[b.size() - 2]);
  int64_t m = a[a.size() - 2], k = a.back();
  int64_t k2 = b[b.size() - 2], n = b.back();
  if (!dimsCompatible(k, k2))
    return shapeError("contracting dimensions differ: lhs " +
                      formatShape(lhs) + " has " + llvm::Twine(k) +
                      ", rhs " + formatShape(rhs) + " has " + llvm::Twine(k2));
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return shapeError("batch dimensions: " + llvm::toString(batch.takeError()));
  Shape result = std::move(*batch);
  if (!lhsVector)
    result.push_back(m);
  if (!rhsVector)
    result.push_back(n);
  return result;
}

/// Ceiling division of positive numbers, free of overflow.
static int64_t ceilDiv(int64_t n, int64_t d) { return n / d + (n % d != 0); }

int64_t tessera::sliceFirstIndex(int64_t dim, int64_t start, int64_t step) {
  if (start < 0)
    start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim)
                  : std::clamp<int64_t>(start, 0, dim - 1);
}

int64_t tessera::sliceDimSize(int64_t dim, int64_t start, int64_t end,
                              int64_t step) {
  if (dim == kDynamicDim)
    return kDynamicDim;
  if (dim <= 0)
    return 0;
  // Negative indices count from the back; adding dim cannot overflow since
  // dim > 0.
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  // Clamp as ONNX does: starts and ends to [0, dim] going forwards; starts to
  // [0, dim - 1] and ends to [-1, dim - 1] going backwards.
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? ceilDiv(end - start, step) : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  if (start <= end)
    return 0;
  // -INT64_MIN overflows; such a step takes only the first element.
  return step == std::numeric_limits<int64_t>::min()
             ? 1
             : ceilDiv(start - end, -step);
}

int64_t tessera::convOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                int64_t padBegin, int64_t padEnd,
                                int64_t dilation) {
  if (input == kDynamicDim || kernel == kDynamicDim)
    return kDynamicDim;
  int64_t span, padded;
  // Absurd attribute values must not wrap around into a plausible size.
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) ||
      __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(input, padBegin, &padded) ||
      __builtin_add_overflow(padded, padEnd, &padded) || padded < span)
    return 0;
  return (padded - span) / stride + 1;
}

int64_t tessera::poolOutputSize(int64_t input, int64_t kernel, int64_t stride,
                                int64_t padBegin, int64_t padEnd,
                                int64_t dilation, bool ceilMode) {
  int64_t floor =
      convOutputSize(input, kernel, stride, padBegin, padEnd, dilation);
  if (floor == kDynamicDim || floor == 0 || !ceilMode)
    return floor;
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = input + padBegin + padEnd;
  int64_t size = floor + ((padded - span) % stride != 0 ? 1 : 0);
  if ((size - 1) * stride >= input + padBegin)
    --size;
  return size;
}

std::optional<int64_t> tessera::staticElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim == kDynamicDim || dim < 0)
      return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return std::nullopt;
    count *= dim;
  }
  return count;
}
