//===- LibraryExecutable.cpp - a CUDA artifact (.so) as an Executable -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/LibraryExecutable.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Target/CUDA/DriverABI.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

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

/// What runs of one artifact library share, whichever model loaded it:
/// the driver its host code is bound to. Runs hold `mutex` shared while
/// the library is bound to their driver; binding another holds it alone.
struct LibraryBinding {
  std::shared_mutex mutex;
  std::shared_ptr<Driver> bound;
};

std::shared_ptr<LibraryBinding> bindingOf(void *library) {
  static std::mutex mutex;
  static std::map<void *, std::weak_ptr<LibraryBinding>> bindings;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<LibraryBinding> binding = bindings[library].lock();
  if (!binding) {
    binding = std::make_shared<LibraryBinding>();
    bindings[library] = binding;
  }
  return binding;
}

/// Every call on drivers that take one run at a time (the emulators, which
/// share nothing thread-safe), one at a time; taken before a library's
/// binding.
std::mutex &serialMutex() {
  static std::mutex mutex;
  return mutex;
}

/// serialMutex, held when `driver` (if any) takes one run at a time.
std::unique_lock<std::mutex> serialFor(const Driver *driver) {
  if (driver && !driver->concurrentRuns())
    return std::unique_lock<std::mutex>(serialMutex());
  return std::unique_lock<std::mutex>();
}

class CudaLibraryExecutable : public runtime::Executable {
public:
  CudaLibraryExecutable(std::shared_ptr<void> library,
                        runtime::LoadOptions options, ModelSignature sig)
      : library(std::move(library)), options(std::move(options)),
        sig(std::move(sig)), binding(bindingOf(this->library.get())) {
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
    std::unique_lock<std::mutex> serial = serialFor(driver.get());
    std::unique_lock<std::shared_mutex> lock(binding->mutex);
    if (driver && binding->bound == driver) {
      bind(nullptr);
      binding->bound = nullptr;
    }
  }

  /// On a GPU runs on several threads proceed in parallel, each on its
  /// own stream; the emulator runs one at a time.
  bool concurrentRuns() const override { return driverKind(options) == "cuda"; }

  const ModelSignature &signature() const override { return sig; }
  std::string device() const override {
    std::lock_guard<std::mutex> lock(stateMutex);
    if (driver)
      return driver->device();
    if (driverKind(options) == "emulator")
      return "Tessera's PTX emulator (no GPU)";
    auto it = options.find("device");
    return "NVIDIA GPU " + (it == options.end() ? "0" : it->second) +
           " through the CUDA driver (opened on the first run)";
  }
  std::string lastRunSummary() const override {
    std::shared_ptr<Driver> d;
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      d = driver;
    }
    std::unique_lock<std::mutex> serial = serialFor(d.get());
    return d ? d->summary() : "";
  }

  std::optional<double> lastRunDeviceMilliseconds() const override {
    std::lock_guard<std::mutex> lock(stateMutex);
    return kernelMilliseconds;
  }

  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) override {
    if (llvm::Error error = runtime::checkInputs(sig, inputs))
      return std::move(error);
    Session session;
    if (llvm::Error e = enter(session, /*stream=*/0))
      return std::move(e);
    // Inputs in device memory, released when the run ends.
    std::vector<uint64_t> deviceInputs;
    bool completed = false;
    llvm::scope_exit releaseInputs([&] {
      // Copies or kernels issued before a failure may still read them.
      if (!completed)
        llvm::consumeError(driver->synchronize());
      for (uint64_t address : deviceInputs)
        driver->release(address);
    });
    std::vector<uint64_t> addresses;
    for (const HostTensor &t : inputs) {
      auto address = driver->allocate(t.data.size());
      if (!address)
        return address.takeError();
      deviceInputs.push_back(*address);
      if (llvm::Error e =
              driver->copyToDevice(*address, t.data.data(), t.data.size()))
        return std::move(e);
      addresses.push_back(*address);
    }
    std::vector<Result> results;
    llvm::Error error = invoke(inputs, addresses, results);

    // Results back to the host; their device buffers go back to the pool.
    std::vector<HostTensor> outputs;
    for (Result &r : results) {
      HostTensor t;
      t.name = r.name;
      t.type = r.type;
      t.shape = r.shape;
      t.data.resize(r.bytes);
      if (!error && r.bytes)
        if (llvm::Error e =
                driver->copyToHost(t.data.data(), r.address, r.bytes))
          error = std::move(e);
      outputs.push_back(std::move(t));
    }
    completed = !error;
    releaseResults(results, /*waited=*/completed);
    if (error)
      return std::move(error);
    return outputs;
  }

  bool hasDeviceMemory() const override { return true; }
  llvm::Expected<uint64_t> allocateDevice(uint64_t bytes) override {
    auto opened = openDriver();
    if (!opened)
      return opened.takeError();
    std::unique_lock<std::mutex> serial = serialFor(opened->get());
    auto address = (*opened)->allocate(bytes);
    if (address) {
      std::lock_guard<std::mutex> lock(stateMutex);
      handedOut.insert(*address);
    }
    return address;
  }
  void freeDevice(uint64_t address) override {
    // Only what this model handed out goes back to the pool; a framework's
    // memory, the weights and other models' blocks are left alone.
    std::shared_ptr<Driver> d;
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      if (!driver || !handedOut.erase(address))
        return;
      d = driver;
    }
    std::unique_lock<std::mutex> serial = serialFor(d.get());
    d->release(address);
  }
  llvm::Error copyToDevice(uint64_t dst, const void *src,
                           uint64_t bytes) override {
    auto opened = openDriver();
    if (!opened)
      return opened.takeError();
    Driver &d = **opened;
    std::unique_lock<std::mutex> serial = serialFor(&d);
    llvm::consumeError(d.useStream(0));
    // Complete when the call returns: the caller may reuse `src`, and a
    // run on a stream that does not wait for this thread's reads `dst`.
    if (llvm::Error e = d.copyToDevice(dst, src, bytes))
      return e;
    return d.synchronize();
  }
  llvm::Error copyToHost(void *dst, uint64_t src, uint64_t bytes) override {
    auto opened = openDriver();
    if (!opened)
      return opened.takeError();
    std::unique_lock<std::mutex> serial = serialFor(opened->get());
    llvm::consumeError((*opened)->useStream(0));
    return (*opened)->copyToHost(dst, src, bytes);
  }

  llvm::Error runOnDevice(llvm::ArrayRef<runtime::DeviceTensor> inputs,
                          llvm::MutableArrayRef<runtime::DeviceTensor> outputs,
                          uint64_t stream) override {
    if (llvm::Error error = runtime::checkInputs(sig, inputs))
      return error;
    if (outputs.size() != sig.outputs.size())
      return fail("the model has " + llvm::Twine(sig.outputs.size()) +
                  " outputs, got room for " + llvm::Twine(outputs.size()));
    for (const runtime::DeviceTensor &t : inputs)
      if (!t.address && t.bytes)
        return fail("input '" + t.name + "' has no device address");
    Session session;
    if (llvm::Error e = enter(session, stream))
      return e;
    std::vector<uint64_t> addresses;
    for (const runtime::DeviceTensor &t : inputs)
      addresses.push_back(t.address);
    std::vector<Result> results;
    llvm::Error error = invoke(inputs, addresses, results);
    std::string tooSmall;
    // The outputs the caller gave no buffer: handed over on success only.
    std::vector<bool> given;
    for (const runtime::DeviceTensor &out : outputs)
      given.push_back(out.address != 0);
    for (size_t i = 0; i < results.size(); ++i) {
      Result &r = results[i];
      runtime::DeviceTensor &out = outputs[i];
      out.name = r.name;
      out.type = r.type;
      out.shape = r.shape;
      if (error)
        continue;
      if (!out.address) {
        // Handed over as it is when the caller may free it as a block of
        // the pool: it starts its buffer, which no other output shares.
        bool own = r.address == r.buffer &&
                   llvm::count_if(results, [&](const Result &other) {
                     return other.buffer == r.buffer;
                   }) == 1;
        if (own && r.buffer) {
          out.address = r.address;
          out.bytes = r.bytes;
          r.buffer = 0;
          continue;
        }
        auto copy = driver->allocate(std::max<uint64_t>(r.bytes, 1));
        if (!copy) {
          error = copy.takeError();
          continue;
        }
        out.address = *copy;
        out.bytes = r.bytes;
      } else if (out.bytes < r.bytes) {
        if (tooSmall.empty())
          tooSmall = "output '" + r.name + "' needs " +
                     std::to_string(r.bytes) + " bytes, has " +
                     std::to_string(out.bytes);
        continue;
      }
      if (r.bytes)
        if (llvm::Error e =
                driver->copyOnDevice(out.address, r.address, r.bytes))
          error = std::move(e);
    }
    if (!error)
      error = driver->synchronize();
    releaseResults(results, /*waited=*/!error);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (given[i] || !outputs[i].address)
        continue;
      if (error) {
        // Nothing is handed over after a failure.
        driver->release(outputs[i].address);
        outputs[i].address = outputs[i].bytes = 0;
      } else {
        std::lock_guard<std::mutex> lock(stateMutex);
        handedOut.insert(outputs[i].address);
      }
    }
    if (error)
      return error;
    if (!tooSmall.empty())
      return llvm::make_error<runtime::OutputTooSmall>(tooSmall);
    return llvm::Error::success();
  }

private:
  /// An output of a run in device memory: its buffer (the block the model
  /// allocated, 0 when none) and where its elements start.
  struct Result {
    std::string name;
    ElementType type;
    std::vector<int64_t> shape;
    uint64_t buffer = 0, address = 0, bytes = 0;
  };

  /// The driver, opened on the first call (so artifacts load and are
  /// inspected on machines without a GPU).
  llvm::Expected<std::shared_ptr<Driver>> openDriver() {
    std::lock_guard<std::mutex> lock(stateMutex);
    if (!driver) {
      auto opened = driverFor(options);
      if (!opened)
        return opened.takeError();
      driver = std::move(*opened);
    }
    return driver;
  }

  /// What a run holds while it runs: the library bound to its driver
  /// (shared with runs on other threads), the driver alone when its runs
  /// go one at a time, and the run's state on its thread. Ending it waits
  /// for the run's stream, gives the blocks the run released back to the
  /// pool and puts the thread back on its default stream.
  struct Session {
    std::unique_lock<std::mutex> serial;
    std::shared_lock<std::shared_mutex> shared;
    Driver *driver = nullptr;
    ~Session() {
      if (!driver)
        return;
      driver->endRun();
      llvm::consumeError(driver->useStream(0));
    }
  };

  /// Starts a run on the calling thread whose work goes on `stream`.
  llvm::Error enter(Session &session, uint64_t stream) {
    auto opened = openDriver();
    if (!opened)
      return opened.takeError();
    Driver &d = **opened;
    session.serial = serialFor(&d);
    for (;;) {
      session.shared = std::shared_lock<std::shared_mutex>(binding->mutex);
      if (binding->bound == *opened)
        break;
      session.shared.unlock();
      // Binding anew unloads what the library loaded on the driver it was
      // bound to, which may be one that takes one call at a time.
      std::unique_lock<std::mutex> serial;
      if (!session.serial.owns_lock())
        serial = std::unique_lock<std::mutex>(serialMutex());
      std::unique_lock<std::shared_mutex> alone(binding->mutex);
      if (binding->bound != *opened) {
        bind(d.table());
        binding->bound = *opened;
      }
    }
    if (llvm::Error e = d.useStream(stream))
      return fail("cannot run on the stream given: " +
                  llvm::toString(std::move(e)));
    d.beginRun();
    session.driver = &d;
    return llvm::Error::success();
  }

  /// Calls the artifact on inputs at device `addresses` and waits for it;
  /// `results` gets every output (also when the run fails, so their
  /// buffers can be released).
  template <typename Tensor>
  llvm::Error invoke(llvm::ArrayRef<Tensor> inputs,
                     llvm::ArrayRef<uint64_t> addresses,
                     std::vector<Result> &results) {
    driver->resetSummary();
    std::optional<double> milliseconds;
    std::vector<std::vector<int64_t>> descriptors;
    for (auto [t, address] : llvm::zip(inputs, addresses))
      descriptors.push_back(
          runtime::descriptorFor(reinterpret_cast<void *>(address), t.shape));
    size_t resultWords = 0;
    for (const runtime::TensorSignature &out : sig.outputs)
      resultWords += 3 + 2 * out.shape.size();
    std::vector<int64_t> words(std::max<size_t>(resultWords, 1), 0);
    std::vector<void *> pointers = {words.data()};
    for (auto &d : descriptors)
      pointers.push_back(d.data());
    std::vector<void *> packed;
    for (void *&p : pointers)
      packed.push_back(&p);
    if (sig.outputs.empty())
      packed.erase(packed.begin());
    llvm::Error error = driver->startTiming();
    if (!error) {
      entry(packed.data());
      if (const char *message = takeError())
        error = fail(message);
      else if (auto ms = driver->stopTiming(); !ms)
        error = ms.takeError();
      else
        milliseconds = *ms;
      if (!error)
        error = driver->synchronize();
    }
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      kernelMilliseconds = milliseconds;
    }
    const int64_t *word = words.data();
    for (const runtime::TensorSignature &out : sig.outputs) {
      size_t rank = out.shape.size();
      Result r;
      r.name = out.name;
      r.type = out.type;
      r.shape.assign(word + 3, word + 3 + rank);
      int64_t count = 1;
      for (int64_t d : r.shape)
        count *= d;
      r.bytes = count * runtime::elementSize(r.type);
      r.buffer = word[0];
      r.address = word[1] + word[2] * runtime::elementSize(r.type);
      results.push_back(std::move(r));
      word += 3 + 2 * rank;
    }
    return error;
  }

  /// Gives the results' buffers back to the pool, each once, when the
  /// work issued can no longer read them: unless the run was `waited` for
  /// (after a failure, kernels issued before it may still be queued).
  void releaseResults(llvm::ArrayRef<Result> results, bool waited) {
    if (!waited)
      llvm::consumeError(driver->synchronize());
    std::vector<uint64_t> released;
    for (const Result &r : results)
      if (r.buffer && !llvm::is_contained(released, r.buffer)) {
        released.push_back(r.buffer);
        release(reinterpret_cast<void *>(r.buffer));
      }
  }

  std::shared_ptr<void> library;
  runtime::LoadOptions options;
  ModelSignature sig;
  std::shared_ptr<LibraryBinding> binding;
  /// Guards the driver's opening, kernelMilliseconds and handedOut.
  mutable std::mutex stateMutex;
  std::shared_ptr<Driver> driver;
  tessera_cuda_bind_driver_fn bind = nullptr;
  tessera_cuda_take_error_fn takeError = nullptr;
  runtime::PackedFunction entry = nullptr;
  runtime::FreeFunction release = nullptr;
  std::optional<double> kernelMilliseconds;
  /// Device memory allocateDevice and runOnDevice handed to the caller,
  /// which freeDevice takes back.
  std::set<uint64_t> handedOut;
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
