//===- KernelImages.cpp - each gpu.binary as one Tessera kernel image -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/KernelImage.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <future>

namespace tessera::cuda {
#define GEN_PASS_DEF_KERNELIMAGESPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;
using tessera::cuda::KernelImageEntry;

namespace {

/// Runs ptxas on `ptx` for `arch`; the cubin's bytes, or an error with
/// ptxas's own message. Runs on a thread of its own (no diagnostics).
llvm::Expected<std::string> assemble(StringRef ptxas, StringRef ptx,
                                     StringRef arch) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  SmallString<128> input, output, log;
  if (llvm::sys::fs::createTemporaryFile("tessera-kernels", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("tessera-kernels", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("tessera-ptxas", "log", log))
    return fail("cannot create temporary files for ptxas");
  llvm::FileRemover removeInput(input), removeOutput(output), removeLog(log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return fail("cannot write " + input + ": " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  SmallVector<StringRef> args = {ptxas, archFlag, "-O3", input, "-o", output};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         0, 0, &error);
  if (status != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    return fail("ptxas failed for " + arch + ": " +
                (text ? (*text)->getBuffer().trim() : StringRef(error)));
  }
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return fail("ptxas wrote no cubin for " + arch);
  return (*cubin)->getBuffer().str();
}

struct KernelImagesPass
    : tessera::cuda::impl::KernelImagesPassBase<KernelImagesPass> {
  using KernelImagesPassBase::KernelImagesPassBase;

  void runOnOperation() override {
    std::string ptxas;
    if (assemble) {
      SmallString<128> path(cudaPath);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (!llvm::sys::fs::can_execute(path)) {
        getOperation().emitError("no ptxas at ")
            << path
            << ": the CUDA target assembles cubins with the CUDA toolkit's "
               "ptxas (--cuda-path=DIR names the toolkit)";
        return signalPassFailure();
      }
      ptxas = std::string(path);
    }
    WalkResult result = getOperation().walk([&](gpu::BinaryOp binary) {
      SmallVector<KernelImageEntry> entries;
      Attribute firstTarget;
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
        if (!target || object.getFormat() != gpu::CompilationTarget::Assembly) {
          binary.emitError("expected PTX objects for #nvvm.target (run "
                           "gpu-module-to-binary with format=isa)");
          return WalkResult::interrupt();
        }
        if (!firstTarget)
          firstTarget = target;
        StringRef ptx = object.getObject().getValue();
        // PTX comes with its NUL.
        ptx = ptx.rtrim(StringRef("\0", 1));
        entries.push_back({KernelImageEntry::PTX, target.getChip().str(), ptx});
      }
      // ptxas runs for every architecture at once.
      std::vector<std::future<llvm::Expected<std::string>>> jobs;
      if (assemble)
        for (const KernelImageEntry &e : entries)
          jobs.push_back(std::async(std::launch::async, [&, e] {
            return ::assemble(ptxas, e.data, e.arch);
          }));
      std::vector<std::string> cubins;
      bool failedToAssemble = false;
      for (auto &job : jobs) {
        llvm::Expected<std::string> cubin = job.get();
        if (!cubin) {
          binary.emitError(llvm::toString(cubin.takeError()));
          failedToAssemble = true;
          continue;
        }
        cubins.push_back(std::move(*cubin));
      }
      if (failedToAssemble)
        return WalkResult::interrupt();
      SmallVector<KernelImageEntry> all;
      for (auto [i, cubin] : llvm::enumerate(cubins))
        all.push_back({KernelImageEntry::Cubin, entries[i].arch, cubin});
      all.append(entries.begin(), entries.end());
      std::string image = tessera::cuda::writeKernelImage(all);
      auto object = gpu::ObjectAttr::get(
          firstTarget, gpu::CompilationTarget::Fatbin,
          StringAttr::get(binary.getContext(), image));
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), {object}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
