//===- SimTest.cpp - unit tests of the systolic accelerator model ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Analytical.h"
#include "tessera/Sim/Numerics.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace tessera::sim;

namespace {

AnalyticalResult analyzed(ArrayShape array, Dataflow dataflow,
                          GemmShape gemm) {
  Result<AnalyticalResult> result = analyzeGemm(array, dataflow, gemm);
  EXPECT_TRUE(std::holds_alternative<AnalyticalResult>(result));
  return std::get<AnalyticalResult>(result);
}

// SCALE-Sim v3's golden runs: 32x32 array, M = 256, N = 128, K = 256.
TEST(Analytical, ScaleSimReferenceOS) {
  AnalyticalResult r = analyzed({32, 32}, Dataflow::OutputStationary,
                                {256, 128, 256});
  EXPECT_EQ(r.folds, 32);
  EXPECT_EQ(r.cyclesPerFold, 318);
  EXPECT_EQ(r.computeCycles, 10175);
  EXPECT_NEAR(100 * r.computeUtilization, 80.503, 5e-4);
  EXPECT_DOUBLE_EQ(r.mappingEfficiency, 1.0);
}

TEST(Analytical, ScaleSimReferenceWS) {
  AnalyticalResult r = analyzed({32, 32}, Dataflow::WeightStationary,
                                {256, 128, 256});
  EXPECT_EQ(r.folds, 32);
  EXPECT_EQ(r.cyclesPerFold, 350);
  EXPECT_EQ(r.computeCycles, 11199);
  EXPECT_NEAR(100 * r.computeUtilization, 67.192, 5e-4);
}

TEST(Analytical, ScaleSimReferenceIS) {
  AnalyticalResult r = analyzed({32, 32}, Dataflow::InputStationary,
                                {256, 128, 256});
  EXPECT_EQ(r.folds, 64);
  EXPECT_EQ(r.cyclesPerFold, 222);
  EXPECT_EQ(r.computeCycles, 14207);
  EXPECT_NEAR(100 * r.computeUtilization, 50.593, 5e-4);
}

// A 4x4 output-stationary array on a 4x4x4 job: 9 cycles (SCALE-Sim v2).
TEST(Analytical, SmallOutputStationary) {
  EXPECT_EQ(analyzed({4, 4}, Dataflow::OutputStationary, {4, 4, 4})
                .computeCycles,
            9);
}

TEST(Analytical, PartialFolds) {
  // 40 = 32 + 8 rows and columns: four folds using 32x32, 32x8, 8x32, 8x8.
  AnalyticalResult r = analyzed({32, 32}, Dataflow::OutputStationary,
                                {40, 40, 40});
  EXPECT_EQ(r.folds, 4);
  EXPECT_DOUBLE_EQ(r.mappingEfficiency, 1600.0 / 4096.0);
  EXPECT_DOUBLE_EQ(r.computeUtilization,
                   1600.0 / 4096.0 * 40.0 / (40 + 32 + 32 - 2));
}

TEST(Analytical, ConvToGemm) {
  auto gemm = std::get<GemmShape>(convToGemm({8, 8, 3, 3, 2, 4, 1}));
  EXPECT_EQ(gemm.m, 36);
  EXPECT_EQ(gemm.k, 18);
  EXPECT_EQ(gemm.n, 4);
  // Eh = ceil((8 - 3 + 2) / 2) = 4.
  EXPECT_EQ(std::get<GemmShape>(convToGemm({8, 8, 3, 3, 2, 4, 2})).m, 16);
}

TEST(Analytical, BadSizes) {
  auto zero = analyzeGemm({0, 32}, Dataflow::WeightStationary, {1, 1, 1});
  ASSERT_TRUE(std::holds_alternative<std::string>(zero));
  EXPECT_EQ(std::get<std::string>(zero),
            "array rows must be positive (got 0)");
  auto negative =
      analyzeGemm({32, 32}, Dataflow::WeightStationary, {4, -1, 4});
  EXPECT_EQ(std::get<std::string>(negative), "N must be positive (got -1)");
  auto huge = analyzeGemm({32, 32}, Dataflow::WeightStationary,
                          {int64_t(1) << 40, 1, 1});
  EXPECT_TRUE(std::holds_alternative<std::string>(huge));
  auto filter = convToGemm({4, 4, 5, 5, 1, 1, 1});
  EXPECT_EQ(std::get<std::string>(filter),
            "the filter (5x5) is larger than the input (4x4)");
  EXPECT_FALSE(parseDataflow("xs"));
  EXPECT_EQ(parseDataflow("is"), Dataflow::InputStationary);
}

/// The bits APFloat gives `value` converted to `semantics`, ties to even.
uint64_t referenceBits(float value, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f.bitcastToAPInt().getZExtValue();
}

float referenceValue(uint64_t bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(semantics,
                  llvm::APInt(llvm::APFloat::getSizeInBits(semantics), bits));
  return f.convertToFloat();
}

/// Random floats across every binade, plus the interesting ones.
std::vector<float> samples() {
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 448.0f, 464.0f,
                               480.0f, 57344.0f, 61440.0f, 65504.0f,
                               65520.0f, 1e-8f, 1e-40f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    float f = llvm::bit_cast<float>(bits(rng));
    if (!std::isnan(f))
      values.push_back(f);
    // Also values near the fp8 ranges.
    values.push_back(std::ldexp(static_cast<float>(bits(rng) % 4096) / 4096,
                                static_cast<int>(bits(rng) % 40) - 24) *
                     ((bits(rng) & 1) ? -1.0f : 1.0f));
  }
  return values;
}

TEST(Numerics, ConversionsMatchAPFloat) {
  for (float value : samples()) {
    EXPECT_EQ(toBF16(value), referenceBits(value, llvm::APFloat::BFloat()))
        << value;
    EXPECT_EQ(toF16(value), referenceBits(value, llvm::APFloat::IEEEhalf()))
        << value;
    EXPECT_EQ(toF8E5M2(value, Overflow::Ieee),
              referenceBits(value, llvm::APFloat::Float8E5M2()))
        << value;
    // E4M3FN has no infinity: IEEE overflow is NaN in both.
    uint8_t e4m3 = toF8E4M3FN(value, Overflow::Ieee);
    uint64_t expected = referenceBits(value, llvm::APFloat::Float8E4M3FN());
    if (std::isnan(fromF8E4M3FN(e4m3)))
      EXPECT_TRUE(std::isnan(
          referenceValue(expected, llvm::APFloat::Float8E4M3FN())))
          << value;
    else
      EXPECT_EQ(e4m3, expected) << value;
  }
}

TEST(Numerics, DecodingMatchesAPFloat) {
  for (uint32_t bits = 0; bits < 256; ++bits) {
    for (auto [decoded, semantics] :
         {std::pair(fromF8E4M3FN(bits), &llvm::APFloat::Float8E4M3FN()),
          std::pair(fromF8E5M2(bits), &llvm::APFloat::Float8E5M2())}) {
      float expected = referenceValue(bits, *semantics);
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(decoded)) << bits;
      else
        EXPECT_EQ(decoded, expected) << bits;
    }
  }
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    for (auto [decoded, semantics] :
         {std::pair(fromBF16(bits), &llvm::APFloat::BFloat()),
          std::pair(fromF16(bits), &llvm::APFloat::IEEEhalf())}) {
      float expected = referenceValue(bits, *semantics);
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(decoded)) << bits;
      else
        EXPECT_EQ(decoded, expected) << bits;
    }
  }
}

TEST(Numerics, SaturatingFp8) {
  // E4M3FN's largest finite value is 448 (0x7E); 0x7F is NaN.
  EXPECT_EQ(toF8E4M3FN(1000.0f), 0x7E);
  EXPECT_EQ(toF8E4M3FN(-1e30f), 0xFE);
  EXPECT_EQ(toF8E4M3FN(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(fromF8E4M3FN(0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(fromF8E4M3FN(0x7F)));
  // 464 is halfway between 448 and 480 (out of range): saturates.
  EXPECT_EQ(toF8E4M3FN(464.0f), 0x7E);
  EXPECT_EQ(toF8E5M2(1e6f), 0x7B);
  EXPECT_EQ(fromF8E5M2(0x7B), 57344.0f);
  EXPECT_EQ(toF8E5M2(1e6f, Overflow::Ieee), 0x7C); // +inf
  EXPECT_EQ(roundTo(NumberFormat::F8E4M3FN, 0.3f), 0.3125f);
  EXPECT_EQ(roundTo(NumberFormat::I8, 2.5f), 2.0f);
  EXPECT_EQ(roundTo(NumberFormat::I8, -300.0f), -128.0f);
}

TEST(Numerics, Int8Requantization) {
  EXPECT_EQ(requantize(300, 0.5f), 127);
  EXPECT_EQ(requantize(-300, 0.5f), -128);
  EXPECT_EQ(requantize(5, 0.5f), 2);
  EXPECT_EQ(requantize(7, 0.5f), 4);
  EXPECT_EQ(requantize(-5, 0.5f), -2);
  EXPECT_EQ(roundingShiftRight(5, 1), 2);
  EXPECT_EQ(roundingShiftRight(7, 1), 4);
  EXPECT_EQ(roundingShiftRight(-5, 1), -2);
  EXPECT_EQ(roundingShiftRight(-7, 1), -4);
  EXPECT_EQ(roundingShiftRight(6, 2), 2); // 1.5 -> 2
  EXPECT_EQ(roundingShiftRight(10, 2), 2); // 2.5 -> 2
  EXPECT_EQ(roundingShiftRight(123, 0), 123);
  int8_t a[] = {127, -128, 3}, b[] = {127, -128, -3};
  EXPECT_EQ(dotI8(a, b, 3, 10), 127 * 127 + 128 * 128 - 9 + 10);
}

TEST(Numerics, DotAddsInIndexOrder) {
  // In order: (0 + 2^25) + 1 rounds back to 2^25, then - 2^25 = 0; the
  // exact sum is 1.
  float a[] = {33554432.0f, 1.0f, -33554432.0f}, b[] = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(dot(a, b, 3, 0.0f), 0.0f);
  float c[] = {33554432.0f, -33554432.0f, 1.0f};
  EXPECT_EQ(dot(c, b, 3, 0.0f), 1.0f);
}

} // namespace
