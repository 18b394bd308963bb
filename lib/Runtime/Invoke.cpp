//===- Invoke.cpp - calls a compiled model through its packed interface --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/Invoke.h"
#include "tessera/Support/ResourceLimits.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cstdlib>
#include <cstring>

using namespace tessera::runtime;
using llvm::Twine;

static llvm::Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::vector<int64_t>
tessera::runtime::descriptorFor(void *data, const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

/// The checks of checkInputs on host or device tensors; `bytesOf` gives the
/// bytes a tensor holds, which must be its shape's size, or at least that
/// unless `exactSize`.
template <typename Tensor, typename BytesOf>
static llvm::Error checkTensors(const ModelSignature &sig,
                                llvm::ArrayRef<Tensor> inputs, BytesOf bytesOf,
                                bool exactSize) {
  if (inputs.size() != sig.inputs.size())
    return fail("the model takes " + Twine(sig.inputs.size()) +
                " inputs, got " + Twine(inputs.size()));
  llvm::StringMap<int64_t> bound;
  for (auto [tensor, expected] : llvm::zip(inputs, sig.inputs)) {
    if (tensor.type != expected.type)
      return fail("input '" + expected.name + "' must be " +
                  elementTypeName(expected.type) + ", got " +
                  elementTypeName(tensor.type));
    if (tensor.shape.size() != expected.shape.size())
      return fail("input '" + expected.name + "' must have rank " +
                  Twine(expected.shape.size()) + ", got " +
                  Twine(tensor.shape.size()));
    std::optional<uint64_t> bytes =
        tessera::denseByteSize(tensor.shape, tensor.type);
    if (!bytes || bytesOf(tensor) < *bytes ||
        (exactSize && bytesOf(tensor) != *bytes))
      return fail("input '" + expected.name + "' holds " +
                  Twine(bytesOf(tensor)) + " bytes for its shape");
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      int64_t want = expected.shape[i], got = tensor.shape[i];
      if (want != kDynamic && want != got)
        return fail("input '" + expected.name + "' dimension " + Twine(i) +
                    " must be " + Twine(want) + ", got " + Twine(got));
      const std::string &param = expected.dimParams[i];
      if (param.empty())
        continue;
      auto [it, inserted] = bound.try_emplace(param, got);
      if (!inserted && it->second != got)
        return fail("input '" + expected.name + "' dimension " + Twine(i) +
                    " ('" + param + "') is " + Twine(got) +
                    " but another input set it to " + Twine(it->second));
    }
  }
  return llvm::Error::success();
}

llvm::Error tessera::runtime::checkInputs(const ModelSignature &sig,
                                          llvm::ArrayRef<HostTensor> inputs) {
  return checkTensors(
      sig, inputs,
      [](const HostTensor &t) -> uint64_t { return t.data.size(); },
      /*exactSize=*/true);
}

llvm::Error tessera::runtime::checkInputs(const ModelSignature &sig,
                                          llvm::ArrayRef<DeviceTensor> inputs) {
  return checkTensors(
      sig, inputs, [](const DeviceTensor &t) { return t.bytes; },
      /*exactSize=*/false);
}

llvm::Expected<std::vector<HostTensor>> tessera::runtime::invokePacked(
    PackedFunction function, FreeFunction release, const ModelSignature &sig,
    llvm::ArrayRef<HostTensor> inputs, std::shared_ptr<void> keepAlive,
    AllocationFailuresFunction failures) {
  if (llvm::Error error = checkInputs(sig, inputs))
    return std::move(error);
  // Arguments: the results' descriptors (filled by the callee), then one
  // descriptor per input.
  size_t resultWords = 0;
  for (const TensorSignature &out : sig.outputs)
    resultWords += 3 + 2 * out.shape.size();
  std::vector<int64_t> results(std::max<size_t>(resultWords, 1), 0);
  std::vector<std::vector<int64_t>> descriptors;
  for (const HostTensor &t : inputs)
    descriptors.push_back(
        descriptorFor(const_cast<uint8_t *>(t.data.data()), t.shape));
  std::vector<void *> pointers = {results.data()};
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  if (sig.outputs.empty())
    packed.erase(packed.begin());
  uint64_t failuresBefore = failures ? failures(nullptr) : 0;
  function(packed.data());
  uint64_t lastBytes = 0;
  if (failures && failures(&lastBytes) != failuresBefore)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the model ran out of memory: an allocation of " +
            describeBytes(lastBytes) + " failed (the memory limit is " +
            describeBytes(memoryLimitBytes()) +
            ", TESSERA_MEMORY_LIMIT); the run stopped and has no results");

  // Each result keeps the buffer the model allocated (no copy); the buffer
  // goes back to the model's allocator, which `keepAlive` keeps loaded,
  // when the last result sharing it goes (two results may share one).
  std::vector<HostTensor> outputs;
  llvm::DenseMap<void *, std::shared_ptr<void>> owners;
  const int64_t *word = results.data();
  for (const TensorSignature &out : sig.outputs) {
    size_t rank = out.shape.size();
    auto *allocated = reinterpret_cast<void *>(word[0]);
    auto *aligned = reinterpret_cast<uint8_t *>(word[1]);
    HostTensor t;
    t.name = out.name;
    t.type = out.type;
    t.shape.assign(word + 3, word + 3 + rank);
    std::shared_ptr<void> &owner = owners[allocated];
    if (!owner)
      owner = std::shared_ptr<void>(
          allocated, [release, keepAlive](void *p) { release(p); });
    t.data = TensorBuffer::adopt(aligned + word[2] * elementSize(t.type),
                                 t.numElements() * elementSize(t.type), owner);
    outputs.push_back(std::move(t));
    word += 3 + 2 * rank;
  }
  return outputs;
}
