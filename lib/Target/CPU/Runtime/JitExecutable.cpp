//===- JitExecutable.cpp - a model compiled for the CPU in process --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/JitExecutable.h"
#include "BlockCache.h"
#include "Builtins.h"
#include "MemRefCopy.h"
#include "WaitPolicy.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Transforms/Signature.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace tessera::runtime;
using tessera::cpu::JitExecutable;
using llvm::Twine;

JitExecutable::JitExecutable(std::unique_ptr<mlir::ExecutionEngine> engine,
                             ModelSignature sig)
    : engine(std::move(engine)), sig(std::move(sig)) {}

JitExecutable::~JitExecutable() = default;

llvm::Expected<std::unique_ptr<JitExecutable>>
JitExecutable::create(mlir::ModuleOp module) {
  auto signature = tessera::recordedSignature(module);
  if (!signature)
    return signature.takeError();
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
  // The engine has loaded libomp: the same wait policy as an artifact's.
  static bool waitPolicy = [&] {
    if (void *libomp = dlopen(openmp.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      tessera::cpu::chooseWaitPolicy(reinterpret_cast<void (*)(const char *)>(
          dlsym(libomp, "kmp_set_defaults")));
      dlclose(libomp);
    }
    return true;
  }();
  (void)waitPolicy;
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
    bind("tesseraAllocationFailures", &tesseraAllocationFailures);
    bind("__truncsfbf2", &__truncsfbf2);
    return symbols;
  });
  return std::unique_ptr<JitExecutable>(
      new JitExecutable(std::move(*engine), std::move(*signature)));
}

llvm::Expected<std::vector<HostTensor>>
JitExecutable::run(llvm::ArrayRef<HostTensor> inputs) {
  auto packed = engine->lookupPacked("_mlir_ciface_" + sig.entry);
  if (!packed)
    return packed.takeError();
  return invokePacked(*packed, &tesseraFree, sig, inputs, nullptr,
                      &tesseraAllocationFailures);
}
