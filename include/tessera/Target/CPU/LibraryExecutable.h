//===- LibraryExecutable.h - a CPU artifact (.so) as an Executable --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A CPU artifact is a shared library with a C ABI (see
// tessera/Target/CPU/Artifact.h); this opens one with dlopen and runs it.
// No MLIR: the C API links it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CPU_LIBRARYEXECUTABLE_H
#define TESSERA_TARGET_CPU_LIBRARYEXECUTABLE_H

#include "tessera/Runtime/Executable.h"

#include <memory>

namespace tessera::cpu {

class LibraryExecutable : public runtime::Executable {
public:
  /// dlopens the shared library at `path` and reads its signature.
  static llvm::Expected<std::unique_ptr<LibraryExecutable>>
  load(llvm::StringRef path);

  const runtime::ModelSignature &signature() const override { return sig; }

  /// Runs the model; see runtime::invokePacked for the checks.
  llvm::Expected<std::vector<runtime::HostTensor>>
  run(llvm::ArrayRef<runtime::HostTensor> inputs) override {
    return runtime::invokePacked(entry, release, sig, inputs, library,
                                 failures);
  }

  std::string device() const override { return "host CPU"; }

private:
  LibraryExecutable(std::shared_ptr<void> library,
                    runtime::PackedFunction entry,
                    runtime::FreeFunction release,
                    runtime::AllocationFailuresFunction failures,
                    runtime::ModelSignature sig)
      : library(std::move(library)), entry(entry), release(release),
        failures(failures), sig(std::move(sig)) {}
  /// The dlopen handle, closed when the executable and every result it
  /// returned (whose buffers its allocator frees) are gone.
  std::shared_ptr<void> library;
  runtime::PackedFunction entry;
  runtime::FreeFunction release;
  /// The artifact's count of refused allocations (null in artifacts
  /// compiled before it was exported).
  runtime::AllocationFailuresFunction failures;
  runtime::ModelSignature sig;
};

/// Registers the loader of CPU artifacts (`.so`).
void registerLoaders();

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_LIBRARYEXECUTABLE_H
