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

std::optional<ElementType> tessera::elementTypeOf(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (isa<Float8E4M3FNType>(type))
    return ElementType::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ElementType::F8E5M2;
  if (type.isInteger(1))
    return ElementType::Bool;
  if (type.isInteger(8))
    return ElementType::I8;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  return std::nullopt;
}

Type tessera::toMLIRType(ElementType type, MLIRContext *context) {
  Builder b(context);
  switch (type) {
  case ElementType::F32:
    return b.getF32Type();
  case ElementType::F16:
    return b.getF16Type();
  case ElementType::BF16:
    return b.getBF16Type();
  case ElementType::F8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case ElementType::F8E5M2:
    return b.getType<Float8E5M2Type>();
  case ElementType::Bool:
    return b.getI1Type();
  case ElementType::I8:
    return b.getI8Type();
  case ElementType::I32:
    return b.getI32Type();
  case ElementType::I64:
    return b.getI64Type();
  }
  return b.getF32Type();
}

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
