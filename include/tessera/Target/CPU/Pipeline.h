//===- Pipeline.h - the CPU backend's lowering pipeline -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CPU_PIPELINE_H
#define TESSERA_TARGET_CPU_PIPELINE_H

#include "tessera/Transforms/TargetInfo.h"

#include "mlir/Pass/PassManager.h"

#include <memory>
#include <optional>

namespace tessera::cpu {

struct CPUOptions {
  /// OpenMP threads for parallel loops; 0 lets the OpenMP runtime choose
  /// (OMP_NUM_THREADS, else one per core).
  unsigned threads = 0;
  /// Remark on each contraction left on a generic loop nest, and why.
  bool reportGenericContractions = false;
  /// Print how many kernels were compiled once and shared (-v).
  bool summarizeSharedKernels = false;
  /// The vector registers' width the register tiles are sized for: 512
  /// (AVX-512) or 256 (AVX2).
  unsigned vectorBits = 512;
  /// bf16 x bf16 -> f32 products on vdpbf16ps (AVX-512 BF16), for CPUs
  /// where it runs at twice the fp32 FMA rate (tessera-cpu-tile-contractions'
  /// bf16-dot-product).
  bool bf16DotProduct = false;
  /// i8 x i8 -> i32 products on vpdpbusd (AVX-512 VNNI;
  /// tessera-cpu-tile-contractions' int8-dot-product).
  bool int8DotProduct = false;
};

/// The dot-product instructions the CPU target computes narrow products
/// with on a CPU: vdpbf16ps for bf16 where it runs at twice the fp32 FMA
/// rate (AVX-512 BF16 on AMD's Zen 4 and newer, `znver*`; on Intel's cores
/// it runs at half that rate, docs/notes/cpu-bf16-kernels.md), vpdpbusd
/// for int8 wherever AVX-512 VNNI is.
struct DotProducts {
  bool bf16 = false;
  bool int8 = false;
};
DotProducts dotProductsFor(llvm::StringRef cpu, bool hasAvx512BF16,
                           bool hasAvx512VNNI);
/// The same for the CPU this process runs on.
DotProducts hostDotProducts();

/// The OpenMP runtime compiled models call (Debian's libomp-22-dev).
constexpr const char *kOpenMPLibraryDir = "/usr/lib/llvm-22/lib";

/// tessera -> linalg on tensors, cleaned up (--compile-to=linalg). With
/// `fuse`, each reduction region (and each softmax, layer_norm or rms_norm
/// on its own) becomes one loop over rows; without it (--no-fusion) they
/// decompose into separate loop nests. Identical kernels (a model's
/// repeated layers) first become one function each, called where each
/// stood (`tessera-outline-kernels`).
void buildLinalgPipeline(mlir::OpPassManager &pm, bool fuse = true,
                         const CPUOptions &options = {});

/// linalg on tensors -> LLVM dialect (--compile-to=llvm): one-shot
/// bufferization, ownership-based deallocation (public functions return
/// malloc'ed buffers that their caller frees), loops, and the LLVM
/// conversions. Every public function gets a C interface
/// (`_mlir_ciface_<name>(results *, inputs *...)`) on memref descriptors.
/// One-shot bufferization of the whole module with identity layouts at
/// function boundaries; public functions return buffers their caller owns.
/// Shared by the targets that lower through linalg. With
/// `freeForallAllocations` (the CPU's threads), the buffers each scf.forall
/// iteration allocates are freed at its end.
void buildBufferizePipeline(mlir::OpPassManager &pm,
                            bool freeForallAllocations = false);

void buildLLVMPipeline(mlir::OpPassManager &pm, const CPUOptions &options = {});

/// Registers the CPU backend's TargetInfo as `cpu` for the fusion pass
/// (idempotent).
void registerCPUTargetInfo();

/// The CPU backend's TargetInfo, for code on a CPU with the dot-product
/// instructions `dots` (its cost model prices narrow products by them);
/// without `dots`, for this machine's CPU.
std::unique_ptr<TargetInfo>
createCPUTargetInfo(std::optional<DotProducts> dots = std::nullopt);

/// Registers the CPU target (tessera/Target/Targets.def).
void registerTarget();

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_PIPELINE_H
