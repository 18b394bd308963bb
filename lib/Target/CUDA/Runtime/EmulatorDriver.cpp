//===- EmulatorDriver.cpp - CUDA artifacts on Tessera's PTX emulator ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Device memory is host memory mapped into the emulator's address space at
// addresses of its own (from 2^32 up), so host code that touched a device
// address would fault here as it would on a GPU. Kernels run one launch at
// a time, in order; `synchronize` has nothing to wait for.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Driver.h"
#include "tessera/Target/CUDA/Emulator/Emulator.h"
#include "tessera/Target/CUDA/Emulator/PTXParser.h"
#include "tessera/Target/CUDA/KernelImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <cstring>
#include <list>

using namespace tessera::cuda;
namespace ptx = tessera::ptx;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

struct LoadedModule {
  std::string arch;
  ptx::Module module;
  std::unique_ptr<ptx::Emulator> emulator;
};

struct LoadedFunction {
  LoadedModule *module;
  const ptx::Kernel *kernel;
};

class EmulatorDriver : public Driver {
public:
  EmulatorDriver(bool hazardChecks, llvm::StringRef arch)
      : arch(arch.str()), capability(tessera::cuda::computeCapability(arch)) {
    options.checkHazards = hazardChecks;
  }
  ~EmulatorDriver() override { releasePool(); }

  std::string device() const override {
    return "Tessera's PTX emulator as " + arch + " (no GPU)";
  }
  unsigned computeCapability() const override { return capability; }

  /// 128 bytes of device memory, with the fields recorded at their address
  /// (the emulator reads them there, not a hardware encoding).
  llvm::Expected<uint64_t>
  createTensorMap(const tessera_cuda_tensor_map_fields &f) override {
    // What cuTensorMapEncodeTiled refuses, refused here too.
    if (f.rank < 1 || f.rank > 5)
      return fail(llvm::formatv("a tensor map of rank {0} (1 to 5)", f.rank));
    if (f.global_address % 16)
      return fail("a tensor map over an address that is not 16-byte aligned");
    unsigned span = f.swizzle == 1 ? 32 : f.swizzle == 2 ? 64 : 128;
    for (unsigned i = 0; i < f.rank; ++i) {
      if (f.dims[i] == 0 || f.box[i] == 0 || f.box[i] > 256)
        return fail(llvm::formatv("a tensor map with dim {0} of {1} and a "
                                  "box of {2} (1 to 256) along it",
                                  i, f.dims[i], f.box[i]));
      if (i && f.strides[i] % 16)
        return fail(llvm::formatv("a tensor map stride of {0} bytes (a "
                                  "multiple of 16)",
                                  f.strides[i]));
    }
    if (f.swizzle && f.box[0] * f.element_bytes > span)
      return fail(llvm::formatv("a tensor map box row of {0} bytes, over "
                                "its swizzle's {1}",
                                f.box[0] * f.element_bytes, span));
    auto address = allocate(128);
    if (!address)
      return address.takeError();
    ptx::TensorMap map;
    map.elementBytes = f.element_bytes;
    map.rank = f.rank;
    map.globalAddress = f.global_address;
    for (unsigned i = 0; i < f.rank; ++i) {
      map.globalDims[i] = f.dims[i];
      map.globalStrides[i] = i ? f.strides[i] : 0;
      map.boxDims[i] = f.box[i];
    }
    using Swizzle = ptx::TensorMap::Swizzle;
    map.swizzle = f.swizzle == 1   ? Swizzle::B32
                  : f.swizzle == 2 ? Swizzle::B64
                  : f.swizzle == 3 ? Swizzle::B128
                                   : Swizzle::None;
    memory.defineTensorMap(*address, map);
    return *address;
  }

  llvm::Error copyToDevice(uint64_t dst, const void *src,
                           uint64_t bytes) override {
    uint8_t *to = memory.translate(dst, bytes);
    if (!to)
      return fail(llvm::formatv("a copy to the device writes {0} bytes at "
                                "{1:x}, outside every allocation",
                                bytes, dst));
    std::memcpy(to, src, bytes);
    return llvm::Error::success();
  }
  llvm::Error copyToHost(void *dst, uint64_t src, uint64_t bytes) override {
    uint8_t *from = memory.translate(src, bytes);
    if (!from)
      return fail(llvm::formatv("a copy to the host reads {0} bytes at {1:x}, "
                                "outside every allocation",
                                bytes, src));
    std::memcpy(dst, from, bytes);
    return llvm::Error::success();
  }
  llvm::Error copyOnDevice(uint64_t dst, uint64_t src,
                           uint64_t bytes) override {
    uint8_t *to = memory.translate(dst, bytes),
            *from = memory.translate(src, bytes);
    if (!to || !from)
      return fail("a copy on the device is outside every allocation");
    std::memmove(to, from, bytes);
    return llvm::Error::success();
  }

  llvm::Expected<void *> loadModule(llvm::StringRef image) override {
    auto entries = readKernelImage(image);
    if (!entries)
      return entries.takeError();
    // The PTX this architecture's GPU would compile (sm_90a PTX on every
    // 9.0 device: sm_90 and sm_90a name the same GPU).
    const KernelImageEntry *newest = selectKernelPTX(*entries, capability);
    if (!newest) {
      std::vector<std::string> archs;
      for (const KernelImageEntry &e : *entries)
        if (e.kind == KernelImageEntry::PTX &&
            !llvm::is_contained(archs, e.arch))
          archs.push_back(e.arch);
      return fail("the kernel image holds no PTX that runs on " + arch +
                  " (it holds " + llvm::join(archs, ", ") +
                  "); emulate one of those with --emulated-gpu, or compile "
                  "for " +
                  arch + " with --gpu");
    }
    auto parsed =
        ptx::parsePTX(newest->data, "kernels." + newest->arch + ".ptx");
    if (!parsed)
      return parsed.takeError();
    modules.push_back(std::make_unique<LoadedModule>());
    LoadedModule &m = *modules.back();
    m.arch = newest->arch;
    m.module = std::move(*parsed);
    m.emulator = std::make_unique<ptx::Emulator>(m.module, memory);
    return &m;
  }
  void unloadModule(void *module) override {
    llvm::erase_if(modules, [&](auto &m) { return m.get() == module; });
    llvm::erase_if(functions, [&](auto &f) { return f->module == module; });
  }
  llvm::Expected<void *> getFunction(void *module,
                                     llvm::StringRef name) override {
    auto *m = static_cast<LoadedModule *>(module);
    const ptx::Kernel *kernel = m->module.findKernel(name);
    if (!kernel)
      return fail("no kernel '" + name + "' in the PTX for " + m->arch);
    functions.push_back(
        std::make_unique<LoadedFunction>(LoadedFunction{m, kernel}));
    return functions.back().get();
  }

  void resetSummary() override {
    launches = warpInstructions = tensorCoreInstructions = wideAccesses = 0;
    seconds = 0;
  }

  llvm::Error launch(void *function, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t sharedBytes,
                     void **params, uint64_t numParams) override {
    auto *f = static_cast<LoadedFunction *>(function);
    const ptx::Kernel &k = *f->kernel;
    if (numParams != k.params.size())
      return fail(llvm::formatv("kernel '{0}' takes {1} parameters, the "
                                "launch passes {2}",
                                k.name, k.params.size(), numParams));
    std::vector<uint8_t> block_(k.paramBytes, 0);
    for (size_t i = 0; i < numParams; ++i)
      std::memcpy(block_.data() + k.params[i].offset, params[i],
                  k.params[i].size);
    ptx::LaunchConfig config;
    config.grid = {grid[0], grid[1], grid[2]};
    config.block = {block[0], block[1], block[2]};
    config.dynamicSharedBytes = sharedBytes;
    auto stats = f->module->emulator->launch(k.name, config, block_, options);
    if (!stats)
      return stats.takeError();
    ++launches;
    warpInstructions += stats->warpInstructions;
    tensorCoreInstructions += stats->tensorCoreInstructions;
    wideAccesses += stats->wideGlobalAccesses;
    seconds += stats->seconds;
    return llvm::Error::success();
  }
  llvm::Error synchronize() override { return llvm::Error::success(); }
  llvm::Error useStream(uint64_t stream) override {
    if (stream)
      return fail("the PTX emulator runs kernels one after the other and "
                  "takes no stream (pass none)");
    return llvm::Error::success();
  }

  std::string summary() const override {
    return llvm::formatv("{0} kernel launches on the PTX emulator, {1} warp "
                         "instructions ({2} on tensor cores), {3:f3} s; {4} "
                         "16-byte global loads and stores",
                         launches, warpInstructions, tensorCoreInstructions,
                         seconds, wideAccesses);
  }

protected:
  llvm::Expected<uint64_t> allocateDevice(uint64_t bytes) override {
    void *host = std::aligned_alloc(256, llvm::alignTo(bytes, 256));
    if (!host)
      return fail(llvm::formatv("cannot allocate {0} bytes for the emulated "
                                "device",
                                bytes));
    // Fresh device memory reads as NaN, not as a lucky zero.
    std::memset(host, 0xff, bytes);
    uint64_t address = memory.map(host, bytes);
    hostOf[address] = host;
    return address;
  }
  void releaseDevice(uint64_t address) override {
    auto it = hostOf.find(address);
    if (it == hostOf.end())
      return;
    memory.unmap(address);
    std::free(it->second);
    hostOf.erase(it);
  }

private:
  std::string arch;
  unsigned capability;
  ptx::DeviceMemory memory;
  ptx::EmulatorOptions options;
  std::map<uint64_t, void *> hostOf;
  std::vector<std::unique_ptr<LoadedModule>> modules;
  std::vector<std::unique_ptr<LoadedFunction>> functions;
  uint64_t launches = 0, warpInstructions = 0, tensorCoreInstructions = 0,
           wideAccesses = 0;
  double seconds = 0;
};

} // namespace

std::shared_ptr<Driver>
tessera::cuda::createEmulatorDriver(bool hazardChecks, llvm::StringRef arch) {
  return std::make_shared<EmulatorDriver>(hazardChecks, arch);
}
