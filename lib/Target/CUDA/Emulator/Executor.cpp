//===- Executor.cpp - CTA and warp scheduling of an emulated launch -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Threads of a warp keep their own program counters; each step runs the
// lowest PC's threads together. Loops run ahead until their threads leave,
// and the other branch of an if waits at its higher PC, so a warp reconverges
// at the first PC both paths reach. A CTA's warps run one at a time until
// every thread has exited or waits in bar.sync; a barrier with every live
// thread in it is released, anything else that cannot move is a deadlock.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include <chrono>

using namespace tessera::ptx;

namespace {
template <typename F> inline void forLanes(uint32_t mask, F f) {
  while (mask) {
    unsigned l = llvm::countr_zero(mask);
    mask &= mask - 1;
    f(l);
  }
}
bool isWarpCollective(Op op) {
  return op == Op::Shfl || op == Op::Vote || op == Op::Ldmatrix ||
         op == Op::Mma || op == Op::BarWarpSync || op == Op::Wgmma ||
         op == Op::WgmmaFence || op == Op::WgmmaCommit || op == Op::WgmmaWait;
}
std::string hexMask(uint32_t m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format_hex(m, 10);
  return s;
}
} // namespace

bool Exec::fail(const Instruction &I, const Warp &w, int lane,
                const llvm::Twine &msg) {
  if (!error.empty())
    return false;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << k.source << ":" << I.line << ": " << I.opcode << ": " << msg
     << " (cta (" << ctaid[0] << "," << ctaid[1] << "," << ctaid[2]
     << "), warp " << w.index;
  if (lane >= 0)
    os << ", lane " << lane;
  os << ")";
  error = os.str();
  return false;
}

void Exec::inFlightHazard(uint32_t r, Warp &w, unsigned lane, bool isWrite) {
  if (!opts.checkHazards || !current)
    return;
  fail(*current, w, lane,
       llvm::Twine("hazard: ") + (isWrite ? "overwrites" : "reads") +
           " wgmma accumulator " + k.regNames[r] +
           " before the wgmma.wait_group that completes it");
}

uint64_t Exec::read(const Operand &o, Warp &w, unsigned lane) {
  switch (o.kind) {
  case Operand::Reg: {
    uint64_t v = getReg(o.reg, w, lane);
    return o.negate ? uint64_t(!(v & 1)) : v;
  }
  case Operand::Imm:
    return o.imm;
  case Operand::Special: {
    const uint32_t *t = w.tid[lane];
    switch (o.special) {
    case Special::TidX:
      return t[0];
    case Special::TidY:
      return t[1];
    case Special::TidZ:
      return t[2];
    case Special::NtidX:
      return cfg.block.x;
    case Special::NtidY:
      return cfg.block.y;
    case Special::NtidZ:
      return cfg.block.z;
    case Special::CtaidX:
      return ctaid[0];
    case Special::CtaidY:
      return ctaid[1];
    case Special::CtaidZ:
      return ctaid[2];
    case Special::NctaidX:
      return cfg.grid.x;
    case Special::NctaidY:
      return cfg.grid.y;
    case Special::NctaidZ:
      return cfg.grid.z;
    case Special::LaneId:
      return lane;
    case Special::WarpId:
      return w.index;
    }
    return 0;
  }
  default:
    return 0;
  }
}

void Exec::write(const Operand &o, Warp &w, unsigned lane, uint64_t v) {
  if (o.kind == Operand::Reg)
    setReg(o.reg, w, lane, v);
}

bool Exec::collective(const Instruction &I, Warp &w, uint32_t pc) {
  uint32_t waiting = 0;
  forLanes(w.atCollective, [&](unsigned l) {
    if (w.pc[l] == pc)
      waiting |= 1u << l;
  });
  uint32_t alive = w.live & ~w.exited;
  uint32_t required;
  if (I.op == Op::Ldmatrix || I.op == Op::Mma || I.op == Op::Wgmma ||
      I.op == Op::WgmmaFence || I.op == Op::WgmmaCommit ||
      I.op == Op::WgmmaWait) {
    required = w.live;
    if (w.live & w.exited)
      return fail(I, w, -1,
                  "lanes " + hexMask(w.live & w.exited) +
                      " have exited; .aligned needs the whole warp");
  } else {
    unsigned first = llvm::countr_zero(waiting);
    required = uint32_t(read(I.ops.back(), w, first));
    for (unsigned l = 0; l < 32; ++l)
      if ((waiting >> l & 1) && uint32_t(read(I.ops.back(), w, l)) != required)
        return fail(I, w, l, "lanes disagree on the membermask");
    if (waiting & ~required)
      return fail(I, w, llvm::countr_zero(waiting & ~required),
                  "executing lane is not in membermask " + hexMask(required));
    if (required & ~alive)
      return fail(I, w, -1,
                  "membermask " + hexMask(required) + " names inactive lanes " +
                      hexMask(required & ~alive));
  }
  if (waiting != required)
    return true; // the others have not arrived yet
  bool ok;
  switch (I.op) {
  case Op::Shfl:
    ok = execShfl(I, w, required);
    break;
  case Op::Vote:
    ok = execVote(I, w, required);
    break;
  case Op::Ldmatrix:
    ok = execLdmatrix(I, w, required);
    break;
  case Op::Mma:
    ok = execMma(I, w, required);
    break;
  case Op::Wgmma:
  case Op::WgmmaFence:
  case Op::WgmmaCommit:
  case Op::WgmmaWait:
    ok = execWgmma(I, w);
    break;
  default:
    ok = true;
    break; // bar.warp.sync
  }
  w.atCollective &= ~required;
  forLanes(required, [&](unsigned l) { ++w.pc[l]; });
  return ok;
}

bool Exec::runWarp(Warp &w) {
  const std::vector<Instruction> &body = k.body;
  while (true) {
    uint32_t runnable = w.live & ~w.exited & ~w.atBarrier & ~w.atCollective;
    if (!runnable)
      return true;
    uint32_t pc = UINT32_MAX, group = 0;
    forLanes(runnable, [&](unsigned l) {
      if (w.pc[l] < pc) {
        pc = w.pc[l];
        group = 0;
      }
      if (w.pc[l] == pc)
        group |= 1u << l;
    });
    const Instruction &I = body[pc];
    current = &I;
    uint32_t exec = group;
    if (I.guard >= 0) {
      exec = 0;
      forLanes(group, [&](unsigned l) {
        if (bool(w.reg(I.guard, l) & 1) != I.guardNegated)
          exec |= 1u << l;
      });
    }
    if (++stats->warpInstructions > opts.maxWarpInstructions)
      return fail(I, w, -1, "instruction limit exceeded (runaway loop?)");
    stats->threadInstructions += llvm::popcount(exec);
    forLanes(group & ~exec, [&](unsigned l) { ++w.pc[l]; });
    if (!exec)
      continue;
    switch (I.op) {
    case Op::Bra:
      forLanes(exec, [&](unsigned l) { w.pc[l] = uint32_t(I.ops[0].imm); });
      continue;
    case Op::Ret:
    case Op::Exit: {
      bool ok = true;
      // Copies still in flight land when their thread exits.
      forLanes(exec, [&](unsigned l) {
        for (PendingCopy &c : w.copies[l])
          if (c.group == UINT32_MAX)
            c.group = w.nextGroup[l];
        ++w.nextGroup[l];
        ok = ok && waitCpAsync(I, w, l, 0);
      });
      w.exited |= exec;
      if (!ok)
        return false;
      continue;
    }
    case Op::BarSync:
      if (I.ops[0].kind != Operand::Imm || I.ops[0].imm != 0)
        return fail(I, w, -1, "only barrier 0 is supported");
      if (I.ops.size() == 2 &&
          read(I.ops[1], w, llvm::countr_zero(exec)) != cfg.block.count())
        return fail(I, w, -1,
                    "a thread count other than the CTA size is not supported");
      w.atBarrier |= exec;
      forLanes(exec, [&](unsigned l) { ++w.pc[l]; });
      continue;
    default:
      break;
    }
    if (isWarpCollective(I.op)) {
      if (I.op == Op::Mma || I.op == Op::Wgmma)
        ++stats->tensorCoreInstructions;
      w.atCollective |= exec;
      if (!collective(I, w, pc) || !error.empty())
        return false;
      continue;
    }
    bool ok;
    switch (I.op) {
    case Op::Ld:
    case Op::St:
    case Op::Atom:
    case Op::Red:
    case Op::Cvta:
      ok = execMemory(I, w, exec);
      break;
    case Op::CpAsync:
    case Op::CpAsyncCommit:
    case Op::CpAsyncWait:
    case Op::CpAsyncWaitAll:
      ok = execCpAsync(I, w, exec);
      break;
    case Op::MbarInit:
    case Op::MbarArrive:
    case Op::MbarExpectTx:
    case Op::MbarTestWait:
    case Op::MbarInval:
    case Op::CpAsyncBulk:
    case Op::CpAsyncBulkTensor:
      ok = execMbarrier(I, w, exec);
      break;
    case Op::Membar:
    case Op::Prefetch:
      ok = true;
      break;
    case Op::Activemask:
      forLanes(exec, [&](unsigned l) { write(I.ops[0], w, l, exec); });
      ok = true;
      break;
    default:
      ok = execScalar(I, w, exec);
      break;
    }
    if (!ok || !error.empty())
      return false;
    forLanes(exec, [&](unsigned l) { ++w.pc[l]; });
    if (yieldWarp) {
      // Every lane's wait failed: let the other warps arrive first.
      yieldWarp = false;
      w.yieldedAt = pc;
      return true;
    }
  }
}

bool Exec::runCTA() {
  uint32_t nthreads = cfg.block.count();
  unsigned nwarps = (nthreads + 31) / 32;
  warps.resize(nwarps);
  for (unsigned wi = 0; wi < nwarps; ++wi) {
    Warp &w = warps[wi];
    w.index = wi;
    unsigned lanes = std::min(32u, nthreads - wi * 32);
    w.live = lanes == 32 ? ~0u : ((1u << lanes) - 1);
    w.exited = w.atBarrier = w.atCollective = 0;
    w.wgmmaInFlight.clear();
    w.inFlightReg.clear();
    w.wgmmaNextGroup = 0;
    w.regs.assign(size_t(k.numRegs) * 32, 0);
    w.local.assign(size_t(k.localBytes) * 32, 0);
    for (unsigned l = 0; l < 32; ++l) {
      unsigned t = wi * 32 + l;
      w.pc[l] = 0;
      w.tid[l][0] = t % cfg.block.x;
      w.tid[l][1] = (t / cfg.block.x) % cfg.block.y;
      w.tid[l][2] = t / (cfg.block.x * cfg.block.y);
      w.copies[l].clear();
      w.nextGroup[l] = 0;
    }
  }
  shared.reset(k.staticSharedBytes + cfg.dynamicSharedBytes, opts.checkHazards);
  mbarriers.clear();
  while (true) {
    uint64_t version = mbarrierVersion;
    for (Warp &w : warps) {
      w.yieldedAt = -1;
      if (!runWarp(w))
        return false;
    }
    uint32_t notAtBarrier = 0, anyLive = 0;
    for (Warp &w : warps) {
      uint32_t alive = w.live & ~w.exited;
      anyLive |= alive;
      notAtBarrier |= alive & ~w.atBarrier;
    }
    if (!anyLive)
      return true;
    if (!notAtBarrier) {
      for (Warp &w : warps)
        w.atBarrier = 0;
      ++shared.epoch;
      continue;
    }
    // Warps spinning on an mbarrier get another round while mbarriers change.
    for (Warp &w : warps) {
      if (w.yieldedAt < 0)
        continue;
      if (mbarrierVersion != version)
        break;
      const Instruction &I = k.body[w.yieldedAt];
      const MBarrier *mb = nullptr;
      uint64_t addr =
          address(I.ops[1], w, llvm::countr_zero(w.live & ~w.exited));
      auto it = mbarriers.find(uint32_t(addr));
      if (it != mbarriers.end())
        mb = &it->second;
      return fail(I, w, -1,
                  "deadlock: the mbarrier phase this warp waits for never "
                  "completes" +
                      (mb ? " (completed phases " + std::to_string(mb->phase) +
                                ", pending arrivals " +
                                std::to_string(mb->pending) +
                                ", transaction bytes outstanding " +
                                std::to_string(mb->tx) + ")"
                          : std::string()));
    }
    if (mbarrierVersion != version)
      continue;
    // Nothing can move: describe the first stuck collective or barrier.
    for (Warp &w : warps) {
      if (!w.atCollective)
        continue;
      unsigned l = llvm::countr_zero(w.atCollective);
      const Instruction &I = k.body[w.pc[l]];
      uint32_t here = 0;
      for (unsigned j = 0; j < 32; ++j)
        if ((w.atCollective >> j & 1) && w.pc[j] == w.pc[l])
          here |= 1u << j;
      std::string why = "deadlock: lanes " + hexMask(here) +
                        " wait for the rest of the warp, which diverged, "
                        "exited or waits elsewhere";
      if (I.op == Op::Shfl || I.op == Op::Vote || I.op == Op::BarWarpSync) {
        uint32_t member = uint32_t(read(I.ops.back(), w, l));
        why += "; membermask " + hexMask(member) + " names lanes " +
               hexMask(member & ~here) + " that are not active here";
      }
      return fail(I, w, -1, why);
    }
    for (Warp &w : warps) {
      if (!w.atBarrier)
        continue;
      unsigned l = llvm::countr_zero(w.atBarrier);
      return fail(
          k.body[w.pc[l] - 1], w, -1,
          "deadlock: not every live thread of the CTA reaches bar.sync");
    }
    return fail(k.body.back(), warps[0], -1, "deadlock");
  }
}

llvm::Error Exec::run(LaunchStats &st) {
  stats = &st;
  if (cfg.block.count() == 0 || cfg.block.count() > 1024 ||
      cfg.grid.count() == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid launch dimensions");
  for (int i = 0; i < 3; ++i) {
    uint32_t b = i == 0 ? cfg.block.x : i == 1 ? cfg.block.y : cfg.block.z;
    if (k.maxNtid[i] && b > k.maxNtid[i])
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "block exceeds the kernel's .maxntid/.reqntid");
  }
  if (params.size() != k.paramBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "parameter block has %zu bytes, kernel '%s' takes %u", params.size(),
        k.name.c_str(), k.paramBytes);
  for (uint32_t z = 0; z < cfg.grid.z; ++z)
    for (uint32_t y = 0; y < cfg.grid.y; ++y)
      for (uint32_t x = 0; x < cfg.grid.x; ++x) {
        ctaid[0] = x;
        ctaid[1] = y;
        ctaid[2] = z;
        if (!runCTA())
          return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
      }
  return llvm::Error::success();
}

llvm::Expected<LaunchStats> Emulator::launch(llvm::StringRef kernel,
                                             const LaunchConfig &config,
                                             llvm::ArrayRef<uint8_t> params,
                                             const EmulatorOptions &options) {
  const Kernel *k = module.findKernel(kernel);
  if (!k)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no kernel named '%s'",
                                   kernel.str().c_str());
  LaunchStats st;
  auto t0 = std::chrono::steady_clock::now();
  Exec e(*k, mem, config, params, options);
  if (llvm::Error err = e.run(st))
    return std::move(err);
  st.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return st;
}
