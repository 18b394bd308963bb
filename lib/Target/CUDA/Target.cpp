//===- Target.cpp - the CUDA backend in the target registry ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Target.h"
#include "tessera/Target/CPU/Artifact.h"
#include "tessera/Target/CUDA/KernelImage.h"
#include "tessera/Target/CUDA/LibraryExecutable.h"
#include "tessera/Target/CUDA/Passes.h"
#include "tessera/Target/CUDA/Pipeline.h"
#include "tessera/Transforms/Signature.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace tessera;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

class CUDACompilation : public TargetCompilation {
public:
  CUDACompilation(cuda::CUDAOptions options, bool fuse)
      : options(std::move(options)), fuse(fuse) {}

  void buildPipeline(OpPassManager &pm, StringRef phase) override {
    cuda::buildLinalgPipeline(pm, fuse);
    if (phase == "linalg")
      return;
    cuda::buildGPUPipeline(pm, options);
    if (phase == "llvm")
      cuda::buildLLVMPipeline(pm, options);
  }

  llvm::Error writeArtifact(ModuleOp module, const ArtifactKind &kind,
                            StringRef path, TimingScope &timing) override {
    if (kind.name == "ptx")
      return writePTX(module, path);
    auto signature = recordedSignature(module);
    if (!signature)
      return signature.takeError();
    if (failed(cpu::addArtifactInterface(module, *signature)))
      return fail("the artifact's C interface could not be added");
    addDriverInterface(module);
    cpu::CodegenOptions codegen;
    auto machine = cpu::createTargetMachine(codegen);
    if (!machine)
      return machine.takeError();
    std::vector<cpu::ModuleWeight> weights =
        cpu::externalizeWeights(module, (*machine)->getTargetTriple());
    TimingScope translateTiming =
        timing.nest("Translation to LLVM IR (host code)");
    llvm::LLVMContext llvmContext;
    auto llvmModule = cpu::translateToLLVMIR(module, llvmContext, **machine);
    translateTiming.stop();
    if (!llvmModule)
      return llvmModule.takeError();
    TimingScope codegenTiming = timing.nest(
        "LLVM optimization, code generation and linking (host code)");
    auto plan = cpu::writeSharedLibrary(
        std::move(*llvmModule), codegen, path,
        cpu::installedLibrary("libTesseraCUDAArtifactSupport.a"),
        /*openmp=*/false, /*lld=*/false, weights);
    return plan ? llvm::Error::success() : plan.takeError();
  }

  llvm::Expected<std::unique_ptr<runtime::Executable>>
  load(ModuleOp module, const runtime::LoadOptions &loadOptions) override {
    if (llvm::Error error = cuda::checkDriverOptions(loadOptions))
      return std::move(error);
    SmallString<128> library;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "tessera-cuda-model", "so", library))
      return llvm::errorCodeToError(ec);
    // The library stays open (and in use) after its file is gone.
    llvm::FileRemover remove(library);
    mlir::TimingScope timing;
    static const ArtifactKind lib = {"lib", ".so", ""};
    if (llvm::Error error = writeArtifact(module, lib, library, timing))
      return std::move(error);
    return cuda::loadLibrary(library, loadOptions);
  }

private:
  /// Exports tessera_cuda_bind_driver and tessera_cuda_take_error
  /// (DriverABI.h), forwarding to the support archive, whose own symbols
  /// stay private to the artifact.
  static void addDriverInterface(ModuleOp module) {
    MLIRContext *ctx = module.getContext();
    Location loc = module.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    auto forward = [&](StringRef exported, StringRef internal,
                       LLVM::LLVMFunctionType type) {
      auto callee = LLVM::LLVMFuncOp::create(b, loc, internal, type);
      auto function = LLVM::LLVMFuncOp::create(b, loc, exported, type);
      OpBuilder::InsertionGuard guard(b);
      Block *body = function.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      auto call = LLVM::CallOp::create(b, loc, callee, body->getArguments());
      LLVM::ReturnOp::create(b, loc, call.getResults());
    };
    forward("tessera_cuda_bind_driver", "tesseraCudaBindDriver",
            LLVM::LLVMFunctionType::get(voidType, {ptr}));
    forward("tessera_cuda_take_error", "tesseraCudaTakeError",
            LLVM::LLVMFunctionType::get(ptr, {}));
  }

  /// The PTX of every kernel module, for the first architecture of --gpu.
  llvm::Error writePTX(ModuleOp module, StringRef path) {
    std::string text;
    const std::string &arch = options.gpus.front();
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      auto entries = cuda::readKernelImage(object.getObject().getValue());
      if (!entries)
        return entries.takeError();
      for (const cuda::KernelImageEntry &e : *entries)
        if (e.kind == cuda::KernelImageEntry::PTX && e.arch == arch)
          text += ("// kernel module " + binary.getSymName() + "\n" + e.data +
                   "\n")
                      .str();
    }
    std::string error;
    auto output = openOutputFile(path, &error);
    if (!output)
      return fail(error);
    output->os() << text;
    output->keep();
    return llvm::Error::success();
  }

  cuda::CUDAOptions options;
  bool fuse;
};

class CUDATarget : public Target {
public:
  StringRef name() const override { return "cuda"; }
  StringRef description() const override {
    return "NVIDIA GPUs (sm_80 and newer), PTX through LLVM's NVPTX backend "
           "(a shared library that launches its kernels through the CUDA "
           "driver, or runs them on Tessera's PTX emulator)";
  }
  ArrayRef<TargetOption> options() const override {
    static const TargetOption kOptions[] = {
        {"gpu", "sm_XY,...",
         "GPU architectures to generate kernels for, each as a cubin "
         "assembled by ptxas and as PTX (default sm_80,sm_90a)",
         "sm_80,sm_90a"},
        {"cuda-path", "dir",
         "the CUDA toolkit whose ptxas assembles the cubins (default "
         "/usr/local/cuda)",
         "/usr/local/cuda"},
        {"gpu-block-size", "N",
         "threads per block of elementwise and row kernels (default 256)",
         "256"}};
    return kOptions;
  }
  const TargetInfo &info() const override { return *targetInfo; }
  ArrayRef<TargetPhase> phases() const override {
    static const TargetPhase kPhases[] = {
        {"linalg", "lowered to linalg, tensor, arith and math on tensors"},
        {"gpu", "bufferized; each parallel loop nest a kernel in a "
                "gpu.module, launched from the host function"},
        {"llvm", "host code in the LLVM dialect; kernels as PTX and cubins "
                 "in kernel images",
         /*elideConstants=*/true}};
    return kPhases;
  }
  ArrayRef<ArtifactKind> artifacts() const override {
    static const ArtifactKind kArtifacts[] = {
        {"lib", ".so",
         "a shared library with the C ABI the runtime loads, its kernels "
         "embedded for every --gpu architecture",
         /*text=*/false, /*loaderKind=*/"cuda-library"},
        {"ptx", ".ptx", "the kernels' PTX for the first --gpu architecture",
         /*text=*/true}};
    return kArtifacts;
  }

  llvm::Expected<std::unique_ptr<TargetCompilation>>
  configure(const TargetOptionValues &values, bool fuse) const override {
    cuda::CUDAOptions options;
    options.gpus.clear();
    SmallVector<StringRef> gpus;
    std::string list = optionValue(values, "gpu");
    StringRef(list).split(gpus, ',', -1, /*KeepEmpty=*/false);
    for (StringRef gpu : gpus) {
      gpu = gpu.trim();
      if (!llvm::is_contained(
              {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"}, gpu))
        return fail("--gpu=" + list + ": '" + gpu +
                    "' is not an architecture the CUDA target supports "
                    "(sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a; newer GPUs "
                    "run the sm_80 PTX every artifact for sm_80 holds)");
      options.gpus.push_back(gpu.str());
    }
    if (options.gpus.empty())
      return fail("--gpu needs at least one architecture (e.g. sm_90a)");
    options.cudaPath = optionValue(values, "cuda-path");
    // The toolkit's ptxas assembles the cubins; its libdevice holds the
    // few math functions left as calls.
    for (StringRef file : {"bin/ptxas", "nvvm/libdevice/libdevice.10.bc"}) {
      SmallString<128> path(options.cudaPath);
      llvm::sys::path::append(path, file);
      if (!llvm::sys::fs::exists(path))
        return fail("no " + llvm::sys::path::filename(file) + " at " + path +
                    ": the CUDA target needs the CUDA toolkit (--cuda-path "
                    "names it; default /usr/local/cuda)");
    }
    std::string block = optionValue(values, "gpu-block-size");
    if (StringRef(block).getAsInteger(10, options.blockSize) ||
        options.blockSize < 32 || options.blockSize > 1024 ||
        options.blockSize % 32)
      return fail("--gpu-block-size must be a multiple of 32 from 32 to "
                  "1024, got '" +
                  block + "'");
    options.allowTF32 = values.count(kAllowTF32OptionKey) != 0;
    return std::make_unique<CUDACompilation>(std::move(options), fuse);
  }

private:
  std::unique_ptr<TargetInfo> targetInfo = cuda::createCUDATargetInfo();
};

} // namespace

void tessera::cuda::registerTarget() {
  registerTesseraCUDAPasses();
  registerTargetInfo("cuda", [] { return createCUDATargetInfo(); });
  tessera::registerTarget(std::make_unique<CUDATarget>());
}
