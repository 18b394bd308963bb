//===- Pipeline.h - the CUDA backend's lowering pipeline ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CUDA_PIPELINE_H
#define TESSERA_TARGET_CUDA_PIPELINE_H

#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>
#include <vector>

namespace tessera::cuda {

struct CUDAOptions {
  /// The architectures to generate kernels for ("sm_80", "sm_90a").
  std::vector<std::string> gpus = {"sm_80", "sm_90a"};
  /// The CUDA toolkit whose ptxas assembles cubins.
  std::string cudaPath = "/usr/local/cuda";
  /// Threads per block of elementwise and row kernels.
  int64_t blockSize = 256;
  /// fp32 contractions run on tensor cores as tf32 (`--allow-tf32`).
  bool allowTF32 = false;
};

/// tessera -> linalg on tensors (elementwise producers fused into their
/// consumers when `fuse`).
void buildLinalgPipeline(mlir::OpPassManager &pm, bool fuse);

/// linalg on tensors -> buffers -> one gpu.launch per parallel loop nest,
/// outlined into gpu.modules.
void buildGPUPipeline(mlir::OpPassManager &pm, const CUDAOptions &options);

/// gpu -> NVVM -> PTX (and cubins) in kernel images; host code in the LLVM
/// dialect.
void buildLLVMPipeline(mlir::OpPassManager &pm, const CUDAOptions &options);

/// The dialects and translations the CUDA lowering needs.
void registerDialects(mlir::DialectRegistry &registry);

std::unique_ptr<TargetInfo> createCUDATargetInfo();

void registerTarget();

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_PIPELINE_H
