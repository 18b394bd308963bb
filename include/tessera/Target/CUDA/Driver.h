//===- Driver.h - the GPUs a CUDA artifact runs on ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A Driver runs CUDA artifacts' kernels and owns their device memory. Two
// implementations: the CUDA driver API (libcuda.so.1, opened with dlopen
// when a model first runs, so nothing needs it to load or inspect an
// artifact) and Tessera's PTX emulator, which CI uses. Either is handed to
// an artifact as the C table of DriverABI.h. Device memory goes through a
// pool: a block freed by one run is reused by the next.
//
// Runs: the work between beginRun and endRun on one thread. Each thread
// issues its work on a stream of its own (the CUDA driver's per-thread
// default stream, or the caller's), so runs on several threads proceed
// in parallel where the driver allows it (concurrentRuns). A block a run
// frees serves that run again at once (its work is ordered on its
// stream) and the other runs only after endRun, when its work is done.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_DRIVER_H
#define TESSERA_TARGET_CUDA_DRIVER_H

#include "tessera/Target/CUDA/DriverABI.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tessera::cuda {

class Driver {
public:
  virtual ~Driver();

  /// The device in words ("NVIDIA H100 (sm_90) through the CUDA driver").
  virtual std::string device() const = 0;
  /// Its compute capability, 10 * major + minor (90 for an H100).
  virtual unsigned computeCapability() const = 0;
  /// A TMA tensor map built in device memory (which stays allocated until
  /// the driver goes away).
  virtual llvm::Expected<uint64_t>
  createTensorMap(const tessera_cuda_tensor_map_fields &fields) = 0;

  /// Pooled device memory.
  llvm::Expected<uint64_t> allocate(uint64_t bytes);
  void release(uint64_t address);

  /// Whether runs on several threads may use this driver at once (the
  /// emulator's runs are one at a time).
  virtual bool concurrentRuns() const { return false; }
  /// A run on the calling thread starts: the blocks it releases stay its
  /// own until endRun.
  void beginRun();
  /// The run on the calling thread ends: it waits for the run's stream,
  /// and the blocks the run released go back to the pool.
  void endRun();

  virtual llvm::Error copyToDevice(uint64_t dst, const void *src,
                                   uint64_t bytes) = 0;
  virtual llvm::Error copyToHost(void *dst, uint64_t src, uint64_t bytes) = 0;
  virtual llvm::Error copyOnDevice(uint64_t dst, uint64_t src,
                                   uint64_t bytes) = 0;
  /// `image` is a kernel image (KernelImage.h).
  virtual llvm::Expected<void *> loadModule(llvm::StringRef image) = 0;
  virtual void unloadModule(void *module) = 0;
  virtual llvm::Expected<void *> getFunction(void *module,
                                             llvm::StringRef name) = 0;
  virtual llvm::Error launch(void *function, const uint32_t grid[3],
                             const uint32_t block[3], uint32_t sharedBytes,
                             void **params, uint64_t numParams) = 0;
  /// Waits for everything issued on the calling thread's stream.
  virtual llvm::Error synchronize() = 0;
  /// Waits for everything issued on the device, on every stream.
  virtual llvm::Error synchronizeDevice() { return synchronize(); }

  /// The stream that the calling thread's launches and copies go on from
  /// now on: a CUstream of this driver's context (a framework's), or 0
  /// for the thread's default stream. Work on one stream runs in order, so
  /// a run issues its kernels without waiting for each and synchronizes
  /// once at its end.
  virtual llvm::Error useStream(uint64_t stream) {
    if (stream)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "this device has no streams to run on");
    return llvm::Error::success();
  }
  /// The calling thread's stream (0: its default one).
  uint64_t currentStream() const { return thisThread().stream; }

  /// Times the work issued on the current stream between startTiming and
  /// stopTiming with the device's own clock (CUDA events). stopTiming waits
  /// for that work and returns milliseconds; std::nullopt from a device
  /// without a clock (the emulator), which times nothing.
  virtual llvm::Error startTiming() { return llvm::Error::success(); }
  virtual llvm::Expected<std::optional<double>> stopTiming() {
    return std::nullopt;
  }

  /// What the last kernels cost, for people ("3 kernels, 1.2 M warp
  /// instructions"); empty when there is nothing to say.
  virtual std::string summary() const { return ""; }
  /// Starts counting for summary() afresh (each run).
  virtual void resetSummary() {}

  /// This driver as the table an artifact calls.
  const tessera_cuda_driver *table() const { return &abi; }

protected:
  Driver();
  /// What a thread holds of this driver: its stream (set by useStream),
  /// and while it runs, the blocks its run released.
  struct ThreadState {
    uint64_t stream = 0;
    bool inRun = false;
    /// (size class, address).
    std::vector<std::pair<uint64_t, uint64_t>> released;
    /// The message of the thread's last failure seen through the table.
    std::string lastError;
  };
  ThreadState &thisThread() const;
  /// Tells this driver's threads' states from those of a driver that was
  /// at the same address before.
  const uint64_t id;
  virtual llvm::Expected<uint64_t> allocateDevice(uint64_t bytes) = 0;
  virtual void releaseDevice(uint64_t address) = 0;
  /// Gives every block, free or live, back to the device (derived
  /// destructors call it).
  void releasePool();

private:
  tessera_cuda_driver abi;
  std::mutex poolMutex;
  /// Free blocks by size class; live blocks' size classes.
  std::multimap<uint64_t, uint64_t> freeBlocks;
  std::map<uint64_t, uint64_t> liveBlocks;

  friend struct DriverTable;
};

/// The CUDA driver API on device `ordinal`; an error when libcuda.so.1 or
/// the device is missing.
llvm::Expected<std::shared_ptr<Driver>> openCudaDriver(int ordinal);

/// Tessera's PTX emulator as a GPU of architecture `arch` (sm_80 ..
/// sm_90a): it runs each image's PTX for that architecture, or for the
/// newest one below it that the image holds (sm_90a PTX only on sm_90a, as
/// a GPU would). `hazardChecks` turns on its race and async-copy checks.
std::shared_ptr<Driver> createEmulatorDriver(bool hazardChecks = true,
                                             llvm::StringRef arch = "sm_90a");

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_DRIVER_H
