//===- PrecisionRuns.cpp - the programs the precision options run ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Calibration (`--calibrate`) and the per-op accuracy report
// (`--precision-report`): both compile the model for this CPU with extra
// outputs, run it on samples in ONNX's test layout and reduce what comes
// back (ranges into the calibration cache; errors, saturation and flushes
// into the report).
//
//===----------------------------------------------------------------------===//
#include "PrecisionRuns.h"
#include "AutoPrecision.h"
#include "PrecisionReportPage.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Support/Numerics.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace tessera;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Fewer calibration samples than this draw a warning.
constexpr int64_t kFewCalibrationSamples = 8;

} // namespace

llvm::Expected<std::string>
tessera::runCalibration(llvm::StringRef modelPath, MLIRContext &context,
                        const CompileOptions &options, bool raiseAttention,
                        std::optional<llvm::FileRemover> &temporary) {
  std::vector<std::string> sets = runtime::calibrationSamples(options.calibrate);
  // The automatic policy verifies its plan on samples the ranges have not
  // seen.
  if (options.precision == "auto")
    sets = splitAutoSamples(std::move(sets)).measure;
  CompileOptions probe;
  probe.target = defaultTargetName().str();
  // No --dim: the CPU compiles once for every size, each sample's own.
  probe.exposeCalibrationValues = true;
  probe.raiseAttention = raiseAttention;
  auto executable = tessera::compileAndLoad(modelPath, context, probe);
  if (!executable)
    return fail("calibration: " + llvm::toString(executable.takeError()));
  const runtime::ModelSignature &signature = (*executable)->signature();
  auto runSample = [&](const std::string &set)
      -> llvm::Expected<std::vector<runtime::HostTensor>> {
    auto inputs =
        runtime::readTensorFiles(runtime::testDataFiles(set, "input"));
    if (!inputs)
      return fail("calibration: " + set + ": " +
                  llvm::toString(inputs.takeError()));
    auto outputs = (*executable)->run(*inputs);
    if (!outputs)
      return fail("calibration: " + set + ": " +
                  llvm::toString(outputs.takeError()));
    return std::move(*outputs);
  };
  // Calls `visit(key, values, channels)` for each exposed operand.
  auto forEachExposed =
      [&](const std::vector<runtime::HostTensor> &outputs,
          llvm::function_ref<void(const std::string &,
                                  const std::vector<float> &, int64_t)>
              visit) {
        for (size_t i = 0; i < outputs.size(); ++i) {
          llvm::StringRef name = signature.outputs[i].name;
          if (!name.consume_front(kCalibrationOutputPrefix))
            continue;
          const runtime::HostTensor &tensor = outputs[i];
          std::vector<float> values(tensor.numElements());
          for (int64_t j = 0; j < tensor.numElements(); ++j)
            values[j] = static_cast<float>(tensor.at(j));
          visit(name.str(), values,
                tensor.shape.empty() ? 1 : tensor.shape.back());
        }
      };
  CalibrationTable table;
  for (const std::string &set : sets) {
    auto outputs = runSample(set);
    if (!outputs)
      return outputs.takeError();
    forEachExposed(
        *outputs,
        [&](const std::string &key, const std::vector<float> &values,
            int64_t channels) { table.record(key, values, channels); });
  }
  table.samples = sets.size();
  // Percentile and entropy read histograms over [0, amax], so a second
  // pass once amax is known.
  table.method = *parseCalibrationMethod(options.calibrationMethod);
  table.percentile = options.calibrationPercentile;
  if (table.method != CalibrationMethod::Max) {
    for (const std::string &set : sets) {
      auto outputs = runSample(set);
      if (!outputs)
        return outputs.takeError();
      // Per channel only for SmoothQuant, which alone reads channel
      // ranges (a BERT-base layer has some 7,000 channels; entropy tries
      // 385 clips in each).
      forEachExposed(*outputs, [&](const std::string &key,
                                   const std::vector<float> &values,
                                   int64_t channels) {
        table.recordHistogram(key, values,
                              options.smoothQuant.empty() ? 1 : channels);
      });
    }
    table.chooseRanges();
  }
  if (table.samples < kFewCalibrationSamples)
    mlir::emitWarning(FileLineColLoc::get(&context, options.calibrate, 0, 0))
        << "calibration used " << table.samples << " sample"
        << (table.samples == 1 ? "" : "s") << "; ranges from fewer than "
        << kFewCalibrationSamples << " may not represent the data";
  std::string path = options.calibrationCache;
  if (path.empty()) {
    llvm::SmallString<128> created;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "tessera-calibration", "json", created))
      return fail("calibration: cannot create a temporary file: " +
                  ec.message());
    path = created.str().str();
    temporary.emplace(path);
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return fail("calibration: cannot write " + path + ": " + ec.message());
  out << table.toJSON();
  return path;
}

namespace {
/// The largest finite |value| of `tensor` (0 when it has none).
double largestMagnitude(const runtime::HostTensor &tensor) {
  double largest = 0;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    if (double x = std::fabs(tensor.at(i)); std::isfinite(x))
      largest = std::max(largest, x);
  return largest;
}

/// How far one narrowed op's results are from the f32 ones, over all
/// samples.
struct ErrorStats {
  double dot = 0, referenceNorm = 0, actualNorm = 0, errorNorm = 0,
         maxAbsError = 0;
  /// Per channel (the last dim): squared norms of the reference and error.
  std::vector<double> channelReference, channelError;

  void add(const runtime::HostTensor &reference,
           const runtime::HostTensor &actual) {
    int64_t channels = reference.shape.empty() ? 1 : reference.shape.back();
    channels = std::max<int64_t>(channels, 1);
    channelReference.resize(channels, 0.0);
    channelError.resize(channels, 0.0);
    int64_t n = std::min(reference.numElements(), actual.numElements());
    for (int64_t i = 0; i < n; ++i) {
      double r = reference.at(i), a = actual.at(i), e = a - r;
      // The same infinity (a masked logit's -inf) or NaN on both sides is
      // no error (inf - inf would make every norm NaN).
      if (!std::isfinite(r) && (r == a || (std::isnan(r) && std::isnan(a))))
        continue;
      dot += r * a;
      referenceNorm += r * r;
      actualNorm += a * a;
      errorNorm += e * e;
      maxAbsError = std::max(maxAbsError, std::fabs(e));
      channelReference[i % channels] += r * r;
      channelError[i % channels] += e * e;
    }
  }
  double relativeL2() const {
    return referenceNorm > 0 ? std::sqrt(errorNorm / referenceNorm) : 0.0;
  }
  llvm::json::Object toJSON() const {
    double cosine = referenceNorm > 0 && actualNorm > 0
                        ? dot / std::sqrt(referenceNorm * actualNorm)
                        : 1.0;
    double worstChannel = 0;
    for (size_t c = 0; c < channelReference.size(); ++c)
      if (channelReference[c] > 0)
        worstChannel = std::max(
            worstChannel, std::sqrt(channelError[c] / channelReference[c]));
    return llvm::json::Object{{"cosine", cosine},
                              {"relative_l2", relativeL2()},
                              {"max_channel_relative_l2", worstChannel},
                              {"max_abs_error", maxAbsError}};
  }
};

/// How many of a narrowed op's activation values (its f32 operands other
/// than constants) its narrow type clips or flushes to zero, over all
/// samples.
struct RangeStats {
  int64_t values = 0, saturated = 0, flushed = 0;

  /// Counts `tensor`'s values quantized with `scale` into `type`: beyond
  /// the type's largest magnitude (`largest`, after the scale) is
  /// saturated, a non-zero value that rounds to zero is flushed.
  void add(const runtime::HostTensor &tensor, ElementType type, double scale,
           double largest) {
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      double x = tensor.at(i) / scale;
      if (!std::isfinite(x))
        continue;
      ++values;
      if (std::fabs(x) > largest)
        ++saturated;
      else if (x != 0 && numerics::roundTo(type, static_cast<float>(x)) == 0)
        ++flushed;
    }
  }
  double percent(int64_t count) const {
    return values ? 100.0 * static_cast<double>(count) / values : 0.0;
  }
};

} // namespace

llvm::Error tessera::writePrecisionReport(llvm::StringRef modelPath,
                                          MLIRContext &context,
                                          const CompileOptions &options,
                                          llvm::StringRef calibrationCache,
                                          bool raiseAttention) {
  std::map<std::string, ErrorStats> local, accumulated;
  std::map<std::string, RangeStats> clipped;
  std::map<std::string, std::vector<runtime::HostTensor>> references;
  // Each region's op (matmul, conv, attention) and its operands' scales;
  // the regions the policy kept f32.
  std::map<std::string, std::string> kinds;
  std::set<std::string> kept;
  std::map<std::string, std::map<std::string, std::vector<float>>> scales;
  std::vector<std::string> sets = runtime::calibrationSamples(
      options.reportInputs.empty() ? options.calibrate : options.reportInputs);
  // The ranges the scales came from (the assign pass has read and checked
  // the same cache).
  CalibrationTable ranges;
  if (!calibrationCache.empty()) {
    if (auto buffer = llvm::MemoryBuffer::getFile(calibrationCache)) {
      auto table = CalibrationTable::fromJSON((*buffer)->getBuffer());
      if (table)
        ranges = std::move(*table);
      else
        llvm::consumeError(table.takeError());
    }
  }
  // What the policy's narrow type makes of an operand `key`
  // ("<node>:lhs"): the type, the scale it is divided by first (8-bit
  // policies: its calibrated range, or under fp8's current scaling its
  // own amax, over the type's largest quantized magnitude) and that
  // magnitude. Not with SmoothQuant, whose operand is
  // divided per channel first.
  auto countClipped = [&](llvm::StringRef key,
                          const runtime::HostTensor &tensor) {
    auto [node, side] = key.rsplit(':');
    if (!options.smoothQuant.empty() ||
        !llvm::is_contained({"lhs", "rhs", "query", "key", "value"}, side))
      return;
    ElementType type;
    double scale = 1, largest;
    if (options.precision == "int8" || options.precision == "fp8") {
      // Current scaling divides by the operand's own amax on each run.
      std::optional<double> range =
          options.fp8Scaling == "current"
              ? std::optional<double>(largestMagnitude(tensor))
              : ranges.quantizationRange(key.str());
      if (!range || !(*range > 0))
        return;
      bool int8 = options.precision == "int8";
      bool e5m2 = options.fp8Format == "e5m2";
      type = int8   ? ElementType::I8
             : e5m2 ? ElementType::F8E5M2
                    : ElementType::F8E4M3FN;
      largest = int8 ? kInt8Max : e5m2 ? kE5M2Max : kE4M3Max;
      scale = *range / largest;
    } else if (options.precision == "bf16" || options.precision == "fp16") {
      type = options.precision == "bf16" ? ElementType::BF16 : ElementType::F16;
      largest = numerics::largestFinite(type);
    } else {
      return;
    }
    clipped[node.str()].add(tensor, type, scale, largest);
  };
  for (llvm::StringRef mode : {"local", "accumulated"}) {
    CompileOptions probe;
    probe.target = defaultTargetName().str();
    probe.precision = options.precision;
    probe.keepFp32 = options.keepFp32;
    probe.keepHeads = options.keepHeads;
    probe.keepFirstLayers = options.keepFirstLayers;
    probe.smoothQuant = options.smoothQuant;
    probe.fp8Scaling = options.fp8Scaling;
    probe.fp8Format = options.fp8Format;
    probe.calibrationCache = calibrationCache.str();
    probe.precisionReportMode = mode.str();
    // The local program also returns the f32 operands, for the counts of
    // saturated and flushed values.
    probe.exposeCalibrationValues = mode == "local";
    probe.raiseAttention = raiseAttention;
    auto executable = tessera::compileAndLoad(modelPath, context, probe);
    if (!executable)
      return fail("precision report: " +
                  llvm::toString(executable.takeError()));
    const runtime::ModelSignature &signature = (*executable)->signature();
    for (size_t s = 0; s < sets.size(); ++s) {
      auto inputs =
          runtime::readTensorFiles(runtime::testDataFiles(sets[s], "input"));
      if (!inputs)
        return fail("precision report: " + llvm::toString(inputs.takeError()));
      auto outputs = (*executable)->run(*inputs);
      if (!outputs)
        return fail("precision report: " + sets[s] + ": " +
                    llvm::toString(outputs.takeError()));
      for (size_t i = 0; i < outputs->size(); ++i) {
        llvm::StringRef name = signature.outputs[i].name;
        if (name.consume_front(kCalibrationOutputPrefix)) {
          countClipped(name, (*outputs)[i]);
          continue;
        }
        std::optional<ReportOutput> out = parseReportOutputName(name);
        if (!out)
          continue;
        llvm::StringRef role = out->role, key = out->key;
        runtime::HostTensor &value = (*outputs)[i];
        kinds[key.str()] = out->op.str();
        if (role.consume_front("scale_")) {
          std::vector<float> &chosen = scales[key.str()][role.str()];
          chosen.clear();
          for (int64_t e = 0; e < value.numElements(); ++e)
            chosen.push_back(static_cast<float>(value.at(e)));
          continue;
        }
        std::vector<runtime::HostTensor> &refs = references[key.str()];
        if (role == "reference") {
          refs.push_back(std::move(value));
        } else if (s < refs.size()) {
          // A region kept f32 is its own reference in the f32 program.
          if (role == "kept")
            kept.insert(key.str());
          (role == "accumulated" ? accumulated : local)[key.str()].add(refs[s],
                                                                       value);
        }
      }
    }
  }
  std::vector<std::string> ranked;
  for (const auto &[key, stats] : local)
    ranked.push_back(key);
  llvm::sort(ranked, [&](const std::string &a, const std::string &b) {
    double ea = local[a].relativeL2(), eb = local[b].relativeL2();
    return ea != eb ? ea > eb : a < b;
  });
  llvm::json::Array regions;
  for (const std::string &key : ranked) {
    bool wide = kept.count(key);
    llvm::json::Object region{{"node", key},
                              {"op", kinds[key]},
                              {"precision", wide ? "fp32" : options.precision},
                              {"local", local[key].toJSON()}};
    // The scales each operand was divided by (ONNX's convention): one per
    // tensor, or per output channel as their count, least and largest;
    // "current" where each run computes its own (fp8 current scaling).
    bool eightBit =
        !wide && (options.precision == "int8" || options.precision == "fp8");
    for (llvm::StringRef side : {"lhs", "rhs"}) {
      if (!eightBit || kinds[key] != "matmul")
        break;
      auto found = scales[key].find(side.str());
      std::string field = (side + "_scale").str();
      if (found == scales[key].end() || found->second.empty()) {
        if (options.fp8Scaling == "current" && options.precision == "fp8")
          region[field] = "current";
        continue;
      }
      const std::vector<float> &values = found->second;
      if (values.size() == 1) {
        region[field] = values.front();
        continue;
      }
      auto [least, largest] = std::minmax_element(values.begin(), values.end());
      region[field] =
          llvm::json::Object{{"channels", static_cast<int64_t>(values.size())},
                             {"min", *least},
                             {"max", *largest}};
    }
    auto amax = ranges.amax.find(key + ":lhs");
    if (amax != ranges.amax.end())
      region["lhs_amax"] = amax->second;
    auto range = ranges.range.find(key + ":lhs");
    if (range != ranges.range.end())
      region["lhs_range"] = range->second;
    if (auto counts = clipped.find(key); !wide && counts != clipped.end()) {
      region["saturated_percent"] =
          counts->second.percent(counts->second.saturated);
      region["flushed_percent"] =
          counts->second.percent(counts->second.flushed);
    }
    if (accumulated.count(key))
      region["accumulated"] = accumulated[key].toJSON();
    regions.push_back(std::move(region));
  }
  llvm::json::Object root{{"format", "tessera-precision-report"},
                          {"version", 1},
                          {"policy", options.precision},
                          {"samples", static_cast<int64_t>(sets.size())},
                          {"regions", std::move(regions)}};
  // The same as a page to read, beside the JSON: FILE.html.
  llvm::SmallString<256> pagePath(options.precisionReport);
  llvm::sys::path::replace_extension(pagePath, "html");
  std::string page = precisionReportPage(root);
  std::error_code ec;
  {
    llvm::raw_fd_ostream out(options.precisionReport, ec);
    if (ec)
      return fail("cannot write " + options.precisionReport + ": " +
                  ec.message());
    out << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  }
  if (pagePath != options.precisionReport) {
    llvm::raw_fd_ostream out(pagePath, ec);
    if (ec)
      return fail("cannot write " + pagePath.str().str() + ": " +
                  ec.message());
    out << page;
  }
  return llvm::Error::success();
}

