//===- WarpCollectives.cpp - shfl, vote, ldmatrix and mma.sync ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// These run once every participating lane has arrived (Executor.cpp).
// Fragment layouts follow the PTX ISA, "Warp-level matrix fragments":
//   groupID = lane / 4, tig = lane % 4,
//   m16n8k16 A a_i: row groupID + 8*((i/2)%2), col 2*tig + i%2 + 8*(i/4)
//            B b_i: row 2*tig + i%2 + 8*(i/2), col groupID
//   m16n8k8 tf32 A a_i: row groupID + 8*(i%2), col tig + 4*(i/2)
//                B b_i: row tig + 4*i, col groupID
//   m16n8k8 f16/bf16: A a0..a3 and B b0..b1 as the first halves above
//   C/D c_i: row groupID + 8*(i/2), col 2*tig + i%2 (f16: two per register)
// mma is modelled as an ideal tensor core: exact products summed in
// binary64 and rounded once to f32. Real tensor cores truncate during
// alignment, so only exactly representable sums are expected to match bit
// for bit; the hardware differential pack decides the rest.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include "llvm/ADT/bit.h"
#include <cmath>

using namespace tessera::ptx;

bool Exec::execShfl(const Instruction &I, Warp &w, uint32_t mask) {
  uint32_t src[32], bval[32], cval[32];
  for (unsigned l = 0; l < 32; ++l)
    if (mask >> l & 1) {
      src[l] = uint32_t(read(I.ops[1], w, l));
      bval[l] = uint32_t(read(I.ops[2], w, l));
      cval[l] = uint32_t(read(I.ops[3], w, l));
    }
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask >> l & 1))
      continue;
    int lane = int(l), b = bval[l] & 31, c = cval[l] & 31;
    int seg = (cval[l] >> 8) & 31;
    int maxLane = (lane & seg) | (c & ~seg);
    int minLane = lane & seg;
    int j = lane;
    bool p = false;
    switch (I.shfl) {
    case ShflMode::Up:
      j = lane - b;
      p = j >= maxLane;
      break;
    case ShflMode::Down:
      j = lane + b;
      p = j <= maxLane;
      break;
    case ShflMode::Bfly:
      j = lane ^ b;
      p = j <= maxLane;
      break;
    case ShflMode::Idx:
      j = minLane | (b & ~seg);
      p = j <= maxLane;
      break;
    default:
      break;
    }
    if (!p)
      j = lane;
    if (!(mask >> j & 1))
      return fail(I, w, l,
                  "source lane " + std::to_string(j) +
                      " is not in the membermask (undefined result)");
    const Operand &d = I.ops[0];
    if (d.kind == Operand::PredPair || d.kind == Operand::Reg)
      setReg(d.reg, w, l, src[j]);
    if (d.kind == Operand::PredPair)
      setReg(d.reg2, w, l, p);
  }
  return true;
}

bool Exec::execVote(const Instruction &I, Warp &w, uint32_t mask) {
  uint32_t ballot = 0;
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l & 1) && (read(I.ops[1], w, l) & 1))
      ballot |= 1u << l;
  uint64_t r = 0;
  switch (I.vote) {
  case VoteMode::Ballot:
    r = ballot;
    break;
  case VoteMode::All:
    r = ballot == mask;
    break;
  case VoteMode::Any:
    r = ballot != 0;
    break;
  case VoteMode::Uni:
    r = ballot == mask || ballot == 0;
    break;
  default:
    break;
  }
  for (unsigned l = 0; l < 32; ++l)
    if (mask >> l & 1)
      write(I.ops[0], w, l, r);
  return true;
}

bool Exec::execLdmatrix(const Instruction &I, Warp &w, uint32_t mask) {
  unsigned nmat = I.vec;
  const Operand &d = I.ops[0];
  if (d.kind != Operand::Vec || d.elems.size() != nmat)
    return fail(I, w, -1,
                "ldmatrix .x" + std::to_string(nmat) + " needs " +
                    std::to_string(nmat) + " destination registers");
  if (mask != ~0u)
    return fail(I, w, -1, "ldmatrix needs all 32 lanes of the warp");
  uint16_t m[4][8][8];
  for (unsigned j = 0; j < nmat; ++j)
    for (unsigned r = 0; r < 8; ++r) {
      unsigned lane = j * 8 + r;
      if (!access(I, w, lane, Space::Shared, address(I.ops[1], w, lane), 16,
                  false, m[j][r]))
        return false;
    }
  bool trans = I.has(TRANS);
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned j = 0; j < nmat; ++j) {
      unsigned a = l / 4, b = 2 * (l % 4);
      uint16_t lo = trans ? m[j][b][a] : m[j][a][b];
      uint16_t hi = trans ? m[j][b + 1][a] : m[j][a][b + 1];
      if (d.elems[j] >= 0)
        setReg(d.elems[j], w, l, (uint32_t(hi) << 16) | lo);
    }
  return true;
}

/// m16n8k32 on s8 into s32 (fragments of the PTX ISA's figures for 8-bit
/// mma: a_i byte j at row g + 8*(i%2), k 4t + j + 16*(i/2); b_i byte j at k
/// 4t + j + 16*i, column g), wrapping like the hardware without .satfinite.
bool Exec::execMmaS8(const Instruction &I, Warp &w) {
  const Operand &D = I.ops[0], &A = I.ops[1], &B = I.ops[2], &C = I.ops[3];
  auto need = [&](const Operand &o, unsigned n) {
    return o.kind == Operand::Vec && o.elems.size() == n;
  };
  if (!need(D, 4) || !need(A, 4) || !need(B, 2) || !need(C, 4))
    return fail(I, w, -1, "mma operands have the wrong number of registers");
  auto elem = [&](const Operand &o, unsigned i, unsigned l) -> uint32_t {
    int32_t e = o.elems[i];
    if (e == INT32_MIN)
      return 0;
    return uint32_t(e >= 0 ? getReg(e, w, l) : o.vecImm[-1 - e]);
  };
  int64_t a[16][32], b[32][8], acc[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < 4; ++i)
      for (unsigned j = 0; j < 4; ++j)
        a[g + 8 * (i % 2)][4 * t + j + 16 * (i / 2)] =
            int8_t(elem(A, i, l) >> (8 * j));
    for (unsigned i = 0; i < 2; ++i)
      for (unsigned j = 0; j < 4; ++j)
        b[4 * t + j + 16 * i][g] = int8_t(elem(B, i, l) >> (8 * j));
    for (unsigned i = 0; i < 4; ++i)
      acc[g + 8 * (i / 2)][2 * t + i % 2] = int32_t(elem(C, i, l));
  }
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned c = 0; c < 8; ++c)
      for (unsigned kk = 0; kk < 32; ++kk)
        acc[r][c] += a[r][kk] * b[kk][c];
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < 4; ++i)
      if (D.elems[i] >= 0)
        setReg(D.elems[i], w, l,
               uint32_t(uint64_t(acc[g + 8 * (i / 2)][2 * t + i % 2])));
  }
  return true;
}

bool Exec::execMma(const Instruction &I, Warp &w, uint32_t mask) {
  if (mask != ~0u)
    return fail(I, w, -1, "mma.sync needs all 32 lanes of the warp");
  if (I.srcType == Ty::S8)
    return execMmaS8(I, w);
  bool tf32 = I.srcType == Ty::TF32, f16Acc = I.type == Ty::F16;
  // Registers per operand: 16-bit inputs pack two elements per register.
  unsigned K = I.k, nA = tf32 ? 4 : K / 4, nB = tf32 ? 2 : K / 8,
           nC = f16Acc ? 2 : 4;
  const Operand &D = I.ops[0], &A = I.ops[1], &B = I.ops[2], &C = I.ops[3];
  auto need = [&](const Operand &o, unsigned n) {
    return o.kind == Operand::Vec && o.elems.size() == n;
  };
  if (!need(D, nC) || !need(A, nA) || !need(B, nB) || !need(C, nC))
    return fail(I, w, -1, "mma operands have the wrong number of registers");
  FloatFormat fmt = tf32                    ? FloatFormat::TF32
                    : I.srcType == Ty::BF16 ? FloatFormat::BF16
                                            : FloatFormat::F16;
  auto elem = [&](const Operand &o, unsigned i, unsigned l) -> uint64_t {
    int32_t e = o.elems[i];
    if (e == INT32_MIN)
      return 0;
    return e >= 0 ? getReg(e, w, l) : o.vecImm[-1 - e];
  };
  double a[16][16], b[16][8], acc[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l / 4, t = l % 4;
    if (tf32) {
      for (unsigned i = 0; i < 4; ++i)
        a[g + 8 * (i % 2)][t + 4 * (i / 2)] =
            decodeFormat(uint32_t(elem(A, i, l)), fmt);
      for (unsigned i = 0; i < 2; ++i)
        b[t + 4 * i][g] = decodeFormat(uint32_t(elem(B, i, l)), fmt);
    } else {
      for (unsigned i = 0; i < 2 * nA; ++i) {
        uint32_t h = uint32_t(elem(A, i / 2, l) >> (16 * (i % 2))) & 0xFFFF;
        a[g + 8 * ((i / 2) % 2)][2 * t + i % 2 + 8 * (i / 4)] =
            decodeFormat(h, fmt);
      }
      for (unsigned i = 0; i < 2 * nB; ++i) {
        uint32_t h = uint32_t(elem(B, i / 2, l) >> (16 * (i % 2))) & 0xFFFF;
        b[2 * t + i % 2 + 8 * (i / 2)][g] = decodeFormat(h, fmt);
      }
    }
    for (unsigned i = 0; i < 4; ++i)
      acc[g + 8 * (i / 2)][2 * t + i % 2] =
          f16Acc ? decodeFormat(uint32_t(elem(C, i / 2, l) >> (16 * (i % 2))) &
                                    0xFFFF,
                                FloatFormat::F16)
                 : bitsToF32(uint32_t(elem(C, i, l)));
  }
  for (unsigned r = 0; r < 16; ++r)
    for (unsigned c = 0; c < 8; ++c) {
      double s = acc[r][c];
      for (unsigned kk = 0; kk < K; ++kk)
        s += a[r][kk] * b[kk][c];
      acc[r][c] = s;
    }
  for (unsigned l = 0; l < 32; ++l) {
    unsigned g = l / 4, t = l % 4;
    if (f16Acc) {
      for (unsigned r = 0; r < 2; ++r) {
        uint32_t lo = roundToFormat(acc[g + 8 * r][2 * t], FloatFormat::F16,
                                    Rnd::RN, false);
        uint32_t hi = roundToFormat(acc[g + 8 * r][2 * t + 1], FloatFormat::F16,
                                    Rnd::RN, false);
        if (D.elems[r] >= 0)
          setReg(D.elems[r], w, l, (hi << 16) | lo);
      }
      continue;
    }
    for (unsigned i = 0; i < 4; ++i) {
      float f = float(acc[g + 8 * (i / 2)][2 * t + i % 2]);
      if (D.elems[i] >= 0)
        setReg(D.elems[i], w, l, std::isnan(f) ? 0x7FFFFFFFu : f32ToBits(f));
    }
  }
  return true;
}
