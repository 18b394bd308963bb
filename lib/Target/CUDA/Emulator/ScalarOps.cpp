//===- ScalarOps.cpp - Per-thread integer and floating-point semantics ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// f32/f64 arithmetic runs on the host FPU with its rounding mode switched for
// .rz/.rm/.rp (IEEE operations are correctly rounded in every mode); .ftz
// flushes subnormal inputs and results to signed zero; .sat clamps to [0, 1]
// with NaN -> +0. NaN results are the canonical NaN 0x7fffffff. f16/bf16
// operations are computed in binary64 and rounded once to the format.
// .approx functions use the host's libm, whose results are within the error
// bounds the PTX ISA documents for them. Conversions live in Conversions.cpp.
//
//===----------------------------------------------------------------------===//
#include "Executor.h"
#include "ScalarSupport.h"
#include "llvm/ADT/bit.h"
#include <cfenv>
#include <cmath>

// GCC relies on -frounding-math (CMakeLists.txt) instead of the pragma.
#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif

using namespace tessera::ptx;

namespace {

double f32Op(Op op, float a, float b, float c, Rnd rnd) {
  RoundingScope scope(rnd);
  volatile float va = a, vb = b, vc = c;
  float r = 0;
  switch (op) {
  case Op::Add:
    r = va + vb;
    break;
  case Op::Sub:
    r = va - vb;
    break;
  case Op::Mul:
    r = va * vb;
    break;
  case Op::Div:
    r = va / vb;
    break;
  case Op::Fma:
  case Op::Mad:
    r = std::fmaf(va, vb, vc);
    break;
  case Op::Rcp:
    r = 1.0f / va;
    break;
  case Op::Sqrt:
    r = std::sqrt(float(va));
    break;
  default:
    break;
  }
  volatile float vr = r;
  return vr;
}

double f64Op(Op op, double a, double b, double c, Rnd rnd) {
  RoundingScope scope(rnd);
  volatile double va = a, vb = b, vc = c;
  double r = 0;
  switch (op) {
  case Op::Add:
    r = va + vb;
    break;
  case Op::Sub:
    r = va - vb;
    break;
  case Op::Mul:
    r = va * vb;
    break;
  case Op::Div:
    r = va / vb;
    break;
  case Op::Fma:
  case Op::Mad:
    r = std::fma(va, vb, vc);
    break;
  case Op::Rcp:
    r = 1.0 / va;
    break;
  case Op::Sqrt:
    r = std::sqrt(double(va));
    break;
  default:
    break;
  }
  volatile double vr = r;
  return vr;
}

/// min/max with PTX's NaN rules: one NaN operand yields the other, .NaN
/// propagates; -0 orders below +0.
double minMax(bool isMin, double a, double b, bool nanMode) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanMode || (std::isnan(a) && std::isnan(b)))
      return NAN;
    return std::isnan(a) ? b : a;
  }
  if (a == b) { // only the zeros' signs can differ
    bool an = std::signbit(a);
    return (isMin ? an : !an) ? a : b;
  }
  return (isMin ? a < b : a > b) ? a : b;
}

bool approxOp(Op op, double x, double &r) {
  switch (op) {
  case Op::Ex2:
    r = std::exp2(x);
    return true;
  case Op::Lg2:
    r = std::log2(x);
    return true;
  case Op::Sin:
    r = std::sin(x);
    return true;
  case Op::Cos:
    r = std::cos(x);
    return true;
  case Op::Tanh:
    r = std::tanh(x);
    return true;
  case Op::Rsqrt:
    r = 1.0 / std::sqrt(x);
    return true;
  default:
    return false;
  }
}

/// One f32 (or f64) lane.
bool floatLane(const Instruction &I, const uint64_t *s, uint64_t &out,
               const char *&why) {
  bool f64 = I.type == Ty::F64;
  bool ftz = I.has(FTZ) && !f64;
  auto in = [&](uint64_t v) -> double {
    if (f64)
      return bitsToF64(v);
    float f = bitsToF32(uint32_t(v));
    return ftz ? flushF32(f) : f;
  };
  double a = in(s[0]), b = in(s[1]), c = in(s[2]), r;
  Rnd rnd = I.rnd;
  switch (I.op) {
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Fma:
  case Op::Mad:
    if (I.op == Op::Mad && rnd == Rnd::None) {
      why = "mad.f32/f64 needs a rounding modifier";
      return false;
    }
    r = f64 ? f64Op(I.op, a, b, c, rnd) : f32Op(I.op, a, b, c, rnd);
    break;
  case Op::Div:
    if (I.has(APPROX))
      r = f64 ? a * (1.0 / b) : double(float(a) * (1.0f / float(b)));
    else
      r = f64 ? f64Op(Op::Div, a, b, 0, rnd) : f32Op(Op::Div, a, b, 0, rnd);
    break;
  case Op::Rcp:
  case Op::Sqrt:
    r = f64 ? f64Op(I.op, a, 0, 0, rnd) : f32Op(I.op, a, 0, 0, rnd);
    break;
  case Op::Abs:
  case Op::Neg: {
    // Sign-bit operations; NaN stays NaN.
    uint64_t sign = f64 ? (uint64_t(1) << 63) : 0x80000000u;
    uint64_t bits = f64 ? f64ToBits(a) : f32ToBits(float(a));
    bits = I.op == Op::Abs ? (bits & ~sign) : (bits ^ sign);
    out = bits;
    if (ftz && std::fpclassify(bitsToF32(uint32_t(bits))) == FP_SUBNORMAL)
      out &= sign;
    return true;
  }
  case Op::Min:
  case Op::Max:
    r = minMax(I.op == Op::Min, a, b, I.has(NANMOD));
    break;
  case Op::Copysign: {
    // copysign d, a, b: b's magnitude with a's sign (NaNs included).
    uint64_t sign = f64 ? (uint64_t(1) << 63) : 0x80000000u;
    out = (s[1] & ~sign) | (s[0] & sign);
    return true;
  }
  default:
    if (!approxOp(I.op, a, r)) {
      why = "unsupported floating-point operation";
      return false;
    }
    if (!f64)
      r = float(r);
    break;
  }
  if (I.has(SAT))
    r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
  if (f64) {
    out = std::isnan(r) ? 0x7FFFFFFFFFFFFFFFull : f64ToBits(r);
    return true;
  }
  float f = float(r);
  if (ftz)
    f = flushF32(f);
  out = std::isnan(f) ? 0x7FFFFFFFu : f32ToBits(f);
  return true;
}

/// f16/bf16 lanes, one or two halves per register.
bool halfLane(const Instruction &I, const uint64_t *s, uint64_t &out,
              const char *&why) {
  FloatFormat fmt = (I.type == Ty::BF16 || I.type == Ty::BF16x2)
                        ? FloatFormat::BF16
                        : FloatFormat::F16;
  unsigned halves = (I.type == Ty::F16x2 || I.type == Ty::BF16x2) ? 2 : 1;
  out = 0;
  for (unsigned h = 0; h < halves; ++h) {
    auto in = [&](uint64_t v) {
      double d = decodeFormat(uint32_t(v >> (16 * h)) & 0xFFFF, fmt);
      if (I.has(FTZ) &&
          std::fabs(d) < (fmt == FloatFormat::F16 ? 0x1p-14 : 0x1p-126))
        d = std::copysign(0.0, d);
      return d;
    };
    double a = in(s[0]), b = in(s[1]), c = in(s[2]), r;
    uint32_t bits;
    switch (I.op) {
    case Op::Add:
      r = a + b;
      break;
    case Op::Sub:
      r = a - b;
      break;
    case Op::Mul:
      r = a * b;
      break;
    case Op::Fma:
      r = std::fma(a, b, c);
      break;
    case Op::Min:
    case Op::Max:
      r = minMax(I.op == Op::Min, a, b, I.has(NANMOD));
      break;
    case Op::Neg:
    case Op::Abs: {
      uint32_t v = uint32_t(s[0] >> (16 * h)) & 0xFFFF;
      bits = I.op == Op::Neg ? v ^ 0x8000 : v & 0x7FFF;
      out |= uint64_t(bits) << (16 * h);
      continue;
    }
    default:
      if (!approxOp(I.op, a, r)) {
        why = "unsupported f16/bf16 operation";
        return false;
      }
      break;
    }
    if (I.has(RELU) && !std::isnan(r) && r < 0)
      r = 0;
    if (I.has(SAT))
      r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
    bits = roundToFormat(r, fmt, Rnd::RN, false);
    if (I.has(FTZ) && (bits & 0x7C00) == 0 && fmt == FloatFormat::F16)
      bits &= 0x8000;
    out |= uint64_t(bits) << (16 * h);
  }
  return true;
}

bool intLane(const Instruction &I, const uint64_t *s, uint64_t &out,
             const char *&why) {
  unsigned bits = byteSize(I.type) * 8;
  bool sgn = isSigned(I.type);
  uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  auto sx = [&](uint64_t v) { return int64_t(signExtend(v, bits)); };
  uint64_t a = s[0] & mask, b = s[1] & mask;
  auto product = [&](bool wideOrHi) -> __int128 {
    if (sgn)
      return __int128(sx(a)) * __int128(sx(b));
    return __int128(static_cast<unsigned __int128>(a) * b);
  };
  switch (I.op) {
  case Op::Add:
  case Op::Sub: {
    if (I.has(SAT)) {
      if (!sgn || bits != 32) {
        why = ".sat needs .s32";
        return false;
      }
      int64_t r = I.op == Op::Add ? sx(a) + sx(b) : sx(a) - sx(b);
      out = uint32_t(int32_t(
          std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, r))));
      return true;
    }
    out = (I.op == Op::Add ? a + b : a - b) & mask;
    return true;
  }
  case Op::Mul:
  case Op::Mad: {
    __int128 p = product(true);
    uint64_t c = s[2];
    if (I.has(WIDE)) {
      if (bits > 32) {
        why = ".wide needs a 16- or 32-bit type";
        return false;
      }
      uint64_t m2 = bits == 32 ? ~uint64_t(0) : 0xFFFFFFFFu;
      out = (uint64_t(p) + (I.op == Op::Mad ? c : 0)) & m2;
      return true;
    }
    uint64_t r = I.has(HI) ? uint64_t(p >> bits) : uint64_t(p);
    out = (r + (I.op == Op::Mad ? c : 0)) & mask;
    return true;
  }
  case Op::Div:
  case Op::Rem:
    if (b == 0) {
      why = "integer division by zero";
      return false;
    }
    if (sgn) {
      int64_t x = sx(a), y = sx(b);
      if (y == -1)
        out = I.op == Op::Div ? uint64_t(-x) : 0; // no UB at INT_MIN
      else
        out = uint64_t(I.op == Op::Div ? x / y : x % y);
    } else {
      out = I.op == Op::Div ? a / b : a % b;
    }
    out &= mask;
    return true;
  case Op::Abs:
    out = uint64_t(sx(a) < 0 ? -sx(a) : sx(a)) & mask;
    return true;
  case Op::Neg:
    out = (0 - a) & mask;
    return true;
  case Op::Min:
  case Op::Max: {
    bool less = sgn ? sx(a) < sx(b) : a < b;
    out = ((I.op == Op::Min) == less) ? a : b;
    return true;
  }
  case Op::And:
    out = a & b;
    return true;
  case Op::Or:
    out = a | b;
    return true;
  case Op::Xor:
    out = a ^ b;
    return true;
  case Op::Not:
    out = ~a & mask;
    return true;
  case Op::Shl: {
    uint64_t n = uint32_t(s[1]);
    out = n >= bits ? 0 : (a << n) & mask;
    return true;
  }
  case Op::Shr: {
    uint64_t n = std::min<uint64_t>(uint32_t(s[1]), bits);
    if (sgn)
      out = uint64_t(n >= bits ? (sx(a) < 0 ? -1 : 0) : sx(a) >> n) & mask;
    else
      out = n >= bits ? 0 : a >> n;
    return true;
  }
  case Op::Shf: {
    uint32_t lo = uint32_t(s[0]), hi = uint32_t(s[1]), n = uint32_t(s[2]);
    n = I.has(SHF_CLAMP) ? std::min(n, 32u) : (n & 31);
    uint64_t v = (uint64_t(hi) << 32) | lo;
    out = I.has(SHF_LEFT) ? uint32_t((v << n) >> 32) : uint32_t(v >> n);
    return true;
  }
  case Op::Bfe: {
    unsigned pos = s[1] & 0xFF, len = s[2] & 0xFF;
    uint64_t r = 0;
    bool sbit = false;
    if (len && pos < bits)
      sbit = sgn && ((a >> std::min(pos + len - 1, bits - 1)) & 1);
    for (unsigned i = 0; i < bits; ++i) {
      bool bit = (i < len && pos + i < bits) ? ((a >> (pos + i)) & 1)
                                             : (sgn && len ? sbit : 0);
      r |= uint64_t(bit) << i;
    }
    out = r & mask;
    return true;
  }
  case Op::Bfi: {
    unsigned pos = s[2] & 0xFF, len = s[3] & 0xFF;
    uint64_t r = b;
    for (unsigned i = 0; i < len && pos + i < bits; ++i)
      r = (r & ~(uint64_t(1) << (pos + i))) | (((a >> i) & 1) << (pos + i));
    out = r & mask;
    return true;
  }
  case Op::Prmt: {
    uint64_t bytes = (uint64_t(uint32_t(s[1])) << 32) | uint32_t(s[0]);
    uint32_t sel = uint32_t(s[2]), r = 0;
    for (int i = 0; i < 4; ++i) {
      unsigned nib = (sel >> (4 * i)) & 0xF;
      uint8_t byte = uint8_t(bytes >> (8 * (nib & 7)));
      if (nib & 8)
        byte = (byte & 0x80) ? 0xFF : 0;
      r |= uint32_t(byte) << (8 * i);
    }
    out = r;
    return true;
  }
  case Op::Popc:
    out = llvm::popcount(a);
    return true;
  case Op::Clz:
    out = bits == 64 ? llvm::countl_zero(a) : llvm::countl_zero(uint32_t(a));
    return true;
  case Op::Brev: {
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; ++i)
      r |= ((a >> i) & 1) << (bits - 1 - i);
    out = r;
    return true;
  }
  case Op::Lop3: {
    uint32_t x = uint32_t(s[0]), y = uint32_t(s[1]), z = uint32_t(s[2]);
    uint8_t lut = uint8_t(s[3]);
    uint32_t r = 0;
    for (int i = 0; i < 32; ++i) {
      unsigned idx =
          (((x >> i) & 1) << 2) | (((y >> i) & 1) << 1) | ((z >> i) & 1);
      r |= uint32_t((lut >> idx) & 1) << i;
    }
    out = r;
    return true;
  }
  default:
    why = "unsupported integer operation";
    return false;
  }
}

bool compare(const Instruction &I, uint64_t x, uint64_t y) {
  Ty t = I.type;
  if (isFloat(t)) {
    double a, b;
    if (t == Ty::F64) {
      a = bitsToF64(x);
      b = bitsToF64(y);
    } else if (t == Ty::F32) {
      a = bitsToF32(uint32_t(x));
      b = bitsToF32(uint32_t(y));
      if (I.has(FTZ)) {
        a = flushF32(float(a));
        b = flushF32(float(b));
      }
    } else {
      FloatFormat f = t == Ty::BF16 ? FloatFormat::BF16 : FloatFormat::F16;
      a = decodeFormat(uint32_t(x) & 0xFFFF, f);
      b = decodeFormat(uint32_t(y) & 0xFFFF, f);
    }
    bool un = std::isnan(a) || std::isnan(b);
    switch (I.cmp) {
    case Cmp::EQ:
      return !un && a == b;
    case Cmp::NE:
      return !un && a != b;
    case Cmp::LT:
      return !un && a < b;
    case Cmp::LE:
      return !un && a <= b;
    case Cmp::GT:
      return !un && a > b;
    case Cmp::GE:
      return !un && a >= b;
    case Cmp::EQU:
      return un || a == b;
    case Cmp::NEU:
      return un || a != b;
    case Cmp::LTU:
      return un || a < b;
    case Cmp::LEU:
      return un || a <= b;
    case Cmp::GTU:
      return un || a > b;
    case Cmp::GEU:
      return un || a >= b;
    case Cmp::NUM:
      return !un;
    case Cmp::NAN_:
      return un;
    default:
      return false;
    }
  }
  unsigned bits = byteSize(t) * 8;
  uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  uint64_t ua = x & mask, ub = y & mask;
  int64_t sa = signExtend(ua, bits), sb = signExtend(ub, bits);
  bool s = isSigned(t);
  switch (I.cmp) {
  case Cmp::EQ:
    return ua == ub;
  case Cmp::NE:
    return ua != ub;
  case Cmp::LT:
    return s ? sa < sb : ua < ub;
  case Cmp::LE:
    return s ? sa <= sb : ua <= ub;
  case Cmp::GT:
    return s ? sa > sb : ua > ub;
  case Cmp::GE:
    return s ? sa >= sb : ua >= ub;
  case Cmp::LO:
    return ua < ub;
  case Cmp::LS:
    return ua <= ub;
  case Cmp::HI:
    return ua > ub;
  case Cmp::HS:
    return ua >= ub;
  default:
    return false;
  }
}

bool combine(BoolOp op, bool t, bool c) {
  switch (op) {
  case BoolOp::And:
    return t && c;
  case BoolOp::Or:
    return t || c;
  case BoolOp::Xor:
    return t != c;
  default:
    return t;
  }
}

} // namespace

bool Exec::execScalar(const Instruction &I, Warp &w, uint32_t mask) {
  const char *why = nullptr;
  bool ok = true;
  auto lanes = [&](auto f) {
    for (uint32_t m = mask; m && ok; m &= m - 1)
      f(unsigned(llvm::countr_zero(m)));
  };
  switch (I.op) {
  case Op::Setp:
    if ((I.boolOp != BoolOp::None) != (I.ops.size() == 4))
      return fail(I, w, -1,
                  "setp with a boolean operation needs a third predicate");
    lanes([&](unsigned l) {
      bool t = compare(I, read(I.ops[1], w, l), read(I.ops[2], w, l));
      bool c = I.ops.size() == 4 ? (read(I.ops[3], w, l) & 1) : false;
      setReg(I.ops[0].reg, w, l, combine(I.boolOp, t, c));
      if (I.ops[0].kind == Operand::PredPair)
        setReg(I.ops[0].reg2, w, l, combine(I.boolOp, !t, c));
    });
    return true;
  case Op::Selp:
    lanes([&](unsigned l) {
      bool c = read(I.ops[3], w, l) & 1;
      write(I.ops[0], w, l, read(I.ops[c ? 1 : 2], w, l));
    });
    return true;
  case Op::Mov:
    return execMov(*this, I, w, mask);
  case Op::Cvt:
    lanes([&](unsigned l) {
      uint64_t a = read(I.ops[1], w, l);
      uint64_t b = I.ops.size() > 2 ? read(I.ops[2], w, l) : 0;
      uint64_t r;
      if (!convert(I, a, b, r, why)) {
        ok = fail(I, w, l, why);
        return;
      }
      write(I.ops[0], w, l, r);
    });
    return ok;
  default:
    break;
  }
  unsigned nsrc = I.ops.size() - 1;
  bool half = I.type == Ty::F16 || I.type == Ty::F16x2 || I.type == Ty::BF16 ||
              I.type == Ty::BF16x2;
  lanes([&](unsigned l) {
    uint64_t s[4] = {0, 0, 0, 0}, r = 0;
    for (unsigned i = 0; i < nsrc && i < 4; ++i)
      s[i] = read(I.ops[i + 1], w, l);
    bool good;
    if (I.type == Ty::Pred) {
      bool a = s[0] & 1, b = s[1] & 1;
      good = true;
      switch (I.op) {
      case Op::And:
        r = a && b;
        break;
      case Op::Or:
        r = a || b;
        break;
      case Op::Xor:
        r = a != b;
        break;
      case Op::Not:
        r = !a;
        break;
      default:
        good = false;
        why = "unsupported .pred operation";
        break;
      }
    } else if (half) {
      good = halfLane(I, s, r, why);
    } else if (isFloat(I.type)) {
      good = floatLane(I, s, r, why);
    } else {
      good = intLane(I, s, r, why);
    }
    if (!good) {
      ok = fail(I, w, l, why);
      return;
    }
    write(I.ops[0], w, l, r);
  });
  return ok;
}
