//===- Conversions.cpp - cvt and mov semantics ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// cvt between integers, f64, f32, tf32, f16, bf16 and the fp8 pairs, with
// the PTX ISA's rules: float-to-int conversions round as .rni/.rzi/.rmi/.rpi
// say and saturate (NaN -> 0); narrowing float conversions need a rounding
// mode and round once from the exact source value; packed forms put the
// first source in the upper half.
//
//===----------------------------------------------------------------------===//
#include "ScalarSupport.h"
#include "llvm/ADT/bit.h"

// GCC relies on -frounding-math (CMakeLists.txt) instead of the pragma.
#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif

using namespace tessera::ptx;

namespace {

bool formatOf(Ty t, FloatFormat &f) {
  switch (t) {
  case Ty::F16:
  case Ty::F16x2:
    f = FloatFormat::F16;
    return true;
  case Ty::BF16:
  case Ty::BF16x2:
    f = FloatFormat::BF16;
    return true;
  case Ty::TF32:
    f = FloatFormat::TF32;
    return true;
  case Ty::F32:
    f = FloatFormat::F32;
    return true;
  case Ty::E4M3x2:
    f = FloatFormat::E4M3;
    return true;
  case Ty::E5M2x2:
    f = FloatFormat::E5M2;
    return true;
  default:
    return false;
  }
}

/// The exact value of a float source.
double floatValue(Ty t, uint64_t v, bool ftz) {
  if (t == Ty::F64)
    return bitsToF64(v);
  if (t == Ty::F32) {
    float f = bitsToF32(uint32_t(v));
    return ftz ? flushF32(f) : f;
  }
  FloatFormat f = FloatFormat::F32;
  formatOf(t, f);
  return decodeFormat(uint32_t(v), f);
}

bool isFloatRounding(Rnd r) {
  return r == Rnd::RN || r == Rnd::RZ || r == Rnd::RM || r == Rnd::RP ||
         r == Rnd::RNA;
}
bool isIntRounding(Rnd r) {
  return r == Rnd::RNI || r == Rnd::RZI || r == Rnd::RMI || r == Rnd::RPI;
}

double roundIntegral(double x, Rnd r) {
  switch (r) {
  case Rnd::RZI:
    return std::trunc(x);
  case Rnd::RMI:
    return std::floor(x);
  case Rnd::RPI:
    return std::ceil(x);
  default:
    return std::nearbyint(x); // ties to even in the default mode
  }
}

/// Narrow one value into \p fmt applying .relu/.satfinite/.sat.
uint32_t narrow(const Instruction &I, double x, FloatFormat fmt) {
  if (I.has(SAT))
    x = std::isnan(x) ? 0.0 : std::min(1.0, std::max(0.0, x));
  if (I.has(RELU) && !std::isnan(x) && x < 0)
    x = 0;
  Rnd r = I.rnd == Rnd::None ? Rnd::RN : I.rnd;
  uint32_t bits = roundToFormat(x, fmt, r, I.has(SATFINITE));
  if (fmt == FloatFormat::F32 && I.has(FTZ))
    bits = f32ToBits(flushF32(bitsToF32(bits)));
  return bits;
}

} // namespace

bool tessera::ptx::convert(const Instruction &I, uint64_t a, uint64_t b,
                           uint64_t &out, const char *&why) {
  Ty dt = I.type, st = I.srcType;
  bool pairDest = dt == Ty::F16x2 || dt == Ty::BF16x2 || dt == Ty::E4M3x2 ||
                  dt == Ty::E5M2x2;
  bool fp8 = dt == Ty::E4M3x2 || dt == Ty::E5M2x2;
  FloatFormat df = FloatFormat::F32, sf = FloatFormat::F32;
  if (pairDest) {
    formatOf(dt, df);
    unsigned width = fp8 ? 8 : 16;
    if (fp8 && (!I.has(SATFINITE) || I.rnd != Rnd::RN)) {
      why = "conversions to fp8 need .rn.satfinite";
      return false;
    }
    if (!isFloatRounding(I.rnd) || I.rnd == Rnd::RNA) {
      why = "packed conversions need .rn, .rz, .rm or .rp";
      return false;
    }
    if (st == Ty::F32) {
      if (I.ops.size() != 3) {
        why = "packed cvt from .f32 takes two sources";
        return false;
      }
      uint32_t hi = narrow(I, bitsToF32(uint32_t(a)), df);
      uint32_t lo = narrow(I, bitsToF32(uint32_t(b)), df);
      out = (uint64_t(hi) << width) | lo;
      return true;
    }
    if (fp8 && st == Ty::F16x2 && I.ops.size() == 2) {
      uint32_t lo = narrow(I, decodeFormat(a & 0xFFFF, FloatFormat::F16), df);
      uint32_t hi =
          narrow(I, decodeFormat((a >> 16) & 0xFFFF, FloatFormat::F16), df);
      out = (hi << 8) | lo;
      return true;
    }
    if (dt == Ty::F16x2 && (st == Ty::E4M3x2 || st == Ty::E5M2x2) &&
        I.ops.size() == 2) {
      formatOf(st, sf);
      uint32_t lo = narrow(I, decodeFormat(a & 0xFF, sf), FloatFormat::F16);
      uint32_t hi =
          narrow(I, decodeFormat((a >> 8) & 0xFF, sf), FloatFormat::F16);
      out = (hi << 16) | lo;
      return true;
    }
    why = "unsupported packed conversion";
    return false;
  }
  if (I.ops.size() != 2) {
    why = "cvt takes one source here";
    return false;
  }
  if (st == Ty::F16x2 || st == Ty::BF16x2 || st == Ty::E4M3x2 ||
      st == Ty::E5M2x2 || st == Ty::Pred || dt == Ty::Pred) {
    why = "unsupported cvt source/destination type";
    return false;
  }
  bool dF = isFloat(dt), sF = isFloat(st);
  unsigned dbits = byteSize(dt) * 8, sbits = byteSize(st) * 8;
  uint64_t dmask = dbits == 64 ? ~uint64_t(0) : (uint64_t(1) << dbits) - 1;
  if (!dF && !sF) {
    if (I.rnd != Rnd::None) {
      why = "rounding modifier on an integer conversion";
      return false;
    }
    __int128 v =
        isSigned(st)
            ? __int128(signExtend(a, sbits))
            : __int128(sbits == 64 ? a : (a & ((uint64_t(1) << sbits) - 1)));
    if (I.has(SAT)) {
      __int128 lo = isSigned(dt) ? -(__int128(1) << (dbits - 1)) : 0;
      __int128 hi = isSigned(dt) ? (__int128(1) << (dbits - 1)) - 1
                                 : (dbits == 64 ? __int128(~uint64_t(0))
                                                : __int128(dmask));
      v = std::min(hi, std::max(lo, v));
    }
    out = uint64_t(v) & dmask;
    return true;
  }
  if (!dF && sF) {
    if (!isIntRounding(I.rnd)) {
      why = "float-to-integer cvt needs .rni/.rzi/.rmi/.rpi";
      return false;
    }
    double x = floatValue(st, a, I.has(FTZ));
    if (std::isnan(x)) {
      out = 0;
      return true;
    }
    x = roundIntegral(x, I.rnd);
    bool s = isSigned(dt);
    double lo = s ? -std::ldexp(1.0, dbits - 1) : 0.0;
    double hiExcl = s ? std::ldexp(1.0, dbits - 1) : std::ldexp(1.0, dbits);
    if (x < lo)
      out = uint64_t(int64_t(lo)) & dmask;
    else if (x >= hiExcl)
      out = s ? (dmask >> 1) : dmask;
    else
      out = (s ? uint64_t(int64_t(x)) : uint64_t(x)) & dmask;
    return true;
  }
  if (dF && !sF) {
    if (!isFloatRounding(I.rnd)) {
      why = "integer-to-float cvt needs .rn/.rz/.rm/.rp";
      return false;
    }
    bool s = isSigned(st);
    int64_t sv = signExtend(a, sbits);
    uint64_t uv = sbits == 64 ? a : (a & ((uint64_t(1) << sbits) - 1));
    if (dt == Ty::F32 || dt == Ty::F64) {
      RoundingScope scope(I.rnd);
      if (dt == Ty::F32) {
        volatile float f = s ? float(sv) : float(uv);
        out = f32ToBits(I.has(FTZ) ? flushF32(f) : f);
      } else {
        volatile double d = s ? double(sv) : double(uv);
        out = f64ToBits(d);
      }
      return true;
    }
    if (!formatOf(dt, df)) {
      why = "unsupported destination";
      return false;
    }
    // 8/16/32-bit integers are exact in binary64; wider ones are not needed.
    if (sbits > 32) {
      why = "64-bit integer to f16/bf16 is not supported";
      return false;
    }
    out = narrow(I, s ? double(sv) : double(uv), df);
    return true;
  }
  // float -> float
  double x = floatValue(st, a, I.has(FTZ));
  if (dt == st && dt != Ty::TF32) {
    if (I.rnd != Rnd::None && !isIntRounding(I.rnd)) {
      why = "same-type float cvt takes only integer rounding";
      return false;
    }
    if (isIntRounding(I.rnd) && !std::isnan(x))
      x = roundIntegral(x, I.rnd);
    if (I.has(SAT))
      x = std::isnan(x) ? 0.0 : std::min(1.0, std::max(0.0, x));
    if (dt == Ty::F64) {
      out = std::isnan(x) ? 0x7FFFFFFFFFFFFFFFull : f64ToBits(x);
      return true;
    }
    if (dt == Ty::F32) {
      float f = float(x);
      if (I.has(FTZ))
        f = flushF32(f);
      out = std::isnan(f) ? 0x7FFFFFFFu : f32ToBits(f);
      return true;
    }
    formatOf(dt, df);
    out = roundToFormat(x, df, Rnd::RN, false);
    return true;
  }
  if (dt == Ty::F64) {
    if (I.rnd != Rnd::None) {
      why = "widening cvt takes no rounding modifier";
      return false;
    }
    out = std::isnan(x) ? 0x7FFFFFFFFFFFFFFFull : f64ToBits(x);
    return true;
  }
  if (!formatOf(dt, df)) {
    why = "unsupported destination";
    return false;
  }
  bool widening = (dt == Ty::F32 && st != Ty::F64);
  if (widening) {
    if (I.rnd != Rnd::None && !isIntRounding(I.rnd)) {
      why = "widening cvt takes no float rounding modifier";
      return false;
    }
    if (isIntRounding(I.rnd) && !std::isnan(x))
      x = roundIntegral(x, I.rnd);
    out = narrow(I, x, df);
    return true;
  }
  if (!isFloatRounding(I.rnd)) {
    why = "narrowing cvt needs .rn/.rz/.rm/.rp/.rna";
    return false;
  }
  if (I.rnd == Rnd::RNA && dt != Ty::TF32) {
    why = ".rna is only for .tf32";
    return false;
  }
  out = narrow(I, x, df);
  return true;
}

bool tessera::ptx::execMov(Exec &e, const Instruction &I, Warp &w,
                           uint32_t mask) {
  const Operand &d = I.ops[0], &s = I.ops[1];
  unsigned bits = I.type == Ty::Pred ? 1 : byteSize(I.type) * 8;
  uint64_t tmask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  if (d.kind == Operand::Vec && s.kind == Operand::Vec)
    return e.fail(I, w, -1, "mov between two vectors");
  unsigned n = d.kind == Operand::Vec   ? d.elems.size()
               : s.kind == Operand::Vec ? s.elems.size()
                                        : 1;
  if (n > 1 && (bits % n || bits / n < 8))
    return e.fail(I, w, -1, "vector does not split the type evenly");
  unsigned ew = bits / n;
  uint64_t emask = ew == 64 ? ~uint64_t(0) : (uint64_t(1) << ew) - 1;
  for (uint32_t m = mask; m; m &= m - 1) {
    unsigned l = llvm::countr_zero(m);
    if (d.kind == Operand::Vec) {
      uint64_t v = e.read(s, w, l);
      for (unsigned i = 0; i < n; ++i)
        if (d.elems[i] >= 0)
          e.setReg(d.elems[i], w, l, (v >> (i * ew)) & emask);
    } else if (s.kind == Operand::Vec) {
      uint64_t v = 0;
      for (unsigned i = 0; i < n; ++i) {
        int32_t el = s.elems[i];
        uint64_t x = el >= 0 ? e.getReg(el, w, l)
                             : (el == INT32_MIN ? 0 : s.vecImm[-1 - el]);
        v |= (x & emask) << (i * ew);
      }
      e.write(d, w, l, v);
    } else {
      e.write(d, w, l, e.read(s, w, l) & tmask);
    }
  }
  return true;
}
