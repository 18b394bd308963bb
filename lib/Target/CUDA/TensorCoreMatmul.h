//===- TensorCoreMatmul.h - what the tensor-core kernel computes -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The contractions tessera-cuda-tensor-core-matmul rewrites, found by
// TensorCoreMatch.cpp (which ops, which layouts, what the fused zero start
// and epilogue may be) and built into a kernel by TensorCoreMatmul.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
#define TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <array>
#include <optional>

namespace tessera::cuda::tensor_cores {

/// A contraction the kernel computes, and where its loop dims are.
struct Contraction {
  mlir::linalg::LinalgOp op;
  /// The loop dims. Several M dims (adjacent in A and in the result, as
  /// in [batch, seq, hidden] x [hidden, n]) are one: `m` is the first,
  /// `mDims` all of them.
  unsigned m, n, k;
  llvm::SmallVector<unsigned> mDims, batch;
  /// B stored [.., n, k] (rows of K) rather than [.., k, n].
  bool bKMajor = false;
  /// bf16, f16, or f32 read as tf32 (with allow-tf32).
  mlir::Type element;
  /// K per stage (32 for 16-bit elements, 16 for tf32: 64-byte rows
  /// either way) and elements per 16-byte cp.async.
  int64_t blockK = 32, chunk = 8;
  /// What writes zeros into the result just before the contraction (a
  /// fill, or a copy of a buffer filled with zeros, as bufferization leaves
  /// a fill that several results share): the accumulators start at zero
  /// instead of reading the result, and the op goes away.
  mlir::Operation *zeroFill = nullptr;
  /// The result holds zeros when the contraction starts (zeroFill, or a
  /// zero fill earlier that other results copy from).
  bool zeroStart = false;
  /// The elementwise op right after the contraction that reads its result
  /// (bias, activation, residual, cast), computed on the accumulators in
  /// registers and stored instead of them; the result is then never
  /// written. Null when there is none to fuse.
  mlir::linalg::GenericOp epilogue;
  /// Allocations and constants between the contraction and its epilogue,
  /// moved before the kernel's launch.
  llvm::SmallVector<mlir::Operation *> hoisted;
  /// A, B and the result (A and the result with their M dims collapsed
  /// into one), and the loop dim each of their dims is indexed by.
  std::array<mlir::Value, 3> operands;
  std::array<llvm::SmallVector<unsigned>, 3> roles;
};

/// The contraction `op` as the kernel computes it, if it can (fp32 ones
/// only with `allowTF32`).
std::optional<Contraction> match(mlir::linalg::LinalgOp op, bool allowTF32);

} // namespace tessera::cuda::tensor_cores

#endif // TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
