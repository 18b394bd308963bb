//===- CalibrationTest.cpp - the calibration methods and their cache ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Percentile and entropy calibration choose a range from a histogram of
// |value| over [0, amax]. The expected figures for the exponential
// distribution below come from an independent NumPy model of the same
// algorithms (histogram by np.histogram, the KL search written with array
// slices), run on the same float values.
//
//===----------------------------------------------------------------------===//
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Transforms/Precision.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using tessera::CalibrationMethod;
using tessera::CalibrationTable;
using tessera::kCalibrationBins;

namespace {

/// 100,000 magnitudes spread as an exponential distribution (its inverse
/// CDF on an even grid), with one sign in three negative.
std::vector<float> exponentialValues() {
  constexpr int n = 100000;
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) {
    double u = (i + 0.5) / n;
    values[i] = static_cast<float>(-std::log(1 - u)) * (i % 3 ? 1.0f : -1.0f);
  }
  return values;
}

/// A table that has seen `values` as tensor "x" (both passes).
CalibrationTable measured(const std::vector<float> &values,
                          const std::string &key = "x") {
  CalibrationTable table;
  table.record(key, values);
  table.recordHistogram(key, values);
  return table;
}

TEST(Calibration, HistogramsBinMagnitudesUpToAmax) {
  CalibrationTable table = measured({0.0f, -1.0f, 2.0f, -4.0f, NAN, INFINITY});
  EXPECT_EQ(table.amax.at("x"), 4.0);
  const std::vector<uint64_t> &counts = table.histograms.at("x");
  ASSERT_EQ(counts.size(), static_cast<size_t>(kCalibrationBins));
  EXPECT_EQ(counts[0], 1u);
  EXPECT_EQ(counts[kCalibrationBins / 4], 1u);
  EXPECT_EQ(counts[kCalibrationBins / 2], 1u);
  // The largest value falls in the last bin; non-finite values nowhere.
  EXPECT_EQ(counts[kCalibrationBins - 1], 1u);
  uint64_t total = 0;
  for (uint64_t count : counts)
    total += count;
  EXPECT_EQ(total, 4u);
}

TEST(Calibration, PercentileIsTheUpperEdgeOfItsBin) {
  CalibrationTable table = measured(exponentialValues());
  double amax = table.amax.at("x");
  const std::vector<uint64_t> &counts = table.histograms.at("x");
  // The exponential's 99th and 99.9th percentiles are ln(100) and
  // ln(1000); the method answers with the upper edge of their bins.
  double p99 = tessera::percentileThreshold(counts, amax, 99);
  double p999 = tessera::percentileThreshold(counts, amax, 99.9);
  EXPECT_NEAR(p99, 4.607077, 1e-5);
  EXPECT_NEAR(p999, 6.907636, 1e-5);
  EXPECT_GE(p99, std::log(100.0));
  EXPECT_LE(p99, std::log(100.0) + amax / kCalibrationBins);
  EXPECT_EQ(tessera::percentileThreshold(counts, amax, 100), amax);
}

TEST(Calibration, EntropyMatchesTheReferenceModel) {
  CalibrationTable table = measured(exponentialValues());
  double amax = table.amax.at("x");
  EXPECT_NEAR(amax, 12.206073, 1e-5);
  // The NumPy model's choice: clip at bin 1722 of 2048, 10.266094.
  double threshold =
      tessera::entropyThreshold(table.histograms.at("x"), amax);
  EXPECT_DOUBLE_EQ(threshold, amax * 1722.5 / kCalibrationBins);
  EXPECT_NEAR(threshold, 10.266094, 1e-5);
}

TEST(Calibration, EntropyDoesNotClipAnEvenSpread) {
  // Values spread evenly lose nothing to the 128 levels at any clip: the
  // whole range stays.
  std::vector<float> values(50000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>((i + 0.5) / values.size());
  CalibrationTable table = measured(values);
  double amax = table.amax.at("x");
  EXPECT_GE(tessera::entropyThreshold(table.histograms.at("x"), amax),
            0.99 * amax);
}

TEST(Calibration, CacheKeepsTheMethodAndItsRanges) {
  CalibrationTable table = measured(exponentialValues(), "/fc/MatMul:lhs");
  table.method = CalibrationMethod::Percentile;
  table.percentile = 99.9;
  table.samples = 1;
  table.chooseRanges();
  ASSERT_EQ(table.range.count("/fc/MatMul:lhs"), 1u);
  EXPECT_NEAR(*table.quantizationRange("/fc/MatMul:lhs"), 6.907636, 1e-5);
  EXPECT_FALSE(table.quantizationRange("/other:lhs"));

  std::string json = table.toJSON();
  EXPECT_NE(json.find("\"method\": \"percentile\""), std::string::npos);
  EXPECT_NE(json.find("\"percentile\": 99.9"), std::string::npos);
  auto back = CalibrationTable::fromJSON(json);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->method, CalibrationMethod::Percentile);
  EXPECT_EQ(back->range, table.range);
  EXPECT_EQ(back->amax, table.amax);
  // The same table gives the same bytes.
  EXPECT_EQ(back->toJSON(), json);
}

TEST(Calibration, MaxLeavesTheRangeAtAmax) {
  CalibrationTable table = measured(exponentialValues());
  table.chooseRanges();
  EXPECT_TRUE(table.range.empty());
  EXPECT_EQ(*table.quantizationRange("x"), table.amax.at("x"));
  EXPECT_EQ(table.toJSON().find("\"range\""), std::string::npos);
}

TEST(Calibration, CacheRejectsAnUnknownMethodAndABadRange) {
  auto unknown = CalibrationTable::fromJSON(
      R"({"format": "tessera-calibration", "version": 1, "method": "mse",
          "samples": 1, "tensors": {}})");
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "calibration cache: unknown method 'mse'");
  auto negative = CalibrationTable::fromJSON(
      R"({"format": "tessera-calibration", "version": 1, "method": "entropy",
          "samples": 1, "tensors": {"x": {"amax": 2, "range": -1}}})");
  ASSERT_FALSE(static_cast<bool>(negative));
  EXPECT_EQ(llvm::toString(negative.takeError()),
            "calibration cache: tensor 'x' has a negative or non-numeric "
            "'range'");
}

TEST(Calibration, PercentilePerChannel) {
  // Two channels interleaved (the last dim): channel 0 the exponential
  // values, channel 1 the same values halved with one far spike.
  std::vector<float> exponential = exponentialValues();
  std::vector<float> values;
  for (float value : exponential) {
    values.push_back(value);
    values.push_back(value / 2);
  }
  values.back() = 1000.0f;
  CalibrationTable table;
  table.record("x", values, 2);
  table.recordHistogram("x", values, 2);
  table.method = CalibrationMethod::Percentile;
  table.percentile = 99.9;
  table.chooseRanges();
  const CalibrationTable::Channels &channels = table.channels.at("x");
  ASSERT_EQ(channels.range.size(), 2u);
  // Each channel's 99.9th percentile, to the width of one of its bins: the
  // exponential's is ln(1000) = 6.91; the spike makes the other's bins
  // 1000 / 512 wide, and its percentile (3.45) lies in the second.
  double width0 = channels.amax[0] / tessera::kChannelCalibrationBins;
  EXPECT_NEAR(channels.range[0], std::log(1000.0), width0);
  EXPECT_EQ(channels.amax[1], 1000.0);
  EXPECT_EQ(channels.range[1], 2 * 1000.0 / tessera::kChannelCalibrationBins);
  EXPECT_EQ(&channels.ranges(), &channels.range);

  std::string json = table.toJSON();
  EXPECT_NE(json.find("\"channel_range\""), std::string::npos);
  auto back = CalibrationTable::fromJSON(json);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->channels.at("x").range, channels.range);
  EXPECT_EQ(back->toJSON(), json);

  // Without per-channel histograms (max, or a tensor-wide pass) the
  // channels keep their amax.
  CalibrationTable plain;
  plain.record("x", values, 2);
  plain.recordHistogram("x", values);
  plain.method = CalibrationMethod::Percentile;
  plain.chooseRanges();
  EXPECT_TRUE(plain.channels.at("x").range.empty());
  EXPECT_EQ(plain.channels.at("x").ranges(), plain.channels.at("x").amax);
  EXPECT_EQ(plain.toJSON().find("channel_range"), std::string::npos);
}

TEST(Calibration, CacheRejectsABadChannelRange) {
  auto length = CalibrationTable::fromJSON(
      R"({"format": "tessera-calibration", "version": 1, "method": "entropy",
          "samples": 1, "tensors": {"x": {"amax": 2, "channel_amax": [2, 1],
          "channel_mean_square": [1, 1], "channel_range": [1]}}})");
  ASSERT_FALSE(static_cast<bool>(length));
  EXPECT_EQ(llvm::toString(length.takeError()),
            "calibration cache: tensor 'x' has a 'channel_range' whose length "
            "is not that of 'channel_amax'");
  auto negative = CalibrationTable::fromJSON(
      R"({"format": "tessera-calibration", "version": 1, "method": "entropy",
          "samples": 1, "tensors": {"x": {"amax": 2, "channel_amax": [2, 1],
          "channel_mean_square": [1, 1], "channel_range": [1, -1]}}})");
  ASSERT_FALSE(static_cast<bool>(negative));
  EXPECT_EQ(llvm::toString(negative.takeError()),
            "calibration cache: tensor 'x' has a negative or non-numeric "
            "'channel_range'");
}

} // namespace

// Calibration samples come in number order, not text order: the 16 sets of
// a calibration folder are 0, 1, 2, ..., 10, ..., 15 (the automatic
// policy measures on the first three quarters of them).
TEST(CalibrationSamples, NumberOrder) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("samples", dir));
  for (const char *name : {"test_data_set_10", "test_data_set_2",
                           "test_data_set_0", "test_data_set_1"}) {
    llvm::SmallString<128> set(dir);
    llvm::sys::path::append(set, name);
    ASSERT_FALSE(llvm::sys::fs::create_directory(set));
  }
  std::vector<std::string> names;
  for (const std::string &path : tessera::runtime::calibrationSamples(dir))
    names.push_back(llvm::sys::path::filename(path).str());
  EXPECT_EQ(names,
            (std::vector<std::string>{"test_data_set_0", "test_data_set_1",
                                      "test_data_set_2", "test_data_set_10"}));

  std::vector<std::string> files = {"b/x_10.npy", "b/x_9.npy", "a/y.npy",
                                    "b/x_09.pb", "b/x.npy"};
  tessera::runtime::sortNumbered(files);
  // By the text before the number, then the number, then the whole path.
  EXPECT_EQ(files,
            (std::vector<std::string>{"b/x.npy", "b/x_09.pb", "b/x_9.npy",
                                      "b/x_10.npy", "a/y.npy"}));
  EXPECT_FALSE(llvm::sys::fs::remove_directories(dir));
}
