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
// cp.async.bulk.tensor (TMA, tile mode) copies a box of a tensor map the
// host defined (DeviceMemory::defineTensorMap) in the same way: the box is
// read when issued, counts its full size in transaction bytes, and lands
// when the phase completes. In shared memory the box is packed densely
// (dim 0 innermost, a row of boxDims[0] elements); elements outside the
// tensor read as zero, or as 0x7f ff..ff (a NaN in every float format) with
// oobNaN. With swizzle mode S (32/64/128 bytes) the 16-byte chunk of each
// element's shared address is permuted by the address bits above the
// 128-byte row: bits [4,7) ^= bits [7,10) masked to 1/2/3 bits, so the
// pattern repeats every 256/512/1024 bytes, where the destination must be
// aligned (128 bytes without swizzle).
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "llvm/ADT/StringExtras.h"
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

/// Adds the landings of a tensor box: \p bytes at shared addresses
/// [base, base + bytes.size()) where \p written is set, as contiguous runs.
void addLandings(MBarrier &mb, uint32_t base, std::vector<uint8_t> &bytes,
                 const std::vector<bool> &written) {
  size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    if (!written[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && written[j])
      ++j;
    mb.landings.push_back(
        {uint32_t(base + i),
         std::vector<uint8_t>(bytes.begin() + i, bytes.begin() + j), false});
    i = j;
  }
}

} // namespace

/// Reads the box of one cp.async.bulk.tensor and queues it on \p mb.
bool Exec::tensorCopy(const Instruction &I, Warp &w, unsigned l, MBarrier &mb) {
  uint64_t dst = address(I.ops[0], w, l);
  const Operand &mapOp = I.ops[1];
  uint64_t mapAddr = address(mapOp, w, l);
  const TensorMap *tm = mem.tensorMap(mapAddr);
  if (!tm)
    return fail(I, w, l,
                "no tensor map at address 0x" + llvm::utohexstr(mapAddr) +
                    " (the host defines one with "
                    "DeviceMemory::defineTensorMap, or tessera-ptx-emu "
                    "--tensor-map)");
  unsigned rank = I.vec, eb = tm->elementBytes;
  if (tm->rank != rank)
    return fail(I, w, l,
                "a " + llvm::Twine(rank) + "d copy with a tensor map of rank " +
                    llvm::Twine(tm->rank));
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
    return fail(I, w, l, "tensor map element size must be 1, 2, 4 or 8 bytes");
  if (tm->globalAddress % 16)
    return fail(I, w, l, "tensor map global address is not 16-byte aligned");
  uint64_t total = eb;
  for (unsigned d = 0; d < rank; ++d) {
    if (tm->boxDims[d] == 0 || tm->boxDims[d] > 256)
      return fail(I, w, l, "tensor map box dims must be in [1, 256]");
    if (d > 0 && tm->globalStrides[d] % 16)
      return fail(I, w, l,
                  "tensor map global strides must be multiples of 16 bytes");
    total *= tm->boxDims[d];
  }
  unsigned rowBytes = tm->boxDims[0] * eb;
  if (rowBytes % 16)
    return fail(I, w, l,
                "tensor box inner dim is " + llvm::Twine(rowBytes) +
                    " bytes, not a multiple of 16");
  unsigned span = tm->swizzle == TensorMap::Swizzle::B128  ? 128
                  : tm->swizzle == TensorMap::Swizzle::B64 ? 64
                  : tm->swizzle == TensorMap::Swizzle::B32 ? 32
                                                           : 0;
  if (span && rowBytes > span)
    return fail(I, w, l,
                "tensor box inner dim is " + llvm::Twine(rowBytes) +
                    " bytes, more than the " + llvm::Twine(span) +
                    "-byte swizzle span");
  unsigned align = span ? span * 8 : 128;
  if (dst % align)
    return fail(I, w, l,
                "tensor copy destination 0x" + llvm::utohexstr(dst) +
                    " is not aligned to " + llvm::Twine(align) + " bytes" +
                    (span ? " (the swizzle pattern's repeat)" : ""));
  unsigned mask = span == 128 ? 7 : span == 64 ? 3 : span == 32 ? 1 : 0;
  // Swizzled addresses stay inside the span-aligned segment of their row;
  // the box's footprint is [dst, dst + rounded).
  uint64_t rounded = span ? (total + span - 1) / span * span : total;
  if (dst + rounded > shared.data.size())
    return fail(I, w, l,
                "tensor copy destination [0x" + llvm::utohexstr(dst) + ", 0x" +
                    llvm::utohexstr(dst + total) + ") is beyond shared memory");
  int64_t coord[5] = {};
  for (unsigned d = 0; d < rank; ++d) {
    int32_t e = mapOp.elems[d];
    coord[d] = int32_t(
        uint32_t(e >= 0 ? getReg(uint32_t(e), w, l) : mapOp.vecImm[-1 - e]));
  }
  std::vector<uint8_t> bytes(rounded, 0);
  std::vector<bool> written(rounded, false);
  uint32_t idx[5] = {};
  for (uint64_t lin = 0; lin < total; lin += eb) {
    // The element's place in the box (dim 0 fastest) and in the tensor.
    bool inside = true;
    uint64_t src = tm->globalAddress;
    for (unsigned d = 0; d < rank; ++d) {
      int64_t c = coord[d] + idx[d];
      if (c < 0 || uint64_t(c) >= tm->globalDims[d])
        inside = false;
      else
        src += uint64_t(c) * (d == 0 ? eb : tm->globalStrides[d]);
    }
    uint64_t a = dst + lin;
    a ^= ((a >> 7) & mask) << 4;
    uint8_t *out = bytes.data() + (a - dst);
    if (inside) {
      const uint8_t *p = mem.translate(src, eb);
      if (!p)
        return fail(I, w, l,
                    "tensor map element at global 0x" + llvm::utohexstr(src) +
                        " is outside every mapped buffer");
      std::memcpy(out, p, eb);
    } else if (tm->oobNaN) {
      std::memset(out, 0xff, eb);
      out[eb - 1] = 0x7f;
    }
    for (unsigned b = 0; b < eb; ++b)
      written[a - dst + b] = true;
    for (unsigned d = 0; d < rank && ++idx[d] == tm->boxDims[d]; ++d)
      idx[d] = 0;
  }
  size_t before = mb.landings.size();
  addLandings(mb, uint32_t(dst), bytes, written);
  if (opts.checkHazards)
    for (size_t i = before; i < mb.landings.size(); ++i)
      for (size_t b = 0; b < mb.landings[i].data.size(); ++b)
        ++shared.pending[mb.landings[i].dst + b];
  ++mbarrierVersion;
  return true;
}

bool Exec::execMbarrier(const Instruction &I, Warp &w, uint32_t mask) {
  bool anyDone = false;
  for (uint32_t m = mask; m; m &= m - 1) {
    unsigned l = llvm::countr_zero(m);
    const Operand &barOp =
        I.ops[I.op == Op::MbarArrive || I.op == Op::MbarTestWait ? 1
              : I.op == Op::CpAsyncBulk                          ? 3
              : I.op == Op::CpAsyncBulkTensor                    ? 2
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
    case Op::CpAsyncBulkTensor:
      if (!tensorCopy(I, w, l, mb))
        return false;
      break;
    default:
      return fail(I, w, l, "unexpected mbarrier operation");
    }
  }
  yieldWarp = I.op == Op::MbarTestWait && !anyDone;
  return true;
}
