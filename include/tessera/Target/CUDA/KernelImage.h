//===- KernelImage.h - the kernels of a CUDA artifact, for every GPU ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A CUDA artifact embeds its kernels once per GPU architecture it was
// compiled for: a cubin assembled by ptxas for each (sm_80, sm_90a) and the
// PTX, which the CUDA driver compiles for GPUs newer than all of them and
// which Tessera's PTX emulator runs. The driver that loads a module picks
// the entry for its device.
//
//   "TSRKIMG1" | u32 count | count x { u32 kind | char arch[16] | u64 size |
//   size bytes }                              (little-endian; PTX ends in NUL)
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CUDA_KERNELIMAGE_H
#define TESSERA_TARGET_CUDA_KERNELIMAGE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessera::cuda {

struct KernelImageEntry {
  enum Kind : uint32_t { Cubin = 0, PTX = 1 };
  Kind kind = PTX;
  /// "sm_80", "sm_90a".
  std::string arch;
  /// The cubin's bytes, or the PTX text (without its NUL).
  llvm::StringRef data;
};

/// The image holding `entries`.
std::string writeKernelImage(llvm::ArrayRef<KernelImageEntry> entries);

/// The entries of the image at `bytes` (which they point into).
llvm::Expected<std::vector<KernelImageEntry>>
readKernelImage(llvm::StringRef bytes);

/// The compute capability an architecture names (sm_90a -> 90); 0 when
/// `arch` is not of the form sm_<digits>[a].
unsigned computeCapability(llvm::StringRef arch);

/// The PTX a device of compute capability `capability` (10 * major +
/// minor) may compile: the newest no newer than it, an `a` PTX only at
/// its exact capability; null when there is none.
const KernelImageEntry *
selectKernelPTX(llvm::ArrayRef<KernelImageEntry> entries, unsigned capability);

/// The entry a device of compute capability `major.minor` runs: a cubin for
/// its major version no newer than it (an `a` cubin only on its exact
/// architecture), else the newest PTX no newer than it, which the driver
/// compiles; null when there is none.
const KernelImageEntry *selectKernelImage(
    llvm::ArrayRef<KernelImageEntry> entries, unsigned major, unsigned minor);

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_KERNELIMAGE_H
