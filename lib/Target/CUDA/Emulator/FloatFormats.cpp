//===- FloatFormats.cpp - Narrow float encodings and rounding -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Emulator/FloatFormats.h"
#include <cmath>
#include <vector>

using namespace tessera::ptx;

namespace {
struct Desc {
  int expBits, manBits;
  bool hasInf;    ///< e4m3 has none: its all-ones exponent holds 448.
  unsigned width; ///< bits of the encoding (tf32 lives in 32).
  uint32_t nan;   ///< canonical NaN
};
Desc desc(FloatFormat f) {
  switch (f) {
  case FloatFormat::F32:
    return {8, 23, true, 32, 0x7FFFFFFFu};
  case FloatFormat::F16:
    return {5, 10, true, 16, 0x7FFFu};
  case FloatFormat::BF16:
    return {8, 7, true, 16, 0x7FFFu};
  case FloatFormat::TF32:
    return {8, 10, true, 32, 0x7FFFFFFFu};
  case FloatFormat::E4M3:
    return {4, 3, false, 8, 0x7Fu};
  case FloatFormat::E5M2:
    return {5, 2, true, 8, 0x7Fu};
  }
  return {8, 23, true, 32, 0x7FFFFFFFu};
}
} // namespace

static double decodeSlow(uint32_t bits, FloatFormat fmt) {
  Desc d = desc(fmt);
  if (fmt == FloatFormat::TF32)
    bits &= 0xFFFFE000u;
  int manShift = (fmt == FloatFormat::TF32) ? 13 : 0;
  unsigned signBit = d.width - 1;
  bool neg = (bits >> signBit) & 1;
  uint32_t e = (bits >> (d.manBits + manShift)) & ((1u << d.expBits) - 1);
  uint32_t m = (bits >> manShift) & ((1u << d.manBits) - 1);
  int bias = (1 << (d.expBits - 1)) - 1;
  uint32_t eMax = (1u << d.expBits) - 1;
  double v;
  if (e == eMax && (d.hasInf || m == (1u << d.manBits) - 1)) {
    if (d.hasInf && m == 0)
      v = INFINITY;
    else
      v = NAN;
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - bias - d.manBits);
  } else {
    v = std::ldexp(double(m | (1u << d.manBits)), int(e) - bias - d.manBits);
  }
  return neg ? -v : v;
}

double tessera::ptx::decodeFormat(uint32_t bits, FloatFormat fmt) {
  // The formats that are prefixes of f32 decode by shifting; f16 through a
  // table (mma.sync decodes every operand element).
  switch (fmt) {
  case FloatFormat::F32:
    return bitsToF32(bits);
  case FloatFormat::BF16:
    return bitsToF32((bits & 0xFFFFu) << 16);
  case FloatFormat::TF32:
    return bitsToF32(bits & 0xFFFFE000u);
  case FloatFormat::F16: {
    static const std::vector<float> table = [] {
      std::vector<float> t(65536);
      for (uint32_t i = 0; i < 65536; ++i)
        t[i] = float(decodeSlow(i, FloatFormat::F16));
      return t;
    }();
    return table[bits & 0xFFFFu];
  }
  default:
    return decodeSlow(bits, fmt);
  }
}

uint32_t tessera::ptx::roundToFormat(double x, FloatFormat fmt, Rnd rnd,
                                     bool satfinite) {
  Desc d = desc(fmt);
  int manShift = (fmt == FloatFormat::TF32) ? 13 : 0;
  uint32_t signMask = 1u << (d.width - 1);
  int bias = (1 << (d.expBits - 1)) - 1;
  int eMaxField = d.hasInf ? (1 << d.expBits) - 2 : (1 << d.expBits) - 1;
  // Largest finite magnitude; e4m3 loses its all-ones mantissa to NaN.
  double maxMan = d.hasInf ? 2.0 - std::ldexp(1.0, -d.manBits)
                           : 2.0 - std::ldexp(2.0, -d.manBits);
  double maxFinite = std::ldexp(maxMan, eMaxField - bias);
  uint32_t infBits =
      d.hasInf ? (uint32_t((1 << d.expBits) - 1) << (d.manBits + manShift))
               : d.nan;
  auto encodeMax = [&]() {
    return (uint32_t(eMaxField) << (d.manBits + manShift)) |
           (uint32_t(maxMan * (1 << d.manBits) - (1 << d.manBits)) << manShift);
  };
  if (std::isnan(x))
    return d.nan;
  bool neg = std::signbit(x);
  uint32_t sign = neg ? signMask : 0;
  double a = std::fabs(x);
  if (rnd == Rnd::None)
    rnd = Rnd::RN;
  // Does rounding away from zero happen on overflow in this mode?
  bool towardInf = rnd == Rnd::RN || rnd == Rnd::RNA ||
                   (rnd == Rnd::RP && !neg) || (rnd == Rnd::RM && neg);
  if (std::isinf(a)) {
    if (satfinite)
      return sign | encodeMax();
    return d.hasInf ? (sign | infBits) : d.nan;
  }
  if (a == 0)
    return sign;
  int e;
  std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
  int unb = e - 1;
  int minNormal = 1 - bias;
  int qexp = (unb < minNormal ? minNormal : unb) - d.manBits;
  double scaled = std::ldexp(a, -qexp); // exact
  double ip = std::floor(scaled);
  double frac = scaled - ip;
  bool up = false;
  switch (rnd) {
  case Rnd::RZ:
    break;
  case Rnd::RP:
    up = !neg && frac > 0;
    break;
  case Rnd::RM:
    up = neg && frac > 0;
    break;
  case Rnd::RNA:
    up = frac >= 0.5;
    break;
  default:
    up = frac > 0.5 || (frac == 0.5 && std::fmod(ip, 2.0) != 0);
    break;
  }
  double r = std::ldexp(ip + (up ? 1 : 0), qexp);
  if (r > maxFinite) {
    if (satfinite || !towardInf)
      return sign | encodeMax();
    return d.hasInf ? (sign | infBits) : d.nan;
  }
  if (r == 0)
    return sign;
  std::frexp(r, &e);
  unb = e - 1;
  uint32_t bits;
  if (unb < minNormal) {
    bits = uint32_t(std::ldexp(r, -(minNormal - d.manBits)));
  } else {
    uint32_t man =
        uint32_t(std::ldexp(r, -(unb - d.manBits))) - (1u << d.manBits);
    bits = (uint32_t(unb + bias) << d.manBits) | man;
  }
  return sign | (bits << manShift);
}
