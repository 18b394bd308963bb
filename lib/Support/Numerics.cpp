//===- Numerics.cpp - number formats, casts and linear quantization -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Support/Numerics.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tessera;
using namespace tessera::numerics;

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

uint32_t signBit(const Format &f) {
  return 1u << (f.exponentBits + f.mantissaBits);
}

uint32_t allOnesExponent(const Format &f) {
  return ((1u << f.exponentBits) - 1) << f.mantissaBits;
}

/// The magnitude bits of the largest finite value.
uint32_t maxFiniteBits(const Format &f) {
  uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  if (f.ieeeSpecials)
    return (allOnesExponent(f) - (1u << f.mantissaBits)) | mantissaMask;
  return allOnesExponent(f) | (mantissaMask - 1);
}

/// The canonical quiet NaN (E4M3FN: its only NaN) without sign.
uint32_t nanBits(const Format &f) {
  if (!f.ieeeSpecials)
    return allOnesExponent(f) | ((1u << f.mantissaBits) - 1);
  return allOnesExponent(f) | 1u << (f.mantissaBits - 1);
}

/// The result of an infinity or of a rounding past the largest finite
/// value, without sign.
uint32_t overflowBits(const Format &f, Overflow overflow) {
  if (overflow == Overflow::Saturate)
    return maxFiniteBits(f);
  return f.ieeeSpecials ? allOnesExponent(f) : nanBits(f);
}

uint32_t encode(const Format &f, float value, Overflow overflow) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint32_t sign = bits >> 31 ? signBit(f) : 0;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) // NaN
    return sign | nanBits(f);
  if (magnitude == 0x7F800000u) // infinity
    return sign | overflowBits(f, overflow);
  if (magnitude == 0)
    return sign;
  // value = significand * 2^(exponent - 150), as fp32 stores it.
  int biased = static_cast<int>(magnitude >> 23);
  uint32_t significand = magnitude & 0x7FFFFFu;
  int exponent;
  if (biased == 0) {
    exponent = 1 - 150;
  } else {
    significand |= 0x800000u;
    exponent = biased - 150;
  }
  // The binade of the value (its leading bit's weight), no lower than the
  // format's normal minimum: its quantum is 2^(binade - mantissaBits).
  int leading = llvm::Log2_32(significand) + exponent;
  int minNormal = 1 - f.bias;
  int binade = std::max(leading, minNormal);
  int shift = binade - f.mantissaBits - exponent; // >= 13 for every format
  // The value in quanta, rounded to nearest, ties to even.
  uint64_t quanta = 0;
  if (shift < 26) { // else the value is below half the smallest quantum
    uint64_t wide = significand;
    quanta = wide >> shift;
    uint64_t remainder = wide & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (remainder > half || (remainder == half && (quanta & 1)))
      ++quanta;
  }
  // quanta is (1 << mantissaBits) + mantissa for a normal result (up to
  // 2 << mantissaBits when the rounding carries into the next binade), the
  // subnormal encoding itself in the lowest binade; either way the
  // encoding is (biased exponent - 1) << mantissaBits, plus quanta.
  uint64_t encoded =
      (static_cast<uint64_t>(binade + f.bias - 1) << f.mantissaBits) + quanta;
  if (encoded > maxFiniteBits(f))
    return sign | overflowBits(f, overflow);
  return sign | static_cast<uint32_t>(encoded);
}

float decode(const Format &f, uint32_t bits) {
  uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  uint32_t exponentField =
      (bits >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  uint32_t mantissa = bits & mantissaMask;
  bool negative = bits & signBit(f);
  uint32_t allOnes = (1u << f.exponentBits) - 1;
  float magnitude;
  if (exponentField == allOnes && f.ieeeSpecials)
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN()
                         : std::numeric_limits<float>::infinity();
  else if (exponentField == allOnes && mantissa == mantissaMask)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponentField == 0) // exact: every subnormal is an fp32 value
    magnitude =
        std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mantissaBits);
  else
    magnitude = llvm::bit_cast<float>((exponentField - f.bias + 127) << 23 |
                                      mantissa << (23 - f.mantissaBits));
  return negative ? -magnitude : magnitude;
}

} // namespace

uint16_t tessera::numerics::toBF16(float value, Overflow overflow) {
  return static_cast<uint16_t>(encode(kBF16, value, overflow));
}
float tessera::numerics::fromBF16(uint16_t bits) { return decode(kBF16, bits); }
uint16_t tessera::numerics::toF16(float value, Overflow overflow) {
  return static_cast<uint16_t>(encode(kF16, value, overflow));
}
float tessera::numerics::fromF16(uint16_t bits) { return decode(kF16, bits); }
uint8_t tessera::numerics::toF8E4M3FN(float value, Overflow overflow) {
  return static_cast<uint8_t>(encode(kE4M3FN, value, overflow));
}
float tessera::numerics::fromF8E4M3FN(uint8_t bits) {
  return decode(kE4M3FN, bits);
}
uint8_t tessera::numerics::toF8E5M2(float value, Overflow overflow) {
  return static_cast<uint8_t>(encode(kE5M2, value, overflow));
}
float tessera::numerics::fromF8E5M2(uint8_t bits) {
  return decode(kE5M2, bits);
}

float tessera::numerics::largestFinite(ElementType type) {
  switch (type) {
  case ElementType::BF16:
    return decode(kBF16, maxFiniteBits(kBF16));
  case ElementType::F16:
    return decode(kF16, maxFiniteBits(kF16));
  case ElementType::F8E4M3FN:
    return decode(kE4M3FN, maxFiniteBits(kE4M3FN));
  case ElementType::F8E5M2:
    return decode(kE5M2, maxFiniteBits(kE5M2));
  default:
    return std::numeric_limits<float>::max();
  }
}

double tessera::numerics::roundHalfToEven(double x) {
  double rounded = std::round(x); // ties away from zero
  if (std::fabs(x - std::trunc(x)) == 0.5)
    rounded = 2.0 * std::round(x / 2.0); // the even neighbor
  return rounded;
}

float tessera::numerics::roundTo(ElementType type, float value,
                                 Overflow overflow) {
  switch (type) {
  case ElementType::BF16:
    return fromBF16(toBF16(value));
  case ElementType::F16:
    return fromF16(toF16(value));
  case ElementType::F8E4M3FN:
    return fromF8E4M3FN(toF8E4M3FN(value, overflow));
  case ElementType::F8E5M2:
    return fromF8E5M2(toF8E5M2(value, overflow));
  case ElementType::I8:
    if (std::isnan(value))
      return 0;
    return static_cast<float>(
        std::clamp(roundHalfToEven(value), -128.0, 127.0));
  default:
    return value;
  }
}

int8_t tessera::numerics::requantize(int32_t accumulator, float scale,
                                     int32_t zeroPoint) {
  // In fp32, as a vector unit computes it: the accumulator converted (ties
  // to even), one fp32 product, then rounded half to even.
  volatile float scaled = static_cast<float>(accumulator) * scale;
  double rounded = std::isnan(scaled) ? 0.0 : roundHalfToEven(scaled);
  return static_cast<int8_t>(std::clamp(rounded + zeroPoint, -128.0, 127.0));
}

//===----------------------------------------------------------------------===//
// Linear quantization
//===----------------------------------------------------------------------===//

namespace {

/// Maps a flat element index to the index of its scale and zero point.
struct ParamIndexer {
  int64_t inner = 1;   // elements per step along the axis
  int64_t axisDim = 1; // shape[axis]
  int64_t blocks = 1;  // parameter rows along the axis (blocked)
  int64_t blockSize = 0;
  enum { PerTensor, PerAxis, Blocked } kind = PerTensor;

  int64_t operator()(int64_t flat) const {
    if (kind == PerTensor)
      return 0;
    int64_t along = flat / inner % axisDim;
    if (kind == PerAxis)
      return along;
    int64_t outer = flat / (inner * axisDim);
    return (outer * blocks + along / blockSize) * inner + flat % inner;
  }
};

llvm::Error invalid(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::pair<int32_t, int32_t> integerRange(QuantizedType type) {
  if (type == QuantizedType::I8)
    return {-128, 127};
  return {0, 255};
}

bool isFp8(QuantizedType type) {
  return type == QuantizedType::F8E4M3FN || type == QuantizedType::F8E5M2;
}

/// Checks `params` against `shape`, `type` and the element count of both
/// tensors, and says how to find each element's parameters.
llvm::Expected<ParamIndexer> makeIndexer(llvm::ArrayRef<int64_t> shape,
                                         const QuantizationParams &params,
                                         QuantizedType type, size_t xSize,
                                         size_t ySize) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalid("a negative dimension in the shape");
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return invalid("the shape's element count overflows");
    count *= d;
  }
  if (static_cast<uint64_t>(count) != xSize ||
      static_cast<uint64_t>(count) != ySize)
    return invalid("the tensors hold " + llvm::Twine(xSize) + " and " +
                   llvm::Twine(ySize) + " elements, the shape " +
                   llvm::Twine(count));
  if (params.scale.empty())
    return invalid("no scale");
  if (!params.zeroPoint.empty() &&
      params.zeroPoint.size() != params.scale.size())
    return invalid("the zero point has " +
                   llvm::Twine(params.zeroPoint.size()) +
                   " elements, the scale " + llvm::Twine(params.scale.size()));
  for (int32_t zp : params.zeroPoint) {
    if (isFp8(type)) {
      if (zp != 0)
        return invalid("an fp8 quantization takes no zero point");
      continue;
    }
    auto [lo, hi] = integerRange(type);
    if (zp < lo || zp > hi)
      return invalid("zero point " + llvm::Twine(zp) +
                     " is out of the type's range");
  }

  ParamIndexer indexer;
  if (params.blockSize < 0)
    return invalid("a negative block size");
  bool perTensor = params.blockSize == 0 && params.scale.size() == 1;
  if (perTensor)
    return indexer;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = params.axis < 0 ? params.axis + rank : params.axis;
  if (axis < 0 || axis >= rank)
    return invalid("axis " + llvm::Twine(params.axis) +
                   " is out of range for rank " + llvm::Twine(rank));
  indexer.axisDim = shape[axis];
  for (int64_t d : shape.drop_front(axis + 1))
    indexer.inner *= d;
  uint64_t expected;
  if (params.blockSize == 0) {
    indexer.kind = ParamIndexer::PerAxis;
    expected = static_cast<uint64_t>(indexer.axisDim);
  } else {
    indexer.kind = ParamIndexer::Blocked;
    indexer.blockSize = params.blockSize;
    indexer.blocks = llvm::divideCeil(indexer.axisDim, params.blockSize);
    expected = indexer.axisDim == 0 ? 0
                                    : static_cast<uint64_t>(count) /
                                          indexer.axisDim * indexer.blocks;
  }
  if (params.scale.size() != expected)
    return invalid("the scale has " + llvm::Twine(params.scale.size()) +
                   " elements, the " +
                   (params.blockSize ? "blocked" : "per-axis") +
                   " quantization needs " + llvm::Twine(expected));
  return indexer;
}

} // namespace

llvm::Error tessera::numerics::quantizeLinear(llvm::ArrayRef<float> x,
                                              llvm::ArrayRef<int64_t> shape,
                                              const QuantizationParams &params,
                                              QuantizedType type,
                                              llvm::MutableArrayRef<uint8_t> y,
                                              Overflow overflow) {
  auto indexer = makeIndexer(shape, params, type, x.size(), y.size());
  if (!indexer)
    return indexer.takeError();
  auto [lo, hi] = integerRange(type);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t p = (*indexer)(static_cast<int64_t>(i));
    volatile float quotient = x[i] / params.scale[p]; // in fp32, as ONNX
    switch (type) {
    case QuantizedType::F8E4M3FN:
      y[i] = toF8E4M3FN(quotient, overflow);
      continue;
    case QuantizedType::F8E5M2:
      y[i] = toF8E5M2(quotient, overflow);
      continue;
    case QuantizedType::I8:
    case QuantizedType::U8:
      break;
    }
    int32_t zp = params.zeroPoint.empty() ? 0 : params.zeroPoint[p];
    double rounded = std::isnan(quotient) ? 0.0 : roundHalfToEven(quotient);
    int32_t q = static_cast<int32_t>(std::clamp(
        rounded + zp, static_cast<double>(lo), static_cast<double>(hi)));
    y[i] = static_cast<uint8_t>(q); // i8: two's complement
  }
  return llvm::Error::success();
}

llvm::Error tessera::numerics::dequantizeLinear(
    llvm::ArrayRef<uint8_t> y, llvm::ArrayRef<int64_t> shape,
    const QuantizationParams &params, QuantizedType type,
    llvm::MutableArrayRef<float> x) {
  auto indexer = makeIndexer(shape, params, type, x.size(), y.size());
  if (!indexer)
    return indexer.takeError();
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t p = (*indexer)(static_cast<int64_t>(i));
    float value;
    switch (type) {
    case QuantizedType::F8E4M3FN:
      value = fromF8E4M3FN(y[i]);
      break;
    case QuantizedType::F8E5M2:
      value = fromF8E5M2(y[i]);
      break;
    case QuantizedType::I8:
    case QuantizedType::U8: {
      int32_t q = type == QuantizedType::I8 ? static_cast<int8_t>(y[i]) : y[i];
      int32_t zp = params.zeroPoint.empty() ? 0 : params.zeroPoint[p];
      value = static_cast<float>(q - zp); // exact: |q - zp| <= 255
      break;
    }
    }
    x[i] = value * params.scale[p];
  }
  return llvm::Error::success();
}
