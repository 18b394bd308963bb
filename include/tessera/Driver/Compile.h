//===- Compile.h - the one entry point from a model to an artifact --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// compile() runs import, the graph phase and the target's phases, and
// writes the IR after a phase or one of the target's artifacts;
// compileAndLoad() runs the same phases and opens the result in process.
// The tools only parse arguments into CompileOptions and print.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DRIVER_COMPILE_H
#define TESSERA_DRIVER_COMPILE_H

#include "tessera/Runtime/Executable.h"
#include "tessera/Target/Target.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

struct CompileOptions {
  /// The registered target to compile for.
  std::string target = "cpu";
  /// The target's own options by name (defaults for those not given).
  TargetOptionValues targetOptions;
  /// Form fusion regions (when the target's TargetInfo does); off, one op
  /// per kernel.
  bool fuse = true;
  /// The fusion report (JSON) and fused graph (Graphviz) files; empty for
  /// none. `printFusionSummary` prints the report as text to stderr.
  std::string fusionReport, dotGraph;
  bool printFusionSummary = false;
  /// The precision policy (fp32, bf16, fp16) and the ONNX node-name
  /// patterns (regular expressions matching the whole name) whose ops stay
  /// f32.
  std::string precision = "fp32";
  std::vector<std::string> keepFp32;
  /// Under `precision` "auto" (docs/Precision.md): the accuracy the plan
  /// must keep against the f32 program (`--accuracy-budget`, as
  /// "cos:0.999,nrel:0.02"), and where the plan is written
  /// (`--precision-plan`). With another policy left at fp32, a plan file
  /// given is read and applied.
  std::string accuracyBudget = "cos:0.999,nrel:0.02";
  std::string precisionPlan;
  /// The contraction time of policies relative to fp32's at the same
  /// shape that the automatic policy plans with instead of the target's
  /// cost model (`--precision-costs`, as "int8:0.25,bf16:0.5"); empty for
  /// the target's.
  std::string precisionCosts;
  /// A plan to apply as it is (node -> policy; the automatic policy sets
  /// it for the programs it measures).
  std::map<std::string, std::string> precisionPlanNodes;
  /// Under 8-bit policies, keep output heads f32 (`--quantize-heads`
  /// turns it off).
  bool keepHeads = true;
  /// Under 8-bit policies, keep first layers f32 too
  /// (`--quantize-first-layers` turns it off).
  bool keepFirstLayers = true;
  /// fp32 matmuls may run as tf32 on tensor cores (`--allow-tf32`; the
  /// target reads it as its option kAllowTF32OptionKey).
  bool allowTF32 = false;
  /// Under int8, SmoothQuant (`--smooth-quant`): an alpha in [0, 1],
  /// "auto" (chosen per matmul), or "" (off).
  std::string smoothQuant;
  /// Under fp8, how activations are scaled (`--fp8-scaling`): "static"
  /// (calibrated ranges) or "current" (each run's own amax).
  std::string fp8Scaling = "static";
  /// Under fp8, the operands' format (`--fp8-format`): "e4m3" or "e5m2".
  std::string fp8Format = "e4m3";
  /// Calibration (docs/Precision.md): a folder in ONNX's test layout whose
  /// test sets' inputs are the samples (`--calibrate`), and the cache file
  /// it writes, or that is read when no folder is given
  /// (`--calibration-cache`; empty: a temporary file).
  std::string calibrate, calibrationCache;
  /// How calibration turns values into ranges (`--calibration-method`:
  /// max, percentile, entropy) and the percentage the percentile method
  /// keeps (`--calibration-percentile`).
  std::string calibrationMethod = "max";
  double calibrationPercentile = 99.99;
  /// Count, per quantize with a fixed scale, the values each run saturates,
  /// as extra outputs named "tessera.saturated:<key>"
  /// (`--saturation-counts`; tessera-count-saturation).
  bool saturationCounts = false;
  /// Compile the program calibration runs: the operands the precision
  /// passes may narrow become extra outputs (the driver sets it).
  bool exposeCalibrationValues = false;
  /// Where to write the per-op accuracy report (JSON), the folder (ONNX
  /// test layout) whose samples it runs (default: `calibrate`'s), and the
  /// assign pass's report mode for the programs it runs (the driver sets
  /// it).
  std::string precisionReport, reportInputs, precisionReportMode;
  /// Whether attention is raised regardless of the target (the driver sets
  /// it for calibration's programs, so that their matmuls are those of
  /// the compile they calibrate); unset: as the target says.
  std::optional<bool> raiseAttention;
  /// Notes on what the compile did beyond the phases (an opset conversion),
  /// as remarks (`-v`).
  bool verbose = false;
  /// Symbolic input dims fixed to sizes (`--dim name=size`).
  std::map<std::string, int64_t> dimValues;
  /// The phase after which the IR is printed ("import", "graph" or one of
  /// the target's); empty for the target's default.
  std::string compileTo;
  /// What to write: "mlir" (the IR after `compileTo`) or one of the
  /// target's artifacts; empty to infer it from `output`'s extension.
  std::string emit;
  /// Where to write ("-" for standard output).
  std::string output = "-";
  /// Print weight blobs in full in IR output.
  bool printWeights = false;
  /// Compile but write nothing.
  bool disableOutput = false;
  /// Sets up every pass manager the compile runs (the tools apply MLIR's
  /// --mlir-* command-line options and timing here).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
  /// Phases are timed under this scope when given.
  mlir::TimingScope *timing = nullptr;
};

/// Diagnostics go to the context's handler; the error says which step
/// failed. An error about the options (an unknown target, phase, artifact
/// or option value) comes back before anything is read, as an error for
/// which isOptionError() holds.
llvm::Error compile(llvm::StringRef modelPath, mlir::MLIRContext &context,
                    const CompileOptions &options);

/// Compiles the model through every phase of `options.target` and opens it
/// in this process; `runOptions` are the target's loader options (a
/// simulator's trace file).
llvm::Expected<std::unique_ptr<runtime::Executable>>
compileAndLoad(llvm::StringRef modelPath, mlir::MLIRContext &context,
               const CompileOptions &options,
               const runtime::LoadOptions &runOptions = {});

/// Symbolic dims fixed to sizes from `name=size` strings (the tools'
/// `--dim`), or an error naming the malformed one.
llvm::Expected<std::map<std::string, int64_t>>
parseDimValues(llvm::ArrayRef<std::string> dims);

/// Whether `error` only says that diagnostics were already reported (the
/// tools then print nothing more); consumes it when so.
bool isReportedFailure(llvm::Error &error);

/// Whether `error` is about the options (a usage error), not the model.
bool isOptionError(const llvm::Error &error);

} // namespace tessera

#endif // TESSERA_DRIVER_COMPILE_H
