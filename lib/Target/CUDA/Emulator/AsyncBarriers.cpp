//===- AsyncBarriers.cpp - mbarrier and cp.async.bulk (sm_90) -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// An mbarrier phase completes when its pending arrival count reaches zero and
// every expected transaction byte has arrived; the next phase then expects
// the init count again. cp.async.bulk reads its source when issued, but its
// bytes are delivered as late as possible: when a thread next waits on the
// mbarrier. The data lands in shared memory when the phase completes; until
// then the destination is in flight and reading it is a hazard. A wait
// (try_wait/test_wait) that fails in every lane makes its warp yield so the
// other warps can arrive.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "llvm/ADT/bit.h"
#include <cstring>

using namespace tessera::ptx;

namespace {

/// Completes the phase if nothing is pending; lands bulk copies.
void completeIfReady(MBarrier &mb, SharedMemory &shared, bool shadow) {
  if (mb.pending != 0 || mb.tx != 0)
    return;
  // Only delivered copies belong to this phase.
  std::vector<MBarrier::Landing> later;
  for (MBarrier::Landing &l : mb.landings) {
    if (!l.delivered) {
      later.push_back(std::move(l));
      continue;
    }
    std::memcpy(shared.data.data() + l.dst, l.data.data(), l.data.size());
    if (shadow)
      for (uint32_t b = l.dst; b < l.dst + l.data.size(); ++b) {
        --shared.pending[b];
        shared.writer[b] = -1; // synchronised by the mbarrier, not a warp
      }
  }
  mb.landings = std::move(later);
  ++mb.phase;
  mb.pending = mb.expected;
}

} // namespace

bool Exec::execMbarrier(const Instruction &I, Warp &w, uint32_t mask) {
  bool anyDone = false;
  for (uint32_t m = mask; m; m &= m - 1) {
    unsigned l = llvm::countr_zero(m);
    const Operand &barOp =
        I.ops[I.op == Op::MbarArrive || I.op == Op::MbarTestWait ? 1
              : I.op == Op::CpAsyncBulk                          ? 3
                                                                 : 0];
    uint64_t addr = address(barOp, w, l);
    if (addr % 8 || addr + 8 > shared.data.size())
      return fail(I, w, l,
                  "mbarrier address is misaligned or outside shared memory");
    if (I.op == Op::MbarInit) {
      uint64_t count = read(I.ops[1], w, l);
      if (count == 0 || count >= (1u << 20))
        return fail(I, w, l, "mbarrier count must be in [1, 2^20)");
      MBarrier &mb = mbarriers[uint32_t(addr)];
      if (!mb.landings.empty())
        return fail(I, w, l,
                    "mbarrier re-initialised with bulk copies in flight");
      mb = MBarrier();
      mb.expected = mb.pending = uint32_t(count);
      ++mbarrierVersion;
      continue;
    }
    auto it = mbarriers.find(uint32_t(addr));
    if (it == mbarriers.end())
      return fail(I, w, l, "mbarrier at this address was never initialised");
    MBarrier &mb = it->second;
    switch (I.op) {
    case Op::MbarInval:
      if (!mb.landings.empty())
        return fail(I, w, l, "mbarrier invalidated with bulk copies in flight");
      mbarriers.erase(it);
      break;
    case Op::MbarExpectTx:
      mb.tx += int64_t(read(I.ops[1], w, l));
      ++mbarrierVersion;
      break;
    case Op::MbarArrive: {
      uint64_t count = 1;
      if (I.has(EXPECT_TX))
        mb.tx += int64_t(read(I.ops[2], w, l));
      else if (I.ops.size() == 3)
        count = read(I.ops[2], w, l);
      if (count > mb.pending)
        return fail(I, w, l, "more arrivals than the mbarrier's pending count");
      write(I.ops[0], w, l, mb.phase);
      mb.pending -= uint32_t(count);
      ++mbarrierVersion;
      completeIfReady(mb, shared, opts.checkHazards);
      break;
    }
    case Op::MbarTestWait: {
      // Deliver the bulk copies in flight, then look at the phase.
      for (MBarrier::Landing &d : mb.landings)
        if (!d.delivered) {
          d.delivered = true;
          mb.tx -= int64_t(d.data.size());
          ++mbarrierVersion;
        }
      completeIfReady(mb, shared, opts.checkHazards);
      bool done = I.has(PARITY) ? (mb.phase & 1) != (read(I.ops[2], w, l) & 1)
                                : mb.phase != read(I.ops[2], w, l);
      write(I.ops[0], w, l, done);
      anyDone |= done;
      break;
    }
    case Op::CpAsyncBulk: {
      uint64_t dst = address(I.ops[0], w, l), src = address(I.ops[1], w, l);
      uint64_t size = read(I.ops[2], w, l);
      if (dst % 16 || src % 16 || size % 16 || size == 0)
        return fail(I, w, l,
                    "cp.async.bulk needs 16-byte aligned addresses and size");
      if (dst + size > shared.data.size())
        return fail(I, w, l, "cp.async.bulk destination beyond shared memory");
      const uint8_t *p = mem.translate(src, size);
      if (!p)
        return fail(I, w, l,
                    "cp.async.bulk source is outside every mapped buffer");
      mb.landings.push_back(
          {uint32_t(dst), std::vector<uint8_t>(p, p + size), false});
      if (opts.checkHazards)
        for (uint64_t b = dst; b < dst + size; ++b)
          ++shared.pending[b];
      ++mbarrierVersion;
      break;
    }
    default:
      return fail(I, w, l, "unexpected mbarrier operation");
    }
  }
  yieldWarp = I.op == Op::MbarTestWait && !anyDone;
  return true;
}
