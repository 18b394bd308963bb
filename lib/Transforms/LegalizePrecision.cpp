//===- LegalizePrecision.cpp - what the target cannot compute narrow ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-legalize-precision: an op whose element types its target does
// not list for its precision class computes in f32 between casts.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tessera/IR/ElementTypes.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace tessera {
#define GEN_PASS_DEF_LEGALIZEPRECISIONPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::kPrecisionAttr;
using ::tessera::OpClass;

namespace {

/// `type` with `element` as its element type.
RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

StringRef className(OpClass opClass) {
  switch (opClass) {
  case OpClass::Contraction:
    return "contraction";
  case OpClass::Elementwise:
    return "elementwise op";
  case OpClass::Reduction:
    return "wide-computing op";
  case OpClass::DataMovement:
    return "data movement";
  }
  return "op";
}
class LegalizePrecisionPass
    : public ::tessera::impl::LegalizePrecisionPassBase<LegalizePrecisionPass> {
public:
  using LegalizePrecisionPassBase::LegalizePrecisionPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::unique_ptr<::tessera::TargetInfo> info =
        ::tessera::lookupTargetInfo(target);
    if (!info) {
      func.emitError() << "no target named '" << target << "'";
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    Type f32 = Float32Type::get(context);
    func.walk([&](Operation *op) {
      std::optional<OpClass> opClass = ::tessera::precisionClass(op);
      if (!opClass)
        return;
      ArrayRef<::tessera::ElementType> supported =
          info->supportedElementTypes(*opClass);
      auto supports = [&](Type element) {
        std::optional<::tessera::ElementType> shared =
            ::tessera::elementTypeOf(element);
        return shared && llvm::is_contained(supported, *shared);
      };
      // A target that has no f32 for the class (an accelerator whose array
      // takes only narrow operands) converts in its own lowering.
      if (!supports(f32))
        return;
      // A contraction other than matmul (conv2d, attention) has its
      // inputs' type as its result's and accumulates in it: narrow types
      // would round every partial sum, so it computes in f32 unless the
      // target accumulates it in f32 (a fused attention kernel).
      Type inputElement =
          op->getNumOperands()
              ? getElementTypeOrSelf(op->getOperand(0).getType())
              : Type();
      bool accumulatesNarrow =
          *opClass == OpClass::Contraction && !isa<MatmulOp>(op) &&
          !(inputElement && !info->rejectWideAccumulation(op, inputElement));
      auto unsupported = [&](Type type) -> Type {
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor || !isa<FloatType>(tensor.getElementType()) ||
            tensor.getElementType().isF32())
          return nullptr;
        if (!accumulatesNarrow && supports(tensor.getElementType()))
          return nullptr;
        return tensor.getElementType();
      };
      SmallVector<Type> widened;
      auto note = [&](Type element) {
        if (!llvm::is_contained(widened, element))
          widened.push_back(element);
      };
      OpBuilder builder(op);
      for (OpOperand &operand : op->getOpOperands())
        if (Type element = unsupported(operand.get().getType())) {
          note(element);
          operand.set(CastOp::create(builder, op->getLoc(),
                                     withElement(operand.get().getType(),
                                                     f32),
                                     operand.get()));
        }
      builder.setInsertionPointAfter(op);
      for (OpResult result : op->getResults())
        if (Type element = unsupported(result.getType())) {
          note(element);
          Type original = result.getType();
          result.setType(withElement(original, f32));
          auto back = CastOp::create(builder, op->getLoc(), original, result);
          result.replaceAllUsesExcept(back, back);
        }
      if (widened.empty())
        return;
      std::string types;
      llvm::raw_string_ostream os(types);
      llvm::interleave(widened, os, ", ");
      std::string why =
          accumulatesNarrow
              ? "f32: " + op->getName().getStringRef().str() +
                    " would accumulate in " + types
              : "f32: " + types + " " + className(*opClass).str() +
                    " not supported by the " + target + " target";
      op->setAttr(kPrecisionAttr, StringAttr::get(context, why));
    });
  }
};

} // namespace
