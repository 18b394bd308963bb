//===- Pipelines.cpp - the graph phase and the phases of every target -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Pipelines.h"
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/TargetInfo.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessera::buildGraphPipeline(OpPassManager &pm,
                                 const GraphOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Composite ops from their exported parts, then (when fusing) attention,
  // whose pattern may contain a raised op, then the transposes it leaves.
  pm.addNestedPass<func::FuncOp>(createRaiseCompositesPass());
  if (!options.fuse)
    return;
  registerAllTargets();
  std::shared_ptr<const TargetInfo> info = options.info;
  if (!info)
    info = lookupTargetInfo(options.target);
  // Attention is raised only for a target that compiles it as one kernel;
  // another sees its matmuls and softmax.
  if (!info || info->fusesAttention()) {
    pm.addNestedPass<func::FuncOp>(createRaiseAttentionPass());
    pm.addPass(createCanonicalizerPass());
  }
  FormFusionRegionsPassOptions fusion;
  fusion.target = options.target;
  fusion.report = options.fusionReport;
  fusion.dot = options.dotGraph;
  fusion.summary = options.printFusionSummary;
  pm.addPass(createFormFusionRegionsPass(fusion, std::move(info)));
}

std::vector<std::string> tessera::phaseNames(const Target &target) {
  std::vector<std::string> names = {"import", "graph"};
  for (const TargetPhase &phase : target.phases())
    names.push_back(phase.name);
  return names;
}

void tessera::registerPipelines() {
  PassPipelineRegistration<>(
      "tessera-graph-pipeline",
      "Target-independent graph passes on tessera IR (folding, CSE, raising "
      "composite ops and attention)",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
  registerAllTargets();
  for (const Target *target : registeredTargets()) {
    std::string name = target->name().str();
    PassPipelineRegistration<>(
        "tessera-" + name + "-pipeline",
        "The graph phase, then every phase of the " + name +
            " target with its default options",
        [target](OpPassManager &pm) {
          GraphOptions graph;
          graph.target = target->name().str();
          graph.fuse = target->info().formsFusionRegions();
          buildGraphPipeline(pm, graph);
          auto compilation = target->configure({}, graph.fuse);
          if (!compilation) {
            // The defaults of a registered target configure; say so if not.
            llvm::errs() << "tessera-" << target->name() << "-pipeline: "
                         << llvm::toString(compilation.takeError()) << "\n";
            return;
          }
          (*compilation)->buildPipeline(pm, target->phases().back().name);
        });
  }
}
