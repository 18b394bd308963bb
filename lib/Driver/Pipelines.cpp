//===- Pipelines.cpp - Tessera's compilation phases and pass pipelines ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Pipelines.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<tessera::CompilePhase>
tessera::parseCompilePhase(StringRef name) {
  return llvm::StringSwitch<std::optional<CompilePhase>>(name)
      .Case("import", CompilePhase::Import)
      .Case("graph", CompilePhase::Graph)
      .Case("linalg", CompilePhase::Linalg)
      .Case("llvm", CompilePhase::LLVM)
      .Default(std::nullopt);
}

StringRef tessera::compilePhaseNames() { return "import|graph|linalg|llvm"; }

void tessera::buildGraphPipeline(OpPassManager &pm,
                                 const GraphOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Composite ops from their exported parts, then (when fusing) attention,
  // whose pattern may contain a raised op, then the transposes it leaves.
  pm.addNestedPass<func::FuncOp>(createRaiseCompositesPass());
  if (!options.fuse)
    return;
  pm.addNestedPass<func::FuncOp>(createRaiseAttentionPass());
  pm.addPass(createCanonicalizerPass());
  cpu::registerCPUTargetInfo();
  FormFusionRegionsPassOptions fusion;
  fusion.target = options.target;
  fusion.report = options.fusionReport;
  fusion.dot = options.dotGraph;
  fusion.summary = options.printFusionSummary;
  pm.addPass(createFormFusionRegionsPass(fusion));
}

void tessera::buildPipelineUpTo(OpPassManager &pm, CompilePhase phase,
                                const GraphOptions &options) {
  if (phase >= CompilePhase::Graph)
    buildGraphPipeline(pm, options);
  if (phase >= CompilePhase::Linalg)
    cpu::buildLinalgPipeline(pm, options.fuse);
  if (phase >= CompilePhase::LLVM)
    cpu::buildLLVMPipeline(pm);
}

void tessera::registerPipelines() {
  PassPipelineRegistration<>(
      "tessera-graph-pipeline",
      "Target-independent graph passes on tessera IR (folding, CSE, raising "
      "composite ops and attention)",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
  PassPipelineRegistration<>(
      "tessera-cpu-pipeline",
      "Lower tessera IR to the LLVM dialect for the CPU",
      [](OpPassManager &pm) { buildPipelineUpTo(pm, CompilePhase::LLVM); });
}
