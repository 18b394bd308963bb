//===- HostTensor.h - tensors in host memory, and their ONNX file form ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_RUNTIME_HOSTTENSOR_H
#define TESSERA_RUNTIME_HOSTTENSOR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime {

enum class ElementType { F32, F16, BF16, I8, I32, I64, Bool };

/// Bytes per element as stored in memory (bool: one byte).
size_t elementSize(ElementType type);
/// "f32", "bf16", ...
llvm::StringRef elementTypeName(ElementType type);

/// A dense row-major tensor owned by the host.
struct HostTensor {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
  /// Element `i` widened to double (for comparisons and printing).
  double at(int64_t i) const;
};

/// How far `actual` is from `expected`, numpy.allclose-style.
struct Comparison {
  bool shapesMatch = true;
  int64_t mismatches = 0;
  double maxAbsError = 0, maxRelError = 0;
  /// The largest |expected| element, for errors relative to the range.
  double maxAbsExpected = 0;
  /// The cosine similarity of the two tensors as vectors (1 when both are
  /// zero).
  double cosine = 1;
  int64_t worstIndex = -1;
};
Comparison compareTensors(const HostTensor &actual, const HostTensor &expected,
                          double rtol, double atol);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_HOSTTENSOR_H
