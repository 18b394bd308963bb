//===- MergeKernelModules.cpp - every kernel in one gpu.module ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Passes.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

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
    SmallVector<gpu::GPUModuleOp> kernels;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (llvm::all_of(m.getBody()->getOperations(),
                       [](Operation &op) { return isa<gpu::GPUFuncOp>(op); }))
        kernels.push_back(m);
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
      auto it = renamed.find({kernel.getRootReference(),
                              kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp m : llvm::drop_begin(kernels))
      m.erase();
  }
};

} // namespace
