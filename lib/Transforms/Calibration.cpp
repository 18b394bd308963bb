//===- Calibration.cpp - the ranges the precision policies read -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The calibration cache (what calibration measured, per ONNX node operand),
// the methods that choose a range from a histogram (percentile, entropy),
// and tessera-expose-calibration-values, which turns the operands the
// precision policies may narrow into outputs so that a run measures them.
//
//===----------------------------------------------------------------------===//
#include "Matchers.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera {
#define GEN_PASS_DEF_EXPOSECALIBRATIONVALUESPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace tessera {
void CalibrationTable::record(const std::string &key,
                              ArrayRef<float> values, int64_t channelCount) {
  double &largest = amax[key];
  channelCount = std::max<int64_t>(channelCount, 1);
  Channels &stats = channels[key];
  if (stats.amax.size() != static_cast<size_t>(channelCount)) {
    stats = Channels();
    stats.amax.assign(channelCount, 0.0);
    stats.sumSquares.assign(channelCount, 0.0);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    float value = values[i];
    if (!std::isfinite(value))
      continue;
    double magnitude = std::fabs(value);
    largest = std::max(largest, magnitude);
    size_t channel = i % channelCount;
    stats.amax[channel] = std::max(stats.amax[channel], magnitude);
    stats.sumSquares[channel] += magnitude * magnitude;
  }
  stats.rows += values.size() / channelCount;
}

llvm::ArrayRef<llvm::StringRef> calibrationMethods() {
  static const llvm::StringRef names[] = {"max", "percentile", "entropy"};
  return names;
}

std::optional<CalibrationMethod> parseCalibrationMethod(StringRef name) {
  return llvm::StringSwitch<std::optional<CalibrationMethod>>(name)
      .Case("max", CalibrationMethod::Max)
      .Case("percentile", CalibrationMethod::Percentile)
      .Case("entropy", CalibrationMethod::Entropy)
      .Default(std::nullopt);
}

StringRef calibrationMethodName(CalibrationMethod method) {
  return calibrationMethods()[static_cast<size_t>(method)];
}

double percentileThreshold(ArrayRef<uint64_t> histogram, double amax,
                           double percent) {
  uint64_t total = 0;
  for (uint64_t count : histogram)
    total += count;
  if (total == 0 || histogram.empty())
    return amax;
  double wanted = static_cast<double>(total) * percent / 100.0;
  uint64_t below = 0;
  for (size_t i = 0; i < histogram.size(); ++i) {
    below += histogram[i];
    if (static_cast<double>(below) >= wanted)
      return amax * static_cast<double>(i + 1) / histogram.size();
  }
  return amax;
}

double entropyThreshold(ArrayRef<uint64_t> histogram, double amax,
                        int64_t levels) {
  int64_t bins = histogram.size();
  if (bins <= levels || amax <= 0)
    return amax;
  // Counts above each clipping point, for the last bin of the clipped
  // reference.
  std::vector<double> above(bins + 1, 0.0);
  for (int64_t i = bins - 1; i >= 0; --i)
    above[i] = above[i + 1] + static_cast<double>(histogram[i]);
  if (above[0] == 0)
    return amax;
  double bestDivergence = std::numeric_limits<double>::infinity();
  int64_t best = bins;
  std::vector<double> reference, quantized;
  for (int64_t clip = levels; clip <= bins; ++clip) {
    // The reference: bins [0, clip), with what lies above in the last.
    reference.assign(histogram.begin(), histogram.begin() + clip);
    reference.back() += above[clip];
    // The candidate: bins [0, clip) merged into `levels` levels, each
    // level's count spread evenly over its non-empty bins (an empty bin
    // stays empty, as the quantized tensor has no value there).
    quantized.assign(clip, 0.0);
    for (int64_t level = 0; level < levels; ++level) {
      int64_t first = level * clip / levels;
      int64_t last = (level + 1) * clip / levels;
      double count = 0;
      int64_t nonEmpty = 0;
      for (int64_t i = first; i < last; ++i)
        if (histogram[i]) {
          count += static_cast<double>(histogram[i]);
          ++nonEmpty;
        }
      for (int64_t i = first; i < last && nonEmpty; ++i)
        if (histogram[i])
          quantized[i] = count / nonEmpty;
    }
    // The reference holds every count; the candidate those below the
    // clip (each level's count spread, none lost).
    double referenceTotal = above[0];
    double quantizedTotal = above[0] - above[clip];
    if (quantizedTotal == 0)
      continue;
    double divergence = 0;
    for (int64_t i = 0; i < clip; ++i) {
      if (reference[i] == 0)
        continue;
      double p = reference[i] / referenceTotal;
      double q = quantized[i] / quantizedTotal;
      // The last bin holds the clipped tail, which the candidate spreads
      // nowhere: an infinite divergence, as for any value it cannot
      // represent.
      if (q == 0) {
        divergence = std::numeric_limits<double>::infinity();
        break;
      }
      divergence += p * std::log(p / q);
    }
    if (divergence < bestDivergence) {
      bestDivergence = divergence;
      best = clip;
    }
  }
  return std::min(amax, amax * (static_cast<double>(best) + 0.5) / bins);
}

void CalibrationTable::recordHistogram(const std::string &key,
                                       ArrayRef<float> values,
                                       int64_t channelCount) {
  auto largest = amax.find(key);
  if (largest == amax.end() || !(largest->second > 0))
    return;
  auto stats = channels.find(key);
  if (channelCount > 1 && stats != channels.end() &&
      stats->second.amax.size() == static_cast<size_t>(channelCount)) {
    Channels &perChannel = stats->second;
    perChannel.histograms.resize(channelCount * kChannelCalibrationBins, 0);
    std::vector<double> binsPerUnit(channelCount, 0.0);
    for (int64_t c = 0; c < channelCount; ++c)
      if (perChannel.amax[c] > 0)
        binsPerUnit[c] = kChannelCalibrationBins / perChannel.amax[c];
    for (size_t i = 0; i < values.size(); ++i) {
      size_t channel = i % channelCount;
      if (!std::isfinite(values[i]) || binsPerUnit[channel] == 0)
        continue;
      double bin = std::min(std::fabs(values[i]) * binsPerUnit[channel],
                            static_cast<double>(kChannelCalibrationBins - 1));
      perChannel.histograms[channel * kChannelCalibrationBins +
                            static_cast<int64_t>(bin)] += 1;
    }
  }
  std::vector<uint64_t> &counts = histograms[key];
  counts.resize(kCalibrationBins, 0);
  double binsPerUnit = kCalibrationBins / largest->second;
  for (float value : values) {
    if (!std::isfinite(value))
      continue;
    // Clamped before the conversion: a value past amax (a sample that
    // changed between the passes) counts in the last bin.
    double bin = std::min(std::fabs(value) * binsPerUnit,
                          static_cast<double>(kCalibrationBins - 1));
    counts[static_cast<int64_t>(bin)] += 1;
  }
}

void CalibrationTable::chooseRanges() {
  range.clear();
  for (auto &entry : channels)
    entry.second.range.clear();
  if (method == CalibrationMethod::Max)
    return;
  auto choose = [&](ArrayRef<uint64_t> counts, double largest) {
    return method == CalibrationMethod::Percentile
               ? percentileThreshold(counts, largest, percentile)
               : entropyThreshold(counts, largest);
  };
  for (const auto &[key, counts] : histograms)
    range[key] = choose(counts, amax.at(key));
  for (auto &[key, stats] : channels) {
    stats.range.clear();
    size_t count = stats.amax.size();
    if (stats.histograms.size() != count * kChannelCalibrationBins)
      continue;
    std::vector<uint64_t> counts(kChannelCalibrationBins);
    for (size_t c = 0; c < count; ++c) {
      auto first = stats.histograms.begin() + c * kChannelCalibrationBins;
      std::copy(first, first + kChannelCalibrationBins, counts.begin());
      stats.range.push_back(stats.amax[c] > 0 ? choose(counts, stats.amax[c])
                                              : 0.0);
    }
  }
}

std::optional<double>
CalibrationTable::quantizationRange(const std::string &key) const {
  auto chosen = range.find(key);
  if (chosen != range.end())
    return chosen->second;
  auto largest = amax.find(key);
  if (largest != amax.end())
    return largest->second;
  return std::nullopt;
}

std::vector<double> CalibrationTable::Channels::meanSquare() const {
  std::vector<double> means(sumSquares.size(), 0.0);
  for (size_t c = 0; c < means.size() && rows > 0; ++c)
    means[c] = sumSquares[c] / rows;
  return means;
}

std::string CalibrationTable::toJSON() const {
  llvm::json::Object tensors;
  for (const auto &[key, value] : amax) {
    llvm::json::Object entry{{"amax", value}};
    auto chosen = range.find(key);
    if (chosen != range.end())
      entry["range"] = chosen->second;
    auto stats = channels.find(key);
    if (stats != channels.end() && stats->second.amax.size() > 1) {
      entry["channel_amax"] = llvm::json::Array(stats->second.amax);
      entry["channel_mean_square"] =
          llvm::json::Array(stats->second.meanSquare());
      if (stats->second.range.size() == stats->second.amax.size())
        entry["channel_range"] = llvm::json::Array(stats->second.range);
    }
    tensors[key] = std::move(entry);
  }
  llvm::json::Object root{{"format", "tessera-calibration"},
                          {"version", 1},
                          {"method", calibrationMethodName(method)},
                          {"samples", samples},
                          {"tensors", std::move(tensors)}};
  if (method == CalibrationMethod::Percentile)
    root["percentile"] = percentile;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

llvm::Expected<CalibrationTable>
CalibrationTable::fromJSON(StringRef json) {
  auto fail = [](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "calibration cache: " + why);
  };
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != "tessera-calibration")
    return fail("not a Tessera calibration cache");
  if (root->getInteger("version") != 1)
    return fail("version " +
                Twine(root->getInteger("version").value_or(0)) +
                " is not supported (expected 1)");
  CalibrationTable table;
  table.samples = root->getInteger("samples").value_or(0);
  std::optional<StringRef> methodName = root->getString("method");
  std::optional<CalibrationMethod> method =
      parseCalibrationMethod(methodName.value_or("max"));
  if (!method)
    return fail("unknown method '" + *methodName + "'");
  table.method = *method;
  table.percentile = root->getNumber("percentile").value_or(table.percentile);
  const llvm::json::Object *tensors = root->getObject("tensors");
  if (!tensors)
    return fail("no 'tensors' object");
  for (const auto &[key, entry] : *tensors) {
    const llvm::json::Object *fields = entry.getAsObject();
    std::optional<double> value = fields ? fields->getNumber("amax")
                                         : std::nullopt;
    if (!value || !(*value >= 0))
      return fail("tensor '" + key.str() + "' has no non-negative 'amax'");
    table.amax[key.str()] = *value;
    if (const llvm::json::Value *chosen = fields->get("range")) {
      std::optional<double> r = chosen->getAsNumber();
      if (!r || !(*r >= 0))
        return fail("tensor '" + key.str() +
                    "' has a negative or "
                    "non-numeric 'range'");
      table.range[key.str()] = *r;
    }
    const llvm::json::Array *channelAmax = fields->getArray("channel_amax");
    const llvm::json::Array *meanSquare =
        fields->getArray("channel_mean_square");
    if (!channelAmax && !meanSquare)
      continue;
    if (!channelAmax || !meanSquare ||
        channelAmax->size() != meanSquare->size())
      return fail("tensor '" + key.str() +
                  "' needs 'channel_amax' and 'channel_mean_square' of one "
                  "length");
    Channels &stats = table.channels[key.str()];
    // Mean squares come back as sums over one row each.
    stats.rows = 1;
    for (size_t c = 0; c < channelAmax->size(); ++c) {
      std::optional<double> a = (*channelAmax)[c].getAsNumber();
      std::optional<double> m = (*meanSquare)[c].getAsNumber();
      if (!a || !m || !(*a >= 0) || !(*m >= 0))
        return fail("tensor '" + key.str() +
                    "' has a negative or non-numeric channel statistic");
      stats.amax.push_back(*a);
      stats.sumSquares.push_back(*m);
    }
    if (const llvm::json::Array *channelRange =
            fields->getArray("channel_range")) {
      if (channelRange->size() != channelAmax->size())
        return fail("tensor '" + key.str() +
                    "' has a 'channel_range' whose length is not that of "
                    "'channel_amax'");
      for (const llvm::json::Value &element : *channelRange) {
        std::optional<double> r = element.getAsNumber();
        if (!r || !(*r >= 0))
          return fail("tensor '" + key.str() +
                      "' has a negative or non-numeric 'channel_range'");
        stats.range.push_back(*r);
      }
    }
  }
  return table;
}

std::string calibrationKey(Operation *op, unsigned operand) {
  bool attention = isa<AttentionOp>(op);
  StringRef side = attention ? (operand == 0   ? ":query"
                                : operand == 1 ? ":key"
                                               : ":value")
                             : (operand == 0 ? ":lhs" : ":rhs");
  std::string node = onnxNodeName(op->getLoc());
  if (!node.empty())
    return node + side.str();
  unsigned position = 0;
  if (auto func = op->getParentOfType<func::FuncOp>())
    func.walk([&](Operation *other) {
      if (other == op)
        return WalkResult::interrupt();
      if (other->getName() == op->getName())
        ++position;
      return WalkResult::advance();
    });
  // Kinds apart: a convolution's is its precision report's key only.
  return (attention           ? "#attention"
          : isa<Conv2dOp>(op) ? "#conv"
                              : "#") +
         std::to_string(position) + side.str();
}
} // namespace tessera

namespace {

class ExposeCalibrationValuesPass
    : public ::tessera::impl::ExposeCalibrationValuesPassBase<
          ExposeCalibrationValuesPass> {
public:
  using ExposeCalibrationValuesPassBase::ExposeCalibrationValuesPassBase;

  void runOnOperation() override {
    func::FuncOp entry = ::tessera::entryFunction(getOperation());
    if (!entry)
      return;
    SmallVector<std::pair<std::string, Value>> exposed;
    entry.walk([&](MatmulOp matmul) {
      if (!::tessera::isNarrowingCandidate(matmul))
        return;
      for (unsigned operand : {0u, 1u}) {
        Value value = matmul->getOperand(operand);
        if (!value.getDefiningOp<ConstantOp>())
          exposed.emplace_back(::tessera::calibrationKey(matmul, operand),
                               value);
      }
    });
    // Attention's query, key and value (fp16 must hold them).
    entry.walk([&](AttentionOp attention) {
      if (!attention.getQuery().getType().getElementType().isF32())
        return;
      for (unsigned operand : {0u, 1u, 2u}) {
        Value value = attention->getOperand(operand);
        if (!value.getDefiningOp<ConstantOp>())
          exposed.emplace_back(::tessera::calibrationKey(attention, operand),
                               value);
      }
    });
    if (exposed.empty())
      return;
    for (auto &[key, value] : exposed)
      key = ::tessera::kCalibrationOutputPrefix + key;
    if (failed(::tessera::appendNamedResults(entry, exposed)))
      signalPassFailure();
  }
};

} // namespace
