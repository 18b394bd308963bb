//===- MemoryArtifact.h - opens an artifact held in memory ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A framework that compiles in process gets the artifact as bytes; this
// opens them with the loader the registry picks for their kind, as if they
// had been read from a file, without writing them to disk: the bytes go
// into an anonymous memory file, which the loader opens through a link
// named with the kind's extension (removed once it is open).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_MEMORYARTIFACT_H
#define TESSERA_RUNTIME_MEMORYARTIFACT_H

#include "tessera/Runtime/Executable.h"

namespace tessera::runtime {

/// Opens the artifact `bytes` of the kind `kindOrExtension` (an artifact
/// kind such as "cpu-library", or a file name extension such as ".so"),
/// with the loader that loadExecutable() would pick for a file of that
/// extension and content, and the loader's `options`. `used`, when given,
/// gets that loader. Errors say "<memory>" where a file would be named.
llvm::Expected<std::unique_ptr<Executable>>
loadExecutableFromMemory(llvm::ArrayRef<uint8_t> bytes,
                         llvm::StringRef kindOrExtension,
                         const LoadOptions &options = {},
                         const ExecutableLoader **used = nullptr);

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_MEMORYARTIFACT_H
