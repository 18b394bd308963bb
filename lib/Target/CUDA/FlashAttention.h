//===- FlashAttention.h - which attention the fused kernel takes -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-cuda-flash-attention turns tessera.attention into one tensor-core
// kernel. The CUDA target's TargetInfo asks the same question as the pass,
// so that the precision passes narrow only the attention the kernel takes
// (it accumulates in f32 and rounds its result once).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CUDA_FLASHATTENTION_H
#define TESSERA_LIB_TARGET_CUDA_FLASHATTENTION_H

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace tessera::cuda::flash_attention {

/// Why the fused kernel cannot compute attention `op` with its query, key
/// and value (of one type) in `element` (bf16 or f16); nothing when it
/// can.
std::optional<std::string> whyNot(mlir::Operation *op, mlir::Type element);

} // namespace tessera::cuda::flash_attention

#endif // TESSERA_LIB_TARGET_CUDA_FLASHATTENTION_H
