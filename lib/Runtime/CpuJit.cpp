//===- CpuJit.cpp - runs a model compiled for the CPU in process ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/CpuJit.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "BlockCache.h"
#include "MemRefCopy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>

using namespace tessera::runtime;
using llvm::Twine;

static llvm::Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Expected<ElementType> elementTypeOf(mlir::Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isInteger(1))
    return ElementType::Bool;
  if (type.isInteger(8))
    return ElementType::I8;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return fail("element type " + text + " cannot cross the runtime boundary");
}

static llvm::Expected<TensorSignature>
signatureOf(mlir::Type type, mlir::DictionaryAttr attrs,
            const std::string &fallbackName) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor)
    return fail("model arguments and results must be ranked tensors");
  TensorSignature sig;
  auto element = elementTypeOf(tensor.getElementType());
  if (!element)
    return element.takeError();
  sig.type = *element;
  sig.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  sig.name = fallbackName;
  sig.dimParams.assign(sig.shape.size(), "");
  if (attrs) {
    if (auto name = attrs.getAs<mlir::StringAttr>("tessera.name"))
      sig.name = name.str();
    if (auto params = attrs.getAs<mlir::ArrayAttr>("tessera.dim_params"))
      for (auto [i, p] : llvm::enumerate(params))
        if (auto s = mlir::dyn_cast<mlir::StringAttr>(p);
            s && i < sig.dimParams.size())
          sig.dimParams[i] = s.str();
  }
  return sig;
}

llvm::Expected<ModelSignature>
tessera::runtime::readSignature(mlir::ModuleOp module) {
  mlir::func::FuncOp entry;
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (func.isPublic() && !func.isExternal()) {
      entry = func;
      break;
    }
  if (!entry)
    return fail("the module has no public function to run");
  ModelSignature sig;
  sig.entry = entry.getName().str();
  mlir::FunctionType type = entry.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto s = signatureOf(type.getInput(i), entry.getArgAttrDict(i),
                         "input_" + std::to_string(i));
    if (!s)
      return s.takeError();
    sig.inputs.push_back(std::move(*s));
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto s = signatureOf(type.getResult(i), entry.getResultAttrDict(i),
                         "output_" + std::to_string(i));
    if (!s)
      return s.takeError();
    sig.outputs.push_back(std::move(*s));
  }
  return sig;
}

CpuJit::CpuJit(std::unique_ptr<mlir::ExecutionEngine> engine,
               ModelSignature sig)
    : engine(std::move(engine)), sig(std::move(sig)) {}

CpuJit::~CpuJit() = default;

llvm::Expected<std::unique_ptr<CpuJit>>
CpuJit::create(mlir::ModuleOp module, ModelSignature signature) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/3, /*sizeLevel=*/0, /*targetMachine=*/nullptr);
  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // Parallel loops call the OpenMP runtime.
  std::string openmp = std::string(tessera::cpu::kOpenMPLibraryDir) + "/libomp.so";
  llvm::StringRef libraries[] = {openmp};
  options.sharedLibPaths = libraries;
  auto engine = mlir::ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto bind = [&](llvm::StringRef name, auto *function) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                 llvm::JITSymbolFlags::Exported};
    };
    bind("memrefCopy", &tesseraMemrefCopy);
    bind("_mlir_memref_to_llvm_alloc", &tesseraAlloc);
    bind("_mlir_memref_to_llvm_aligned_alloc", &tesseraAlignedAlloc);
    bind("_mlir_memref_to_llvm_free", &tesseraFree);
    return symbols;
  });
  return std::unique_ptr<CpuJit>(
      new CpuJit(std::move(*engine), std::move(signature)));
}

llvm::Expected<std::vector<HostTensor>>
CpuJit::run(llvm::ArrayRef<HostTensor> inputs) {
  auto packed = engine->lookupPacked("_mlir_ciface_" + sig.entry);
  if (!packed)
    return packed.takeError();
  return invokePacked(*packed, &tesseraFree, sig, inputs);
}
