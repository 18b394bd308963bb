//===- Target.cpp - the CPU backend in the target registry ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"
#include "tessera/Target/CPU/Artifact.h"
#include "tessera/Target/CPU/JitExecutable.h"
#include "tessera/Target/CPU/Passes.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Transforms/Signature.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace tessera;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

class CPUCompilation : public TargetCompilation {
public:
  CPUCompilation(cpu::CPUOptions options, cpu::CodegenOptions codegen,
                 bool fuse, bool verbose)
      : options(options), codegen(std::move(codegen)), fuse(fuse),
        verbose(verbose),
        info(cpu::createCPUTargetInfo(
            cpu::DotProducts{options.bf16DotProduct, options.int8DotProduct})) {
  }

  /// Prices narrow products by the dot products of the CPU the code is
  /// for (--mcpu), not this machine's.
  std::shared_ptr<const TargetInfo> targetInfo() const override { return info; }

  void buildPipeline(OpPassManager &pm, StringRef phase) override {
    cpu::buildLinalgPipeline(pm, fuse, options);
    if (phase == "llvm")
      cpu::buildLLVMPipeline(pm, options);
  }

  llvm::Error writeArtifact(ModuleOp module, const ArtifactKind &kind,
                            StringRef path, TimingScope &timing) override {
    auto signature = recordedSignature(module);
    if (!signature)
      return signature.takeError();
    if (failed(cpu::addArtifactInterface(module, *signature)))
      return fail("the artifact's C interface could not be added");
    auto machine = cpu::createTargetMachine(codegen);
    if (!machine)
      return machine.takeError();
    // A shared library's weights (resource blobs) go into an object of
    // their own straight from the MLIR blobs, not through LLVM constants.
    std::vector<cpu::ModuleWeight> weights;
    if (kind.name == "lib")
      weights = cpu::externalizeWeights(module, (*machine)->getTargetTriple());
    TimingScope translateTiming = timing.nest("Translation to LLVM IR");
    llvm::LLVMContext llvmContext;
    auto llvmModule = cpu::translateToLLVMIR(module, llvmContext, **machine);
    translateTiming.stop();
    if (!llvmModule)
      return llvmModule.takeError();
    if (kind.name == "lib") {
      TimingScope codegenTiming =
          timing.nest("LLVM optimization, code generation and linking");
      auto plan = cpu::writeSharedLibrary(
          std::move(*llvmModule), codegen, path,
          cpu::installedLibrary("libTesseraArtifactSupport.a"),
          /*openmp=*/true, /*lld=*/true, weights);
      if (!plan)
        return plan.takeError();
      if (verbose) {
        llvm::errs() << "code generation: " << plan->partitions
                     << " partition(s) on " << plan->threads << " thread(s)\n";
        size_t bytes = 0;
        for (const cpu::ModuleWeight &weight : weights)
          bytes += weight.bytes.size();
        if (!weights.empty())
          llvm::errs() << "weights: " << weights.size() << " arrays, "
                       << llvm::format("%.1f", bytes / 1e6)
                       << " MB, written from the MLIR blobs\n";
      }
      return llvm::Error::success();
    }
    TimingScope llvmTiming = timing.nest("LLVM optimization");
    if (llvm::Error error =
            cpu::optimizeModule(**llvmModule, **machine, codegen))
      return error;
    cpu::weightsAsBytes(**llvmModule);
    llvmTiming.stop();
    TimingScope codegenTiming = timing.nest("Code generation");
    if (kind.name == "llvm") {
      std::string error;
      auto output = openOutputFile(path, &error);
      if (!output)
        return fail(error);
      (*llvmModule)->print(output->os(), nullptr);
      output->keep();
      return llvm::Error::success();
    }
    return cpu::emitCode(**llvmModule, **machine, path, kind.name == "asm");
  }

  llvm::Expected<std::unique_ptr<runtime::Executable>>
  load(ModuleOp module, const runtime::LoadOptions &) override {
    auto jit = cpu::JitExecutable::create(module);
    if (!jit)
      return jit.takeError();
    return std::unique_ptr<runtime::Executable>(std::move(*jit));
  }

private:
  cpu::CPUOptions options;
  cpu::CodegenOptions codegen;
  bool fuse;
  /// -v: say how code generation was divided, and how many weights went
  /// into their object straight from the MLIR blobs.
  bool verbose;
  std::shared_ptr<const TargetInfo> info;
};

class CPUTarget : public Target {
public:
  StringRef name() const override { return "cpu"; }
  StringRef description() const override {
    return "this machine's x86 CPU, through LLVM (a shared library the "
           "runtime loads, an object, assembly or LLVM IR)";
  }
  ArrayRef<TargetOption> options() const override {
    static const TargetOption kOptions[] = {
        {"threads", "N",
         "OpenMP threads the compiled model uses (default 0: "
         "OMP_NUM_THREADS at run time, else one per core)",
         "0", /*prefix=*/false, /*alias=*/"num-threads"},
        {"O", "level", "LLVM optimization level, -O0 to -O3 (default 3)", "3",
         /*prefix=*/true},
        {"mcpu", "name",
         "LLVM CPU to generate code for (default: this machine's)", ""},
        {"codegen-partitions", "N",
         "Split a shared library's code into N modules, "
         "optimized and compiled in parallel on this machine's cores "
         "(default 0: one per 20,000 LLVM instructions, at most 8; code in "
         "different modules is not inlined across them)",
         "0"}};
    return kOptions;
  }
  const TargetInfo &info() const override { return *targetInfo; }
  ArrayRef<TargetPhase> phases() const override {
    static const TargetPhase kPhases[] = {
        {"linalg", "lowered to linalg, tensor, arith and math on tensors"},
        {"llvm", "bufferized, tiled and vectorized, in the LLVM dialect"}};
    return kPhases;
  }
  ArrayRef<ArtifactKind> artifacts() const override {
    static const ArtifactKind kArtifacts[] = {
        {"lib", ".so", "a shared library with the C ABI the runtime loads"},
        {"obj", ".o", "an object file"},
        {"asm", ".s", "assembly", /*text=*/true},
        {"llvm", ".ll", "LLVM IR", /*text=*/true}};
    return kArtifacts;
  }

  llvm::Expected<std::unique_ptr<TargetCompilation>>
  configure(const TargetOptionValues &values, bool fuse) const override {
    cpu::CPUOptions options;
    cpu::CodegenOptions codegen;
    std::string threads = optionValue(values, "threads"),
                level = optionValue(values, "O");
    if (StringRef(threads).getAsInteger(10, options.threads))
      return fail("--threads expects a number of threads, got '" + threads +
                  "'");
    if (StringRef(level).getAsInteger(10, codegen.optLevel) ||
        codegen.optLevel > 3)
      return fail("-O" + level + " is not a level (0-3)");
    codegen.cpu = optionValue(values, "mcpu");
    std::string partitions = optionValue(values, "codegen-partitions");
    if (StringRef(partitions).getAsInteger(10, codegen.partitions))
      return fail("--codegen-partitions expects a number of modules, got '" +
                  partitions + "'");
    bool verbose = values.count(kVerboseOptionKey) != 0;
    options.reportGenericContractions =
        verbose || values.count(kReportSlowPathsOptionKey) != 0;
    options.summarizeSharedKernels = verbose;
    // Register tiles for the CPU the code is for (--mcpu, else this one):
    // AVX-512's 32 wide registers, else AVX2's 16. A CPU name LLVM does
    // not know is reported when the artifact is written.
    // Narrow products on the dot-product instructions that pay on that
    // CPU (cpu::dotProductsFor).
    if (auto machine = cpu::createTargetMachine(codegen)) {
      const llvm::MCSubtargetInfo *subtarget = (*machine)->getMCSubtargetInfo();
      options.vectorBits = subtarget->checkFeatures("+avx512f") ? 512 : 256;
      cpu::DotProducts dots = cpu::dotProductsFor(
          (*machine)->getTargetCPU(), subtarget->checkFeatures("+avx512bf16"),
          subtarget->checkFeatures("+avx512vnni"));
      options.bf16DotProduct = dots.bf16;
      options.int8DotProduct = dots.int8;
    } else {
      llvm::consumeError(machine.takeError());
    }
    return std::make_unique<CPUCompilation>(options, std::move(codegen), fuse,
                                            verbose);
  }

private:
  std::unique_ptr<TargetInfo> targetInfo = cpu::createCPUTargetInfo();
};

} // namespace

void tessera::cpu::registerTarget() {
  registerTesseraCPUPasses();
  registerCPUTargetInfo();
  tessera::registerTarget(std::make_unique<CPUTarget>());
}
