//===- Wgmma.cpp - wgmma.mma_async with shared-memory descriptors ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// m64nNk16 with f16/bf16, m64nNk32 with e4m3/e5m2 (K-major only), and
// m64nNk32 s8 into s32 (K-major, wrapping), A and B both read through
// shared-memory matrix
// descriptors (PTX ISA, "Matrix Descriptor Format"): start address bits
// 0-13, leading byte offset 16-29, stride byte offset 32-45 (all >> 4), base
// offset 49-51, swizzle 62-63 (0 none, 1 128B, 2 64B, 3 32B). Below, mn is
// the row of A (M) or of B (N) and k its column; the swizzle width W is 16
// bytes without swizzle, else 32/64/128.
//
// K-major operands (imm-trans 0):
//   no swizzle: 8x16-byte core matrices, element (mn, k) at
//     start + (mn/8)*SBO + (k/8)*LBO + (mn%8)*16 + (k%8)*2
//     (fp8: 16 elements a row, (k/16)*LBO + (k%16));
//     LBO = bytes between core matrices adjacent in K,
//     SBO = bytes between core matrices adjacent in M/N;
//   swizzled:   rows of W bytes along K, 8-row atoms SBO apart (LBO unused),
//     a = start + (mn/8)*SBO + (mn%8)*W + k*2 (fp8: + k).
// MN-major operands (imm-trans 1, the ISA's canonical layouts
// ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) without swizzle and
// ((T,W/16,m),(8,k)):((1,T,LBO),(W/16*T,SBO)) with it, T = 8 elements):
// each k is a W-byte row holding W/2 consecutive mn elements, 8 such rows
// (one per k%8) form an atom, and
//   a = start + (mn%(W/2))*2 + (k%8)*W + (mn/(W/2))*X + (k/8)*Y, where
//   no swizzle: X = SBO (bytes between core matrices adjacent in M/N),
//               Y = LBO (bytes between core matrices adjacent in K);
//   swizzled:   X = LBO (bytes between W-byte-wide column blocks along
//               M/N, e.g. two 64-column TMA boxes of a 128-byte-swizzled B),
//               Y = SBO (bytes between groups of 8 k rows, 8*W when dense).
// LBO and SBO thus swap roles between no swizzle and swizzle for MN-major.
// With swizzle, address bits [4,7) of the absolute shared address are
// XORed with bits [7,10) masked to 3/2/1 bits (Swizzle<3,4,3>, <2,4,3>,
// <1,4,3>), for both majors.
// The warpgroup's rows are split by warp: warp w%4 owns rows 16(w%4)..+15,
// with d[4j+i] at row groupID + 8*(i/2), column 8j + 2*tig + i%2, so each
// warp computes its part when it reaches the instruction. Results stay in
// flight until wgmma.wait_group; touching an accumulator before that is a
// hazard, and the registers read as NaN until then.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include <cmath>

using namespace tessera::ptx;

namespace {

struct Descriptor {
  uint32_t start, lbo, sbo, baseOffset, swizzle;
};

Descriptor decodeDescriptor(uint64_t d) {
  Descriptor r;
  r.start = uint32_t(d & 0x3FFF) << 4;
  r.lbo = uint32_t((d >> 16) & 0x3FFF) << 4;
  r.sbo = uint32_t((d >> 32) & 0x3FFF) << 4;
  r.baseOffset = uint32_t((d >> 49) & 7);
  r.swizzle = uint32_t(d >> 62);
  return r;
}

/// Shared address of element (mn, k) of an operand of `bytes`-byte
/// elements (2, or 1 K-major; header comment).
uint32_t elementAddress(const Descriptor &d, bool mnMajor, unsigned mn,
                        unsigned k, unsigned bytes) {
  unsigned width = d.swizzle == 1   ? 128
                   : d.swizzle == 2 ? 64
                   : d.swizzle == 3 ? 32
                                    : 16;
  unsigned mask = d.swizzle == 1 ? 7 : d.swizzle == 2 ? 3 : 1;
  uint32_t a;
  if (!mnMajor) {
    unsigned perCore = 16 / bytes; // K elements in a core matrix's row
    if (d.swizzle == 0)
      return d.start + (mn / 8) * d.sbo + (k / perCore) * d.lbo +
             (mn % 8) * 16 + (k % perCore) * bytes;
    a = d.start + (mn / 8) * d.sbo + (mn % 8) * width + k * bytes;
  } else {
    unsigned perRow = width / 2; // mn elements in one W-byte row
    uint32_t acrossMN = d.swizzle == 0 ? d.sbo : d.lbo;
    uint32_t acrossK = d.swizzle == 0 ? d.lbo : d.sbo;
    a = d.start + (mn % perRow) * 2 + (k % 8) * width +
        (mn / perRow) * acrossMN + (k / 8) * acrossK;
    if (d.swizzle == 0)
      return a;
  }
  return a ^ (((a >> 7) & mask) << 4);
}

constexpr uint64_t kPoison = 0x7FBADBADu; // a NaN, for registers in flight

} // namespace

bool Exec::execWgmma(const Instruction &I, Warp &w) {
  unsigned lane0 = 0;
  if (w.inFlightReg.empty())
    w.inFlightReg.assign(k.numRegs, 0);
  switch (I.op) {
  case Op::WgmmaFence:
    return true;
  case Op::WgmmaCommit:
    for (auto &entry : w.wgmmaInFlight)
      if (entry.second.group == UINT32_MAX)
        entry.second.group = w.wgmmaNextGroup;
    ++w.wgmmaNextGroup;
    return true;
  case Op::WgmmaWait: {
    if (I.ops[0].kind != Operand::Imm)
      return fail(I, w, -1, "wgmma.wait_group needs an immediate count");
    uint64_t keep = I.ops[0].imm;
    uint32_t limit =
        w.wgmmaNextGroup >= keep ? uint32_t(w.wgmmaNextGroup - keep) : 0;
    for (auto it = w.wgmmaInFlight.begin(); it != w.wgmmaInFlight.end();) {
      if (it->second.group == UINT32_MAX || it->second.group >= limit) {
        ++it;
        continue;
      }
      for (unsigned l = 0; l < 32; ++l)
        w.reg(it->first, l) = it->second.value[l];
      w.inFlightReg[it->first] = 0;
      it = w.wgmmaInFlight.erase(it);
    }
    return true;
  }
  default:
    break;
  }
  const Operand &D = I.ops[0];
  unsigned N = I.n;
  if (D.kind != Operand::Vec || D.elems.size() != N / 2)
    return fail(I, w, -1,
                "wgmma m64n" + std::to_string(N) + " needs " +
                    std::to_string(N / 2) + " accumulator registers");
  if (I.ops[1].kind == Operand::Vec)
    return fail(I, w, -1, "wgmma with A in registers is not supported");
  for (unsigned i = 4; i < I.ops.size(); ++i)
    if (I.ops[i].kind != Operand::Imm)
      return fail(I, w, -1,
                  "wgmma scale and transpose operands must be immediates");
  // fp8 forms have no transpose operands (K-major A and B), integer forms
  // neither scale nor transpose operands.
  bool int8 = I.srcType == Ty::S8;
  bool fp8 = I.srcType == Ty::E4M3 || I.srcType == Ty::E5M2 || int8;
  bool transA = false, transB = false;
  if (!fp8) {
    if (I.ops[6].imm > 1 || I.ops[7].imm > 1)
      return fail(I, w, -1, "imm-trans-a/b must be 0 or 1");
    transA = I.ops[6].imm == 1;
    transB = I.ops[7].imm == 1;
  }
  double scaleA = 1.0, scaleB = 1.0;
  if (!int8) {
    scaleA = int64_t(I.ops[4].imm) == -1 ? -1.0 : 1.0;
    scaleB = int64_t(I.ops[5].imm) == -1 ? -1.0 : 1.0;
    if ((I.ops[4].imm != 1 && scaleA > 0) || (I.ops[5].imm != 1 && scaleB > 0))
      return fail(I, w, -1, "imm-scale-a/b must be 1 or -1");
  }
  uint64_t da = read(I.ops[1], w, lane0), db = read(I.ops[2], w, lane0);
  bool scaleD = read(I.ops[3], w, lane0) & 1;
  for (unsigned l = 1; l < 32; ++l)
    if (read(I.ops[1], w, l) != da || read(I.ops[2], w, l) != db ||
        bool(read(I.ops[3], w, l) & 1) != scaleD)
      return fail(I, w, l,
                  "descriptors and scale-d must be uniform across the warp");
  Descriptor A = decodeDescriptor(da), B = decodeDescriptor(db);
  if (A.baseOffset || B.baseOffset)
    return fail(I, w, -1,
                "descriptor base offset other than 0 is not supported");
  FloatFormat fmt = I.srcType == Ty::BF16   ? FloatFormat::BF16
                    : I.srcType == Ty::E4M3 ? FloatFormat::E4M3
                    : I.srcType == Ty::E5M2 ? FloatFormat::E5M2
                                            : FloatFormat::F16;
  unsigned bytes = fp8 ? 1 : 2, depth = I.k; // K: 16, or 32 for fp8
  auto load = [&](const Descriptor &d, bool mnMajor, unsigned row, unsigned kk,
                  double &v) {
    uint16_t h = 0;
    if (!access(I, w, 0, Space::Shared,
                elementAddress(d, mnMajor, row, kk, bytes), bytes, false, &h))
      return false;
    v = int8 ? double(int8_t(h)) : decodeFormat(h, fmt);
    return true;
  };
  unsigned row0 = 16 * (w.index % 4);
  std::vector<double> a(size_t(16) * depth), b(size_t(N) * depth);
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned kk = 0; kk < depth; ++kk)
      if (!load(A, transA, row0 + r, kk, a[r * depth + kk]))
        return false;
  for (unsigned n = 0; n < N; ++n)
    for (unsigned kk = 0; kk < depth; ++kk)
      if (!load(B, transB, n, kk, b[n * depth + kk]))
        return false;
  // Read every accumulator (the in-flight value if a previous wgmma is still
  // running on it) before writing any.
  std::vector<uint64_t> result(size_t(32) * (N / 2));
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < N / 2; ++i) {
      int32_t reg = D.elems[i];
      if (reg < 0)
        return fail(I, w, -1, "wgmma accumulators must be registers");
      auto it = w.wgmmaInFlight.find(uint32_t(reg));
      uint64_t cur =
          it != w.wgmmaInFlight.end() ? it->second.value[l] : w.reg(reg, l);
      unsigned r = g + 8 * ((i % 4) / 2), c = 8 * (i / 4) + 2 * t + i % 2;
      double dot = 0;
      for (unsigned kk = 0; kk < depth; ++kk)
        dot += a[r * depth + kk] * b[c * depth + kk];
      if (int8) {
        // Exact: 32 products of at most 2^14 each. The sum wraps.
        int64_t s = scaleD ? int32_t(uint32_t(cur)) : 0;
        result[l * (N / 2) + i] = uint32_t(uint64_t(s + int64_t(dot)));
        continue;
      }
      double s = scaleD ? double(bitsToF32(uint32_t(cur))) : 0.0;
      float f = float(s + scaleA * scaleB * dot);
      result[l * (N / 2) + i] = std::isnan(f) ? 0x7FFFFFFFu : f32ToBits(f);
    }
  }
  for (unsigned i = 0; i < N / 2; ++i) {
    Warp::InFlight &slot = w.wgmmaInFlight[uint32_t(D.elems[i])];
    slot.group = UINT32_MAX;
    for (unsigned l = 0; l < 32; ++l)
      slot.value[l] = result[l * (N / 2) + i];
    w.inFlightReg[D.elems[i]] = 1;
    for (unsigned l = 0; l < 32; ++l)
      w.reg(D.elems[i], l) = kPoison;
  }
  return true;
}
