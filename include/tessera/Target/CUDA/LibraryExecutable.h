//===- LibraryExecutable.h - a CUDA artifact (.so) as an Executable -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Opens a CUDA artifact and runs it on a Driver (the GPU through libcuda,
// or the PTX emulator): inputs are copied to device memory, the artifact's
// host code launches its kernels, and the outputs are copied back.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_LIBRARYEXECUTABLE_H
#define TESSERA_TARGET_CUDA_LIBRARYEXECUTABLE_H

#include "tessera/Runtime/Executable.h"
#include "tessera/Target/CUDA/Driver.h"

namespace tessera::cuda {

/// Whether the shared library at `path` is a CUDA artifact (it exports
/// tessera_cuda_bind_driver).
bool isCudaArtifact(llvm::StringRef path);

/// Opens the CUDA artifact at `path`; the driver its loader options name
/// (driverFor) is opened when it first runs.
llvm::Expected<std::unique_ptr<runtime::Executable>>
loadLibrary(llvm::StringRef path, const runtime::LoadOptions &options);

/// Checks the values of the loader options driverFor reads.
llvm::Error checkDriverOptions(const runtime::LoadOptions &options);

/// The driver the loader options name: `gpu-driver` (cuda, the default, or
/// emulator) and `device` (an ordinal, default 0). Drivers are shared by
/// every model of the process that names the same one.
llvm::Expected<std::shared_ptr<Driver>>
driverFor(const runtime::LoadOptions &options);

void registerLoaders();

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_LIBRARYEXECUTABLE_H
