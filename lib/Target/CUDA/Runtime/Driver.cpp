//===- Driver.cpp - pooled device memory and the artifact's table ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Driver.h"

#include "llvm/Support/MathExtras.h"

#include <atomic>

using namespace tessera::cuda;

namespace tessera::cuda {

/// The C functions of the table, each calling the Driver in `self`.
struct DriverTable {
  static Driver &of(void *self) { return *static_cast<Driver *>(self); }
  static int check(Driver &d, llvm::Error error) {
    if (!error)
      return 0;
    d.thisThread().lastError = llvm::toString(std::move(error));
    return 1;
  }
  static int alloc(void *self, uint64_t bytes, uint64_t *device) {
    auto address = of(self).allocate(bytes);
    if (!address)
      return check(of(self), address.takeError());
    *device = *address;
    return 0;
  }
  static void release(void *self, uint64_t device) { of(self).release(device); }
  static int toDevice(void *self, uint64_t dst, const void *src,
                      uint64_t bytes) {
    return check(of(self), of(self).copyToDevice(dst, src, bytes));
  }
  static int toHost(void *self, void *dst, uint64_t src, uint64_t bytes) {
    return check(of(self), of(self).copyToHost(dst, src, bytes));
  }
  static int onDevice(void *self, uint64_t dst, uint64_t src, uint64_t bytes) {
    return check(of(self), of(self).copyOnDevice(dst, src, bytes));
  }
  static int load(void *self, const void *image, uint64_t bytes,
                  void **module) {
    auto m = of(self).loadModule(
        llvm::StringRef(static_cast<const char *>(image), bytes));
    if (!m)
      return check(of(self), m.takeError());
    *module = *m;
    return 0;
  }
  static void unload(void *self, void *module) {
    of(self).unloadModule(module);
  }
  static int function(void *self, void *module, const char *name,
                      void **result) {
    auto f = of(self).getFunction(module, name);
    if (!f)
      return check(of(self), f.takeError());
    *result = *f;
    return 0;
  }
  static int launch(void *self, void *function, uint32_t gx, uint32_t gy,
                    uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz,
                    uint32_t shared, void **params, uint64_t numParams) {
    uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return check(of(self), of(self).launch(function, grid, block, shared,
                                           params, numParams));
  }
  static int synchronize(void *self) {
    return check(of(self), of(self).synchronize());
  }
  /// The artifact waits so before it frees what kernels of any run may
  /// read (its tensor maps).
  static int synchronizeDevice(void *self) {
    return check(of(self), of(self).synchronizeDevice());
  }
  static int capability(void *self, uint32_t *result) {
    *result = of(self).computeCapability();
    return 0;
  }
  static int tensorMap(void *self, const tessera_cuda_tensor_map_fields *fields,
                       uint64_t *device) {
    auto address = of(self).createTensorMap(*fields);
    if (!address)
      return check(of(self), address.takeError());
    *device = *address;
    return 0;
  }
  static const char *lastError(void *self) {
    return of(self).thisThread().lastError.c_str();
  }
};

} // namespace tessera::cuda

static uint64_t nextDriverId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

Driver::Driver() : id(nextDriverId()) {
  abi.abi_version = TESSERA_CUDA_DRIVER_ABI_VERSION;
  abi.self = this;
  abi.alloc = DriverTable::alloc;
  abi.release = DriverTable::release;
  abi.copy_to_device = DriverTable::toDevice;
  abi.copy_to_host = DriverTable::toHost;
  abi.copy_on_device = DriverTable::onDevice;
  abi.load_module = DriverTable::load;
  abi.unload_module = DriverTable::unload;
  abi.get_function = DriverTable::function;
  abi.launch = DriverTable::launch;
  abi.synchronize = DriverTable::synchronize;
  abi.last_error = DriverTable::lastError;
  abi.compute_capability = DriverTable::capability;
  abi.tensor_map = DriverTable::tensorMap;
  abi.synchronize_device = DriverTable::synchronizeDevice;
}

Driver::~Driver() = default;

/// Blocks come in size classes of powers of two up to 1 MiB, then multiples
/// of 1 MiB, so a freed block serves every request of its class.
static uint64_t sizeClass(uint64_t bytes) {
  bytes = std::max<uint64_t>(bytes, 256);
  if (bytes <= (1u << 20))
    return llvm::PowerOf2Ceil(bytes);
  return llvm::alignTo(bytes, 1u << 20);
}

Driver::ThreadState &Driver::thisThread() const {
  // Keyed by the driver's id: a thread may use several drivers, and a
  // driver made later at the same address is another.
  static thread_local std::map<uint64_t, ThreadState> states;
  return states[id];
}

void Driver::beginRun() {
  ThreadState &thread = thisThread();
  thread.inRun = true;
  thread.released.clear();
}

void Driver::endRun() {
  ThreadState &thread = thisThread();
  if (!thread.inRun)
    return;
  // What the run issued may still read its released blocks.
  llvm::consumeError(synchronize());
  std::lock_guard<std::mutex> lock(poolMutex);
  for (auto &[size, address] : thread.released)
    freeBlocks.emplace(size, address);
  thread.released.clear();
  thread.inRun = false;
}

llvm::Expected<uint64_t> Driver::allocate(uint64_t bytes) {
  uint64_t size = sizeClass(bytes);
  ThreadState &thread = thisThread();
  std::lock_guard<std::mutex> lock(poolMutex);
  // A block this run released: its work on the run's stream comes first.
  for (auto it = thread.released.begin(); it != thread.released.end(); ++it)
    if (it->first == size) {
      uint64_t address = it->second;
      thread.released.erase(it);
      liveBlocks[address] = size;
      return address;
    }
  auto it = freeBlocks.find(size);
  if (it != freeBlocks.end()) {
    uint64_t address = it->second;
    freeBlocks.erase(it);
    liveBlocks[address] = size;
    return address;
  }
  auto address = allocateDevice(size);
  if (!address) {
    // Give the pool's free blocks (and this run's) back and try once
    // more, once the work issued may no longer read them (a block is
    // freed while kernels queued before are still to run).
    llvm::consumeError(synchronizeDevice());
    for (auto &[blockSize, block] : freeBlocks)
      releaseDevice(block);
    freeBlocks.clear();
    for (auto &[blockSize, block] : thread.released)
      releaseDevice(block);
    thread.released.clear();
    llvm::consumeError(address.takeError());
    address = allocateDevice(size);
    if (!address)
      return address.takeError();
  }
  liveBlocks[*address] = size;
  return *address;
}

void Driver::release(uint64_t address) {
  ThreadState &thread = thisThread();
  std::lock_guard<std::mutex> lock(poolMutex);
  auto it = liveBlocks.find(address);
  if (it == liveBlocks.end())
    return;
  // During a run, other runs' streams may not wait for its work.
  if (thread.inRun)
    thread.released.emplace_back(it->second, address);
  else
    freeBlocks.emplace(it->second, address);
  liveBlocks.erase(it);
}

void Driver::releasePool() {
  std::lock_guard<std::mutex> lock(poolMutex);
  for (auto &[size, block] : freeBlocks)
    releaseDevice(block);
  for (auto &[block, size] : liveBlocks)
    releaseDevice(block);
  for (auto &[size, block] : thisThread().released)
    releaseDevice(block);
  freeBlocks.clear();
  liveBlocks.clear();
  thisThread().released.clear();
}
