//===- BufferPlacement.h - which buffers live in host memory --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CUDA_BUFFERPLACEMENT_H
#define TESSERA_TARGET_CUDA_BUFFERPLACEMENT_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessera::cuda {

/// The module attribute listing the globals that stay in host memory.
constexpr llvm::StringLiteral kHostGlobalsAttr = "tessera.cuda.host_globals";

/// Whether the buffer `memref` views lives in host memory: a
/// `memref.alloca`, or a global listed in kHostGlobalsAttr.
bool isHostBuffer(mlir::Value memref);

/// The buffer a view (of views) is of.
mlir::Value rootOf(mlir::Value view);

/// Whether `op` may have an effect that `counts` accepts on `buffer` (or a
/// view of the same buffer); such an effect whose target it cannot name,
/// or an op that does not describe its effects, counts.
bool mayAffect(mlir::Operation *op, mlir::Value buffer,
               llvm::function_ref<bool(mlir::MemoryEffects::Effect *)> counts);

/// Whether `op` is in code that runs on the GPU: a parallel loop nest (a
/// future kernel) or a `gpu.launch` built by a pass.
bool inKernel(mlir::Operation *op);

} // namespace tessera::cuda

#endif // TESSERA_TARGET_CUDA_BUFFERPLACEMENT_H
