//===- CpuJit.cpp - runs a model compiled for the CPU in process ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/CpuJit.h"
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
  auto engine = mlir::ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&tesseraMemrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  return std::unique_ptr<CpuJit>(
      new CpuJit(std::move(*engine), std::move(signature)));
}

/// A ranked memref descriptor over a dense row-major buffer.
static std::vector<int64_t> descriptorFor(void *data,
                                          const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

llvm::Expected<std::vector<HostTensor>>
CpuJit::run(llvm::ArrayRef<HostTensor> inputs) {
  if (inputs.size() != sig.inputs.size())
    return fail("the model takes " + Twine(sig.inputs.size()) +
                " inputs, got " + Twine(inputs.size()));
  llvm::StringMap<int64_t> bound;
  for (auto [tensor, expected] : llvm::zip(inputs, sig.inputs)) {
    if (tensor.type != expected.type)
      return fail("input '" + expected.name + "' must be " +
                  elementTypeName(expected.type) + ", got " +
                  elementTypeName(tensor.type));
    if (tensor.shape.size() != expected.shape.size())
      return fail("input '" + expected.name + "' must have rank " +
                  Twine(expected.shape.size()) + ", got " +
                  Twine(tensor.shape.size()));
    if (tensor.data.size() != tensor.numElements() * elementSize(tensor.type))
      return fail("input '" + expected.name + "' holds " +
                  Twine(tensor.data.size()) + " bytes for its shape");
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      int64_t want = expected.shape[i], got = tensor.shape[i];
      if (want != kDynamic && want != got)
        return fail("input '" + expected.name + "' dimension " + Twine(i) +
                    " must be " + Twine(want) + ", got " + Twine(got));
      const std::string &param = expected.dimParams[i];
      if (param.empty())
        continue;
      auto [it, inserted] = bound.try_emplace(param, got);
      if (!inserted && it->second != got)
        return fail("input '" + expected.name + "' dimension " + Twine(i) +
                    " ('" + param + "') is " + Twine(got) +
                    " but another input set it to " + Twine(it->second));
    }
  }
  // Arguments: the results' descriptors (filled by the callee), then one
  // descriptor per input.
  size_t resultWords = 0;
  for (const TensorSignature &out : sig.outputs)
    resultWords += 3 + 2 * out.shape.size();
  std::vector<int64_t> results(std::max<size_t>(resultWords, 1), 0);
  std::vector<std::vector<int64_t>> descriptors;
  for (const HostTensor &t : inputs)
    descriptors.push_back(descriptorFor(
        const_cast<uint8_t *>(t.data.data()), t.shape));
  std::vector<void *> pointers = {results.data()};
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  if (sig.outputs.empty())
    packed.erase(packed.begin());
  if (llvm::Error error =
          engine->invokePacked("_mlir_ciface_" + sig.entry, packed))
    return std::move(error);

  // Copy each result out and free the buffers the model allocated (two
  // results may share one).
  std::vector<HostTensor> outputs;
  llvm::SmallPtrSet<void *, 4> owned;
  const int64_t *word = results.data();
  for (const TensorSignature &out : sig.outputs) {
    size_t rank = out.shape.size();
    auto *allocated = reinterpret_cast<void *>(word[0]);
    auto *aligned = reinterpret_cast<uint8_t *>(word[1]);
    HostTensor t;
    t.name = out.name;
    t.type = out.type;
    t.shape.assign(word + 3, word + 3 + rank);
    t.data.resize(t.numElements() * elementSize(t.type));
    if (!t.data.empty())
      std::memcpy(t.data.data(), aligned + word[2] * elementSize(t.type),
                  t.data.size());
    owned.insert(allocated);
    outputs.push_back(std::move(t));
    word += 3 + 2 * rank;
  }
  for (void *p : owned)
    std::free(p);
  return outputs;
}
