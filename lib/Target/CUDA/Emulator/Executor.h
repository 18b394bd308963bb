//===- Executor.h - Internal state of one emulated launch -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TARGET_CUDA_EMULATOR_EXECUTOR_H
#define TESSERA_LIB_TARGET_CUDA_EMULATOR_EXECUTOR_H

#include "tessera/Target/CUDA/Emulator/Emulator.h"
#include <map>
#include <string>
#include <vector>

namespace tessera::ptx {

/// Generic addresses of the shared and local windows. Global mappings start
/// at 4 GiB and stay far below these.
constexpr uint64_t kSharedWindow = 0x00007000'00000000ull;
constexpr uint64_t kLocalWindow = 0x00006000'00000000ull;
constexpr uint64_t kWindowSize = 0x00000001'00000000ull;

/// A cp.async copy issued but not yet landed.
struct PendingCopy {
  uint32_t dst; ///< Shared-space address.
  uint64_t src; ///< Global address.
  uint32_t bytes, srcBytes;
  uint32_t group; ///< Commit group, or UINT32_MAX while uncommitted.
  unsigned line;
};

struct Warp {
  unsigned index = 0;
  uint32_t live = 0; ///< Lanes that exist.
  uint32_t exited = 0;
  uint32_t atBarrier = 0;    ///< Waiting in bar.sync.
  uint32_t atCollective = 0; ///< Waiting for the rest of a warp collective.
  uint32_t pc[32] = {};
  uint32_t tid[32][3] = {};
  std::vector<uint64_t> regs; ///< regs[reg * 32 + lane]
  std::vector<uint8_t> local; ///< localBytes per lane
  std::vector<PendingCopy> copies[32];
  uint32_t nextGroup[32] = {};
  int64_t yieldedAt = -1; ///< PC of the failed mbarrier wait it yielded at.
  /// wgmma accumulators in flight: their latest values and commit group,
  /// invisible (and a hazard to touch) until wgmma.wait_group.
  struct InFlight {
    uint64_t value[32];
    uint32_t group; ///< UINT32_MAX while uncommitted.
  };
  std::map<uint32_t, InFlight> wgmmaInFlight;
  std::vector<uint8_t> inFlightReg; ///< Per register: in wgmmaInFlight.
  uint32_t wgmmaNextGroup = 0;
  uint64_t &reg(uint32_t r, unsigned lane) {
    return regs[size_t(r) * 32 + lane];
  }
};

/// Shared memory of one CTA with the shadow state of the race checker: per
/// byte, the last writing warp and the barrier epoch of that write, the set of
/// warps that read it in the current epoch, and in-flight cp.async copies.
struct SharedMemory {
  std::vector<uint8_t> data;
  std::vector<int8_t> writer;
  std::vector<uint32_t> writeEpoch, readers, readEpoch;
  std::vector<uint16_t> pending;
  uint32_t epoch = 1;
  void reset(size_t bytes, bool shadow);
  /// Returns an empty string, or a description of the hazard.
  std::string checkRead(uint32_t off, unsigned len, unsigned warp);
  std::string checkWrite(uint32_t off, unsigned len, unsigned warp,
                         bool asyncCopy = false);
};

/// An mbarrier object (sm_90) at a shared-memory address. Its state lives
/// here, not in the 8 bytes of shared memory.
struct MBarrier {
  uint32_t expected = 0, pending = 0;
  int64_t tx = 0;     ///< Expected minus completed transaction bytes.
  uint64_t phase = 0; ///< Completed phases so far.
  struct Landing {
    uint32_t dst;
    std::vector<uint8_t> data;
    bool delivered; ///< Its bytes have been counted against tx.
  };
  /// cp.async.bulk data that becomes visible when the phase completes.
  std::vector<Landing> landings;
};

class Exec {
public:
  Exec(const Kernel &k, DeviceMemory &mem, const LaunchConfig &cfg,
       llvm::ArrayRef<uint8_t> params, const EmulatorOptions &opts)
      : k(k), mem(mem), cfg(cfg), params(params), opts(opts) {}

  llvm::Error run(LaunchStats &stats);

  // Shared by the instruction families (ScalarOps, WarpCollectives).
  const Kernel &k;
  DeviceMemory &mem;
  const LaunchConfig &cfg;
  llvm::ArrayRef<uint8_t> params;
  const EmulatorOptions &opts;
  SharedMemory shared;
  uint32_t ctaid[3] = {0, 0, 0};
  std::vector<Warp> warps;
  std::map<uint32_t, MBarrier> mbarriers;
  uint64_t mbarrierVersion = 0; ///< Bumped on every mbarrier state change.
  bool yieldWarp = false;       ///< Set by an mbarrier wait that failed.
  std::string error;
  LaunchStats *stats = nullptr;

  /// Records the first error; returns false so callers can `return fail(..)`.
  bool fail(const Instruction &I, const Warp &w, int lane,
            const llvm::Twine &msg);
  uint64_t read(const Operand &o, Warp &w, unsigned lane);
  void write(const Operand &o, Warp &w, unsigned lane, uint64_t v);
  /// Register access that reports a wgmma accumulator still in flight.
  uint64_t getReg(uint32_t r, Warp &w, unsigned lane) {
    if (!w.inFlightReg.empty() && w.inFlightReg[r])
      inFlightHazard(r, w, lane, /*isWrite=*/false);
    return w.reg(r, lane);
  }
  void setReg(uint32_t r, Warp &w, unsigned lane, uint64_t v) {
    if (!w.inFlightReg.empty() && w.inFlightReg[r])
      inFlightHazard(r, w, lane, /*isWrite=*/true);
    w.reg(r, lane) = v;
  }
  void inFlightHazard(uint32_t r, Warp &w, unsigned lane, bool isWrite);
  /// Moves bytes between a register image and memory, resolving generic
  /// addresses and checking bounds and hazards.
  bool access(const Instruction &I, Warp &w, unsigned lane, Space space,
              uint64_t addr, unsigned size, bool isWrite, void *data,
              bool checkHazard = true);
  uint64_t address(const Operand &o, Warp &w, unsigned lane) {
    return (o.baseIsReg ? w.reg(o.reg, lane) : 0) + o.imm;
  }

  // Instruction families; each returns false after recording an error.
  bool execScalar(const Instruction &I, Warp &w, uint32_t mask);
  bool execMemory(const Instruction &I, Warp &w, uint32_t mask);
  bool execShfl(const Instruction &I, Warp &w, uint32_t mask);
  bool execVote(const Instruction &I, Warp &w, uint32_t mask);
  bool execLdmatrix(const Instruction &I, Warp &w, uint32_t mask);
  bool execMma(const Instruction &I, Warp &w, uint32_t mask);
  bool execMmaS8(const Instruction &I, Warp &w);
  bool execCpAsync(const Instruction &I, Warp &w, uint32_t mask);
  bool execMbarrier(const Instruction &I, Warp &w, uint32_t mask);
  bool tensorCopy(const Instruction &I, Warp &w, unsigned lane, MBarrier &mb);
  bool execWgmma(const Instruction &I, Warp &w);
  const Instruction *current = nullptr; ///< For hazards found in read().
  bool waitCpAsync(const Instruction &I, Warp &w, unsigned lane, uint32_t keep);

private:
  bool runCTA();
  bool runWarp(Warp &w);
  bool collective(const Instruction &I, Warp &w, uint32_t arrived);
};

} // namespace tessera::ptx

#endif // TESSERA_LIB_TARGET_CUDA_EMULATOR_EXECUTOR_H
