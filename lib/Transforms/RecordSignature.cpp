//===- RecordSignature.cpp - the model's signature as an IR attribute -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/Signature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace tessera {
#define GEN_PASS_DEF_RECORDSIGNATUREPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using tessera::ElementType;
using tessera::runtime::ModelSignature;
using tessera::runtime::TensorSignature;

/// The entry function: the first public function with a body.
static FunctionOpInterface entryFunction(ModuleOp module) {
  for (auto func : module.getOps<FunctionOpInterface>())
    if (func.isPublic() && !func.isExternal())
      return func;
  return nullptr;
}

static FailureOr<TensorSignature> tensorSignature(func::FuncOp func, Type type,
                                                  DictionaryAttr attrs,
                                                  const std::string &fallback) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return func.emitError("model arguments and results must be ranked "
                          "tensors, got ")
           << type;
  std::optional<ElementType> element = tessera::elementTypeOf(
      tensor.getElementType());
  if (!element)
    return func.emitError("element type ")
           << tensor.getElementType()
           << " cannot cross the runtime boundary";
  TensorSignature sig;
  sig.type = *element;
  for (int64_t d : tensor.getShape())
    sig.shape.push_back(ShapedType::isDynamic(d) ? tessera::runtime::kDynamic
                                                 : d);
  sig.name = fallback;
  sig.dimParams.assign(sig.shape.size(), "");
  if (attrs) {
    if (auto name = attrs.getAs<StringAttr>("tessera.name"))
      sig.name = name.str();
    if (auto params = attrs.getAs<ArrayAttr>("tessera.dim_params"))
      for (auto [i, p] : llvm::enumerate(params))
        if (auto s = dyn_cast<StringAttr>(p); s && i < sig.dimParams.size())
          sig.dimParams[i] = s.str();
  }
  return sig;
}

llvm::Expected<ModelSignature>
tessera::recordedSignature(ModuleOp module) {
  for (auto func : module.getOps<FunctionOpInterface>())
    if (auto json = func->getAttrOfType<StringAttr>(kSignatureAttrName))
      return runtime::signatureFromJSON(json.getValue());
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the module has no recorded signature (tessera-record-signature did "
      "not run)");
}

namespace {
struct RecordSignaturePass
    : tessera::impl::RecordSignaturePassBase<RecordSignaturePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry =
        dyn_cast_or_null<func::FuncOp>(entryFunction(module).getOperation());
    if (!entry) {
      module.emitError("the module has no public function to run");
      return signalPassFailure();
    }
    if (!entry->hasAttr(tessera::kSignatureAttrName) && failed(record(entry)))
      return signalPassFailure();
    if (!dropArgAttrs)
      return;
    for (unsigned i = 0; i < entry.getNumArguments(); ++i)
      entry.setArgAttrs(i, ArrayRef<NamedAttribute>{});
    for (unsigned i = 0; i < entry.getNumResults(); ++i)
      entry.setResultAttrs(i, ArrayRef<NamedAttribute>{});
  }

  LogicalResult record(func::FuncOp entry) {
    ModelSignature sig;
    sig.entry = entry.getName().str();
    FunctionType type = entry.getFunctionType();
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      auto s = tensorSignature(entry, type.getInput(i),
                               entry.getArgAttrDict(i),
                               "input_" + std::to_string(i));
      if (failed(s))
        return failure();
      sig.inputs.push_back(std::move(*s));
    }
    for (unsigned i = 0; i < type.getNumResults(); ++i) {
      auto s = tensorSignature(entry, type.getResult(i),
                               entry.getResultAttrDict(i),
                               "output_" + std::to_string(i));
      if (failed(s))
        return failure();
      sig.outputs.push_back(std::move(*s));
    }
    entry->setAttr(tessera::kSignatureAttrName,
                   StringAttr::get(entry.getContext(),
                                   tessera::runtime::signatureToJSON(sig)));
    return success();
  }
};
} // namespace
