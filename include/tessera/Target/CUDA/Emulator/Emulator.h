//===- Emulator.h - Functional execution of PTX kernel launches -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs one kernel launch of a parsed PTX module on the CPU: a grid of CTAs,
// each with its shared memory and warps of 32 threads. A warp keeps a program
// counter per thread and always advances the threads at the lowest PC
// together, so divergent paths run one after the other and reconverge where
// their PCs meet; warp collectives (shfl, vote, ldmatrix, mma) wait until
// every participating lane has arrived. Global memory is host memory that the
// caller maps; an access outside a mapping is an error.
//
// The launch fails (llvm::Error naming the PTX line, CTA, warp and lane) on
// out-of-bounds accesses, integer division by zero, deadlocks, divergent or
// partial collectives, mbarrier phases that never complete and, when hazard
// checks are on, on a shared-memory read or write that races with another
// warp's access since the last barrier, a read of a cp.async (bulk or
// tensor) destination before its wait_group (mbarrier phase), and a wgmma
// accumulator touched before its wgmma.wait_group.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_EMULATOR_EMULATOR_H
#define TESSERA_TARGET_CUDA_EMULATOR_EMULATOR_H

#include "tessera/Target/CUDA/Emulator/PTXProgram.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <array>
#include <map>

namespace tessera::ptx {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

struct LaunchConfig {
  Dim3 grid, block;
  uint32_t dynamicSharedBytes = 0;
};

struct EmulatorOptions {
  /// Shared-memory race and cp.async hazard checks.
  bool checkHazards = true;
  /// A launch that executes more warp instructions than this fails (runaway
  /// loops).
  uint64_t maxWarpInstructions = uint64_t(1) << 32;
};

struct LaunchStats {
  uint64_t warpInstructions = 0;   ///< Instructions issued per warp.
  uint64_t threadInstructions = 0; ///< Summed over active lanes.
  /// Warp-level tensor-core instructions (mma.sync and wgmma.mma_async).
  uint64_t tensorCoreInstructions = 0;
  /// Warp-level ld/st.global of 16 bytes a lane (v4.b32, v2.b64).
  uint64_t wideGlobalAccesses = 0;
  double seconds = 0;
};

/// A TMA tensor map as the host encoded it (what cuTensorMapEncodeTiled is
/// given). A real tensor map is an opaque 128-byte object in device memory;
/// the emulated driver allocates those 128 bytes and records the fields at
/// their address, where cp.async.bulk.tensor looks them up.
struct TensorMap {
  enum class Swizzle { None, B32, B64, B128 };
  unsigned elementBytes = 2; ///< 1, 2, 4 or 8.
  unsigned rank = 2;         ///< 1 to 5; dim 0 is the innermost.
  uint64_t globalAddress = 0;
  std::array<uint64_t, 5> globalDims{};
  /// Byte strides of dims 1 .. rank-1 (dim 0 is contiguous); entry 0 unused.
  std::array<uint64_t, 5> globalStrides{};
  /// The box one copy moves, in elements per dim.
  std::array<uint32_t, 5> boxDims{};
  Swizzle swizzle = Swizzle::None;
  /// Elements outside the tensor read as NaN (CU_TENSOR_MAP_FLOAT_OOB_FILL_
  /// NAN_REQUEST_ZERO_FMA) rather than zero.
  bool oobNaN = false;
};

/// Global memory: host buffers mapped at device addresses. The emulator reads
/// and writes the host memory in place.
class DeviceMemory {
public:
  /// Maps \p bytes of host memory and returns its device address (aligned to
  /// 256, with an unmapped gap after each mapping).
  uint64_t map(void *host, size_t bytes);
  /// Removes the mapping that starts at \p addr; false if there is none.
  bool unmap(uint64_t addr);
  /// Host pointer of [addr, addr+bytes) if it lies inside one mapping.
  uint8_t *translate(uint64_t addr, size_t bytes) const;

  /// Records the tensor map whose 128 bytes are at \p addr (inside a
  /// mapping); cp.async.bulk.tensor reads it from there.
  void defineTensorMap(uint64_t addr, const TensorMap &map) {
    tensorMaps[addr] = map;
  }
  /// The tensor map at \p addr, or null.
  const TensorMap *tensorMap(uint64_t addr) const {
    auto it = tensorMaps.find(addr);
    return it == tensorMaps.end() ? nullptr : &it->second;
  }

private:
  std::map<uint64_t, TensorMap> tensorMaps;
  struct Mapping {
    uint8_t *host;
    size_t bytes;
  };
  std::map<uint64_t, Mapping> mappings;
  uint64_t next = uint64_t(1) << 32;
};

/// Packs scalar arguments (one per .param, at most 8 bytes each,
/// little-endian) into the kernel's parameter block.
llvm::Expected<std::vector<uint8_t>> packParams(const Kernel &k,
                                                llvm::ArrayRef<uint64_t> args);

class Emulator {
public:
  explicit Emulator(const Module &m) : module(m), mem(ownMemory) {}
  /// Runs kernels of \p m on global memory that others share (a driver's
  /// allocations, used by every module it loads).
  Emulator(const Module &m, DeviceMemory &shared) : module(m), mem(shared) {}
  DeviceMemory &memory() { return mem; }

  llvm::Expected<LaunchStats> launch(llvm::StringRef kernel,
                                     const LaunchConfig &config,
                                     llvm::ArrayRef<uint8_t> params,
                                     const EmulatorOptions &options = {});

private:
  const Module &module;
  DeviceMemory ownMemory;
  DeviceMemory &mem;
};

} // namespace tessera::ptx

#endif // TESSERA_TARGET_CUDA_EMULATOR_EMULATOR_H
