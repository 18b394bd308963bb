//===- MergeKernelModules.cpp - every kernel in one gpu.module ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringExtras.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#define GEN_PASS_DEF_ATTACHTARGETSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

/// Marks a kernel module compiled for that architecture alone.
constexpr StringLiteral kArchAttr = "tessera.cuda.arch";

struct MergeKernelModulesPass
    : tessera::cuda::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    // Shared-memory buffers start on 16 bytes: cp.async of 16 bytes and
    // ldmatrix rows need it (without it each gets its element's).
    StringRef align = LLVM::LLVMDialect::getAlignAttrName();
    module.walk([&](gpu::GPUFuncOp f) {
      for (unsigned i = 0; i < f.getNumWorkgroupAttributions(); ++i)
        if (!f.getWorkgroupAttributionAttr(i, align))
          f.setWorkgroupAttributionAttr(
              i, align, IntegerAttr::get(IntegerType::get(ctx, 64), 16));
    });
    // Kernels with sm_90a's own instructions (wgmma) go into a module of
    // their own, compiled for sm_90a alone.
    SmallVector<gpu::GPUModuleOp> portable, hopper;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (llvm::all_of(m.getBody()->getOperations(),
                       [](Operation &op) { return isa<gpu::GPUFuncOp>(op); }))
        (usesArchSpecificInstructions(m) ? hopper : portable).push_back(m);
    merge(portable);
    merge(hopper);
    if (!hopper.empty())
      hopper.front()->setAttr(kArchAttr, StringAttr::get(ctx, "sm_90a"));
  }

  static bool usesArchSpecificInstructions(gpu::GPUModuleOp m) {
    return m
        .walk([](Operation *op) {
          return op->getName().getStringRef().starts_with("nvvm.wgmma")
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Moves every kernel of `kernels` into the first of them.
  void merge(ArrayRef<gpu::GPUModuleOp> kernels) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (kernels.size() < 2)
      return;
    gpu::GPUModuleOp target = kernels.front();
    // Old (module, function) -> new function name in `target`.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp m : llvm::drop_begin(kernels)) {
      SmallVector<gpu::GPUFuncOp> functions(m.getOps<gpu::GPUFuncOp>());
      for (gpu::GPUFuncOp f : functions) {
        StringAttr name = m.getSymNameAttr();
        if (functions.size() > 1 || SymbolTable::lookupSymbolIn(target, name))
          name = StringAttr::get(ctx, m.getSymName() + "_" + f.getName());
        renamed[{m.getSymNameAttr(), f.getNameAttr()}] = name;
        f->moveBefore(target.getBody(), target.getBody()->end());
        SymbolTable::setSymbolName(f, name);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp m : llvm::drop_begin(kernels))
      m.erase();
  }
};

struct AttachTargetsPass
    : tessera::cuda::impl::AttachTargetsPassBase<AttachTargetsPass> {
  using AttachTargetsPassBase::AttachTargetsPassBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SmallVector<Attribute> libs;
    for (const std::string &lib : linkLibs)
      libs.push_back(StringAttr::get(ctx, lib));
    ArrayAttr linkFiles = libs.empty() ? nullptr : ArrayAttr::get(ctx, libs);
    WalkResult result = getOperation().walk([&](gpu::GPUModuleOp m) {
      auto arch = m->getAttrOfType<StringAttr>(kArchAttr);
      if (arch && !llvm::is_contained(chips, arch.getValue().str())) {
        m.emitError() << "kernels for " << arch.getValue()
                      << " but no target for it (the architectures: "
                      << llvm::join(chips, ", ") << ")";
        return WalkResult::interrupt();
      }
      SmallVector<Attribute> targets;
      if (std::optional<ArrayAttr> existing = m.getTargets())
        targets.append(existing->begin(), existing->end());
      // PTX ISA 8.0, and 8.3 for the sm_90a kernels (their tensor-map
      // proxy fence).
      for (const std::string &chip : chips)
        if (!arch || arch.getValue() == chip)
          targets.push_back(NVVM::NVVMTargetAttr::get(
              ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip,
              arch ? "+ptx83" : "+ptx80", /*targetFlags=*/nullptr, linkFiles));
      m.setTargetsAttr(ArrayAttr::get(ctx, targets));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
