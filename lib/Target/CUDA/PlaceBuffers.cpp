//===- PlaceBuffers.cpp - buffers only the host reads stay on the host ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/BufferPlacement.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_PLACEBUFFERSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

/// Whether every use of `buffer` (through views) is host code that only
/// reads or writes elements or sizes.
bool onlyHostUses(Value buffer) {
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (tessera::cuda::inKernel(user))
        return false;
      if (isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp,
              memref::DimOp>(user))
        continue;
      if (auto reshape = dyn_cast<memref::ReshapeOp>(user)) {
        if (use.get() == reshape.getShape())
          continue;
        worklist.push_back(reshape.getResult());
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != v)
          return false;
        worklist.push_back(user->getResult(0));
        continue;
      }
      return false;
    }
  }
  return true;
}

struct PlaceBuffersPass
    : tessera::cuda::impl::PlaceBuffersPassBase<PlaceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Allocations: small static buffers only the host uses go on its stack.
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      Type element = type.getElementType();
      if (!type.hasStaticShape() || !element.isIntOrIndexOrFloat())
        continue;
      // Index elements are 64-bit on the host.
      int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
      if (type.getNumElements() * bits / 8 > 65536 ||
          tessera::cuda::inKernel(alloc) ||
          !onlyHostUses(alloc.getResult()))
        continue;
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), type,
                                             alloc.getAlignmentAttr());
      for (Operation *user :
           llvm::make_early_inc_range(alloc.getResult().getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.getResult().replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
    // Globals: those only the host reads keep their host address; a global
    // also read by kernels gets a copy for the host's reads.
    llvm::MapVector<StringAttr, SmallVector<memref::GetGlobalOp>> hostReads;
    llvm::DenseSet<StringAttr> deviceReads;
    module.walk([&](memref::GetGlobalOp get) {
      if (!tessera::cuda::inKernel(get) &&
          onlyHostUses(get.getResult()))
        hostReads[get.getNameAttr().getAttr()].push_back(get);
      else
        deviceReads.insert(get.getNameAttr().getAttr());
    });
    SmallVector<Attribute> hostGlobals;
    if (auto existing = module->getAttrOfType<ArrayAttr>(
            tessera::cuda::kHostGlobalsAttr))
      hostGlobals.assign(existing.begin(), existing.end());
    for (auto &[name, gets] : hostReads) {
      StringAttr hostName = name;
      if (deviceReads.contains(name)) {
        auto global = symbols.lookup<memref::GlobalOp>(name);
        if (!global)
          continue;
        auto copy = cast<memref::GlobalOp>(global->clone());
        copy.setSymName((name.getValue() + "_host").str());
        symbols.insert(copy, Block::iterator(global->getNextNode()));
        hostName = copy.getSymNameAttr();
        for (memref::GetGlobalOp get : gets)
          get.setName(hostName.getValue());
      }
      hostGlobals.push_back(FlatSymbolRefAttr::get(hostName));
    }
    if (!hostGlobals.empty())
      module->setAttr(tessera::cuda::kHostGlobalsAttr,
                      ArrayAttr::get(module.getContext(), hostGlobals));
  }
};

} // namespace

Value tessera::cuda::rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view || view.getViewSource() == v)
      break;
    v = view.getViewSource();
  }
  return v;
}

bool tessera::cuda::mayAffect(
    Operation *op, Value buffer,
    llvm::function_ref<bool(MemoryEffects::Effect *)> counts) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  Value root = rootOf(buffer);
  return llvm::any_of(instances, [&](MemoryEffects::EffectInstance &effect) {
    Value target = effect.getValue();
    return counts(effect.getEffect()) && (!target || rootOf(target) == root);
  });
}

bool tessera::cuda::inKernel(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

bool tessera::cuda::isHostBuffer(Value memref) {
  Value root = tessera::cuda::rootOf(memref);
  if (root.getDefiningOp<memref::AllocaOp>())
    return true;
  auto get = root.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return false;
  auto module = get->getParentOfType<ModuleOp>();
  auto hostGlobals =
      module ? module->getAttrOfType<ArrayAttr>(kHostGlobalsAttr) : ArrayAttr();
  return hostGlobals &&
         llvm::is_contained(hostGlobals.getValue(),
                            FlatSymbolRefAttr::get(get.getNameAttr().getAttr()));
}
