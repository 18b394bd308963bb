//===- Pipelines.h - the graph phase and the phases of every target -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one place that says which passes run in the graph phase; each
// target's own phases come from its Target (tessera/Target/Target.h). The
// tools, the C API and the tests all build their pipelines from here.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DRIVER_PIPELINES_H
#define TESSERA_DRIVER_PIPELINES_H

#include "tessera/Target/Target.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <optional>
#include <map>
#include <string>
#include <vector>

namespace tessera {

/// Options of the graph phase.
struct GraphOptions {
  /// The target whose TargetInfo decides what fuses.
  std::string target = "cpu";
  /// That TargetInfo as one compilation configured it (for its hardware);
  /// null for the one registered under `target`.
  std::shared_ptr<const TargetInfo> info;
  /// Form fusion regions, and raise attention for a target that fuses it
  /// (off: the graph keeps one op per kernel, attention as its matmuls and
  /// softmax). Only for a target whose TargetInfo forms fusion regions; a
  /// target that forms none raises attention when it fuses attention
  /// (unless raiseAttention says otherwise).
  bool fuse = true;
  /// Where to write the fusion report (JSON) and the fused graph
  /// (Graphviz); empty for none.
  std::string fusionReport, dotGraph;
  /// Print the fusion report as text to stderr.
  bool printFusionSummary = false;
  /// The precision policy (tessera/Transforms/Precision.h: fp32, bf16,
  /// fp16) and the ONNX node-name patterns whose ops stay f32.
  std::string precision = "fp32";
  std::vector<std::string> keepFp32;
  /// A precision plan (the automatic policy's, or one read back): the
  /// policy of each narrowed matmul by ONNX node name (calibration key);
  /// matmuls it does not name stay f32. Replaces `precision` when given.
  std::map<std::string, std::string> precisionPlan;
  /// Under 8-bit policies, keep output heads and first layers f32.
  bool keepHeads = true;
  bool keepFirstLayers = true;
  /// A remark at each matmul the precision policy considered (-v).
  bool precisionRemarks = false;
  /// Under int8, SmoothQuant: an alpha in [0, 1], "auto", or "" (off).
  std::string smoothQuant;
  /// Under fp8, "static" or "current" scaling of activations.
  std::string fp8Scaling = "static";
  /// Under fp8, "e4m3" or "e5m2" operands.
  std::string fp8Format = "e4m3";
  /// The calibration cache the range rules read; empty for none.
  std::string calibrationCache;
  /// Instead of the precision passes, return the operands they may narrow
  /// as extra outputs (the program calibration runs).
  bool exposeCalibrationValues = false;
  /// After the precision passes, count what each quantize with a fixed
  /// scale saturates, as extra outputs (tessera-count-saturation).
  bool saturationCounts = false;
  /// tessera-assign-precision's `report` mode (the programs the precision
  /// report runs); empty for none.
  std::string precisionReportMode;
  /// Whether attention is raised, when it must match another compile's
  /// graph (calibration's program for a target that does not fuse
  /// attention); unset: as the target's TargetInfo says.
  std::optional<bool> raiseAttention;
};

/// Whether the graph phase with `options` raises attention.
bool raisesAttention(const GraphOptions &options);

/// Target-independent graph passes on tessera IR: canonicalization (shape
/// folding, identities), CSE, raising of composite ops and attention, the
/// precision passes (a policy other than fp32), and fusion into
/// tessera.fusion regions.
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphOptions &options = {});

/// The phases of a compilation for `target`, in order: "import", "graph",
/// then the target's own.
std::vector<std::string> phaseNames(const Target &target);

/// Registers the pipelines with the pass registry, so tessera-opt can run
/// them by name: --tessera-graph-pipeline, and for each target
/// --tessera-<target>-pipeline (the graph phase and all of the target's
/// phases, with its default options).
void registerPipelines();

} // namespace tessera

#endif // TESSERA_DRIVER_PIPELINES_H
