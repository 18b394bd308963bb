//===- CAPI.cpp - Tessera's C API for running compiled models -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera-c/Runtime.h"
#include "tessera/Runtime/CAPIError.h"
#include "tessera/Runtime/Executable.h"
#include "tessera/Runtime/MemoryArtifact.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <mutex>
#include <string>

using namespace tessera::runtime;

struct tessera_model {
  std::unique_ptr<Executable> executable;
  std::string device;
  /// Whether runs of this model may overlap. Executable does not say so
  /// itself; a CPU library's runs share nothing but the thread-safe block
  /// cache, while a simulated program keeps its last run's summary, so its
  /// runs are serialized by `runLock`.
  bool concurrentRuns = false;
  std::mutex runLock;
};

/// A result buffer the model allocated, handed to the caller.
struct tessera_buffer {
  TensorBuffer data;
};

/// Artifact kinds whose executables may run concurrently.
static bool runsConcurrently(llvm::StringRef kind) {
  return kind == "cpu-library";
}

// The C API's dtypes are the shared element types' values.
static_assert(TESSERA_F32 == static_cast<int>(tessera::ElementType::F32) &&
              TESSERA_F16 == static_cast<int>(tessera::ElementType::F16) &&
              TESSERA_BF16 == static_cast<int>(tessera::ElementType::BF16) &&
              TESSERA_I8 == static_cast<int>(tessera::ElementType::I8) &&
              TESSERA_I32 == static_cast<int>(tessera::ElementType::I32) &&
              TESSERA_I64 == static_cast<int>(tessera::ElementType::I64) &&
              TESSERA_BOOL == static_cast<int>(tessera::ElementType::Bool) &&
              TESSERA_F8E4M3FN ==
                  static_cast<int>(tessera::ElementType::F8E4M3FN) &&
              TESSERA_F8E5M2 ==
                  static_cast<int>(tessera::ElementType::F8E5M2));

static thread_local std::string lastError;

void tessera::capi::setLastError(std::string message) {
  lastError = std::move(message);
}

void tessera::capi::clearLastError() { lastError.clear(); }

static int failWith(const std::string &message, int code = 1) {
  lastError = message;
  return code;
}

const char *tessera_last_error(void) { return lastError.c_str(); }

tessera_model *tessera_model_load_with_options(const char *path,
                                               const char *const *names,
                                               const char *const *values,
                                               int32_t count) {
  registerAllExecutableLoaders();
  LoadOptions options;
  for (int32_t i = 0; i < count; ++i) {
    if (!names || !values || !names[i] || !values[i]) {
      failWith("load option " + std::to_string(i) + " has no name or value");
      return nullptr;
    }
    options[names[i]] = values[i];
  }
  auto executable = loadExecutable(path ? path : "", options);
  if (!executable) {
    failWith(llvm::toString(executable.takeError()));
    return nullptr;
  }
  lastError.clear();
  auto *model = new tessera_model;
  model->device = (*executable)->device();
  model->executable = std::move(*executable);
  const ExecutableLoader *loader = findLoaderForPath(path);
  model->concurrentRuns = (loader && runsConcurrently(loader->kind)) ||
                          model->executable->concurrentRuns();
  return model;
}

tessera_model *tessera_model_load_from_memory(const void *data, size_t size,
                                              const char *kind,
                                              const char *const *names,
                                              const char *const *values,
                                              int32_t count) {
  LoadOptions options;
  for (int32_t i = 0; i < count; ++i) {
    if (!names || !values || !names[i] || !values[i]) {
      failWith("load option " + std::to_string(i) + " has no name or value");
      return nullptr;
    }
    options[names[i]] = values[i];
  }
  if (!data && size) {
    failWith("the artifact's bytes are missing for its size");
    return nullptr;
  }
  llvm::ArrayRef<uint8_t> bytes(static_cast<const uint8_t *>(data), size);
  const ExecutableLoader *loader = nullptr;
  auto executable =
      loadExecutableFromMemory(bytes, kind ? kind : "", options, &loader);
  if (!executable) {
    failWith(llvm::toString(executable.takeError()));
    return nullptr;
  }
  lastError.clear();
  auto *model = new tessera_model;
  model->device = (*executable)->device();
  model->executable = std::move(*executable);
  model->concurrentRuns = (loader && runsConcurrently(loader->kind)) ||
                          model->executable->concurrentRuns();
  return model;
}

int tessera_model_concurrent_runs(const tessera_model *model) {
  return model && model->concurrentRuns;
}

tessera_model *tessera_model_load(const char *path) {
  return tessera_model_load_with_options(path, nullptr, nullptr, 0);
}

const char *tessera_model_device(const tessera_model *model) {
  return model ? model->device.c_str() : "";
}

void tessera_model_free(tessera_model *model) { delete model; }

int32_t tessera_model_num_inputs(const tessera_model *model) {
  return model ? model->executable->signature().inputs.size() : 0;
}

int32_t tessera_model_num_outputs(const tessera_model *model) {
  return model ? model->executable->signature().outputs.size() : 0;
}

static const TensorSignature *tensorAt(const tessera_model *model, int output,
                                       int32_t index) {
  if (!model)
    return nullptr;
  const ModelSignature &sig = model->executable->signature();
  const auto &list = output ? sig.outputs : sig.inputs;
  if (index < 0 || static_cast<size_t>(index) >= list.size())
    return nullptr;
  return &list[index];
}

const char *tessera_model_name(const tessera_model *model, int output,
                               int32_t index) {
  const TensorSignature *t = tensorAt(model, output, index);
  return t ? t->name.c_str() : nullptr;
}

tessera_dtype tessera_model_dtype(const tessera_model *model, int output,
                                  int32_t index) {
  const TensorSignature *t = tensorAt(model, output, index);
  return t ? static_cast<tessera_dtype>(t->type) : TESSERA_F32;
}

int32_t tessera_model_rank(const tessera_model *model, int output,
                           int32_t index) {
  const TensorSignature *t = tensorAt(model, output, index);
  return t ? static_cast<int32_t>(t->shape.size()) : -1;
}

int64_t tessera_model_dim(const tessera_model *model, int output,
                          int32_t index, int32_t dim) {
  const TensorSignature *t = tensorAt(model, output, index);
  if (!t || dim < 0 || static_cast<size_t>(dim) >= t->shape.size())
    return -1;
  return t->shape[dim] == kDynamic ? -1 : t->shape[dim];
}

const char *tessera_model_dim_param(const tessera_model *model, int output,
                                    int32_t index, int32_t dim) {
  const TensorSignature *t = tensorAt(model, output, index);
  if (!t || dim < 0 || static_cast<size_t>(dim) >= t->shape.size())
    return nullptr;
  return static_cast<size_t>(dim) < t->dimParams.size()
             ? t->dimParams[dim].c_str()
             : "";
}

/// The integer a caller stored as a dtype. C lets a caller store any int in
/// a tessera_dtype; in C++ loading a value outside the enumeration's range
/// is undefined, so the bytes are read as the integer they are.
static int32_t dtypeValue(const tessera_dtype &dtype) {
  static_assert(sizeof(tessera_dtype) == sizeof(int32_t));
  int32_t value;
  std::memcpy(&value, &dtype, sizeof value);
  return value;
}

size_t tessera_dtype_size(tessera_dtype dtype) {
  std::optional<ElementType> type =
      tessera::elementTypeFromValue(dtypeValue(dtype));
  return type ? elementSize(*type) : 0;
}

/// Input `i`'s element type, shape and byte size, checked against the
/// bytes it declares; non-zero (with the error set) when they do not fit.
template <typename Tensor>
static int readInput(const tessera_tensor &in, int32_t i, Tensor &t,
                     size_t &bytes) {
  std::optional<ElementType> type =
      tessera::elementTypeFromValue(dtypeValue(in.dtype));
  if (in.rank < 0 || in.rank > TESSERA_MAX_RANK || !type)
    return failWith("input " + std::to_string(i) +
                    " has an invalid rank or dtype");
  t.type = *type;
  t.shape.assign(in.shape, in.shape + in.rank);
  for (int64_t d : t.shape)
    if (d < 0)
      return failWith("input " + std::to_string(i) +
                      " has a negative dimension");
  std::optional<uint64_t> size = tessera::denseByteSize(t.shape, t.type);
  if (!size)
    return failWith("input " + std::to_string(i) +
                    " has a shape too large for memory");
  bytes = *size;
  if (bytes > in.capacity || (bytes && !in.data))
    return failWith("input " + std::to_string(i) + " needs " +
                    std::to_string(bytes) + " bytes for its shape but " +
                    "holds " + std::to_string(in.capacity));
  return 0;
}

/// The caller's inputs as host tensors over the caller's bytes (no copy),
/// checked against their declared sizes.
static int wrapInputs(const tessera_tensor *inputs, int32_t numInputs,
                      std::vector<HostTensor> &hostInputs) {
  if ((numInputs > 0 && !inputs) || numInputs < 0)
    return failWith("inputs are missing for their count");
  // The caller keeps its buffers alive across the call; this owner only
  // marks the bytes as borrowed.
  static char borrowed;
  std::shared_ptr<void> owner(&borrowed, [](void *) {});
  for (int32_t i = 0; i < numInputs; ++i) {
    HostTensor t;
    size_t bytes = 0;
    if (int status = readInput(inputs[i], i, t, bytes))
      return status;
    t.data = TensorBuffer::adopt(static_cast<uint8_t *>(inputs[i].data), bytes,
                                 owner);
    hostInputs.push_back(std::move(t));
  }
  return 0;
}

/// Runs `model` on `inputs`, serializing runs that may not overlap.
static llvm::Expected<std::vector<HostTensor>>
runModel(tessera_model *model, llvm::ArrayRef<HostTensor> inputs) {
  if (model->concurrentRuns)
    return model->executable->run(inputs);
  std::lock_guard<std::mutex> lock(model->runLock);
  return model->executable->run(inputs);
}

int tessera_model_run(tessera_model *model, const tessera_tensor *inputs,
                      int32_t numInputs, tessera_tensor *outputs,
                      int32_t numOutputs) {
  if (!model)
    return failWith("no model");
  if (numOutputs > 0 && !outputs)
    return failWith("outputs are missing for their count");
  const ModelSignature &sig = model->executable->signature();
  if (numOutputs != static_cast<int32_t>(sig.outputs.size()))
    return failWith("the model has " + std::to_string(sig.outputs.size()) +
                    " outputs, got room for " + std::to_string(numOutputs));
  std::vector<HostTensor> hostInputs;
  if (int status = wrapInputs(inputs, numInputs, hostInputs))
    return status;
  auto results = runModel(model, hostInputs);
  if (!results)
    return failWith(llvm::toString(results.takeError()));
  int status = 0;
  for (int32_t i = 0; i < numOutputs; ++i) {
    const HostTensor &r = (*results)[i];
    tessera_tensor &out = outputs[i];
    if (r.shape.size() > TESSERA_MAX_RANK)
      return failWith("output " + std::to_string(i) + " has rank " +
                      std::to_string(r.shape.size()));
    out.dtype = static_cast<tessera_dtype>(r.type);
    out.rank = static_cast<int32_t>(r.shape.size());
    std::copy(r.shape.begin(), r.shape.end(), out.shape);
    if (r.data.size() > out.capacity || (!r.data.empty() && !out.data)) {
      status = failWith("output " + std::to_string(i) + " needs " +
                        std::to_string(r.data.size()) + " bytes, has " +
                        std::to_string(out.capacity),
                        2);
      continue;
    }
    if (!r.data.empty())
      std::memcpy(out.data, r.data.data(), r.data.size());
  }
  if (status == 0)
    lastError.clear();
  return status;
}

int tessera_model_run_nocopy(tessera_model *model,
                             const tessera_tensor *inputs, int32_t numInputs,
                             tessera_tensor *outputs, tessera_buffer **buffers,
                             int32_t numOutputs) {
  if (!model)
    return failWith("no model");
  if (numOutputs > 0 && (!outputs || !buffers))
    return failWith("outputs or buffers are missing for their count");
  const ModelSignature &sig = model->executable->signature();
  if (numOutputs != static_cast<int32_t>(sig.outputs.size()))
    return failWith("the model has " + std::to_string(sig.outputs.size()) +
                    " outputs, got room for " + std::to_string(numOutputs));
  std::vector<HostTensor> hostInputs;
  if (int status = wrapInputs(inputs, numInputs, hostInputs))
    return status;
  auto results = runModel(model, hostInputs);
  if (!results)
    return failWith(llvm::toString(results.takeError()));
  for (const HostTensor &r : *results)
    if (r.shape.size() > TESSERA_MAX_RANK)
      return failWith("output '" + r.name + "' has rank " +
                      std::to_string(r.shape.size()));
  for (int32_t i = 0; i < numOutputs; ++i) {
    HostTensor &r = (*results)[i];
    tessera_tensor &out = outputs[i];
    out.dtype = static_cast<tessera_dtype>(r.type);
    out.rank = static_cast<int32_t>(r.shape.size());
    std::copy(r.shape.begin(), r.shape.end(), out.shape);
    out.data = r.data.data();
    out.capacity = r.data.size();
    buffers[i] = new tessera_buffer{std::move(r.data)};
  }
  lastError.clear();
  return 0;
}

void tessera_buffer_free(tessera_buffer *buffer) { delete buffer; }

//===----------------------------------------------------------------------===//
// Tensors in device memory
//===----------------------------------------------------------------------===//

int tessera_model_has_device_memory(const tessera_model *model) {
  return model && model->executable->hasDeviceMemory();
}

int tessera_model_device_alloc(tessera_model *model, size_t bytes,
                               uint64_t *address) {
  if (!model || !address)
    return failWith(model ? "no address to return" : "no model");
  auto allocated = model->executable->allocateDevice(bytes);
  if (!allocated)
    return failWith(llvm::toString(allocated.takeError()));
  *address = *allocated;
  lastError.clear();
  return 0;
}

void tessera_model_device_free(tessera_model *model, uint64_t address) {
  if (model && address)
    model->executable->freeDevice(address);
}

/// A copy between host and device memory: the checks both directions share,
/// then `copy`.
static int deviceCopy(tessera_model *model, bool hasSource, bool hasDest,
                      size_t bytes, llvm::function_ref<llvm::Error()> copy) {
  if (!model)
    return failWith("no model");
  if (bytes && (!hasSource || !hasDest))
    return failWith("a copy of " + std::to_string(bytes) +
                    " bytes needs a source and a destination");
  if (llvm::Error e = copy())
    return failWith(llvm::toString(std::move(e)));
  lastError.clear();
  return 0;
}

int tessera_model_copy_to_device(tessera_model *model, uint64_t dst,
                                 const void *src, size_t bytes) {
  return deviceCopy(model, src, dst, bytes, [&] {
    return model->executable->copyToDevice(dst, src, bytes);
  });
}

int tessera_model_copy_to_host(tessera_model *model, void *dst, uint64_t src,
                               size_t bytes) {
  return deviceCopy(model, src, dst, bytes, [&] {
    return model->executable->copyToHost(dst, src, bytes);
  });
}

int tessera_model_run_device(tessera_model *model, const tessera_tensor *inputs,
                             int32_t numInputs, tessera_tensor *outputs,
                             int32_t numOutputs, void *stream) {
  if (!model)
    return failWith("no model");
  if (numOutputs > 0 && !outputs)
    return failWith("outputs are missing for their count");
  if ((numInputs > 0 && !inputs) || numInputs < 0)
    return failWith("inputs are missing for their count");
  const ModelSignature &sig = model->executable->signature();
  if (numOutputs != static_cast<int32_t>(sig.outputs.size()))
    return failWith("the model has " + std::to_string(sig.outputs.size()) +
                    " outputs, got room for " + std::to_string(numOutputs));
  std::vector<DeviceTensor> deviceInputs(numInputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    size_t bytes = 0;
    if (int status = readInput(inputs[i], i, deviceInputs[i], bytes))
      return status;
    deviceInputs[i].address = reinterpret_cast<uint64_t>(inputs[i].data);
    deviceInputs[i].bytes = inputs[i].capacity;
  }
  std::vector<DeviceTensor> deviceOutputs(numOutputs);
  for (int32_t i = 0; i < numOutputs; ++i) {
    deviceOutputs[i].address = reinterpret_cast<uint64_t>(outputs[i].data);
    deviceOutputs[i].bytes = outputs[i].data ? outputs[i].capacity : 0;
  }
  int status = 0;
  if (llvm::Error e = model->executable->runOnDevice(
          deviceInputs, deviceOutputs, reinterpret_cast<uint64_t>(stream))) {
    status = e.isA<OutputTooSmall>() ? 2 : 1;
    failWith(llvm::toString(std::move(e)));
    if (status == 1)
      return 1;
  }
  for (int32_t i = 0; i < numOutputs; ++i) {
    const DeviceTensor &r = deviceOutputs[i];
    if (r.shape.size() > TESSERA_MAX_RANK) {
      // Nothing is handed over.
      for (int32_t j = 0; j < numOutputs; ++j)
        if (!outputs[j].data)
          model->executable->freeDevice(deviceOutputs[j].address);
      return failWith("output " + std::to_string(i) + " has rank " +
                      std::to_string(r.shape.size()));
    }
  }
  for (int32_t i = 0; i < numOutputs; ++i) {
    const DeviceTensor &r = deviceOutputs[i];
    tessera_tensor &out = outputs[i];
    out.dtype = static_cast<tessera_dtype>(r.type);
    out.rank = static_cast<int32_t>(r.shape.size());
    std::copy(r.shape.begin(), r.shape.end(), out.shape);
    if (!out.data && r.address) {
      out.data = reinterpret_cast<void *>(r.address);
      out.capacity = r.bytes;
    }
  }
  if (status == 0)
    lastError.clear();
  return status;
}

double tessera_model_last_device_ms(const tessera_model *model) {
  if (!model)
    return -1;
  std::optional<double> ms = model->executable->lastRunDeviceMilliseconds();
  return ms ? *ms : -1;
}
