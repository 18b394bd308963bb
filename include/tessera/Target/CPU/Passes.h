//===- Passes.h - passes of the CPU backend -------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CPU_PASSES_H
#define TESSERA_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace tessera::cpu {

/// The widest stride along a row that tessera-cpu-strided-reads reads as
/// contiguous vectors and a shuffle (each 16-lane load then keeps at least
/// 4 lanes); wider ones stay a load per lane.
inline constexpr int64_t kMaxReadStride = 4;

#define GEN_PASS_DECL
#include "tessera/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Target/CPU/Passes.h.inc"

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_PASSES_H
