//===- Pipelines.h - Tessera's compilation phases and pass pipelines ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one place that says which passes run in which phase; the tools, the C
// API and the tests all build their pipelines from here.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DRIVER_PIPELINES_H
#define TESSERA_DRIVER_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace tessera {

/// The phases of a compilation, in order; `--compile-to` stops after one.
enum class CompilePhase {
  /// The imported tessera IR, as the importer produced it.
  Import,
  /// After target-independent graph passes (folding, raising composite
  /// ops and attention, fusion regions).
  Graph,
  /// Lowered to linalg, tensor, arith and math on tensors.
  Linalg,
  /// Bufferized and lowered to the LLVM dialect.
  LLVM,
};

/// Parses a phase name ("import", "graph", "linalg", "llvm"); nullopt for
/// anything else.
std::optional<CompilePhase> parseCompilePhase(llvm::StringRef name);

/// The names of all phases, for --help: "import|graph|linalg|llvm".
llvm::StringRef compilePhaseNames();

/// Options of the graph phase.
struct GraphOptions {
  /// The backend whose TargetInfo decides what fuses.
  std::string target = "cpu";
  /// Raise attention and form fusion regions (off: the graph keeps one op
  /// per kernel, attention as its matmuls and softmax).
  bool fuse = true;
  /// Where to write the fusion report (JSON) and the fused graph
  /// (Graphviz); empty for none.
  std::string fusionReport, dotGraph;
  /// Print the fusion report as text to stderr.
  bool printFusionSummary = false;
};

/// Target-independent graph passes on tessera IR: canonicalization (shape
/// folding, identities), CSE, raising of composite ops and attention, and
/// fusion into tessera.fusion regions.
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphOptions &options = {});

/// Adds the passes from the import phase up to `phase` to `pm`.
void buildPipelineUpTo(mlir::OpPassManager &pm, CompilePhase phase,
                       const GraphOptions &options = {});

/// Registers the pipelines with the pass registry (tessera-opt can run them
/// by name, e.g. --tessera-graph-pipeline).
void registerPipelines();

} // namespace tessera

#endif // TESSERA_DRIVER_PIPELINES_H
