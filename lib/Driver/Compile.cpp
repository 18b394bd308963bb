//===- Compile.cpp - the one entry point from a model to an artifact ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Compile.h"
#include "AutoPrecision.h"
#include "PrecisionRuns.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace tessera;

namespace {

/// What a folder of samples holds when it holds none.
constexpr llvm::StringLiteral kNoSamples =
    "has no samples: test_data_set_* folders (ONNX's test layout), folders "
    "of input_<K>.pb or .npy files, or .pb or .npy files (one sample each "
    "of a model with one input)";

/// A failure the context's diagnostic handler has already reported.
class ReportedFailure : public llvm::ErrorInfo<ReportedFailure> {
public:
  static char ID;
  explicit ReportedFailure(std::string step) : step(std::move(step)) {}
  void log(llvm::raw_ostream &os) const override { os << step << " failed"; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string step;
};
char ReportedFailure::ID;

/// An error in the options, found before the model is read.
class OptionError : public llvm::ErrorInfo<OptionError> {
public:
  static char ID;
  explicit OptionError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string message;
};
char OptionError::ID;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What a compile does, decided from its options before the model is read.
struct Plan {
  const Target *target = nullptr;
  GraphOptions graph;
  std::vector<std::string> phases;
  /// The index in `phases` of the last phase that runs.
  size_t stop = 0;
  /// The artifact to write; null for IR.
  const ArtifactKind *artifact = nullptr;
  std::unique_ptr<TargetCompilation> compilation;
  /// A temporary calibration cache, removed with the plan.
  std::optional<llvm::FileRemover> temporaryCache;
};

/// The names of the targets for which `accepts` holds, joined by ", ".
std::string targetsWhere(llvm::function_ref<bool(const Target &)> accepts) {
  std::string names;
  for (const Target *target : registeredTargets())
    if (accepts(*target))
      names += (names.empty() ? "" : ", ") + target->name().str();
  return names.empty() ? "none" : names;
}

llvm::Expected<Plan> makePlan(const CompileOptions &options, bool toTheEnd) {
  registerAllTargets();
  Plan plan;
  plan.target = lookupTarget(options.target);
  if (!plan.target)
    return fail("unknown target '" + options.target + "' (expected " +
                targetNames() + ")");
  const Target &target = *plan.target;
  for (const auto &[name, value] : options.targetOptions) {
    if (llvm::any_of(target.options(), [&](const TargetOption &option) {
          return option.name == name;
        }))
      continue;
    // How the option is spelled (-O3, --accel) and whose it is.
    std::string spelled = "--" + name;
    std::string owners;
    for (const Target *other : registeredTargets())
      for (const TargetOption &option : other->options())
        if (option.name == name) {
          if (option.prefix)
            spelled = "-" + name;
          owners += (owners.empty() ? "" : ", ") + other->name().str();
        }
    if (owners.empty())
      return fail("no target has an option " + spelled);
    return fail(spelled + " is an option of the " + owners +
                " target, not of " + target.name());
  }
  if (!options.dimValues.empty() && !target.needsStaticShapes())
    return fail("--dim applies to targets that compile for fixed sizes (" +
                targetsWhere([](const Target &t) {
                  return t.needsStaticShapes();
                }) +
                "); a " + target.name() + " model compiles once for every size");

  const TargetInfo &info = target.info();
  bool wantsReport = !options.fusionReport.empty() || !options.dotGraph.empty();
  if (wantsReport && !info.formsFusionRegions())
    return fail("the " + target.name() +
                " target forms no fusion regions; --fusion-report and "
                "--dump-graph apply to " +
                targetsWhere([](const Target &t) {
                  return t.info().formsFusionRegions();
                }));
  plan.graph.target = target.name().str();
  plan.graph.fuse = options.fuse && info.formsFusionRegions();
  plan.graph.fusionReport = options.fusionReport;
  plan.graph.dotGraph = options.dotGraph;
  plan.graph.printFusionSummary = options.printFusionSummary;
  plan.graph.precisionRemarks = options.verbose;
  bool automatic = options.precision == "auto";
  if (automatic) {
    if (options.calibrate.empty())
      return fail("--precision=auto measures each matmul's error on "
                  "samples: give --calibrate=DIR");
    if (!options.precisionReport.empty())
      return fail("--precision-report reports on one policy; with "
                  "--precision=auto the plan (--precision-plan) records "
                  "each matmul's errors");
    if (auto budget = parseAccuracyBudget(options.accuracyBudget); !budget)
      return budget.takeError();
    if (auto costs = parsePrecisionCosts(options.precisionCosts); !costs)
      return costs.takeError();
    if (std::optional<std::string> why = info.rejectPrecisionPolicy("auto"))
      return fail(*why);
  } else if (!options.precisionPlan.empty()) {
    if (options.precision != "fp32")
      return fail("--precision-plan applies a plan (or, with "
                  "--precision=auto, names where it is written); it cannot "
                  "be combined with --precision=" + options.precision);
    auto nodes = readPrecisionPlan(options.precisionPlan);
    if (!nodes)
      return nodes.takeError();
    bool eightBit = llvm::any_of(*nodes, [](const auto &entry) {
      return entry.second == "int8" || entry.second == "fp8";
    });
    if (eightBit && options.calibrate.empty() &&
        options.calibrationCache.empty())
      return fail("the plan " + options.precisionPlan +
                  " narrows matmuls to 8 bits: give the ranges they were "
                  "calibrated on (--calibrate=DIR or --calibration-cache)");
    plan.graph.precisionPlan = std::move(*nodes);
  }
  if (!options.precisionPlanNodes.empty())
    plan.graph.precisionPlan = options.precisionPlanNodes;
  if (!automatic && !isPrecisionPolicy(options.precision)) {
    std::string known;
    for (llvm::StringRef policy : precisionPolicies())
      known += (known.empty() ? "" : ", ") + policy.str();
    return fail("unknown precision policy '" + options.precision +
                "' (expected one of: " + known + ")");
  }
  for (const std::string &pattern : options.keepFp32) {
    std::string error;
    if (!llvm::Regex(pattern).isValid(error))
      return fail("--keep-fp32 pattern '" + pattern +
                  "' is not a valid regular expression: " + error);
  }
  if (options.precision != "fp32" && !automatic)
    if (std::optional<std::string> why =
            info.rejectPrecisionPolicy(options.precision))
      return fail(*why);
  // The automatic policy's plan replaces the policy once it is found.
  plan.graph.precision = automatic ? "fp32" : options.precision;
  plan.graph.keepFp32 = options.keepFp32;
  plan.graph.keepHeads = options.keepHeads;
  plan.graph.keepFirstLayers = options.keepFirstLayers;
  plan.graph.smoothQuant = options.smoothQuant;
  if (!options.smoothQuant.empty()) {
    double alpha;
    if (options.precision != "int8")
      return fail("--smooth-quant applies to --precision=int8");
    if (options.smoothQuant != "auto" &&
        (llvm::StringRef(options.smoothQuant).getAsDouble(alpha) ||
         alpha < 0 || alpha > 1))
      return fail("--smooth-quant takes 'auto' or an alpha in [0, 1], got '" +
                  options.smoothQuant + "'");
  }
  if (options.fp8Scaling != "static" && options.fp8Scaling != "current")
    return fail("--fp8-scaling takes static or current, got '" +
                options.fp8Scaling + "'");
  bool currentScaling = options.fp8Scaling == "current";
  if (currentScaling && options.precision != "fp8")
    return fail("--fp8-scaling=current applies to --precision=fp8");
  plan.graph.fp8Scaling = options.fp8Scaling;
  if (options.fp8Format != "e4m3" && options.fp8Format != "e5m2")
    return fail("--fp8-format takes e4m3 or e5m2, got '" + options.fp8Format +
                "'");
  if (options.fp8Format != "e4m3" && options.precision != "fp8")
    return fail("--fp8-format=" + options.fp8Format +
                " applies to --precision=fp8");
  plan.graph.fp8Format = options.fp8Format;
  plan.graph.exposeCalibrationValues = options.exposeCalibrationValues;
  plan.graph.saturationCounts = options.saturationCounts;
  plan.graph.precisionReportMode = options.precisionReportMode;
  plan.graph.raiseAttention = options.raiseAttention;
  // --no-fusion raises no attention either (on a target that forms no
  // regions, plan.graph.fuse does not say so).
  if (!plan.graph.raiseAttention && !options.fuse)
    plan.graph.raiseAttention = false;
  if (!options.precisionReport.empty()) {
    if (options.precision == "fp32")
      return fail("--precision-report reports on a --precision other than "
                  "fp32");
    std::string samples = options.reportInputs.empty() ? options.calibrate
                                                       : options.reportInputs;
    if (samples.empty())
      return fail("--precision-report runs samples: give --report-inputs=DIR "
                  "or --calibrate=DIR");
    if (runtime::calibrationSamples(samples).empty())
      return fail("--report-inputs: " + samples + " " + kNoSamples);
  }
  plan.graph.calibrationCache = options.calibrationCache;
  if ((options.precision == "int8" ||
       (options.precision == "fp8" && !currentScaling)) &&
      options.calibrate.empty() && options.calibrationCache.empty() &&
      !options.exposeCalibrationValues)
    return fail("--precision=" + options.precision +
                " needs the ranges of the activations: give --calibrate=DIR "
                "(or --calibration-cache=FILE)" +
                (options.precision == "fp8"
                     ? ", or compute them each run with --fp8-scaling=current"
                     : ""));
  if ((!options.calibrate.empty() || !options.calibrationCache.empty()) &&
      options.precision == "fp32" && plan.graph.precisionPlan.empty())
    return fail("--calibrate and --calibration-cache inform a --precision "
                "other than fp32");
  if (!options.calibrate.empty() &&
      runtime::calibrationSamples(options.calibrate).empty())
    return fail("--calibrate: " + options.calibrate + " " + kNoSamples);
  std::optional<CalibrationMethod> method =
      parseCalibrationMethod(options.calibrationMethod);
  if (!method) {
    std::string known;
    for (llvm::StringRef name : calibrationMethods())
      known += (known.empty() ? "" : ", ") + name.str();
    return fail("unknown calibration method '" + options.calibrationMethod +
                "' (expected one of: " + known + ")");
  }
  if (*method != CalibrationMethod::Max && options.calibrate.empty())
    return fail("--calibration-method=" + options.calibrationMethod +
                " chooses the ranges of --calibrate's samples: give "
                "--calibrate=DIR (a cache keeps the method it was made with)");
  if (!(options.calibrationPercentile > 0 &&
        options.calibrationPercentile <= 100))
    return fail("--calibration-percentile takes a percentage in (0, 100], "
                "got " +
                llvm::formatv("{0}", options.calibrationPercentile).str());

  // What to write: IR, or an artifact named by --emit or by the output's
  // extension.
  std::string emit = options.emit;
  if (emit.empty() && !toTheEnd) {
    llvm::StringRef extension = llvm::sys::path::extension(options.output);
    emit = "mlir";
    for (const ArtifactKind &kind : target.artifacts())
      if (options.output != "-" && extension == kind.extension)
        emit = kind.name;
  }
  if (!toTheEnd && emit != "mlir") {
    for (const ArtifactKind &kind : target.artifacts())
      if (kind.name == emit)
        plan.artifact = &kind;
    if (!plan.artifact) {
      std::string names = "mlir";
      for (const ArtifactKind &kind : target.artifacts())
        names += "|" + kind.name;
      return fail("unknown --emit '" + emit + "' for the " + target.name() +
                  " target (expected " + names + ")");
    }
    if (!options.compileTo.empty())
      return fail("--compile-to prints the IR after a phase; it cannot be "
                  "combined with --emit=" +
                  emit +
                  (options.emit.empty() ? " (which -o " + options.output +
                                              " selects; use a .mlir file)"
                                        : std::string()));
    if (options.output == "-" && !plan.artifact->text)
      return fail("--emit=" + emit + " needs -o");
  }

  plan.phases = phaseNames(target);
  std::string stop = toTheEnd || plan.artifact ? plan.phases.back()
                     : options.compileTo.empty()
                         ? target.defaultPrintPhase().str()
                         : options.compileTo;
  auto it = llvm::find(plan.phases, stop);
  if (it == plan.phases.end())
    return fail("unknown phase '" + stop + "' for --compile-to (expected " +
                llvm::join(plan.phases, "|") + " for the " + target.name() +
                " target)");
  plan.stop = it - plan.phases.begin();
  if (wantsReport && plan.stop < 1)
    return fail("--fusion-report and --dump-graph need --compile-to=graph or "
                "later");
  TargetOptionValues targetOptions = options.targetOptions;
  if (options.verbose)
    targetOptions[kVerboseOptionKey] = "1";
  if (!options.fusionReport.empty() && options.fusionReport != "-" &&
      options.fuse)
    targetOptions[kReportSlowPathsOptionKey] = "1";
  if (options.allowTF32)
    targetOptions[kAllowTF32OptionKey] = "1";
  if (options.precision != "fp32")
    targetOptions[kPrecisionOptionKey] = options.precision;
  // The target fuses in its own lowering unless the user said not to (a
  // target that forms no fusion regions in the graph phase still may).
  auto compilation = target.configure(targetOptions, options.fuse);
  if (!compilation)
    return compilation.takeError();
  plan.compilation = std::move(*compilation);
  plan.graph.info = plan.compilation->targetInfo();
  // The hardware configured (an accelerator's formats) may refuse what
  // the target as a whole takes.
  if (plan.graph.info && options.precision != "fp32")
    if (std::optional<std::string> why =
            plan.graph.info->rejectPrecisionPolicy(options.precision))
      return fail(*why);
  return std::move(plan);
}

/// The remarks a target's lowering makes at each op it leaves on a slow
/// path (kReportSlowPathsOptionKey), gathered while this lives: their ONNX
/// node, op type, path and reason. Passed on to the tool's printer only
/// when `print` (-v).
class SlowPaths {
public:
  SlowPaths(MLIRContext &context, bool print)
      : handler(&context, [this, print](Diagnostic &diag) -> LogicalResult {
          if (diag.getSeverity() != DiagnosticSeverity::Remark)
            return failure();
          std::string message = diag.str();
          llvm::StringRef text(message);
          if (!text.starts_with("contraction stays a ") &&
              !text.starts_with("convolution stays a ") &&
              !text.starts_with("attention stays decomposed"))
            return failure();
          auto [path, reason] = text.split(": ");
          auto [node, op] = onnxNodeOf(diag.getLocation());
          // (A json::Value holds a StringRef without a copy.)
          found.push_back(llvm::json::Object{{"node", node},
                                             {"op", op},
                                             {"path", path.str()},
                                             {"reason", reason.str()}});
          return print ? failure() : success();
        }) {}

  /// Adds them to the fusion report at `path` as "slow_paths" (empty when
  /// every contraction took a fast kernel).
  llvm::Error addTo(llvm::StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return fail("cannot read " + path + ": " + buffer.getError().message());
    auto report = llvm::json::parse((*buffer)->getBuffer());
    if (!report)
      return report.takeError();
    if (llvm::json::Object *root = report->getAsObject())
      (*root)["slow_paths"] = std::move(found);
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write " + path + ": " + ec.message());
    out << llvm::formatv("{0:2}", *report) << "\n";
    return llvm::Error::success();
  }

private:
  llvm::json::Array found;
  ScopedDiagnosticHandler handler;
};

/// Imports the model and runs the planned phases on it.
llvm::Expected<OwningOpRef<ModuleOp>> runPhases(llvm::StringRef path,
                                                MLIRContext &context,
                                                const CompileOptions &options,
                                                Plan &plan) {
  std::optional<TimingScope> importTiming;
  if (options.timing)
    importTiming = options.timing->nest("Import ONNX");
  ONNXImportOptions import;
  import.dimValues = options.dimValues;
  import.noteConversions = options.verbose;
  auto module = importONNXFile(path, context, import);
  if (importTiming)
    importTiming->stop();
  if (failed(module))
    return llvm::make_error<ReportedFailure>("import");
  if (plan.stop == 0)
    return std::move(*module);
  PassManager pm(&context);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return fail("invalid pass manager options");
  buildGraphPipeline(pm, plan.graph);
  if (plan.stop > 1)
    plan.compilation->buildPipeline(pm, plan.phases[plan.stop]);
  // What the target's lowering left on a slow path, for the fusion report
  // (printed as well only with -v).
  std::optional<SlowPaths> slowPaths;
  if (!options.fusionReport.empty() && options.fusionReport != "-" &&
      plan.graph.fuse && plan.stop > 1 && plan.graph.info &&
      plan.graph.info->reportsSlowPaths())
    slowPaths.emplace(context, options.verbose);
  if (failed(pm.run(**module)))
    return llvm::make_error<ReportedFailure>(
        plan.stop > 1 ? "lowering for the " + plan.target->name().str() +
                            " target"
                      : std::string("the graph phase"));
  if (slowPaths)
    if (llvm::Error error = slowPaths->addTo(options.fusionReport))
      return std::move(error);
  return std::move(*module);
}

/// Runs the calibration `options` ask for (`--calibrate`) and points the
/// plan's graph phase at the cache it wrote.
llvm::Error calibrate(llvm::StringRef modelPath, MLIRContext &context,
                      const CompileOptions &options, Plan &plan) {
  if (options.calibrate.empty())
    return llvm::Error::success();
  auto cache = runCalibration(modelPath, context, options,
                              raisesAttention(plan.graph), plan.temporaryCache);
  if (!cache)
    return cache.takeError();
  plan.graph.calibrationCache = std::move(*cache);
  return llvm::Error::success();
}

/// Under --precision=auto, searches the plan (AutoPrecision.cpp) on the
/// calibration samples and the cache calibrate() wrote; the graph phase
/// applies it.
llvm::Error choosePrecision(llvm::StringRef modelPath, MLIRContext &context,
                            const CompileOptions &options, Plan &plan) {
  if (options.precision != "auto")
    return llvm::Error::success();
  auto nodes = searchPrecisionPlan(
      modelPath, context, options, plan.graph.calibrationCache,
      raisesAttention(plan.graph),
      plan.graph.info ? *plan.graph.info : plan.target->info());
  if (!nodes)
    return nodes.takeError();
  plan.graph.precisionPlan = std::move(*nodes);
  return llvm::Error::success();
}

/// Whether constants print elided after the planned phase.
bool elidesConstants(const Plan &plan) {
  for (const TargetPhase &phase : plan.target->phases())
    if (phase.name == plan.phases[plan.stop])
      return phase.elideConstants;
  return false;
}

} // namespace

/// The plan for `options`, its errors as OptionErrors.
static llvm::Expected<Plan> planFor(const CompileOptions &options,
                                    bool toTheEnd) {
  auto plan = makePlan(options, toTheEnd);
  if (!plan)
    return llvm::make_error<OptionError>(llvm::toString(plan.takeError()));
  return plan;
}

llvm::Error tessera::compile(llvm::StringRef modelPath, MLIRContext &context,
                             const CompileOptions &options) {
  auto plan = planFor(options, /*toTheEnd=*/false);
  if (!plan)
    return plan.takeError();
  if (llvm::Error error = calibrate(modelPath, context, options, *plan))
    return error;
  if (llvm::Error error = choosePrecision(modelPath, context, options, *plan))
    return error;
  if (!options.precisionReport.empty())
    if (llvm::Error error = writePrecisionReport(modelPath, context, options,
                                                 plan->graph.calibrationCache,
                                                 raisesAttention(plan->graph)))
      return error;
  auto module = runPhases(modelPath, context, options, *plan);
  if (!module)
    return module.takeError();
  if (options.disableOutput)
    return llvm::Error::success();
  if (plan->artifact) {
    TimingScope none;
    return plan->compilation->writeArtifact(
        **module, *plan->artifact, options.output,
        options.timing ? *options.timing : none);
  }
  std::string error;
  auto output = openOutputFile(options.output, &error);
  if (!output)
    return fail(error);
  OpPrintingFlags flags;
  if (!options.printWeights) {
    flags.elideLargeResourceString(64);
    if (elidesConstants(*plan))
      flags.elideLargeElementsAttrs(16);
  }
  (*module)->print(output->os(), flags);
  output->keep();
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<runtime::Executable>>
tessera::compileAndLoad(llvm::StringRef modelPath, MLIRContext &context,
                        const CompileOptions &options,
                        const runtime::LoadOptions &runOptions) {
  auto plan = planFor(options, /*toTheEnd=*/true);
  if (!plan)
    return plan.takeError();
  if (llvm::Error error = calibrate(modelPath, context, options, *plan))
    return error;
  if (llvm::Error error = choosePrecision(modelPath, context, options, *plan))
    return error;
  if (!options.precisionReport.empty())
    if (llvm::Error error = writePrecisionReport(modelPath, context, options,
                                                 plan->graph.calibrationCache,
                                                 raisesAttention(plan->graph)))
      return error;
  auto module = runPhases(modelPath, context, options, *plan);
  if (!module)
    return module.takeError();
  return plan->compilation->load(**module, runOptions);
}

llvm::Expected<std::map<std::string, int64_t>>
tessera::parseDimValues(llvm::ArrayRef<std::string> dims) {
  std::map<std::string, int64_t> values;
  for (const std::string &dim : dims) {
    auto [name, size] = llvm::StringRef(dim).split('=');
    int64_t value;
    if (name.empty() || size.getAsInteger(10, value) || value <= 0)
      return fail("--dim expects name=size with a positive size, got '" + dim +
                  "'");
    values[name.str()] = value;
  }
  return values;
}

bool tessera::isReportedFailure(llvm::Error &error) {
  bool reported = false;
  error = llvm::handleErrors(std::move(error),
                             [&](const ReportedFailure &) { reported = true; });
  return reported;
}

bool tessera::isOptionError(const llvm::Error &error) {
  return error.isA<OptionError>();
}
