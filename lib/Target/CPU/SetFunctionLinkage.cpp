//===- SetFunctionLinkage.cpp - entry points and internal kernels ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SETFUNCTIONLINKAGEPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

struct SetFunctionLinkagePass
    : tessera::cpu::impl::SetFunctionLinkagePassBase<SetFunctionLinkagePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *context = &getContext();
    if (func.isPublic()) {
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(context));
      return;
    }
    func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                      context, LLVM::Linkage::Internal));
  }
};

} // namespace
