//===- Pipelines.cpp - Tessera's compilation phases and pass pipelines ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<tessera::CompilePhase>
tessera::parseCompilePhase(StringRef name) {
  return llvm::StringSwitch<std::optional<CompilePhase>>(name)
      .Case("import", CompilePhase::Import)
      .Case("graph", CompilePhase::Graph)
      .Default(std::nullopt);
}

StringRef tessera::compilePhaseNames() { return "import|graph"; }

void tessera::buildGraphPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tessera::buildPipelineUpTo(OpPassManager &pm, CompilePhase phase) {
  if (phase >= CompilePhase::Graph)
    buildGraphPipeline(pm);
}

void tessera::registerPipelines() {
  PassPipelineRegistration<>(
      "tessera-graph-pipeline",
      "Target-independent graph passes on tessera IR (folding, CSE)",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
}
