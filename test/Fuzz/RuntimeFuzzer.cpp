//===- RuntimeFuzzer.cpp - libFuzzer target: signatures and the C API -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each input is a model signature (the JSON a compiled artifact embeds and
// the runtime parses when it loads one), a NUL byte, then bytes that pick
// the inputs of a run. The signature is loaded through the C API
// (tessera_model_load_from_memory, with a loader of this target's own that
// stands in for a compiled model), every signature query is asked, in and
// out of range, and the model is run twice, through tessera_model_run and
// tessera_model_run_nocopy, on inputs of random dtypes, ranks and dims:
// usually the signature's own shapes with one thing changed (a dtype, a
// rank, a dim, a symbolic dim that disagrees with another, a buffer too
// small), sometimes anything. An error from the C API is a fine outcome; a
// crash, a sanitizer report or a leak is a finding.
//
// The stand-in model is what the runtime's packed-call path (invokePacked)
// calls: it fills each result descriptor with a buffer of the output's
// shape, its dynamic dims taken from the inputs' symbolic dims. Its outputs
// are capped at 1 MiB, like a compiled model's would be by its inputs.
//
//===----------------------------------------------------------------------===//
#include "tessera-c/Runtime.h"
#include "tessera/Runtime/Executable.h"
#include "tessera/Runtime/Invoke.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace tessera::runtime;

namespace {
/// What the stand-in model's packed function sees of its call.
struct CallContext {
  const ModelSignature *signature = nullptr;
  llvm::ArrayRef<HostTensor> inputs;
};
thread_local CallContext currentCall;

/// The size of `shape` in elements, or -1 beyond 1 Mi elements.
int64_t cappedElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d && n > (int64_t(1) << 20) / d))
      return -1;
    n *= d;
  }
  return n;
}

/// A compiled model's packed function: args[0] holds the result
/// descriptors, which it fills with buffers it allocates.
void standInModel(void **args) {
  const ModelSignature &sig = *currentCall.signature;
  if (sig.outputs.empty())
    return;
  llvm::StringMap<int64_t> bound;
  for (auto [tensor, expected] : llvm::zip(currentCall.inputs, sig.inputs))
    for (size_t i = 0; i < expected.dimParams.size(); ++i)
      if (!expected.dimParams[i].empty() && i < tensor.shape.size())
        bound[expected.dimParams[i]] = tensor.shape[i];
  auto *word = *reinterpret_cast<int64_t **>(args[0]);
  for (const TensorSignature &out : sig.outputs) {
    std::vector<int64_t> shape;
    for (size_t i = 0; i < out.shape.size(); ++i) {
      int64_t d = out.shape[i];
      if (d == kDynamic) {
        auto it = i < out.dimParams.size() ? bound.find(out.dimParams[i])
                                           : bound.end();
        d = it != bound.end() ? it->second : 1;
      }
      shape.push_back(d);
    }
    if (cappedElements(shape) < 0)
      shape.assign(shape.size(), 0);
    size_t bytes = cappedElements(shape) * elementSize(out.type);
    void *buffer = std::malloc(bytes ? bytes : 1);
    std::memset(buffer, 0x5a, bytes);
    std::vector<int64_t> d = descriptorFor(buffer, shape);
    std::memcpy(word, d.data(), d.size() * sizeof(int64_t));
    word += d.size();
  }
}

class StandInExecutable : public Executable {
public:
  explicit StandInExecutable(ModelSignature sig) : sig(std::move(sig)) {}
  const ModelSignature &signature() const override { return sig; }
  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) override {
    currentCall = {&sig, inputs};
    return invokePacked(standInModel, std::free, sig, inputs);
  }
  std::string device() const override { return "fuzzing stand-in"; }

private:
  ModelSignature sig;
};

/// Stores any int as a dtype, as a C caller may (a value outside the
/// enumeration included).
void setDtype(tessera_tensor &t, int32_t value) {
  std::memcpy(&t.dtype, &value, sizeof value);
}

/// A tensor the fuzzer chose, with the bytes it owns.
struct Input {
  tessera_tensor tensor{};
  std::vector<uint8_t> bytes;
};

int64_t pickDim(FuzzedDataProvider &fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
  case 0:
    return fdp.ConsumeIntegral<int64_t>(); // anything, negative or huge
  case 1:
    return fdp.ConsumeIntegralInRange<int64_t>(0, 4096);
  default:
    return fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  }
}

/// Inputs for `model`: the signature's shapes (dynamic dims from one size
/// per symbolic name) with one change, or random ones.
std::vector<Input> pickInputs(FuzzedDataProvider &fdp, tessera_model *model) {
  int32_t expected = tessera_model_num_inputs(model);
  bool random = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
  int32_t count = expected;
  if (random || fdp.ConsumeIntegralInRange<int>(0, 15) == 0)
    count = fdp.ConsumeIntegralInRange<int32_t>(0, 6);
  llvm::StringMap<int64_t> sizes;
  std::vector<Input> inputs(count);
  for (int32_t i = 0; i < count; ++i) {
    tessera_tensor &t = inputs[i].tensor;
    if (random || i >= expected) {
      setDtype(t, fdp.ConsumeIntegralInRange<int32_t>(-1, 10));
      t.rank = fdp.ConsumeIntegralInRange<int32_t>(-1, TESSERA_MAX_RANK + 1);
      for (int32_t d = 0; d < std::min(t.rank, TESSERA_MAX_RANK); ++d)
        t.shape[d] = pickDim(fdp);
    } else {
      t.dtype = tessera_model_dtype(model, 0, i);
      t.rank = std::min(tessera_model_rank(model, 0, i), TESSERA_MAX_RANK);
      for (int32_t d = 0; d < t.rank; ++d) {
        int64_t dim = tessera_model_dim(model, 0, i, d);
        if (dim < 0) {
          const char *param = tessera_model_dim_param(model, 0, i, d);
          auto [it, fresh] = sizes.try_emplace(param ? param : "", 0);
          if (fresh || !*param)
            it->second = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
          dim = it->second;
        }
        t.shape[d] = dim;
      }
    }
  }
  // One change to a well-formed set of inputs.
  if (!random && count > 0) {
    tessera_tensor &t =
        inputs[fdp.ConsumeIntegralInRange<int32_t>(0, count - 1)].tensor;
    switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
      setDtype(t, fdp.ConsumeIntegralInRange<int32_t>(-1, 10));
      break;
    case 1:
      t.rank = fdp.ConsumeIntegralInRange<int32_t>(-1, TESSERA_MAX_RANK + 1);
      break;
    case 2:
      if (t.rank > 0)
        t.shape[fdp.ConsumeIntegralInRange<int32_t>(
            0, std::min(t.rank, TESSERA_MAX_RANK) - 1)] = pickDim(fdp);
      break;
    default:
      break; // as the signature says
    }
  }
  for (Input &in : inputs) {
    tessera_tensor &t = in.tensor;
    int32_t dtype;
    std::memcpy(&dtype, &t.dtype, sizeof dtype);
    size_t bytes =
        dtype >= 0 && dtype <= 8 ? tessera_dtype_size(t.dtype) : 0;
    for (int32_t d = 0; d < std::min(std::max(t.rank, 0), TESSERA_MAX_RANK);
         ++d) {
      if (t.shape[d] < 0 || (t.shape[d] && bytes > (size_t(1) << 24) /
                                                       t.shape[d])) {
        bytes = size_t(1) << 24; // claims more than it holds
        break;
      }
      bytes *= t.shape[d];
    }
    bytes = std::min(bytes, size_t(1) << 22);
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0 && bytes)
      --bytes; // one byte short
    in.bytes.assign(bytes, 0x3c);
    t.data = in.bytes.empty() ? nullptr : in.bytes.data();
    t.capacity = in.bytes.size();
  }
  return inputs;
}

void queryEverything(tessera_model *model) {
  (void)tessera_model_device(model);
  (void)tessera_model_concurrent_runs(model);
  for (int output = 0; output < 2; ++output) {
    int32_t count = output ? tessera_model_num_outputs(model)
                           : tessera_model_num_inputs(model);
    for (int32_t i = -1; i <= count; ++i) {
      (void)tessera_model_name(model, output, i);
      (void)tessera_model_dtype(model, output, i);
      int32_t rank = tessera_model_rank(model, output, i);
      for (int32_t d = -1; d <= rank + 1; ++d) {
        (void)tessera_model_dim(model, output, i, d);
        (void)tessera_model_dim_param(model, output, i, d);
      }
    }
  }
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerAllExecutableLoaders();
  ExecutableLoader loader;
  loader.kind = "fuzz-signature";
  loader.extension = ".tfsig";
  loader.description = "a signature JSON run by a stand-in model";
  loader.load = [](llvm::StringRef path, const LoadOptions &)
      -> llvm::Expected<std::unique_ptr<Executable>> {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return llvm::errorCodeToError(buffer.getError());
    auto sig = signatureFromJSON((*buffer)->getBuffer());
    if (!sig)
      return sig.takeError();
    return std::make_unique<StandInExecutable>(std::move(*sig));
  };
  registerExecutableLoader(std::move(loader));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto *end = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  size_t jsonSize = end ? end - data : size;
  tessera_model *model = tessera_model_load_from_memory(
      data, jsonSize, "fuzz-signature", nullptr, nullptr, 0);
  if (!model)
    return 0;
  queryEverything(model);
  FuzzedDataProvider fdp(data + jsonSize, size - jsonSize);
  for (int round = 0; round < 2; ++round) {
    std::vector<Input> inputs = pickInputs(fdp, model);
    std::vector<tessera_tensor> tensors;
    for (Input &in : inputs)
      tensors.push_back(in.tensor);
    int32_t numOutputs = tessera_model_num_outputs(model);
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0)
      numOutputs = fdp.ConsumeIntegralInRange<int32_t>(-1, 4);
    std::vector<tessera_tensor> outputs(std::max(numOutputs, 0));
    std::vector<tessera_buffer *> buffers(outputs.size());
    if (round == 0) {
      std::vector<std::vector<uint8_t>> room(outputs.size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        room[i].resize(fdp.ConsumeIntegralInRange<size_t>(0, 4096));
        outputs[i].data = room[i].empty() ? nullptr : room[i].data();
        outputs[i].capacity = room[i].size();
      }
      (void)tessera_model_run(model, tensors.data(),
                              static_cast<int32_t>(tensors.size()),
                              outputs.data(), numOutputs);
    } else if (tessera_model_run_nocopy(
                   model, tensors.data(), static_cast<int32_t>(tensors.size()),
                   outputs.data(), buffers.data(), numOutputs) == 0) {
      for (tessera_buffer *buffer : buffers)
        tessera_buffer_free(buffer);
    }
    (void)tessera_last_error();
  }
  tessera_model_free(model);
  return 0;
}
