//===- CudaDriver.cpp - CUDA artifacts on a GPU through libcuda ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libcuda.so.1 is opened with dlopen when a model first runs, so neither
// Tessera nor its artifacts link it. The driver API's types are declared
// here (opaque handles and int results), so no CUDA header is needed to
// build. One context (the device's primary context, which the CUDA runtime
// and frameworks share); each thread's work goes on its per-thread default
// stream (CU_STREAM_PER_THREAD: ordered with the legacy default stream, as
// that is with every blocking stream, but not with other threads' runs) or
// on the stream a caller hands over (useStream), and every copy is ordered
// on it.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Driver.h"
#include "tessera/Target/CUDA/KernelImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <vector>

using namespace tessera::cuda;

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUdeviceptr = unsigned long long;
using CUstream = void *;
using CUevent = void *;

constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr int kMaxDynamicSharedBytes = 8; // CU_FUNC_ATTRIBUTE_...
/// CU_STREAM_PER_THREAD: the calling thread's default stream.
const CUstream kPerThreadStream = reinterpret_cast<CUstream>(0x2);
/// Tensor maps: CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32/64 by element size, no
/// interleave, L2 promotion of 128 bytes, out-of-bounds elements zero.
constexpr int kTensorMapL2Promotion128B = 2;

struct Api {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*primaryCtxRelease)(CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxGetCurrent)(CUcontext *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*ctxSynchronize)();
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  /// Null in drivers older than CUDA 12 (no sm_90a kernels run there).
  CUresult (*tensorMapEncodeTiled)(void *, int, unsigned, void *,
                                   const uint64_t *, const uint64_t *,
                                   const uint32_t *, const uint32_t *, int, int,
                                   int, int);
};

class CudaDriver : public Driver {
public:
  CudaDriver(void *library, Api api, CUdevice device, CUcontext context,
             std::string name, int major, int minor)
      : library(library), api(api), dev(device), context(context),
        name(std::move(name)), major(major), minor(minor) {}
  ~CudaDriver() override {
    ContextScope scope(*this);
    for (CUevent event : events)
      api.eventDestroy(event);
    releasePool();
    api.primaryCtxRelease(dev);
  }

  std::string device() const override {
    return llvm::formatv("{0} (sm_{1}{2}) through the CUDA driver", name, major,
                         minor);
  }
  unsigned computeCapability() const override { return major * 10 + minor; }

  llvm::Expected<uint64_t>
  createTensorMap(const tessera_cuda_tensor_map_fields &f) override {
    ContextScope scope(*this);
    if (!api.tensorMapEncodeTiled)
      return fail("this CUDA driver has no cuTensorMapEncodeTiled (sm_90a "
                  "kernels need CUDA 12 or newer)");
    alignas(64) uint8_t map[128] = {};
    uint64_t strides[4] = {};
    uint32_t elementStrides[5] = {1, 1, 1, 1, 1};
    for (uint32_t i = 1; i < f.rank && i < 5; ++i)
      strides[i - 1] = f.strides[i];
    int type = f.element_bytes == 1   ? 0
               : f.element_bytes == 2 ? 1
               : f.element_bytes == 4 ? 2
                                      : 4;
    if (llvm::Error e = check(
            api.tensorMapEncodeTiled(
                map, type, f.rank, reinterpret_cast<void *>(f.global_address),
                f.dims, strides, f.box, elementStrides, /*interleave=*/0,
                int(f.swizzle), kTensorMapL2Promotion128B, /*oobFill=*/0),
            "cuTensorMapEncodeTiled"))
      return std::move(e);
    auto address = allocate(sizeof(map));
    if (!address)
      return address.takeError();
    if (llvm::Error e = copyToDevice(*address, map, sizeof(map)))
      return std::move(e);
    // `map` lives on this stack frame: the copy completes before it goes
    // (maps are built once each, so the wait is rare).
    if (llvm::Error e = synchronize())
      return std::move(e);
    return *address;
  }

  llvm::Error copyToDevice(uint64_t dst, const void *src,
                           uint64_t bytes) override {
    ContextScope scope(*this);
    // From pageable memory the copy has read `src` when it returns.
    return check(api.memcpyHtoDAsync(dst, src, bytes, streamHandle()),
                 "cuMemcpyHtoDAsync");
  }
  llvm::Error copyToHost(void *dst, uint64_t src, uint64_t bytes) override {
    ContextScope scope(*this);
    if (llvm::Error e =
            check(api.memcpyDtoHAsync(dst, src, bytes, streamHandle()),
                  "cuMemcpyDtoHAsync"))
      return e;
    return synchronize();
  }
  llvm::Error copyOnDevice(uint64_t dst, uint64_t src,
                           uint64_t bytes) override {
    ContextScope scope(*this);
    return check(api.memcpyDtoDAsync(dst, src, bytes, streamHandle()),
                 "cuMemcpyDtoDAsync");
  }
  llvm::Expected<void *> loadModule(llvm::StringRef image) override {
    ContextScope scope(*this);
    auto entries = readKernelImage(image);
    if (!entries)
      return entries.takeError();
    const KernelImageEntry *entry = selectKernelImage(*entries, major, minor);
    if (!entry) {
      std::vector<std::string> archs;
      for (const KernelImageEntry &e : *entries)
        if (!llvm::is_contained(archs, e.arch))
          archs.push_back(e.arch);
      // Tessera generates code up to sm_90a; a newer GPU runs sm_80's PTX.
      std::string advice =
          major * 10 + minor > 90
              ? std::string("sm_80 (its PTX runs on newer GPUs)")
              : llvm::formatv("sm_{0}{1}", major, minor).str();
      return fail(llvm::formatv("the artifact has no kernels for sm_{0}{1} "
                                "(it holds {2}); compile it with --gpu={3}",
                                major, minor, llvm::join(archs, ", "), advice));
    }
    CUmodule module = nullptr;
    if (llvm::Error e = check(api.moduleLoadData(&module, entry->data.data()),
                              "cuModuleLoadData (" + entry->arch + ")"))
      return std::move(e);
    return module;
  }
  void unloadModule(void *module) override {
    ContextScope scope(*this);
    api.moduleUnload(module);
  }
  llvm::Expected<void *> getFunction(void *module,
                                     llvm::StringRef fname) override {
    ContextScope scope(*this);
    CUfunction f = nullptr;
    std::string n = fname.str();
    if (llvm::Error e = check(api.moduleGetFunction(&f, module, n.c_str()),
                              "cuModuleGetFunction(" + n + ")"))
      return std::move(e);
    return f;
  }
  llvm::Error launch(void *function, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t sharedBytes,
                     void **params, uint64_t) override {
    ContextScope scope(*this);
    // Over 48 KiB of dynamic shared memory is an opt-in per kernel.
    if (sharedBytes > 48 * 1024)
      if (llvm::Error e =
              check(api.funcSetAttribute(function, kMaxDynamicSharedBytes,
                                         int(sharedBytes)),
                    "cuFuncSetAttribute"))
        return e;
    return check(api.launchKernel(function, grid[0], grid[1], grid[2], block[0],
                                  block[1], block[2], sharedBytes,
                                  streamHandle(), params, nullptr),
                 "cuLaunchKernel");
  }
  llvm::Error synchronize() override {
    ContextScope scope(*this);
    return check(api.streamSynchronize(streamHandle()), "cuStreamSynchronize");
  }
  llvm::Error synchronizeDevice() override {
    ContextScope scope(*this);
    return check(api.ctxSynchronize(), "cuCtxSynchronize");
  }
  bool concurrentRuns() const override { return true; }
  llvm::Error useStream(uint64_t handle) override {
    thisThread().stream = handle;
    return llvm::Error::success();
  }
  llvm::Error startTiming() override {
    ContextScope scope(*this);
    auto &[start, stop] = threadEvents();
    for (CUevent *event : {&start, &stop})
      if (!*event) {
        if (llvm::Error e = check(api.eventCreate(event, 0), "cuEventCreate"))
          return e;
        std::lock_guard<std::mutex> lock(eventsMutex);
        events.push_back(*event);
      }
    return check(api.eventRecord(start, streamHandle()), "cuEventRecord");
  }
  llvm::Expected<std::optional<double>> stopTiming() override {
    ContextScope scope(*this);
    auto &[start, stop] = threadEvents();
    float ms = 0;
    if (llvm::Error e =
            check(api.eventRecord(stop, streamHandle()), "cuEventRecord"))
      return std::move(e);
    if (llvm::Error e = check(api.eventSynchronize(stop), "cuEventSynchronize"))
      return std::move(e);
    if (llvm::Error e =
            check(api.eventElapsedTime(&ms, start, stop), "cuEventElapsedTime"))
      return std::move(e);
    return std::optional<double>(ms);
  }

protected:
  llvm::Expected<uint64_t> allocateDevice(uint64_t bytes) override {
    ContextScope scope(*this);
    CUdeviceptr p = 0;
    if (llvm::Error e = check(api.memAlloc(&p, bytes), "cuMemAlloc"))
      return std::move(e);
    return p;
  }
  void releaseDevice(uint64_t address) override {
    ContextScope scope(*this);
    api.memFree(address);
  }

private:
  /// Makes this driver's context current for one call and puts back the
  /// calling thread's own (a framework's, maybe of another device) after.
  class ContextScope {
  public:
    explicit ContextScope(CudaDriver &driver) : driver(driver) {
      driver.api.ctxGetCurrent(&previous);
      if (previous != driver.context)
        driver.api.ctxSetCurrent(driver.context);
    }
    ~ContextScope() {
      if (previous != driver.context)
        driver.api.ctxSetCurrent(previous);
    }

  private:
    CudaDriver &driver;
    CUcontext previous = nullptr;
  };
  CUstream streamHandle() const {
    uint64_t stream = currentStream();
    return stream ? reinterpret_cast<CUstream>(stream) : kPerThreadStream;
  }
  /// The calling thread's events that time its runs, created on first
  /// use.
  std::pair<CUevent, CUevent> &threadEvents() {
    static thread_local std::map<uint64_t, std::pair<CUevent, CUevent>>
        perThread;
    return perThread[id];
  }
  llvm::Error fail(const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  }
  llvm::Error check(CUresult r, const llvm::Twine &what) {
    if (r == 0)
      return llvm::Error::success();
    const char *text = nullptr;
    api.getErrorString(r, &text);
    return fail(what + " failed: " + (text ? text : "error " + llvm::Twine(r)));
  }

  void *library;
  Api api;
  CUdevice dev;
  CUcontext context;
  std::string name;
  int major, minor;
  /// Every thread's timing events, destroyed with the driver.
  std::mutex eventsMutex;
  std::vector<CUevent> events;
};

} // namespace

llvm::Expected<std::shared_ptr<Driver>>
tessera::cuda::openCudaDriver(int ordinal) {
  auto fail = [](const llvm::Twine &m) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  };
  // Kept open for the process's lifetime, as the CUDA runtime does.
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return fail("no CUDA driver: cannot open libcuda.so.1 (" +
                llvm::Twine(dlerror()) +
                "); run on a machine with an NVIDIA GPU and its driver, or "
                "choose the emulator (--gpu-driver=emulator)");
  Api api{};
  std::vector<std::string> missing;
  auto bind = [&](auto &slot, const char *symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(library, symbol));
    if (!slot)
      missing.push_back(symbol);
  };
  bind(api.init, "cuInit");
  bind(api.deviceGetCount, "cuDeviceGetCount");
  bind(api.deviceGet, "cuDeviceGet");
  bind(api.deviceGetName, "cuDeviceGetName");
  bind(api.deviceGetAttribute, "cuDeviceGetAttribute");
  bind(api.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(api.ctxSetCurrent, "cuCtxSetCurrent");
  bind(api.ctxGetCurrent, "cuCtxGetCurrent");
  bind(api.memAlloc, "cuMemAlloc_v2");
  bind(api.memFree, "cuMemFree_v2");
  bind(api.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(api.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(api.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(api.streamSynchronize, "cuStreamSynchronize");
  bind(api.ctxSynchronize, "cuCtxSynchronize");
  bind(api.eventCreate, "cuEventCreate");
  bind(api.eventRecord, "cuEventRecord");
  bind(api.eventSynchronize, "cuEventSynchronize");
  bind(api.eventElapsedTime, "cuEventElapsedTime");
  bind(api.eventDestroy, "cuEventDestroy_v2");
  bind(api.moduleLoadData, "cuModuleLoadData");
  bind(api.moduleUnload, "cuModuleUnload");
  bind(api.moduleGetFunction, "cuModuleGetFunction");
  bind(api.launchKernel, "cuLaunchKernel");
  bind(api.getErrorString, "cuGetErrorString");
  bind(api.funcSetAttribute, "cuFuncSetAttribute");
  api.tensorMapEncodeTiled =
      reinterpret_cast<decltype(api.tensorMapEncodeTiled)>(
          dlsym(library, "cuTensorMapEncodeTiled"));
  if (!missing.empty())
    return fail("libcuda.so.1 lacks driver API functions Tessera needs (" +
                llvm::join(missing, ", ") + "; a driver older than CUDA 11?)");
  if (int r = api.init(0))
    return fail("no CUDA device: cuInit failed (error " + llvm::Twine(r) + ")");
  int count = 0;
  api.deviceGetCount(&count);
  if (count == 0)
    return fail("no CUDA device: the CUDA driver sees no GPU");
  if (ordinal < 0 || ordinal >= count)
    return fail("no CUDA device " + llvm::Twine(ordinal) +
                ": this machine has " + llvm::Twine(count) + " (0-" +
                llvm::Twine(count - 1) + ")");
  CUdevice device = 0;
  CUcontext context = nullptr;
  int major = 0, minor = 0;
  char name[256] = {0};
  if (api.deviceGet(&device, ordinal) ||
      api.deviceGetAttribute(&major, kComputeCapabilityMajor, device) ||
      api.deviceGetAttribute(&minor, kComputeCapabilityMinor, device) ||
      api.deviceGetName(name, sizeof(name) - 1, device) ||
      api.primaryCtxRetain(&context, device))
    return fail("cannot open CUDA device " + llvm::Twine(ordinal));
  return std::shared_ptr<Driver>(std::make_shared<CudaDriver>(
      library, api, device, context, name, major, minor));
}
