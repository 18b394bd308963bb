//===- Artifact.h - loads and runs a compiled CPU artifact (.so) ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_RUNTIME_ARTIFACT_H
#define TESSERA_RUNTIME_ARTIFACT_H

#include "tessera/Runtime/Invoke.h"

#include <memory>

namespace tessera::runtime {

class Artifact {
public:
  ~Artifact();
  /// dlopens the shared library at `path` and reads its signature.
  static llvm::Expected<std::unique_ptr<Artifact>> load(llvm::StringRef path);

  const ModelSignature &signature() const { return sig; }

  /// Runs the model; see invokePacked for the checks.
  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs) const {
    return invokePacked(entry, release, sig, inputs);
  }

private:
  Artifact(void *handle, PackedFunction entry, FreeFunction release,
           ModelSignature sig)
      : handle(handle), entry(entry), release(release), sig(std::move(sig)) {}
  void *handle;
  PackedFunction entry;
  FreeFunction release;
  ModelSignature sig;
};

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_ARTIFACT_H
