//===- ArtifactSupport.cpp - code linked into every CUDA artifact ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The artifact's host code, as MLIR's gpu-to-llvm lowering writes it, loads
// its kernel modules in a global constructor (`mgpuModuleLoad`), looks a
// kernel up before each launch and launches it on a stream; its buffers come
// from `_mlir_memref_to_llvm_alloc` and its weights from
// `tessera_cuda_device_global`. This file implements all of them over the
// driver table the runtime binds (tessera/Target/CUDA/DriverABI.h), so the
// artifact links no GPU library and loads on machines without a GPU.
//
// Modules load lazily, when the first kernel of one is looked up, because
// the constructors run before any driver is bound. After a run's first
// failure its later calls do nothing, and `tessera_cuda_take_error` reports
// the failure once the run returns. A run is the artifact's entry on one
// thread, so the failure is the thread's: runs on other threads go on.
//
// Plain C++ with no dependencies.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/DriverABI.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Module;

struct Function {
  Module *module;
  std::string name;
  void *handle = nullptr;
};

struct Module {
  const void *image;
  uint64_t bytes;
  void *handle = nullptr;
  std::map<std::string, std::unique_ptr<Function>> functions;
};

struct State {
  std::mutex mutex;
  const tessera_cuda_driver *driver = nullptr;
  std::vector<std::unique_ptr<Module>> modules;
  /// Modules loaded and not yet unloaded.
  size_t loadedModules = 0;
  /// Weights uploaded once: host address -> device address.
  std::map<const void *, uint64_t> globals;
  /// Tensor maps built once: their fields -> device address, and how many
  /// runs hold it for a launch they have not made yet.
  struct TensorMap {
    uint64_t device = 0;
    int pending = 0;
  };
  std::map<std::vector<uint64_t>, TensorMap> tensorMaps;
  /// The maps the calling thread's run was given for its next launch.
  static std::vector<std::vector<uint64_t>> &pendingMaps() {
    static thread_local std::vector<std::vector<uint64_t>> keys;
    return keys;
  }
  /// The bound device's compute capability, asked once (0: not yet).
  uint32_t capability = 0;

  /// The calling thread's run's first failure.
  struct Failure {
    std::string error;
    bool failed = false;
  };
  static Failure &failure() {
    static thread_local Failure f;
    return f;
  }

  void fail(const std::string &what) {
    Failure &f = failure();
    if (f.failed)
      return;
    f.failed = true;
    f.error = what;
    if (driver) {
      const char *why = driver->last_error(driver->self);
      if (why && *why)
        f.error += ": " + std::string(why);
    }
  }
  bool ready(const char *what) {
    if (failure().failed)
      return false;
    if (!driver) {
      fail(std::string(what) + " before a GPU driver was bound");
      return false;
    }
    return true;
  }
};

/// Tensor maps kept at most (128 bytes of device memory each): 1024, or
/// TESSERA_CUDA_MAX_TENSOR_MAPS (tests set it low).
size_t maxTensorMaps() {
  static const size_t max = [] {
    const char *text = std::getenv("TESSERA_CUDA_MAX_TENSOR_MAPS");
    long value = text ? std::strtol(text, nullptr, 10) : 0;
    return value > 0 ? size_t(value) : size_t(1024);
  }();
  return max;
}

std::atomic<uint64_t> failedAllocations{0};
std::atomic<uint64_t> lastFailedBytes{0};

/// Not a static object: the module destructors that run when the process
/// exits (or the library is closed) may come after static destructors.
/// Deleted when the last module is unloaded, which is the library's last
/// call into this code.
State *&statePointer() {
  static State *s = new State;
  return s;
}
State &state() {
  State *&s = statePointer();
  if (!s)
    s = new State;
  return *s;
}

} // namespace

extern "C" {

// The artifact exports these two under the names of DriverABI.h through
// forwarders in its own code (the archive's symbols stay private).
void tesseraCudaBindDriver(const tessera_cuda_driver *driver) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.driver == driver)
    return;
  // What the previous driver loaded and allocated is its own.
  if (s.driver) {
    for (auto &m : s.modules) {
      if (m->handle)
        s.driver->unload_module(s.driver->self, m->handle);
      m->handle = nullptr;
      m->functions.clear();
    }
    for (auto &[host, device] : s.globals)
      s.driver->release(s.driver->self, device);
    for (auto &[fields, map] : s.tensorMaps)
      s.driver->release(s.driver->self, map.device);
  }
  s.globals.clear();
  s.tensorMaps.clear();
  s.capability = 0;
  s.driver = driver;
}

const char *tesseraCudaTakeError() {
  State::Failure &f = State::failure();
  if (!f.failed)
    return nullptr;
  static thread_local std::string message;
  message = f.error;
  f.failed = false;
  f.error.clear();
  return message.c_str();
}

void *mgpuModuleLoad(void *image, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.loadedModules;
  s.modules.push_back(std::make_unique<Module>());
  s.modules.back()->image = image;
  s.modules.back()->bytes = bytes;
  return s.modules.back().get();
}

// Runs from the library's destructors, when it is closed or the process
// exits. What a driver loaded was given back when the runtime unbound it
// (before closing the library); at exit, a driver that is still bound may
// already be shut down, so it is not called.
void mgpuModuleUnload(void *module) {
  State &s = state();
  bool last;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto *m = static_cast<Module *>(module);
    m->handle = nullptr;
    m->functions.clear();
    last = --s.loadedModules == 0;
  }
  // Nothing of the state is reachable once the last module is gone (the
  // runtime unbinds its driver, giving back what it loaded, before it
  // closes the library).
  if (last) {
    delete &s;
    statePointer() = nullptr;
  }
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *m = static_cast<Module *>(module);
  if (!s.ready("a kernel was looked up"))
    return nullptr;
  if (!m->handle &&
      s.driver->load_module(s.driver->self, m->image, m->bytes, &m->handle)) {
    s.fail("cannot load the kernel module");
    return nullptr;
  }
  std::unique_ptr<Function> &f = m->functions[name];
  if (!f) {
    f = std::make_unique<Function>();
    f->module = m;
    f->name = name;
    if (s.driver->get_function(s.driver->self, m->handle, name, &f->handle)) {
      s.fail(std::string("no kernel '") + name + "' in its module");
      f.reset();
      return nullptr;
    }
  }
  return f.get();
}

// The host code brackets every launch with a stream of its own and waits
// for it. Launches go instead on the stream the runtime chose for the run,
// where they run in order, and the runtime waits once when the run ends:
// the host code never reads device memory, and a buffer it frees is reused
// only by work issued later on the same stream.
void *mgpuStreamCreate() { return nullptr; }
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void * /*stream*/,
                      void **params, void ** /*extra*/, size_t numParams) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  // The maps this launch reads are in its parameters (or it is not made):
  // pruning may take them once the launch has run.
  for (const std::vector<uint64_t> &key : State::pendingMaps())
    if (auto it = s.tensorMaps.find(key); it != s.tensorMaps.end())
      --it->second.pending;
  State::pendingMaps().clear();
  if (!s.ready("a kernel was launched") || !function)
    return;
  auto *f = static_cast<Function *>(function);
  // An empty grid (a dim of size 0) has nothing to do.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return;
  if (s.driver->launch(s.driver->self, f->handle, gridX, gridY, gridZ, blockX,
                       blockY, blockZ, sharedBytes, params, numParams))
    s.fail("launching kernel '" + f->name + "' failed");
}

/// The device copy of a weight (a constant of the model), uploaded on first
/// use.
uint64_t tessera_cuda_device_global(const void *host, uint64_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.ready("a weight was used"))
    return 0;
  auto it = s.globals.find(host);
  if (it != s.globals.end())
    return it->second;
  uint64_t device = 0;
  // Runs on other threads' streams use the weight as soon as it is
  // cached: the upload (on this thread's stream) completes first, once
  // per weight, in the first run.
  if (s.driver->alloc(s.driver->self, bytes ? bytes : 1, &device) ||
      s.driver->copy_to_device(s.driver->self, device, host, bytes) ||
      s.driver->synchronize(s.driver->self)) {
    s.fail("cannot upload a weight of " + std::to_string(bytes) + " bytes");
    return 0;
  }
  s.globals[host] = device;
  return device;
}

/// The device's compute capability (10 * major + minor), which the host
/// code asks before it launches an architecture's own kernels (each run,
/// so it is asked of the driver once per binding); 0 when no driver is
/// bound or it cannot say.
uint32_t tessera_cuda_compute_capability() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.capability || !s.ready("the GPU's architecture was asked") ||
      s.driver->abi_version < 2)
    return s.capability;
  uint32_t capability = 0;
  if (!s.driver->compute_capability(s.driver->self, &capability))
    s.capability = capability;
  return s.capability;
}

/// The device address of a TMA tensor map over a buffer (fields as in
/// tessera_cuda_tensor_map_fields, one scalar each: dims and box from
/// dim 0, the innermost; byte strides of dims 1-4), built once per distinct
/// map; 0 after a failure.
uint64_t tessera_cuda_tensor_map(uint64_t address, uint32_t elementBytes,
                                 uint32_t rank, uint64_t d0, uint64_t d1,
                                 uint64_t d2, uint64_t d3, uint64_t d4,
                                 uint64_t s1, uint64_t s2, uint64_t s3,
                                 uint64_t s4, uint32_t b0, uint32_t b1,
                                 uint32_t b2, uint32_t b3, uint32_t b4,
                                 uint32_t swizzle) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.ready("a tensor map was built"))
    return 0;
  std::vector<uint64_t> key = {address, elementBytes, rank, d0, d1, d2,
                               d3,      d4,           s1,   s2, s3, s4,
                               b0,      b1,           b2,   b3, b4, swizzle};
  auto give = [&](State::TensorMap &map) {
    ++map.pending;
    State::pendingMaps().push_back(key);
    return map.device;
  };
  auto it = s.tensorMaps.find(key);
  if (it != s.tensorMaps.end())
    return give(it->second);
  // Buffers move between runs (and dynamic shapes change the dims), so the
  // maps would pile up: past a bound, once every kernel that may read one
  // has finished (on every stream), they all go, but those a run was given
  // for a launch it has not made yet: a launch asks for its maps one after
  // the other (A's, then B's) before it runs.
  if (s.tensorMaps.size() >= maxTensorMaps()) {
    if ((s.driver->abi_version >= 3
             ? s.driver->synchronize_device(s.driver->self)
             : s.driver->synchronize(s.driver->self))) {
      s.fail("the GPU failed");
      return 0;
    }
    for (auto map = s.tensorMaps.begin(); map != s.tensorMaps.end();)
      if (map->second.pending == 0) {
        s.driver->release(s.driver->self, map->second.device);
        map = s.tensorMaps.erase(map);
      } else {
        ++map;
      }
  }
  tessera_cuda_tensor_map_fields fields = {address,
                                           elementBytes,
                                           rank,
                                           {d0, d1, d2, d3, d4},
                                           {0, s1, s2, s3, s4},
                                           {b0, b1, b2, b3, b4},
                                           swizzle};
  uint64_t device = 0;
  if (s.driver->abi_version < 2 ||
      s.driver->tensor_map(s.driver->self, &fields, &device)) {
    s.fail("cannot build a tensor map for a kernel's copies");
    return 0;
  }
  State::TensorMap &map = s.tensorMaps[key];
  map.device = device;
  return give(map);
}

void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  uint64_t device = 0;
  if (!s.ready("a buffer was allocated"))
    return nullptr;
  if (s.driver->alloc(s.driver->self, bytes ? bytes : 1, &device)) {
    s.fail("cannot allocate " + std::to_string(bytes) + " bytes of GPU memory");
    lastFailedBytes.store(bytes, std::memory_order_relaxed);
    failedAllocations.fetch_add(1, std::memory_order_acq_rel);
    return nullptr;
  }
  return reinterpret_cast<void *>(device);
}

/// The count of refused device allocations (the CPU artifact's interface,
/// which the host code shares); each also fails the run through
/// tessera_cuda_take_error.
uint64_t tesseraAllocationFailures(uint64_t *lastBytes) {
  if (lastBytes)
    *lastBytes = lastFailedBytes.load(std::memory_order_relaxed);
  return failedAllocations.load(std::memory_order_acquire);
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t /*alignment*/,
                                         uint64_t bytes) {
  // Device allocations are aligned to 256 bytes.
  return _mlir_memref_to_llvm_alloc(bytes);
}

void _mlir_memref_to_llvm_free(void *pointer) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (pointer && s.driver)
    s.driver->release(s.driver->self, reinterpret_cast<uint64_t>(pointer));
}

} // extern "C"
