//===- Invoke.h - calls a compiled model through its packed interface ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every compiled form of a model (the in-process JIT and the shared-library
// artifact) exposes one packed function `void(void **args)`: args[0] points
// to the results' memref descriptors, which the model fills with buffers it
// allocates, and args[1..] to one input descriptor each.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_INVOKE_H
#define TESSERA_RUNTIME_INVOKE_H

#include "tessera/Runtime/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace tessera::runtime {

/// The kDynamicDim of a signature's shape.
constexpr int64_t kDynamic = INT64_MIN;

struct TensorSignature {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  /// Symbolic names of dims ("" when none); equal names are equal sizes.
  std::vector<std::string> dimParams;
};

/// The prefix of the names of the outputs that count, per quantize, the
/// values a run saturated (tessera-count-saturation, `--saturation-counts`):
/// "tessera.saturated:<ONNX node>:<operand>", an i64 pair: the values
/// saturated and the values quantized.
inline constexpr char kSaturationOutputPrefix[] = "tessera.saturated:";

struct ModelSignature {
  std::string entry;
  std::vector<TensorSignature> inputs, outputs;
};

/// The signature as the JSON an artifact embeds, and back.
std::string signatureToJSON(const ModelSignature &signature);
llvm::Expected<ModelSignature> signatureFromJSON(llvm::StringRef json);

using PackedFunction = void (*)(void **);
/// Frees a result buffer with the allocator the model allocated it with.
using FreeFunction = void (*)(void *);
/// The count of allocations the model's allocator refused so far, and the
/// size of the last one in `*lastBytes` when not null.
using AllocationFailuresFunction = uint64_t (*)(uint64_t *lastBytes);

/// A ranked memref descriptor (allocated and aligned pointer, offset,
/// sizes, strides) over a dense row-major buffer at `data`.
std::vector<int64_t> descriptorFor(void *data,
                                   const std::vector<int64_t> &shape);

/// Checks `inputs` against `signature`: their number, element types, ranks,
/// byte sizes, static dims, and dims that share a symbolic name.
llvm::Error checkInputs(const ModelSignature &signature,
                        llvm::ArrayRef<HostTensor> inputs);
/// The same checks of tensors in device memory, whose buffers may be larger
/// than their shapes need.
llvm::Error checkInputs(const ModelSignature &signature,
                        llvm::ArrayRef<DeviceTensor> inputs);

/// Checks `inputs` against `signature` (checkInputs), calls `function`, and returns the
/// outputs in the buffers the model allocated (no copy): each is released
/// with `release` when the last output using it goes, and holds
/// `keepAlive` (the loaded library `release` lives in) until then. When
/// `failures` is given and its count changed during the call (an
/// allocation was refused and the compiled code stopped), the run is an
/// error naming the size and its results are discarded. The count belongs
/// to the allocator (one per artifact; one per process for models compiled
/// in process), so a run concurrent with a failing one that shares it may
/// report that failure too, and then leaks its own results.
llvm::Expected<std::vector<HostTensor>>
invokePacked(PackedFunction function, FreeFunction release,
             const ModelSignature &signature, llvm::ArrayRef<HostTensor> inputs,
             std::shared_ptr<void> keepAlive = nullptr,
             AllocationFailuresFunction failures = nullptr);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_INVOKE_H
