//===- LibraryExecutable.cpp - a CUDA artifact (.so) as an Executable -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/LibraryExecutable.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Target/CUDA/DriverABI.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"

#include <dlfcn.h>
#include <mutex>

using namespace tessera;
using namespace tessera::cuda;
using runtime::HostTensor;
using runtime::ModelSignature;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string optionOr(const runtime::LoadOptions &options, llvm::StringRef name,
                     llvm::StringRef fallback) {
  auto it = options.find(name.str());
  return it == options.end() ? fallback.str() : it->second;
}

/// `device=emulator` is the emulator, as `gpu-driver=emulator` is.
std::string driverKind(const runtime::LoadOptions &options) {
  if (optionOr(options, "device", "0") == "emulator")
    return "emulator";
  return optionOr(options, "gpu-driver", "cuda");
}

std::string libraryPath(llvm::StringRef path) {
  // dlopen searches the library path for bare names; artifacts are files.
  std::string file = path.str();
  if (file.find('/') == std::string::npos)
    file = "./" + file;
  return file;
}

/// Runs are serialized: an artifact's host code keeps one error state.
std::mutex &runMutex() {
  static std::mutex m;
  return m;
}

class CudaLibraryExecutable : public runtime::Executable {
public:
  CudaLibraryExecutable(std::shared_ptr<void> library,
                        runtime::LoadOptions options, ModelSignature sig)
      : library(std::move(library)), options(std::move(options)),
        sig(std::move(sig)) {
    bind = reinterpret_cast<tessera_cuda_bind_driver_fn>(
        dlsym(this->library.get(), "tessera_cuda_bind_driver"));
    takeError = reinterpret_cast<tessera_cuda_take_error_fn>(
        dlsym(this->library.get(), "tessera_cuda_take_error"));
    entry = reinterpret_cast<runtime::PackedFunction>(
        dlsym(this->library.get(), "tessera_model_run"));
    release = reinterpret_cast<runtime::FreeFunction>(
        dlsym(this->library.get(), "tessera_model_free_buffer"));
  }

  ~CudaLibraryExecutable() override {
    // What the artifact loaded and uploaded goes back to the driver while
    // it still exists (the library may outlive it).
    std::lock_guard<std::mutex> lock(runMutex());
    if (driver)
      bind(nullptr);
  }

  const ModelSignature &signature() const override { return sig; }
  std::string device() const override {
    if (driver)
      return driver->device();
    if (driverKind(options) == "emulator")
      return "Tessera's PTX emulator (no GPU)";
    auto it = options.find("device");
    return "NVIDIA GPU " + (it == options.end() ? "0" : it->second) +
           " through the CUDA driver (opened on the first run)";
  }
  std::string lastRunSummary() const override {
    return driver ? driver->summary() : "";
  }

  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) override {
    if (llvm::Error error = runtime::checkInputs(sig, inputs))
      return std::move(error);
    std::lock_guard<std::mutex> lock(runMutex());
    // The GPU is opened when the model first runs, so artifacts load and
    // are inspected on machines without one.
    if (!driver) {
      auto opened = driverFor(options);
      if (!opened)
        return opened.takeError();
      driver = std::move(*opened);
    }
    bind(driver->table());
    driver->resetSummary();
    // Inputs in device memory, released when the run ends.
    std::vector<uint64_t> deviceInputs;
    auto releaseInputs = llvm::make_scope_exit([&] {
      for (uint64_t address : deviceInputs)
        driver->release(address);
    });
    std::vector<std::vector<int64_t>> descriptors;
    for (const HostTensor &t : inputs) {
      auto address = driver->allocate(t.data.size());
      if (!address)
        return address.takeError();
      deviceInputs.push_back(*address);
      if (llvm::Error e =
              driver->copyToDevice(*address, t.data.data(), t.data.size()))
        return std::move(e);
      descriptors.push_back(
          runtime::descriptorFor(reinterpret_cast<void *>(*address), t.shape));
    }
    size_t resultWords = 0;
    for (const runtime::TensorSignature &out : sig.outputs)
      resultWords += 3 + 2 * out.shape.size();
    std::vector<int64_t> results(std::max<size_t>(resultWords, 1), 0);
    std::vector<void *> pointers = {results.data()};
    for (auto &d : descriptors)
      pointers.push_back(d.data());
    std::vector<void *> packed;
    for (void *&p : pointers)
      packed.push_back(&p);
    if (sig.outputs.empty())
      packed.erase(packed.begin());
    entry(packed.data());
    llvm::Error error = llvm::Error::success();
    if (const char *message = takeError())
      error = fail(message);
    else if (llvm::Error e = driver->synchronize())
      error = std::move(e);

    // Results back to the host; their device buffers go back to the pool.
    std::vector<HostTensor> outputs;
    std::vector<uint64_t> resultBuffers;
    const int64_t *word = results.data();
    for (const runtime::TensorSignature &out : sig.outputs) {
      size_t rank = out.shape.size();
      HostTensor t;
      t.name = out.name;
      t.type = out.type;
      t.shape.assign(word + 3, word + 3 + rank);
      size_t bytes = t.numElements() * runtime::elementSize(t.type);
      t.data.resize(bytes);
      uint64_t aligned = word[1] + word[2] * runtime::elementSize(t.type);
      if (!error && bytes)
        if (llvm::Error e = driver->copyToHost(t.data.data(), aligned, bytes))
          error = std::move(e);
      if (word[0] && !llvm::is_contained(resultBuffers, uint64_t(word[0])))
        resultBuffers.push_back(word[0]);
      outputs.push_back(std::move(t));
      word += 3 + 2 * rank;
    }
    for (uint64_t buffer : resultBuffers)
      release(reinterpret_cast<void *>(buffer));
    if (error)
      return std::move(error);
    return outputs;
  }

private:
  std::shared_ptr<void> library;
  runtime::LoadOptions options;
  std::shared_ptr<Driver> driver;
  ModelSignature sig;
  tessera_cuda_bind_driver_fn bind = nullptr;
  tessera_cuda_take_error_fn takeError = nullptr;
  runtime::PackedFunction entry = nullptr;
  runtime::FreeFunction release = nullptr;
};

} // namespace

bool tessera::cuda::isCudaArtifact(llvm::StringRef path) {
  void *handle = dlopen(libraryPath(path).c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    return false;
  bool cuda = dlsym(handle, "tessera_cuda_bind_driver") != nullptr;
  dlclose(handle);
  return cuda;
}

llvm::Expected<std::unique_ptr<runtime::Executable>>
tessera::cuda::loadLibrary(llvm::StringRef path,
                           const runtime::LoadOptions &options) {
  if (llvm::Error error = checkDriverOptions(options))
    return std::move(error);
  void *handle = dlopen(libraryPath(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail("cannot load '" + path + "': " + dlerror());
  std::shared_ptr<void> library(handle, [](void *h) { dlclose(h); });
  auto getSignature = reinterpret_cast<const char *(*)()>(
      dlsym(handle, "tessera_model_signature"));
  for (const char *symbol :
       {"tessera_model_signature", "tessera_model_run",
        "tessera_model_free_buffer", "tessera_cuda_bind_driver",
        "tessera_cuda_take_error"})
    if (!dlsym(handle, symbol))
      return fail("cannot load '" + path +
                  "': not a Tessera CUDA artifact "
                  "(no " +
                  symbol + ")");
  auto sig = runtime::signatureFromJSON(getSignature());
  if (!sig)
    return sig.takeError();
  return std::unique_ptr<runtime::Executable>(
      new CudaLibraryExecutable(std::move(library), options, std::move(*sig)));
}

llvm::Error
tessera::cuda::checkDriverOptions(const runtime::LoadOptions &options) {
  std::string kind = driverKind(options),
              device = optionOr(options, "device", "0");
  if (device == "emulator")
    device = "0";
  int ordinal = 0;
  if (llvm::StringRef(device).getAsInteger(10, ordinal) || ordinal < 0)
    return fail("--device expects a GPU's number (0, 1, ...) or 'emulator', "
                "got '" +
                device + "'");
  if (kind != "cuda" && kind != "emulator")
    return fail("--gpu-driver must be 'cuda' or 'emulator', got '" + kind +
                "'");
  std::string arch = optionOr(options, "emulated-gpu", "sm_90a");
  if (!llvm::is_contained({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}, arch))
    return fail("--emulated-gpu must be one of sm_80, sm_86, sm_89, sm_90, "
                "sm_90a; got '" +
                arch + "'");
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<Driver>>
tessera::cuda::driverFor(const runtime::LoadOptions &options) {
  if (llvm::Error error = checkDriverOptions(options))
    return std::move(error);
  std::string kind = driverKind(options),
              device = optionOr(options, "device", "0");
  int ordinal = kind == "emulator" ? 0 : std::stoi(device);
  static std::mutex mutex;
  static llvm::StringMap<std::weak_ptr<Driver>> drivers;
  std::lock_guard<std::mutex> lock(mutex);
  std::string arch = optionOr(options, "emulated-gpu", "sm_90a");
  std::string key =
      kind == "emulator" ? kind + ":" + arch : kind + ":" + device;
  if (auto existing = drivers[key].lock())
    return existing;
  std::shared_ptr<Driver> driver;
  if (kind == "emulator") {
    driver = createEmulatorDriver(/*hazardChecks=*/true, arch);
  } else {
    auto opened = openCudaDriver(ordinal);
    if (!opened)
      return opened.takeError();
    driver = *opened;
  }
  drivers[key] = driver;
  return driver;
}

void tessera::cuda::registerLoaders() {
  runtime::ExecutableLoader loader;
  loader.kind = "cuda-library";
  loader.extension = ".so";
  loader.description = "a shared library with kernels for NVIDIA GPUs "
                       "(tessera-compile --target=cuda -o model.so)";
  loader.options = {
      {"gpu-driver", "cuda|emulator",
       "what runs a CUDA artifact's kernels: the GPU through the CUDA driver "
       "(default) or Tessera's PTX emulator, which needs no GPU"},
      {"device", "N|emulator",
       "the GPU a CUDA artifact runs on (default 0), or 'emulator' for "
       "Tessera's PTX emulator"},
      {"emulated-gpu", "sm_80|sm_86|sm_89|sm_90|sm_90a",
       "the GPU the emulator stands for (default sm_90a, an H100/H200): it "
       "runs the artifact's kernels for that architecture, as that GPU "
       "would"}};
  loader.accepts = [](llvm::StringRef path) { return isCudaArtifact(path); };
  loader.load = [](llvm::StringRef path, const runtime::LoadOptions &options)
      -> llvm::Expected<std::unique_ptr<runtime::Executable>> {
    return loadLibrary(path, options);
  };
  runtime::registerExecutableLoader(std::move(loader));
}
