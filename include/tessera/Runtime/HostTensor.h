//===- HostTensor.h - tensors in host memory, and their ONNX file form ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_RUNTIME_HOSTTENSOR_H
#define TESSERA_RUNTIME_HOSTTENSOR_H

#include "tessera/Support/ElementType.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::runtime {

/// The element types shared with the simulator and the C API.
using tessera::ElementType;
using tessera::elementSize;
using tessera::elementTypeName;

/// A tensor's bytes: its own, or a block a compiled model allocated (a
/// result, handed over without a copy), released by its owner when the
/// last buffer sharing it goes. Changing the size makes the bytes its own.
class TensorBuffer {
public:
  TensorBuffer() = default;
  /// `size` bytes at `bytes`, kept alive by `owner`.
  static TensorBuffer adopt(uint8_t *bytes, size_t size,
                            std::shared_ptr<void> owner) {
    TensorBuffer buffer;
    buffer.external = bytes;
    buffer.externalSize = size;
    buffer.owner = std::move(owner);
    return buffer;
  }

  uint8_t *data() { return owner ? external : own.data(); }
  const uint8_t *data() const { return owner ? external : own.data(); }
  size_t size() const { return owner ? externalSize : own.size(); }
  bool empty() const { return size() == 0; }
  /// Resizes to `size` bytes (new bytes are zero), keeping the bytes that
  /// fit.
  void resize(size_t size) {
    if (owner) {
      std::vector<uint8_t> copy(external,
                                external + std::min(size, externalSize));
      owner.reset();
      own = std::move(copy);
    }
    own.resize(size);
  }
  template <typename Iterator> void assign(Iterator first, Iterator last) {
    owner.reset();
    own.assign(first, last);
  }

private:
  std::vector<uint8_t> own;
  std::shared_ptr<void> owner;
  uint8_t *external = nullptr;
  size_t externalSize = 0;
};

/// A dense row-major tensor in host memory.
struct HostTensor {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  TensorBuffer data;

  int64_t numElements() const;
  /// Element `i` widened to double (for comparisons and printing).
  double at(int64_t i) const;
};

/// A dense row-major tensor in a device's memory: `address` is the
/// device's; `bytes` is the size of the buffer there (for an output, the
/// room the caller gave it).
struct DeviceTensor {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t address = 0;
  uint64_t bytes = 0;
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
  /// ||actual - expected|| / ||expected|| (0 when both are zero).
  double relativeL2 = 0;
  int64_t worstIndex = -1;
};
Comparison compareTensors(const HostTensor &actual, const HostTensor &expected,
                          double rtol, double atol);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_HOSTTENSOR_H
