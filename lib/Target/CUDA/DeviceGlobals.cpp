//===- DeviceGlobals.cpp - kernels read the device copy of each weight ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/BufferPlacement.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_DEVICEGLOBALSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

constexpr StringLiteral kDeviceGlobal = "tessera_cuda_device_global";

struct DeviceGlobalsPass
    : tessera::cuda::impl::DeviceGlobalsPassBase<DeviceGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto hostGlobals =
        module->getAttrOfType<ArrayAttr>(tessera::cuda::kHostGlobalsAttr);
    auto onHost = [&](StringRef name) {
      return hostGlobals && llvm::is_contained(hostGlobals.getValue(),
                                               FlatSymbolRefAttr::get(ctx, name));
    };
    SmallVector<LLVM::AddressOfOp> uses;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      function.walk([&](LLVM::AddressOfOp address) {
        auto global = dyn_cast_or_null<LLVM::GlobalOp>(
            SymbolTable::lookupSymbolIn(module, address.getGlobalName()));
        if (global && global.getConstant() && global.getValueOrNull() &&
            !onHost(global.getSymName()))
          uses.push_back(address);
      });
    if (uses.empty())
      return;
    auto declaration = module.lookupSymbol<LLVM::LLVMFuncOp>(kDeviceGlobal);
    if (!declaration) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      declaration = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kDeviceGlobal,
          LLVM::LLVMFunctionType::get(i64, {ptr, i64}));
    }
    DataLayout layout = DataLayout::closest(module);
    for (LLVM::AddressOfOp address : uses) {
      auto global = cast<LLVM::GlobalOp>(
          SymbolTable::lookupSymbolIn(module, address.getGlobalName()));
      uint64_t bytes = layout.getTypeSize(global.getType()).getFixedValue();
      OpBuilder b(address->getContext());
      b.setInsertionPointAfter(address);
      Location loc = address.getLoc();
      Value size = LLVM::ConstantOp::create(b, loc, i64,
                                            b.getI64IntegerAttr(bytes));
      auto call = LLVM::CallOp::create(b, loc, declaration,
                                       ValueRange{address, size});
      Value device = LLVM::IntToPtrOp::create(b, loc, ptr, call.getResult());
      address.getResult().replaceAllUsesExcept(device, call);
    }
  }
};

} // namespace
