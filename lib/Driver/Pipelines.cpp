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
  registerAllTargets();
  std::shared_ptr<const TargetInfo> info = options.info;
  if (!info)
    info = lookupTargetInfo(options.target);
  // Learned upsamplings (ConvTranspose with the kernel its stride) as one
  // matmul, before constants fold (the filter's layout folds with them).
  if (!info || info->upsamplesByMatmul())
    pm.addNestedPass<func::FuncOp>(createUpsamplingToMatmulPass());
  // Masks and indices computed from constants become constants.
  pm.addNestedPass<func::FuncOp>(createFoldConstantsPass());
  // Composite ops from their exported parts, then (when fusing) attention,
  // whose pattern may contain a raised op, then the transposes it leaves.
  pm.addNestedPass<func::FuncOp>(createRaiseCompositesPass());
  // Attention is raised only for a target that compiles it as one kernel;
  // another sees its matmuls and softmax. It is raised before precision is
  // assigned, so that its matmuls are recognized without casts between.
  if (raisesAttention(options)) {
    pm.addNestedPass<func::FuncOp>(createRaiseAttentionPass());
    pm.addPass(createCanonicalizerPass());
  }
  // The operands calibration measures (and the precision report counts
  // saturation in) are the f32 ones, exposed before any is narrowed.
  if (options.exposeCalibrationValues)
    pm.addPass(createExposeCalibrationValuesPass());
  if (options.precision != "fp32" || !options.keepFp32.empty() ||
      !options.precisionPlan.empty()) {
    AssignPrecisionPassOptions assign;
    assign.policy = options.precision;
    assign.target = options.target;
    assign.keepHeads = options.keepHeads;
    assign.keepFirstLayers = options.keepFirstLayers;
    assign.remarks = options.precisionRemarks;
    assign.smoothQuant = options.smoothQuant;
    assign.fp8Scaling = options.fp8Scaling;
    assign.fp8Format = options.fp8Format;
    assign.calibration = options.calibrationCache;
    assign.report = options.precisionReportMode;
    assign.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
    if (options.precisionPlan.empty()) {
      pm.addNestedPass<func::FuncOp>(createAssignPrecisionPass(assign));
    } else {
      // A plan: the assign pass once per policy, on the matmuls it names
      // (the plan decided the output heads and first layers too).
      std::map<std::string, std::vector<std::string>> byPolicy;
      for (const auto &[node, policy] : options.precisionPlan)
        byPolicy[policy].push_back(node);
      for (auto &[policy, nodes] : byPolicy) {
        AssignPrecisionPassOptions one = assign;
        one.policy = policy;
        one.keepHeads = false;
        one.keepFirstLayers = false;
        one.onlyNodes.assign(nodes.begin(), nodes.end());
        pm.addNestedPass<func::FuncOp>(createAssignPrecisionPass(one));
      }
    }
    LegalizePrecisionPassOptions legalize;
    legalize.target = options.target;
    pm.addNestedPass<func::FuncOp>(createLegalizePrecisionPass(legalize));
    // Reshapes and transposes move the narrow side of their casts.
    if (!info || info->hoistsCasts())
      pm.addNestedPass<func::FuncOp>(createHoistCastsPass());
    // Weights convert once here (their casts fold); equal casts merge.
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // Counts of what the quantizes clip, before fusion joins their parts to
  // the quantizes' regions.
  if (options.saturationCounts)
    pm.addPass(createCountSaturationPass());
  if (!options.fuse)
    return;
  FormFusionRegionsPassOptions fusion;
  fusion.target = options.target;
  fusion.report = options.fusionReport;
  fusion.dot = options.dotGraph;
  fusion.summary = options.printFusionSummary;
  pm.addPass(createFormFusionRegionsPass(fusion, std::move(info)));
}

bool tessera::raisesAttention(const GraphOptions &options) {
  if (options.raiseAttention)
    return *options.raiseAttention;
  registerAllTargets();
  std::shared_ptr<const TargetInfo> info = options.info;
  if (!info)
    info = lookupTargetInfo(options.target);
  if (!info)
    return options.fuse;
  // A target that forms no regions schedules alone; it still takes
  // attention as one kernel when it says so.
  return (options.fuse || !info->formsFusionRegions()) &&
         info->fusesAttention();
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
