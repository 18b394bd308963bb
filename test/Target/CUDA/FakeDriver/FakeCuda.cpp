//===- FakeCuda.cpp - a libcuda.so.1 for tests, over the PTX emulator
//------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CUDA driver API functions Tessera's runtime calls, implemented on
// Tessera's PTX emulator, so tests run the runtime's real GPU path
// (`--gpu-driver=cuda`, which dlopens libcuda.so.1) on a machine without a
// GPU: LD_LIBRARY_PATH points at this library instead of NVIDIA's.
//
// It behaves as the driver does where the runtime depends on it:
//  - it is a GPU of compute capability 10.0 named "Tessera test GPU", so
//    the runtime hands it PTX (cubins are refused, as a GPU refuses another
//    architecture's) and the artifact takes its sm_80 paths;
//  - work on a stream is queued and runs only when something waits for it
//    (a synchronization of that stream or of an event recorded on it, a
//    copy to pageable host memory on it, cuMemFree and cuModuleUnload,
//    which wait for everything), in issue order, the other streams'
//    queued work interleaved with it an operation at a time (a stream
//    whose next operation is a copy from the host waits). Every
//    stream but the
//    default one behaves as a CU_STREAM_NON_BLOCKING stream (a
//    framework's): it is not ordered with the default stream either way.
//    CU_STREAM_PER_THREAD (0x2) is the calling thread's own such stream,
//    CU_STREAM_LEGACY (0x1) the default one. Calls from several threads
//    take turns (one lock), so runs on several threads interleave;
//    Host data of a copy to the device and kernel parameters are taken
//    when the call is made. A runtime that read results before waiting, or
//    issued dependent work on two streams, reads stale memory;
//  - a kernel's failure is sticky: every later call fails;
//  - events stamp a clock that advances 1 ms per kernel run, so a timing
//    test knows the answer (the number of kernels between two events).
// With TESSERA_FAKE_CUDA_STATS set, it prints its counts to stderr at exit.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Emulator/Emulator.h"
#include "tessera/Target/CUDA/Emulator/PTXParser.h"

#include "llvm/ADT/STLExtras.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ptx = tessera::ptx;

namespace {

enum Result : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialized = 3,
  kNoBinaryForGpu = 209,
  kNotFound = 500,
  kNotReady = 600,
  kLaunchFailed = 719,
};

struct Module {
  ptx::Module program;
  std::unique_ptr<ptx::Emulator> emulator;
};

struct Function {
  Module *module;
  const ptx::Kernel *kernel;
};

struct Event {
  double stamp = 0;
  bool recorded = false;
  uintptr_t stream = 0;
};

/// The one device, its memory and its queues.
struct Device {
  std::recursive_mutex mutex;
  bool initialized = false;
  ptx::DeviceMemory memory;
  std::map<uint64_t, void *> hostOf;
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Function>> functions;
  /// Queued work by stream (0: the default stream).
  /// A queued operation; copies from the host are told apart.
  struct Op {
    std::function<int()> work;
    bool copyIn = false;
  };
  std::map<uintptr_t, std::deque<Op>> queues;
  int sticky = kSuccess;
  std::string stickyMessage;
  double clockMs = 0;
  // Counts for TESSERA_FAKE_CUDA_STATS.
  uint64_t launches = 0, launchesOnStreams = 0, streamSyncs = 0,
           deepestQueue = 0, copiesIn = 0, copiesOut = 0, deviceSyncs = 0;
  /// The threads' default streams that kernels ran on.
  std::set<uintptr_t> threadStreams;
  /// Kernels queued on each stream since it last ran its queue, and the
  /// most there ever were.
  std::map<uintptr_t, uint64_t> kernelsQueued;
  uint64_t mostKernelsQueued = 0;

  void report() const {
    if (std::getenv("TESSERA_FAKE_CUDA_STATS"))
      std::fprintf(
          stderr,
          "fake libcuda: %llu kernels (%llu on streams other than the "
          "default), %llu stream synchronizations, at most %llu "
          "operations and %llu kernels queued on a stream, %llu "
          "copies to the device, %llu to the host; kernels on %llu "
          "threads' own streams; %llu device synchronizations\n",
          (unsigned long long)launches, (unsigned long long)launchesOnStreams,
          (unsigned long long)streamSyncs, (unsigned long long)deepestQueue,
          (unsigned long long)mostKernelsQueued, (unsigned long long)copiesIn,
          (unsigned long long)copiesOut,
          (unsigned long long)threadStreams.size(),
          (unsigned long long)deviceSyncs);
  }

  /// Runs the queued work of `stream`, in order. The other streams' work
  /// runs in turn with it, one operation each, but a stream whose next
  /// operation is a copy from the host waits (work of other streams may
  /// run at any time on a GPU, or late): a runtime that let one stream's
  /// work depend on another's, unawaited, sees it interleaved or before
  /// the other stream's copies.
  int drain(uintptr_t stream) {
    kernelsQueued[stream] = 0;
    auto &queue = queues[stream];
    while (!queue.empty() && sticky == kSuccess) {
      for (auto &[other, pending] : queues) {
        if (pending.empty() || sticky != kSuccess ||
            (other != stream && pending.front().copyIn))
          continue;
        std::function<int()> work = std::move(pending.front().work);
        pending.pop_front();
        if (int r = work()) {
          sticky = r;
          return r;
        }
      }
    }
    queue.clear();
    return sticky;
  }
  int drainAll() {
    for (auto &[stream, queue] : queues)
      if (int r = drain(stream))
        return r;
    return sticky;
  }
  /// Queues `work` on `stream`, ordered after that stream's work only.
  int enqueue(uintptr_t stream, std::function<int()> work,
              bool copyIn = false) {
    if (sticky)
      return sticky;
    auto &queue = queues[stream];
    queue.push_back({std::move(work), copyIn});
    deepestQueue = std::max<uint64_t>(deepestQueue, queue.size());
    return kSuccess;
  }
  uint8_t *at(uint64_t address, size_t bytes) {
    return memory.translate(address, bytes);
  }
};

Device &device() {
  // Never destroyed: the runtime's static destructors may call in later.
  static Device *d = new Device;
  static struct Reporter {
    ~Reporter() { d->report(); }
  } reporter;
  return *d;
}

/// Queue keys of the threads' own streams (CU_STREAM_PER_THREAD), above
/// every address.
constexpr uintptr_t kThreadStreams = uintptr_t(1) << 62;

uintptr_t streamOf(void *stream) {
  uintptr_t handle = reinterpret_cast<uintptr_t>(stream);
  if (handle == 0x1) // CU_STREAM_LEGACY
    return 0;
  if (handle == 0x2) { // CU_STREAM_PER_THREAD
    static std::atomic<uintptr_t> threads{0};
    static thread_local uintptr_t mine = kThreadStreams + threads++;
    return mine;
  }
  return handle;
}
bool isThreadStream(uintptr_t key) { return key >= kThreadStreams; }

} // namespace

#define LOCK                                                                   \
  Device &d = device();                                                        \
  std::lock_guard<std::recursive_mutex> lock(d.mutex)

extern "C" {

int cuInit(unsigned flags) {
  LOCK;
  if (flags)
    return kInvalidValue;
  d.initialized = true;
  return kSuccess;
}
int cuDeviceGetCount(int *count) {
  LOCK;
  *count = d.initialized ? 1 : 0;
  return d.initialized ? kSuccess : kNotInitialized;
}
int cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}
int cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Tessera test GPU");
  return kSuccess;
}
int cuDeviceGetAttribute(int *value, int attribute, int) {
  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR.
  if (attribute == 75)
    *value = 10;
  else if (attribute == 76)
    *value = 0;
  else
    return kInvalidValue;
  return kSuccess;
}
int cuDevicePrimaryCtxRetain(void **context, int) {
  static int primary;
  *context = &primary;
  return kSuccess;
}
int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
/// The calling thread's current context (a framework's, or none).
thread_local void *currentContext = nullptr;
int cuCtxSetCurrent(void *context) {
  currentContext = context;
  return kSuccess;
}
int cuCtxGetCurrent(void **context) {
  *context = currentContext;
  return kSuccess;
}

int cuMemAlloc_v2(unsigned long long *address, size_t bytes) {
  LOCK;
  if (d.sticky)
    return d.sticky;
  size_t rounded = (bytes + 255) / 256 * 256;
  void *host = std::aligned_alloc(256, rounded ? rounded : 256);
  if (!host)
    return kOutOfMemory;
  std::memset(host, 0xff, rounded); // fresh memory is no lucky zero
  *address = d.memory.map(host, bytes);
  d.hostOf[*address] = host;
  return kSuccess;
}
int cuMemFree_v2(unsigned long long address) {
  LOCK;
  // Frees wait for the device, as the driver's do.
  d.drainAll();
  auto it = d.hostOf.find(address);
  if (it == d.hostOf.end())
    return kInvalidValue;
  d.memory.unmap(address);
  std::free(it->second);
  d.hostOf.erase(it);
  return d.sticky;
}

int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t bytes,
                         void *stream) {
  LOCK;
  if (!d.at(dst, bytes))
    return kInvalidValue;
  // Pageable host memory is staged when the call is made.
  auto staged = std::make_shared<std::vector<uint8_t>>(
      static_cast<const uint8_t *>(src),
      static_cast<const uint8_t *>(src) + bytes);
  ++d.copiesIn;
  return d.enqueue(
      streamOf(stream),
      [&d, dst, staged] {
        uint8_t *to = d.at(dst, staged->size());
        if (!to)
          return int(kInvalidValue);
        std::memcpy(to, staged->data(), staged->size());
        return int(kSuccess);
      },
      /*copyIn=*/true);
}
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t bytes,
                         void *stream) {
  LOCK;
  if (!d.at(src, bytes))
    return kInvalidValue;
  ++d.copiesOut;
  // To pageable memory the copy completes before the call returns.
  if (int r = d.enqueue(streamOf(stream), [&d, dst, src, bytes] {
        std::memcpy(dst, d.at(src, bytes), bytes);
        return int(kSuccess);
      }))
    return r;
  return d.drain(streamOf(stream));
}
int cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src,
                         size_t bytes, void *stream) {
  LOCK;
  if (!d.at(src, bytes) || !d.at(dst, bytes))
    return kInvalidValue;
  return d.enqueue(streamOf(stream), [&d, dst, src, bytes] {
    uint8_t *to = d.at(dst, bytes), *from = d.at(src, bytes);
    if (!to || !from)
      return int(kInvalidValue);
    std::memmove(to, from, bytes);
    return int(kSuccess);
  });
}
int cuCtxSynchronize() {
  LOCK;
  ++d.deviceSyncs;
  return d.drainAll();
}
int cuStreamSynchronize(void *stream) {
  LOCK;
  ++d.streamSyncs;
  return d.drain(streamOf(stream));
}

int cuEventCreate(void **event, unsigned) {
  *event = new Event;
  return kSuccess;
}
int cuEventDestroy_v2(void *event) {
  LOCK;
  // A record still queued completes first (the driver defers the release).
  d.drainAll();
  delete static_cast<Event *>(event);
  return kSuccess;
}
int cuEventRecord(void *event, void *stream) {
  LOCK;
  auto *e = static_cast<Event *>(event);
  e->recorded = false;
  e->stream = streamOf(stream);
  return d.enqueue(streamOf(stream), [&d, e] {
    e->stamp = d.clockMs;
    e->recorded = true;
    return int(kSuccess);
  });
}
int cuEventSynchronize(void *event) {
  LOCK;
  return d.drain(static_cast<Event *>(event)->stream);
}
int cuEventElapsedTime(float *ms, void *start, void *stop) {
  auto *a = static_cast<Event *>(start), *b = static_cast<Event *>(stop);
  if (!a->recorded || !b->recorded)
    return kNotReady;
  *ms = float(b->stamp - a->stamp);
  return kSuccess;
}

int cuModuleLoadData(void **module, const void *image) {
  LOCK;
  const char *text = static_cast<const char *>(image);
  if (std::memcmp(text,
                  "\x7f"
                  "ELF",
                  4) == 0)
    return kNoBinaryForGpu; // a cubin for another GPU
  auto parsed = ptx::parsePTX(text, "module.ptx");
  if (!parsed) {
    std::fprintf(stderr, "fake libcuda: %s\n",
                 llvm::toString(parsed.takeError()).c_str());
    return kInvalidValue;
  }
  auto m = std::make_unique<Module>();
  m->program = std::move(*parsed);
  m->emulator = std::make_unique<ptx::Emulator>(m->program, d.memory);
  *module = m.get();
  d.modules.push_back(std::move(m));
  return kSuccess;
}
int cuModuleUnload(void *module) {
  LOCK;
  d.drainAll();
  llvm::erase_if(d.functions, [&](auto &f) { return f->module == module; });
  llvm::erase_if(d.modules, [&](auto &m) { return m.get() == module; });
  return kSuccess;
}
int cuModuleGetFunction(void **function, void *module, const char *name) {
  LOCK;
  auto *m = static_cast<Module *>(module);
  const ptx::Kernel *kernel = m->program.findKernel(name);
  if (!kernel)
    return kNotFound;
  d.functions.push_back(std::make_unique<Function>(Function{m, kernel}));
  *function = d.functions.back().get();
  return kSuccess;
}
int cuFuncSetAttribute(void *, int, int) { return kSuccess; }

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void *stream, void **params, void **extra) {
  LOCK;
  auto *f = static_cast<Function *>(function);
  if (!f || extra)
    return kInvalidValue;
  // The parameters are read when the call is made.
  const ptx::Kernel &k = *f->kernel;
  std::vector<uint8_t> block(k.paramBytes, 0);
  for (size_t i = 0; i < k.params.size(); ++i)
    std::memcpy(block.data() + k.params[i].offset, params[i], k.params[i].size);
  ptx::LaunchConfig config;
  config.grid = {gx, gy, gz};
  config.block = {bx, by, bz};
  config.dynamicSharedBytes = shared;
  uintptr_t key = streamOf(stream);
  d.launchesOnStreams += key != 0 && !isThreadStream(key);
  if (isThreadStream(key))
    d.threadStreams.insert(key);
  uint64_t &queued = d.kernelsQueued[streamOf(stream)];
  d.mostKernelsQueued = std::max(d.mostKernelsQueued, ++queued);
  return d.enqueue(streamOf(stream), [&d, f, config, block] {
    auto stats = f->module->emulator->launch(f->kernel->name, config, block);
    if (!stats) {
      std::fprintf(stderr, "fake libcuda: kernel '%s' failed: %s\n",
                   f->kernel->name.c_str(),
                   llvm::toString(stats.takeError()).c_str());
      return int(kLaunchFailed);
    }
    ++d.launches;
    d.clockMs += 1;
    return int(kSuccess);
  });
}

int cuGetErrorString(int error, const char **text) {
  switch (error) {
  case kSuccess:
    *text = "no error";
    break;
  case kInvalidValue:
    *text = "invalid argument";
    break;
  case kOutOfMemory:
    *text = "out of memory";
    break;
  case kNoBinaryForGpu:
    *text = "no kernel image is available for execution on the device";
    break;
  case kLaunchFailed:
    *text = "unspecified launch failure";
    break;
  default:
    *text = "unknown error";
    return kInvalidValue;
  }
  return kSuccess;
}

} // extern "C"
