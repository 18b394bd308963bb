//===- Numerics.cpp - the accelerator's bit-exact number formats ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace tessera::sim;

namespace {

/// A binary floating-point format narrower than fp32.
struct Format {
  int exponentBits, mantissaBits, bias;
  /// false: the all-ones exponent is an ordinary binade, and only the
  /// all-ones pattern is NaN (E4M3FN).
  bool ieeeSpecials;
};

constexpr Format kBF16{8, 7, 127, true};
constexpr Format kF16{5, 10, 15, true};
constexpr Format kE4M3FN{4, 3, 7, false};
constexpr Format kE5M2{5, 2, 15, true};

int maxExponent(const Format &f) {
  int field = (1 << f.exponentBits) - (f.ieeeSpecials ? 2 : 1);
  return field - f.bias;
}

double maxFinite(const Format &f) {
  // E4M3FN: the all-ones mantissa of the top binade is NaN.
  int mantissa = (1 << f.mantissaBits) - (f.ieeeSpecials ? 1 : 2);
  return std::ldexp(1.0 + mantissa / double(1 << f.mantissaBits),
                    maxExponent(f));
}

uint32_t nanBits(const Format &f, bool negative) {
  uint32_t sign = negative ? 1u << (f.exponentBits + f.mantissaBits) : 0;
  uint32_t exponent = ((1u << f.exponentBits) - 1) << f.mantissaBits;
  uint32_t mantissa =
      f.ieeeSpecials ? 1u << (f.mantissaBits - 1) : (1u << f.mantissaBits) - 1;
  return sign | exponent | mantissa;
}

/// The bits of |value| (finite, exactly representable) in `f`.
uint32_t encodeMagnitude(const Format &f, double magnitude) {
  int minExponent = 1 - f.bias;
  if (magnitude < std::ldexp(1.0, minExponent)) // subnormal or zero
    return static_cast<uint32_t>(
        std::ldexp(magnitude, f.mantissaBits - minExponent));
  int exponent;
  double fraction = std::frexp(magnitude, &exponent); // [0.5, 1)
  exponent -= 1;
  uint32_t mantissa =
      static_cast<uint32_t>(std::ldexp(fraction * 2.0 - 1.0, f.mantissaBits));
  return static_cast<uint32_t>(exponent + f.bias) << f.mantissaBits | mantissa;
}

uint32_t encode(const Format &f, float value, Overflow overflow) {
  bool negative = std::signbit(value);
  uint32_t sign = negative ? 1u << (f.exponentBits + f.mantissaBits) : 0;
  if (std::isnan(value))
    return nanBits(f, negative);
  double magnitude = std::fabs(static_cast<double>(value));
  double top = maxFinite(f);
  if (!std::isinf(value) && magnitude != 0) {
    // Round to the quantum of value's binade (or of the subnormals), ties
    // to even; a result past the top binade is an overflow.
    int minExponent = 1 - f.bias;
    int exponent;
    std::frexp(magnitude, &exponent);
    exponent = std::max(exponent - 1, minExponent);
    double quantum = std::ldexp(1.0, exponent - f.mantissaBits);
    magnitude = std::nearbyint(magnitude / quantum) * quantum;
  }
  if (std::isinf(value) || magnitude > top) {
    if (overflow == Overflow::Saturate)
      return sign | encodeMagnitude(f, top);
    if (!f.ieeeSpecials)
      return nanBits(f, negative);
    return sign | ((1u << f.exponentBits) - 1) << f.mantissaBits;
  }
  return sign | encodeMagnitude(f, magnitude);
}

float decode(const Format &f, uint32_t bits) {
  uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  uint32_t exponentField =
      (bits >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  uint32_t mantissa = bits & mantissaMask;
  bool negative = bits >> (f.exponentBits + f.mantissaBits) & 1;
  double magnitude;
  uint32_t allOnes = (1u << f.exponentBits) - 1;
  if (f.ieeeSpecials && exponentField == allOnes) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (!f.ieeeSpecials && exponentField == allOnes &&
             mantissa == mantissaMask) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponentField == 0) {
    magnitude =
        std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissaBits);
  } else {
    magnitude = std::ldexp(1.0 + mantissa / double(1u << f.mantissaBits),
                           static_cast<int>(exponentField) - f.bias);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

} // namespace

uint16_t tessera::sim::toBF16(float value) {
  return static_cast<uint16_t>(encode(kBF16, value, Overflow::Ieee));
}
float tessera::sim::fromBF16(uint16_t bits) { return decode(kBF16, bits); }
uint16_t tessera::sim::toF16(float value) {
  return static_cast<uint16_t>(encode(kF16, value, Overflow::Ieee));
}
float tessera::sim::fromF16(uint16_t bits) { return decode(kF16, bits); }
uint8_t tessera::sim::toF8E4M3FN(float value, Overflow overflow) {
  return static_cast<uint8_t>(encode(kE4M3FN, value, overflow));
}
float tessera::sim::fromF8E4M3FN(uint8_t bits) { return decode(kE4M3FN, bits); }
uint8_t tessera::sim::toF8E5M2(float value, Overflow overflow) {
  return static_cast<uint8_t>(encode(kE5M2, value, overflow));
}
float tessera::sim::fromF8E5M2(uint8_t bits) { return decode(kE5M2, bits); }

float tessera::sim::roundTo(NumberFormat format, float value,
                            Overflow overflow) {
  switch (format) {
  case NumberFormat::F32:
    return value;
  case NumberFormat::BF16:
    return fromBF16(toBF16(value));
  case NumberFormat::F16:
    return fromF16(toF16(value));
  case NumberFormat::F8E4M3FN:
    return fromF8E4M3FN(toF8E4M3FN(value, overflow));
  case NumberFormat::F8E5M2:
    return fromF8E5M2(toF8E5M2(value, overflow));
  case NumberFormat::I8:
    if (std::isnan(value))
      return 0;
    return static_cast<float>(
        std::fmax(-128.0, std::fmin(127.0, std::nearbyint(value))));
  }
  return value;
}

float tessera::sim::dot(const float *a, const float *b, size_t count,
                        float accumulator) {
  for (size_t i = 0; i < count; ++i) {
    // Exact product (narrow operands), one fp32 rounding per addition; no
    // fused multiply-add contraction changes the order.
    volatile float product = a[i] * b[i];
    accumulator = accumulator + product;
  }
  return accumulator;
}

int32_t tessera::sim::dotI8(const int8_t *a, const int8_t *b, size_t count,
                            int32_t accumulator) {
  uint32_t sum = static_cast<uint32_t>(accumulator);
  for (size_t i = 0; i < count; ++i)
    sum += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * b[i]);
  int32_t result;
  std::memcpy(&result, &sum, sizeof(result));
  return result;
}

int8_t tessera::sim::requantize(int32_t accumulator, float scale) {
  // In fp32, as the vector unit computes it: the accumulator converted
  // (ties to even), one fp32 product, then rounded half to even.
  volatile float scaled = static_cast<float>(accumulator) * scale;
  if (std::isnan(scaled))
    return 0;
  float rounded = std::nearbyint(scaled);
  return static_cast<int8_t>(std::fmax(-128.0f, std::fmin(127.0f, rounded)));
}

int32_t tessera::sim::roundingShiftRight(int32_t value, unsigned shift) {
  if (shift == 0)
    return value;
  if (shift >= 32)
    return 0;
  int64_t wide = value;
  int64_t quotient = wide >> shift; // floor
  // A product, not quotient << shift: shifting a negative value left is
  // undefined in C++17 (found by the sanitizer suite).
  int64_t remainder = wide - quotient * (int64_t(1) << shift);
  int64_t half = int64_t(1) << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1)))
    ++quotient;
  return static_cast<int32_t>(quotient);
}
