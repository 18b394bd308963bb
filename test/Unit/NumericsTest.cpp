//===- NumericsTest.cpp - the numerics library against APFloat and ONNX ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every cast is compared with llvm::APFloat (ties to even), saturation
// applied on top of APFloat's result. The default run sweeps every high
// half of the fp32 bits with a set of rounding-critical low halves, plus a
// prime stride, in a few seconds; `TesseraNumericsTests --exhaustive`
// adds a test of all 2^32 fp32 patterns on every core.
//
//===----------------------------------------------------------------------===//
#include "tessera/Support/Numerics.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tessera;
using namespace tessera::numerics;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Casts against APFloat
//===----------------------------------------------------------------------===//

struct CastFormat {
  const char *name;
  const llvm::fltSemantics &(*semantics)();
  uint32_t (*encode)(float, Overflow);
  float (*decode)(uint32_t);
};

const CastFormat kFormats[] = {
    {"bf16", &llvm::APFloat::BFloat,
     [](float v, Overflow o) -> uint32_t { return toBF16(v, o); },
     [](uint32_t b) { return fromBF16(static_cast<uint16_t>(b)); }},
    {"f16", &llvm::APFloat::IEEEhalf,
     [](float v, Overflow o) -> uint32_t { return toF16(v, o); },
     [](uint32_t b) { return fromF16(static_cast<uint16_t>(b)); }},
    {"f8E4M3FN", &llvm::APFloat::Float8E4M3FN,
     [](float v, Overflow o) -> uint32_t { return toF8E4M3FN(v, o); },
     [](uint32_t b) { return fromF8E4M3FN(static_cast<uint8_t>(b)); }},
    {"f8E5M2", &llvm::APFloat::Float8E5M2,
     [](float v, Overflow o) -> uint32_t { return toF8E5M2(v, o); },
     [](uint32_t b) { return fromF8E5M2(static_cast<uint8_t>(b)); }},
};

constexpr Overflow kModes[] = {Overflow::Ieee, Overflow::Saturate};

const char *modeName(Overflow overflow) {
  return overflow == Overflow::Saturate ? "saturate" : "ieee";
}

/// What APFloat says of fp32 `input` cast to a format: the bits, or
/// nothing for a NaN (whose sign must be the input's, and whose payload is
/// free).
struct Expected {
  bool nan;
  uint32_t bits;
};

/// `converted` is APFloat's cast of `input` (ties to even), which
/// overflows to infinity, or to NaN where the format has none; saturation
/// clamps that to the largest finite value.
Expected expected(const llvm::APFloat &converted, uint32_t input,
                  Overflow overflow) {
  bool nanInput = (input & 0x7FFFFFFFu) > 0x7F800000u;
  bool overflowed = converted.isInfinity() || (converted.isNaN() && !nanInput);
  if (overflowed && overflow == Overflow::Saturate)
    return {false,
            static_cast<uint32_t>(
                llvm::APFloat::getLargest(converted.getSemantics(), input >> 31)
                    .bitcastToAPInt()
                    .getZExtValue())};
  if (converted.isNaN())
    return {true, 0};
  return {false,
          static_cast<uint32_t>(converted.bitcastToAPInt().getZExtValue())};
}

/// Whether `actual`, the cast of `input` to `format`, is `wanted`.
bool agrees(uint32_t actual, const Expected &wanted, uint32_t input,
            const CastFormat &format) {
  if (!wanted.nan)
    return actual == wanted.bits;
  float decoded = format.decode(actual);
  return std::isnan(decoded) && std::signbit(decoded) == (input >> 31 != 0);
}

/// The casts checked and the first few that disagree.
struct Tally {
  uint64_t checked = 0, mismatches = 0;
  std::vector<std::string> examples;
};

/// Checks every format in both modes on the inputs pattern(i), i in [0,
/// count), on `threads` threads.
template <typename Pattern>
Tally sweep(Pattern pattern, uint64_t count, unsigned threads) {
  constexpr uint64_t kChunk = 1 << 16;
  std::atomic<uint64_t> next{0};
  std::mutex mutex;
  Tally total;
  auto work = [&] {
    Tally local;
    for (uint64_t begin; (begin = next.fetch_add(kChunk)) < count;) {
      uint64_t end = std::min(count, begin + kChunk);
      for (uint64_t i = begin; i < end; ++i) {
        uint32_t input = pattern(i);
        float value = llvm::bit_cast<float>(input);
        llvm::APFloat wide(value);
        for (const CastFormat &format : kFormats) {
          llvm::APFloat converted = wide;
          bool losesInfo;
          converted.convert(format.semantics(),
                            llvm::APFloat::rmNearestTiesToEven, &losesInfo);
          for (Overflow overflow : kModes) {
            ++local.checked;
            if (agrees(format.encode(value, overflow),
                       expected(converted, input, overflow), input, format))
              continue;
            if (++local.mismatches <= 10) {
              char text[96];
              std::snprintf(text, sizeof(text), "%s %s of 0x%08x (%g)",
                            format.name, modeName(overflow), input,
                            static_cast<double>(llvm::bit_cast<float>(input)));
              local.examples.push_back(text);
            }
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    total.checked += local.checked;
    total.mismatches += local.mismatches;
    for (std::string &e : local.examples)
      if (total.examples.size() < 10)
        total.examples.push_back(std::move(e));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  return total;
}

void expectNoMismatches(const Tally &tally) {
  EXPECT_EQ(tally.mismatches, 0u) << [&] {
    std::string list;
    for (const std::string &e : tally.examples)
      list += "\n  " + e;
    return list;
  }();
}

unsigned defaultThreads() {
  return std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
}

// The low 16 bits of fp32 decide bf16's rounding (its round bit is bit
// 15) and f16's (bit 12); the high 16 hold every sign, exponent and the
// fp8 formats' round and sticky positions. Each high half is tried with
// these low halves: exact, just above and below each tie, the ties.
constexpr uint16_t kLowHalves[] = {
    0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001,
    0x3000, 0x7FFF, 0x8000, 0x8001, 0x9000, 0xEFFF, 0xF000, 0xFFFF};
constexpr uint64_t kNumLowHalves = std::size(kLowHalves);

// And a stride through all patterns (a prime, so the low bits vary).
constexpr uint64_t kStride = 4099;

TEST(NumericsCast, SweepMatchesAPFloat) {
  Tally halves = sweep(
      [](uint64_t i) {
        return static_cast<uint32_t>((i / kNumLowHalves) << 16 |
                                     kLowHalves[i % kNumLowHalves]);
      },
      uint64_t(1) << 16 << 4, defaultThreads());
  expectNoMismatches(halves);
  Tally strided =
      sweep([](uint64_t i) { return uint32_t(i * kStride); },
            ((uint64_t(1) << 32) + kStride - 1) / kStride, defaultThreads());
  expectNoMismatches(strided);
  EXPECT_EQ(halves.checked, (uint64_t(1) << 20) * 8);
}

/// The opt-in exhaustive run: every fp32 pattern, every format, both
/// modes (registered by main for --exhaustive).
void exhaustive() {
  auto start = std::chrono::steady_clock::now();
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  Tally tally = sweep([](uint64_t i) { return static_cast<uint32_t>(i); },
                      uint64_t(1) << 32, threads);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("exhaustive: %llu casts (2^32 inputs x 4 formats x 2 modes) on "
              "%u threads in %.1f s, %llu mismatches\n",
              static_cast<unsigned long long>(tally.checked), threads, seconds,
              static_cast<unsigned long long>(tally.mismatches));
  EXPECT_EQ(tally.checked, (uint64_t(1) << 32) * 8);
  expectNoMismatches(tally);
}

TEST(NumericsCast, DecodingMatchesAPFloat) {
  for (const CastFormat &format : kFormats) {
    const llvm::fltSemantics &semantics = format.semantics();
    unsigned width = llvm::APFloat::getSizeInBits(semantics);
    for (uint32_t bits = 0; bits < (1u << width); ++bits) {
      llvm::APFloat f(semantics, llvm::APInt(width, bits));
      float decoded = format.decode(bits);
      if (f.isNaN()) {
        EXPECT_TRUE(std::isnan(decoded)) << format.name << " " << bits;
        EXPECT_EQ(std::signbit(decoded), f.isNegative()) << format.name;
      } else {
        EXPECT_EQ(llvm::bit_cast<uint32_t>(decoded),
                  llvm::bit_cast<uint32_t>(f.convertToFloat()))
            << format.name << " " << bits;
      }
    }
  }
}

TEST(NumericsCast, E4M3FNEdges) {
  for (Overflow o : kModes) {
    EXPECT_EQ(toF8E4M3FN(448.0f, o), 0x7E); // largest finite
    EXPECT_EQ(toF8E4M3FN(464.0f, o), 0x7E); // tie of 448, 480: even
    EXPECT_EQ(toF8E4M3FN(-0.0f, o), 0x80);
    EXPECT_EQ(toF8E4M3FN(kNaN, o), 0x7F);
    EXPECT_EQ(toF8E4M3FN(-kNaN, o), 0xFF);
    EXPECT_EQ(toF8E4M3FN(0x1p-9f, o), 0x01);  // smallest subnormal
    EXPECT_EQ(toF8E4M3FN(0x1p-10f, o), 0x00); // its half: tie to even 0
    EXPECT_EQ(toF8E4M3FN(0x1.000002p-10f, o), 0x01);
    EXPECT_EQ(toF8E4M3FN(0x3p-10f, o), 0x02);  // 1.5 quanta: even 2
    EXPECT_EQ(toF8E4M3FN(0x1.ep-7f, o), 0x08); // largest subnormal rounds
    EXPECT_EQ(toF8E4M3FN(1.0625f, o), 0x38);   // 1 + 1/16: tie to 1
    EXPECT_EQ(toF8E4M3FN(1.1875f, o), 0x3A);   // 1 + 3/16: tie to 1.25
  }
  // ONNX Cast: saturate=1 clamps, saturate=0 gives NaN (no infinity).
  EXPECT_EQ(toF8E4M3FN(465.0f), 0x7E);
  EXPECT_EQ(toF8E4M3FN(465.0f, Overflow::Ieee), 0x7F);
  EXPECT_EQ(toF8E4M3FN(480.0f, Overflow::Ieee), 0x7F);
  EXPECT_EQ(toF8E4M3FN(-1e30f), 0xFE);
  EXPECT_EQ(toF8E4M3FN(-1e30f, Overflow::Ieee), 0xFF);
  EXPECT_EQ(toF8E4M3FN(kInf), 0x7E);
  EXPECT_EQ(toF8E4M3FN(-kInf), 0xFE);
  EXPECT_EQ(toF8E4M3FN(kInf, Overflow::Ieee), 0x7F);
  EXPECT_EQ(toF8E4M3FN(-kInf, Overflow::Ieee), 0xFF);
  EXPECT_EQ(fromF8E4M3FN(0x7E), 448.0f);
  EXPECT_EQ(fromF8E4M3FN(0x01), 0x1p-9f);
  EXPECT_TRUE(std::isnan(fromF8E4M3FN(0x7F)));
  EXPECT_TRUE(std::signbit(fromF8E4M3FN(0xFF)));
  EXPECT_EQ(largestFinite(ElementType::F8E4M3FN), 448.0f);
}

TEST(NumericsCast, E5M2Edges) {
  EXPECT_EQ(toF8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(toF8E5M2(61439.0f, Overflow::Ieee), 0x7B);
  // 61440 is the tie of 57344 (odd) and 65536: even is past the top.
  EXPECT_EQ(toF8E5M2(61440.0f, Overflow::Ieee), 0x7C);
  EXPECT_EQ(toF8E5M2(61440.0f), 0x7B);
  EXPECT_EQ(toF8E5M2(-1e6f), 0xFB);
  EXPECT_EQ(toF8E5M2(-1e6f, Overflow::Ieee), 0xFC);
  EXPECT_EQ(toF8E5M2(kInf), 0x7B);
  EXPECT_EQ(toF8E5M2(kInf, Overflow::Ieee), 0x7C);
  EXPECT_EQ(toF8E5M2(-kInf, Overflow::Ieee), 0xFC);
  EXPECT_TRUE(std::isnan(fromF8E5M2(toF8E5M2(kNaN))));
  EXPECT_EQ(toF8E5M2(0x1p-16f), 0x01); // smallest subnormal
  EXPECT_EQ(toF8E5M2(0x1p-17f), 0x00); // tie to even 0
  EXPECT_EQ(toF8E5M2(-0.0f), 0x80);
  EXPECT_EQ(fromF8E5M2(0x7C), kInf);
  EXPECT_EQ(largestFinite(ElementType::F8E5M2), 57344.0f);
}

TEST(NumericsCast, HalfAndBFloatEdges) {
  EXPECT_EQ(toF16(65504.0f), 0x7BFF);
  EXPECT_EQ(toF16(65519.0f), 0x7BFF);
  EXPECT_EQ(toF16(65520.0f), 0x7C00); // tie past the top: infinity
  EXPECT_EQ(toF16(65520.0f, Overflow::Saturate), 0x7BFF);
  EXPECT_EQ(toF16(-kInf), 0xFC00);
  EXPECT_EQ(toF16(-kInf, Overflow::Saturate), 0xFBFF);
  EXPECT_EQ(toF16(0x1p-24f), 0x0001);
  EXPECT_EQ(toF16(0x1p-25f), 0x0000);
  EXPECT_EQ(toF16(0x1.8p-24f), 0x0002);
  EXPECT_EQ(toF16(1.0f + 0x1p-11f), 0x3C00); // tie to even
  EXPECT_EQ(toF16(1.0f + 0x3p-11f), 0x3C02);
  EXPECT_EQ(toBF16(1.0f + 0x1p-8f), 0x3F80); // tie to even
  EXPECT_EQ(toBF16(1.0f + 0x3p-8f), 0x3F82);
  EXPECT_EQ(toBF16(llvm::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(toBF16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(toBF16(std::numeric_limits<float>::max(), Overflow::Saturate),
            0x7F7F);
  EXPECT_EQ(toBF16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(toBF16(0x1p-133f), 0x0001); // bf16's smallest subnormal
  EXPECT_EQ(toBF16(-0.0f), 0x8000);
  EXPECT_EQ(largestFinite(ElementType::F16), 65504.0f);
}

TEST(NumericsCast, RoundTo) {
  EXPECT_EQ(roundTo(ElementType::F8E4M3FN, 0.3f), 0.3125f);
  EXPECT_EQ(roundTo(ElementType::F8E4M3FN, 1000.0f), 448.0f);
  EXPECT_TRUE(
      std::isnan(roundTo(ElementType::F8E4M3FN, 1000.0f, Overflow::Ieee)));
  // bf16 and f16 overflow to infinity, as ONNX casts them.
  EXPECT_EQ(roundTo(ElementType::F16, 1e5f), kInf);
  EXPECT_EQ(roundTo(ElementType::I8, 2.5f), 2.0f);
  EXPECT_EQ(roundTo(ElementType::I8, 3.5f), 4.0f);
  EXPECT_EQ(roundTo(ElementType::I8, -2.5f), -2.0f);
  EXPECT_EQ(roundTo(ElementType::I8, -300.0f), -128.0f);
  EXPECT_EQ(roundTo(ElementType::I8, kNaN), 0.0f);
  EXPECT_EQ(roundTo(ElementType::F32, 0.1f), 0.1f);
}

//===----------------------------------------------------------------------===//
// Integer rounding and requantization
//===----------------------------------------------------------------------===//

TEST(NumericsRounding, HalfToEven) {
  EXPECT_EQ(roundHalfToEven(2.5), 2.0);
  EXPECT_EQ(roundHalfToEven(3.5), 4.0);
  EXPECT_EQ(roundHalfToEven(-2.5), -2.0);
  EXPECT_EQ(roundHalfToEven(-3.5), -4.0);
  EXPECT_EQ(roundHalfToEven(0.5), 0.0);
  EXPECT_EQ(roundHalfToEven(2.5000001), 3.0);
  EXPECT_EQ(roundHalfToEven(-1.4999999), -1.0);
  EXPECT_EQ(roundHalfToEven(0x1p60), 0x1p60);
}

TEST(NumericsRounding, Requantize) {
  EXPECT_EQ(requantize(300, 0.5f), 127);
  EXPECT_EQ(requantize(-300, 0.5f), -128);
  EXPECT_EQ(requantize(5, 0.5f), 2); // 2.5 -> 2
  EXPECT_EQ(requantize(7, 0.5f), 4); // 3.5 -> 4
  EXPECT_EQ(requantize(-5, 0.5f), -2);
  EXPECT_EQ(requantize(-7, 0.5f), -4);
  EXPECT_EQ(requantize(5, 0.5f, 10), 12);
  EXPECT_EQ(requantize(240, 0.5f, 10), 127); // 120 + 10 saturates
  EXPECT_EQ(requantize(1, kNaN, 3), 3);
  EXPECT_EQ(requantize(std::numeric_limits<int32_t>::min(), 1.0f), -128);
}

//===----------------------------------------------------------------------===//
// Linear quantization (ONNX QuantizeLinear / DequantizeLinear)
//===----------------------------------------------------------------------===//

template <typename T>
std::vector<T> quantized(llvm::ArrayRef<float> x, llvm::ArrayRef<int64_t> shape,
                         const QuantizationParams &params, QuantizedType type,
                         Overflow overflow = Overflow::Saturate) {
  std::vector<uint8_t> y(x.size());
  llvm::Error error = quantizeLinear(x, shape, params, type, y, overflow);
  EXPECT_FALSE(error) << llvm::toString(std::move(error));
  std::vector<T> out(y.size());
  std::memcpy(out.data(), y.data(), y.size());
  return out;
}

std::vector<float> dequantized(llvm::ArrayRef<uint8_t> y,
                               llvm::ArrayRef<int64_t> shape,
                               const QuantizationParams &params,
                               QuantizedType type) {
  std::vector<float> x(y.size());
  llvm::Error error = dequantizeLinear(y, shape, params, type, x);
  EXPECT_FALSE(error) << llvm::toString(std::move(error));
  return x;
}

// ONNX 1.12's node tests test_quantizelinear and test_dequantizelinear
// (/usr/share/libonnx-testdata/data/node), their values.
TEST(NumericsQuantize, OnnxPerTensor) {
  float scale = 2.0f;
  int32_t zeroPoint = 128;
  QuantizationParams params{scale, zeroPoint};
  EXPECT_EQ(quantized<uint8_t>({0, 2, 3, 1000, -254, -1000}, {6}, params,
                               QuantizedType::U8),
            (std::vector<uint8_t>{128, 129, 130, 255, 1, 0}));
  EXPECT_EQ(dequantized({0, 3, 128, 255}, {4}, params, QuantizedType::U8),
            (std::vector<float>{-256, -250, 0, 254}));
}

// test_quantizelinear_axis and test_dequantizelinear_axis: shape
// [1, 3, 3, 2], per-axis along the default axis 1.
TEST(NumericsQuantize, OnnxPerAxis) {
  std::vector<float> x = {-162, 10, -100, 232, -20,  -50,  -76,  0,    0,
                          252,  32, -44,  245, -485, -960, -270, -375, -470};
  std::vector<uint8_t> y = {3,  89, 34, 200, 74, 59, 5,   24,  24,
                            87, 32, 13, 245, 99, 4,  142, 121, 102};
  float scales[] = {2, 4, 5};
  int32_t zeroPoints[] = {84, 24, 196};
  QuantizationParams params{scales, zeroPoints};
  EXPECT_EQ(quantized<uint8_t>(x, {1, 3, 3, 2}, params, QuantizedType::U8), y);
  EXPECT_EQ(dequantized(y, {1, 3, 3, 2}, params, QuantizedType::U8), x);
  // The same with the axis counted from the back.
  params.axis = -3;
  EXPECT_EQ(quantized<uint8_t>(x, {1, 3, 3, 2}, params, QuantizedType::U8), y);
}

TEST(NumericsQuantize, TiesAndSaturation) {
  float scale = 1.0f;
  QuantizationParams params{scale};
  EXPECT_EQ(quantized<int8_t>({2.5f, 3.5f, -2.5f, -3.5f, 0.5f, 1.5f, 127.5f,
                               1000.0f, -1000.0f, -128.5f, kNaN},
                              {11}, params, QuantizedType::I8),
            (std::vector<int8_t>{2, 4, -2, -4, 0, 2, 127, 127, -128, -128, 0}));
  // The rounding is of x / scale, before the zero point: 5 / 2 = 2.5 -> 2.
  float two = 2.0f;
  int32_t zeroPoint = -10;
  QuantizationParams shifted{two, zeroPoint};
  EXPECT_EQ(quantized<int8_t>({5.0f, 7.0f, -300.0f, 300.0f, kNaN}, {5}, shifted,
                              QuantizedType::I8),
            (std::vector<int8_t>{-8, -6, -128, 127, -10}));
  EXPECT_EQ(dequantized({0xF8, 0x80, 0x7F}, {3}, shifted, QuantizedType::I8),
            (std::vector<float>{4.0f, -236.0f, 274.0f}));
  // uint8 clamps at 0 and 255.
  EXPECT_EQ(quantized<uint8_t>({-0.6f, -0.5f, 255.5f, 256.5f}, {4}, params,
                               QuantizedType::U8),
            (std::vector<uint8_t>{0, 0, 255, 255}));
  // x / scale in fp32: 0.25f / 0.1f rounds to 2.5 and then to 2;
  // 0.35f / 0.1f is 3.49999989 in double (which would give 3) but rounds
  // to 3.5 in fp32, then to 4.
  float tenth = 0.1f;
  QuantizationParams tenths{tenth};
  EXPECT_EQ(
      quantized<int8_t>({0.3f, 0.25f, 0.35f}, {3}, tenths, QuantizedType::I8),
      (std::vector<int8_t>{3, 2, 4}));
}

TEST(NumericsQuantize, Blocked) {
  // Shape [2, 5], blocks of 2 along axis 1: the scale is [2, 3], the last
  // block of each row one element wide.
  std::vector<float> x = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5};
  float scales[] = {1, 2, 4, 0.5f, 1, 2};
  int32_t zeroPoints[] = {0, 1, 2, 3, 4, 5};
  QuantizationParams params{scales, zeroPoints, /*axis=*/1, /*blockSize=*/2};
  // Row 0: 1/1, 2/1, 3/2 = 1.5 -> 2 + 1, 4/2 + 1, 5/4 = 1.25 -> 1 + 2.
  // Row 1: -1/0.5 + 3, -2/0.5 + 3, -3/1 + 4, -4/1 + 4, -5/2 = -2.5 -> -2 + 5.
  std::vector<int8_t> y = {1, 2, 3, 3, 3, 1, -1, 1, 0, 3};
  EXPECT_EQ(quantized<int8_t>(x, {2, 5}, params, QuantizedType::I8), y);
  std::vector<uint8_t> bytes(y.size());
  std::memcpy(bytes.data(), y.data(), y.size());
  EXPECT_EQ(dequantized(bytes, {2, 5}, params, QuantizedType::I8),
            (std::vector<float>{1, 2, 4, 4, 4, -1, -2, -3, -4, -4}));

  // Blocks of 3 along axis 0 of shape [4, 2]: the scale is [2, 2].
  std::vector<float> column = {10, 20, 10, 20, 10, 20, 10, 20};
  float columnScales[] = {10, 5, 2, 4};
  QuantizationParams byRows{columnScales, {}, /*axis=*/0, /*blockSize=*/3};
  EXPECT_EQ(quantized<int8_t>(column, {4, 2}, byRows, QuantizedType::I8),
            (std::vector<int8_t>{1, 4, 1, 4, 1, 4, 5, 5}));
}

TEST(NumericsQuantize, Fp8) {
  float scale = 2.0f;
  QuantizationParams params{scale};
  // x / scale cast with ONNX's saturate attribute.
  EXPECT_EQ(quantized<uint8_t>({3.0f, 2000.0f, -kInf, 0.0f}, {4}, params,
                               QuantizedType::F8E4M3FN),
            (std::vector<uint8_t>{0x3C, 0x7E, 0xFE, 0x00}));
  EXPECT_EQ(quantized<uint8_t>({3.0f, 2000.0f, -kInf}, {3}, params,
                               QuantizedType::F8E4M3FN, Overflow::Ieee),
            (std::vector<uint8_t>{0x3C, 0x7F, 0xFF}));
  EXPECT_EQ(
      quantized<uint8_t>({3.0f, 1e6f}, {2}, params, QuantizedType::F8E5M2),
      (std::vector<uint8_t>{0x3E, 0x7B}));
  EXPECT_EQ(quantized<uint8_t>({1e6f}, {1}, params, QuantizedType::F8E5M2,
                               Overflow::Ieee),
            (std::vector<uint8_t>{0x7C}));
  EXPECT_EQ(
      dequantized({0x3C, 0x7E, 0xFE}, {3}, params, QuantizedType::F8E4M3FN),
      (std::vector<float>{3.0f, 896.0f, -896.0f}));
  // Per axis: the scale divides each column.
  float scales[] = {1, 4};
  QuantizationParams perAxis{scales, {}, /*axis=*/1};
  EXPECT_EQ(quantized<uint8_t>({1.0f, 1.0f}, {1, 2}, perAxis,
                               QuantizedType::F8E4M3FN),
            (std::vector<uint8_t>{0x38, 0x28}));
}

TEST(NumericsQuantize, BadParameters) {
  std::vector<float> x(6);
  std::vector<uint8_t> y(6);
  float scales[] = {1, 2};
  int32_t zeroPoints[] = {0, 300};
  auto fails = [&](const QuantizationParams &params, QuantizedType type,
                   llvm::ArrayRef<int64_t> shape, llvm::StringRef message) {
    std::string error =
        llvm::toString(quantizeLinear(x, shape, params, type, y));
    EXPECT_NE(error.find(message.str()), std::string::npos) << error;
    error = llvm::toString(dequantizeLinear(y, shape, params, type, x));
    EXPECT_NE(error.find(message.str()), std::string::npos) << error;
  };
  fails({scales}, QuantizedType::I8, {2, 3}, "per-axis quantization needs 3");
  fails({scales, zeroPoints, 0}, QuantizedType::U8, {2, 3},
        "zero point 300 is out of the type's range");
  fails({scales, {}, 2}, QuantizedType::I8, {2, 3}, "axis 2 is out of range");
  fails({scales, {}, 1, 2}, QuantizedType::I8, {2, 3},
        "blocked quantization needs 4");
  fails({scales, {}, 1, -1}, QuantizedType::I8, {2, 3}, "negative block size");
  fails({scales}, QuantizedType::I8, {7}, "the shape 7");
  fails({{}}, QuantizedType::I8, {6}, "no scale");
  int32_t one[] = {1};
  float scale = 1;
  fails({scale, one}, QuantizedType::F8E4M3FN, {6}, "takes no zero point");
}

bool gExhaustive = false;

} // namespace

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--exhaustive") == 0) {
      gExhaustive = true;
    } else {
      std::fprintf(stderr, "usage: %s [gtest flags] [--exhaustive]\n", argv[0]);
      return 2;
    }
  }
  if (gExhaustive)
    testing::RegisterTest("NumericsCast", "Exhaustive", nullptr, nullptr,
                          __FILE__, __LINE__, [] {
                            struct Exhaustive : testing::Test {
                              void TestBody() override { exhaustive(); }
                            };
                            return static_cast<testing::Test *>(new Exhaustive);
                          });
  return RUN_ALL_TESTS();
}
