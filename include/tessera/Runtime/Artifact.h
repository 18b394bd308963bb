//===- Artifact.h - loads and runs a compiled CPU artifact (.so) ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_RUNTIME_ARTIFACT_H
#define TESSERA_RUNTIME_ARTIFACT_H

#include "tessera/Runtime/Invoke.h"

#include <memory>

namespace tessera::runtime {

class Artifact {
public:
  /// dlopens the shared library at `path` and reads its signature.
  static llvm::Expected<std::unique_ptr<Artifact>> load(llvm::StringRef path);

  const ModelSignature &signature() const { return sig; }

  /// Runs the model; see invokePacked for the checks.
  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) const {
    return invokePacked(entry, release, sig, inputs, library);
  }

private:
  Artifact(std::shared_ptr<void> library, PackedFunction entry,
           FreeFunction release, ModelSignature sig)
      : library(std::move(library)), entry(entry), release(release),
        sig(std::move(sig)) {}
  /// The dlopen handle, closed when the artifact and every result it
  /// returned (whose buffers its allocator frees) are gone.
  std::shared_ptr<void> library;
  PackedFunction entry;
  FreeFunction release;
  ModelSignature sig;
};

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_ARTIFACT_H
