//===- Memory.cpp - Memory spaces, loads/stores and cp.async --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Global memory is the caller's mapped host memory; shared memory belongs to
// the CTA and carries the race checker's shadow; .param is the launch's
// parameter block; .local is a per-thread frame. Every access is bounds- and
// alignment-checked. Shared and local memory start filled with 0xFF, so a
// read of never-written data shows up as NaN or -1 rather than a lucky zero.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include <cstring>

using namespace tessera::ptx;

namespace {
template <typename F> inline void forLanes(uint32_t mask, F f) {
  while (mask) {
    unsigned l = llvm::countr_zero(mask);
    mask &= mask - 1;
    f(l);
  }
}
std::string hex(uint64_t v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format_hex(v, 2);
  return s;
}
uint64_t loadLE(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}
uint64_t extend(uint64_t v, Ty t) {
  unsigned bits = byteSize(t) * 8;
  if (bits >= 64)
    return v;
  v &= (uint64_t(1) << bits) - 1;
  if (isSigned(t) && (v >> (bits - 1) & 1))
    v |= ~uint64_t(0) << bits;
  return v;
}
} // namespace

uint64_t DeviceMemory::map(void *host, size_t bytes) {
  uint64_t addr = next;
  mappings[addr] = {static_cast<uint8_t *>(host), bytes};
  next += (bytes + 255) / 256 * 256 + 256; // an unmapped gap after each buffer
  return addr;
}

bool DeviceMemory::unmap(uint64_t addr) {
  return mappings.erase(addr) != 0;
}

uint8_t *DeviceMemory::translate(uint64_t addr, size_t bytes) const {
  auto it = mappings.upper_bound(addr);
  if (it == mappings.begin())
    return nullptr;
  --it;
  uint64_t off = addr - it->first;
  if (off > it->second.bytes || bytes > it->second.bytes - off)
    return nullptr;
  return it->second.host + off;
}

llvm::Expected<std::vector<uint8_t>>
tessera::ptx::packParams(const Kernel &k, llvm::ArrayRef<uint64_t> args) {
  if (args.size() != k.params.size())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '%s' takes %zu parameters, got %zu",
                                   k.name.c_str(), k.params.size(),
                                   args.size());
  std::vector<uint8_t> block(k.paramBytes, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = k.params[i];
    if (p.size > 8)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "parameter '%s' is an aggregate of %u bytes", p.name.c_str(), p.size);
    std::memcpy(block.data() + p.offset, &args[i], p.size);
  }
  return block;
}

void SharedMemory::reset(size_t bytes, bool shadow) {
  data.assign(bytes, 0xFF);
  epoch = 1;
  size_t n = shadow ? bytes : 0;
  writer.assign(n, -1);
  writeEpoch.assign(n, 0);
  readers.assign(n, 0);
  readEpoch.assign(n, 0);
  pending.assign(n, 0);
}

std::string SharedMemory::checkRead(uint32_t off, unsigned len, unsigned warp) {
  for (uint32_t b = off; b < off + len; ++b) {
    if (pending[b])
      return "reads shared byte " + hex(b) +
             " while an async copy to it is in flight (missing "
             "cp.async.wait_group or mbarrier wait?)";
    if (writer[b] >= 0 && unsigned(writer[b]) != warp && writeEpoch[b] == epoch)
      return "reads shared byte " + hex(b) + " written by warp " +
             std::to_string(writer[b]) + " with no barrier in between (race)";
    if (readEpoch[b] != epoch) {
      readEpoch[b] = epoch;
      readers[b] = 0;
    }
    readers[b] |= 1u << (warp & 31);
  }
  return {};
}

std::string SharedMemory::checkWrite(uint32_t off, unsigned len, unsigned warp,
                                     bool asyncCopy) {
  for (uint32_t b = off; b < off + len; ++b) {
    // Two in-flight cp.async to one byte are allowed (MLIR's GEMMs let two
    // lanes copy the same row); a plain store into one is not.
    if (pending[b] && !asyncCopy)
      return "writes shared byte " + hex(b) +
             " while an async copy to it is in flight";
    if (writer[b] >= 0 && unsigned(writer[b]) != warp && writeEpoch[b] == epoch)
      return "writes shared byte " + hex(b) + " also written by warp " +
             std::to_string(writer[b]) + " with no barrier in between (race)";
    if (readEpoch[b] == epoch && (readers[b] & ~(1u << (warp & 31))))
      return "writes shared byte " + hex(b) +
             " read by another warp with no barrier in between (race)";
    writer[b] = int8_t(warp);
    writeEpoch[b] = epoch;
  }
  return {};
}

bool Exec::access(const Instruction &I, Warp &w, unsigned lane, Space space,
                  uint64_t addr, unsigned size, bool isWrite, void *data,
                  bool checkHazard) {
  if (addr % std::min(size, 16u) != 0)
    return fail(I, w, lane,
                "misaligned " + std::to_string(size) + "-byte access at " +
                    hex(addr));
  if (space == Space::Generic) {
    if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize) {
      space = Space::Shared;
      addr -= kSharedWindow;
    } else if (addr >= kLocalWindow && addr < kLocalWindow + kWindowSize) {
      space = Space::Local;
      addr -= kLocalWindow;
    } else {
      space = Space::Global;
    }
  }
  uint8_t *p = nullptr;
  switch (space) {
  case Space::Global:
  case Space::Const:
    p = mem.translate(addr, size);
    if (!p)
      return fail(I, w, lane,
                  "global access of " + std::to_string(size) + " bytes at " +
                      hex(addr) + " is outside every mapped buffer");
    break;
  case Space::Shared:
    if (addr + size > shared.data.size())
      return fail(I, w, lane,
                  "shared access at " + hex(addr) + " beyond the CTA's " +
                      std::to_string(shared.data.size()) + " bytes");
    if (opts.checkHazards && checkHazard) {
      std::string why = isWrite ? shared.checkWrite(addr, size, w.index)
                                : shared.checkRead(addr, size, w.index);
      if (!why.empty())
        return fail(I, w, lane, "hazard: " + why);
    }
    p = shared.data.data() + addr;
    break;
  case Space::Param:
    if (isWrite || addr + size > params.size())
      return fail(I, w, lane, "bad .param access at " + hex(addr));
    std::memcpy(data, params.data() + addr, size);
    return true;
  case Space::Local:
    if (addr + size > k.localBytes)
      return fail(I, w, lane,
                  "local access at " + hex(addr) + " beyond the frame");
    p = w.local.data() + size_t(lane) * k.localBytes + addr;
    break;
  default:
    return fail(I, w, lane, "unsupported state space");
  }
  if (isWrite)
    std::memcpy(p, data, size);
  else
    std::memcpy(data, p, size);
  return true;
}

bool Exec::execMemory(const Instruction &I, Warp &w, uint32_t mask) {
  bool ok = true;
  unsigned sz = byteSize(I.type);
  if (I.op == Op::Cvta) {
    uint64_t base = I.space == Space::Shared  ? kSharedWindow
                    : I.space == Space::Local ? kLocalWindow
                                              : 0;
    forLanes(mask, [&](unsigned l) {
      uint64_t a = read(I.ops[1], w, l), d;
      if (I.has(TO)) {
        if (base && (a < base || a >= base + kWindowSize)) {
          ok = ok && fail(I, w, l,
                          hex(a) + " is not a generic address in that space");
          return;
        }
        d = a - base;
      } else {
        d = a + base;
      }
      write(I.ops[0], w, l, sz == 4 ? uint32_t(d) : d);
    });
    return ok;
  }
  if (I.op == Op::Ld || I.op == Op::St) {
    const Operand &addrOp = I.ops[I.op == Op::Ld ? 1 : 0];
    const Operand &val = I.ops[I.op == Op::Ld ? 0 : 1];
    unsigned n = I.vec;
    if ((val.kind == Operand::Vec) != (n > 1) ||
        (n > 1 && val.elems.size() != n))
      return fail(I, w, -1, "vector width does not match the operand");
    if (I.space == Space::Global && sz * n == 16)
      ++stats->wideGlobalAccesses;
    uint8_t buf[64];
    forLanes(mask, [&](unsigned l) {
      if (!ok)
        return;
      uint64_t a = address(addrOp, w, l);
      if (I.op == Op::St) {
        for (unsigned e = 0; e < n; ++e) {
          uint64_t v;
          if (n == 1)
            v = read(val, w, l);
          else if (val.elems[e] < 0)
            v = val.elems[e] == INT32_MIN ? 0 : val.vecImm[-1 - val.elems[e]];
          else
            v = getReg(val.elems[e], w, l);
          std::memcpy(buf + e * sz, &v, sz);
        }
        ok = access(I, w, l, I.space, a, sz * n, true, buf);
        return;
      }
      ok = access(I, w, l, I.space, a, sz * n, false, buf);
      if (!ok)
        return;
      for (unsigned e = 0; e < n; ++e) {
        uint64_t v = extend(loadLE(buf + e * sz, sz), I.type);
        if (n == 1)
          write(val, w, l, v);
        else if (val.elems[e] >= 0)
          setReg(val.elems[e], w, l, v);
      }
    });
    return ok;
  }
  // atom / red: lanes in order, each a read-modify-write.
  bool isAtom = I.op == Op::Atom;
  const Operand &addrOp = I.ops[isAtom ? 1 : 0];
  forLanes(mask, [&](unsigned l) {
    if (!ok)
      return;
    uint64_t a = address(addrOp, w, l);
    uint64_t old = 0;
    if (!(ok = access(I, w, l, I.space, a, sz, false, &old, false)))
      return;
    old = extend(old, I.type);
    uint64_t b = read(I.ops[isAtom ? 2 : 1], w, l), nv = 0;
    uint64_t m = sz == 8 ? ~uint64_t(0) : (uint64_t(1) << (sz * 8)) - 1;
    bool sgn = isSigned(I.type);
    switch (I.atom) {
    case AtomOp::Add:
      if (I.type == Ty::F32)
        nv = f32ToBits(bitsToF32(uint32_t(old)) + bitsToF32(uint32_t(b)));
      else if (I.type == Ty::F64)
        nv = f64ToBits(bitsToF64(old) + bitsToF64(b));
      else
        nv = old + b;
      break;
    case AtomOp::Min:
    case AtomOp::Max: {
      bool less =
          sgn ? int64_t(extend(b, I.type)) < int64_t(old) : (b & m) < (old & m);
      if (isFloat(I.type)) {
        ok = fail(I, w, l, "float atom.min/max is not supported");
        return;
      }
      nv = ((I.atom == AtomOp::Min) == less) ? b : old;
      break;
    }
    case AtomOp::Inc:
      nv = (old & m) >= (b & m) ? 0 : old + 1;
      break;
    case AtomOp::Dec:
      nv = ((old & m) == 0 || (old & m) > (b & m)) ? b : old - 1;
      break;
    case AtomOp::And:
      nv = old & b;
      break;
    case AtomOp::Or:
      nv = old | b;
      break;
    case AtomOp::Xor:
      nv = old ^ b;
      break;
    case AtomOp::Exch:
      nv = b;
      break;
    case AtomOp::Cas:
      nv = (old & m) == (b & m) ? read(I.ops[3], w, l) : old;
      break;
    case AtomOp::None:
      break;
    }
    if (!(ok = access(I, w, l, I.space, a, sz, true, &nv, false)))
      return;
    if (isAtom)
      write(I.ops[0], w, l, old);
  });
  return ok;
}

bool Exec::waitCpAsync(const Instruction &I, Warp &w, unsigned lane,
                       uint32_t keep) {
  std::vector<PendingCopy> &q = w.copies[lane];
  uint32_t limit = w.nextGroup[lane] >= keep ? w.nextGroup[lane] - keep : 0;
  size_t out = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    PendingCopy c = q[i];
    if (c.group == UINT32_MAX || c.group >= limit) {
      q[out++] = c;
      continue;
    }
    uint8_t buf[16] = {};
    if (c.srcBytes) {
      const uint8_t *src = mem.translate(c.src, c.srcBytes);
      if (!src)
        return fail(I, w, lane, "cp.async source vanished");
      std::memcpy(buf, src, c.srcBytes);
    }
    std::memcpy(shared.data.data() + c.dst, buf, c.bytes);
    if (opts.checkHazards)
      for (uint32_t b = c.dst; b < c.dst + c.bytes; ++b) {
        --shared.pending[b];
        shared.writer[b] = int8_t(w.index);
        shared.writeEpoch[b] = shared.epoch;
      }
  }
  q.resize(out);
  return true;
}

bool Exec::execCpAsync(const Instruction &I, Warp &w, uint32_t mask) {
  bool ok = true;
  switch (I.op) {
  case Op::CpAsyncCommit:
    forLanes(mask, [&](unsigned l) {
      for (PendingCopy &c : w.copies[l])
        if (c.group == UINT32_MAX)
          c.group = w.nextGroup[l];
      ++w.nextGroup[l];
    });
    return true;
  case Op::CpAsyncWaitAll:
  case Op::CpAsyncWait: {
    uint32_t keep = I.op == Op::CpAsyncWait ? uint32_t(I.ops[0].imm) : 0;
    forLanes(mask, [&](unsigned l) {
      if (I.op == Op::CpAsyncWaitAll) {
        for (PendingCopy &c : w.copies[l])
          if (c.group == UINT32_MAX)
            c.group = w.nextGroup[l];
        ++w.nextGroup[l];
      }
      ok = ok && waitCpAsync(I, w, l, keep);
    });
    return ok;
  }
  default:
    break;
  }
  forLanes(mask, [&](unsigned l) {
    if (!ok)
      return;
    uint64_t dst = address(I.ops[0], w, l), src = address(I.ops[1], w, l);
    uint64_t cp = read(I.ops[2], w, l), srcSize = cp;
    if (I.ops.size() >= 4) {
      const Operand &o = I.ops[3];
      bool ignoreSrc = o.kind == Operand::Reg && k.regTypes[o.reg] == Ty::Pred;
      if (ignoreSrc)
        srcSize = (read(o, w, l) & 1) ? 0 : cp;
      else
        srcSize = read(o, w, l);
    }
    if (cp != 4 && cp != 8 && cp != 16) {
      ok = fail(I, w, l, "cp-size must be 4, 8 or 16");
      return;
    }
    if (srcSize > cp) {
      ok = fail(I, w, l, "src-size exceeds cp-size");
      return;
    }
    if (dst % cp || src % cp) {
      ok = fail(I, w, l, "misaligned cp.async");
      return;
    }
    if (dst + cp > shared.data.size()) {
      ok = fail(I, w, l,
                "cp.async destination " + hex(dst) + " beyond shared memory");
      return;
    }
    if (srcSize && !mem.translate(src, srcSize)) {
      ok = fail(I, w, l,
                "cp.async source " + hex(src) +
                    " is outside every mapped buffer");
      return;
    }
    if (opts.checkHazards) {
      std::string why = shared.checkWrite(dst, cp, w.index, /*asyncCopy=*/true);
      if (!why.empty()) {
        ok = fail(I, w, l, "hazard: " + why);
        return;
      }
      for (uint64_t b = dst; b < dst + cp; ++b)
        ++shared.pending[b];
    }
    w.copies[l].push_back({uint32_t(dst), src, uint32_t(cp), uint32_t(srcSize),
                           UINT32_MAX, I.line});
  });
  return ok;
}
