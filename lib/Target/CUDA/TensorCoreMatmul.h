//===- TensorCoreMatmul.h - what the tensor-core kernel computes -*- C++
//-*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The contractions tessera-cuda-tensor-core-matmul rewrites, found by
// TensorCoreMatch.cpp (which ops, which layouts, what the fused zero start
// and epilogue may be) and built into a kernel by TensorCoreMatmul.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
#define TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

#include "KernelBuilding.h"

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
  /// bf16, f16, fp8 (E4M3FN or E5M2: wgmma reads it on sm_90a, the mma.sync
  /// kernel stages it decoded to bf16), i8 (into i32 accumulators, B stored
  /// [n][k]), or f32 read as tf32 (with allow-tf32).
  mlir::Type element;
  /// K per stage of the mma.sync kernel (32 for 16-bit elements and fp8,
  /// staged as bf16; 64 for i8; 16 for tf32: 64-byte rows
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
  /// A reduction of what the kernel stores to its largest |value| (fp8
  /// current scaling's amax), computed by the kernel as it stores: each
  /// warp's maximum goes by an atomic max into `amaxBits` (a memref<i32>
  /// holding the f32's bits, which order non-negative floats as i32s
  /// do), which the reduction's place then folds into its result. Null
  /// when there is none.
  mlir::linalg::GenericOp amax;
  mlir::Value amaxBits;
  /// Where the kernel cannot run or splits K: the amax of the stored
  /// values, reduced from -inf (a memref<f32>) before its bits go into
  /// amaxBits.
  mlir::Value fallbackAmax;
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

/// Whether `c`'s operands are fp8.
bool isFp8(const Contraction &c);

/// Whether the sm_90a wgmma kernel takes `c` (16-bit operands, or fp8 ones
/// with B stored [n][k], as fp8 wgmma reads both operands K-major; A and B
/// of rank at most 5, which tensor maps allow).
bool hopperTakes(const Contraction &c);

/// Emits at `b`'s insertion point: on an sm_90a GPU, and when A and B are
/// 16-byte aligned (and fp8 rows whole 16-byte chunks), the wgmma kernel's
/// launch (declaring in `module` the
/// runtime functions it calls); elsewhere what `otherwise` builds. With
/// `parts` (split-k), each block multiplies one of that many parts of K
/// and adds its tile to the result atomically (no epilogue, no amax).
void buildHopperLaunch(Contraction &c, mlir::OpBuilder &b,
                       mlir::ModuleOp module,
                       llvm::function_ref<void()> otherwise,
                       mlir::Value parts = {});

/// What the tensor-core GEMM kernels (mma.sync, TensorCoreMatmul.cpp;
/// wgmma, HopperMatmul.cpp) build alike: on the host, the loop dims' sizes
/// and the guard; in the kernel, operand indices, a block's batch indices,
/// the accumulators' start values and their stores, or the fused
/// elementwise op computed on them.
class ContractionKernel : public KernelArith {
public:
  ContractionKernel(Contraction &c, mlir::OpBuilder &b)
      : KernelArith(b, c.op.getLoc()), c(c) {}
  virtual ~ContractionKernel() = default;

  /// Host: reads the loop dims' sizes at the insertion point.
  void readSizes();
  /// Host: the kernel is correct for these sizes (nothing empty, a grid of
  /// `blockM`-row blocks within CUDA's limits).
  mlir::Value guard(int64_t blockM);
  /// Host: the contiguous dims are multiples of 16 bytes (K, and N when B
  /// is stored [k][n]), so that whole 16-byte chunks are copied.
  mlir::Value aligned();
  /// Host: into how many parts K is split (split-k), 1 when the grid of
  /// `blockM` x `blockN` tiles already fills the GPU. Each part is at
  /// least `minK` deep and there are at most kMaxSplits.
  mlir::Value splitCount(int64_t blockM, int64_t blockN, int64_t minK);

  /// Host: the blocks of a grid of `blockM` x `blockN` tiles (times the
  /// batch), saturated at kTargetBlocks.
  mlir::Value gridBlocks(int64_t blockM, int64_t blockN);
  /// Host: whether that grid has a wave of blocks (kTargetBlocks).
  mlir::Value fillsWave(int64_t blockM, int64_t blockN);
  /// The same, known when compiling: null when a size is dynamic.
  std::optional<bool> staticallyFillsWave(int64_t blockM, int64_t blockN);

  /// Split-k: blocks are wanted until about this many (a wave on the
  /// 108-132 SMs of an A100, H100 or H200), parts at most this many.
  static constexpr int64_t kTargetBlocks = 128, kMaxSplits = 16;

protected:
  /// The size of loop dim `dim`, read off an operand that has it.
  mlir::Value loopSize(unsigned dim);
  /// The indices of operand `index` (0 A, 1 B, 2 result) at loop dims `at`.
  llvm::SmallVector<mlir::Value>
  indicesOf(unsigned index, const llvm::DenseMap<unsigned, mlir::Value> &at);
  /// Kernel: the batch indices of block `linear` (row-major over the
  /// batch dims).
  void readBatchIndex(mlir::Value linear);
  /// Kernel: with `splits` parts of K, block z is part z % splits of
  /// batch z / splits; sets the batch indices, returns the part.
  mlir::Value readBatchAndSplit(mlir::Value z, mlir::Value splits);
  /// Kernel: the K tiles of block z, [first, first + count) of `numK`:
  /// all of them, or with `splits` (may be null) its part's; sets the
  /// batch indices.
  std::pair<mlir::Value, mlir::Value> kTiles(mlir::Value z, mlir::Value splits,
                                             mlir::Value numK);
  /// Kernel: where accumulator `index` of this thread lies in the block's
  /// tile (row, column).
  virtual std::pair<mlir::Value, mlir::Value>
  fragmentPosition(int64_t index) = 0;
  /// Where accumulator `index` lies in the result, and whether inside it.
  std::pair<llvm::DenseMap<unsigned, mlir::Value>, mlir::Value>
  accumulatorAt(int64_t index);
  /// `count` accumulators: zeros, or the result's values.
  llvm::SmallVector<mlir::Value> startAccumulators(int64_t count);
  /// Each accumulator stored where it is inside the result, or the fused
  /// elementwise op computed on it and stored instead; with `atomicAdd`
  /// (split-k), added to the result atomically, with no epilogue.
  void storeAccumulators(mlir::ValueRange acc, bool atomicAdd = false);

  Contraction &c;
  mlir::Value sizeM, sizeN, sizeK;
  llvm::SmallVector<mlir::Value> batchSizes, mSizes;
  /// The block's first row and column.
  mlir::Value m0, n0;
  llvm::DenseMap<unsigned, mlir::Value> batchIndex;

private:
  /// A value to store and where.
  struct Stored {
    mlir::Value value, buffer;
    llvm::SmallVector<mlir::Value> indices;
  };
  /// The fused elementwise op's value on accumulator `value` at loop dims
  /// `at`, and where it is stored.
  Stored epilogueAt(mlir::Value value,
                    llvm::DenseMap<unsigned, mlir::Value> at);
  /// The amax reduction's element value for the stored `value`.
  mlir::Value amaxElement(mlir::Value value);
  /// The warp's maximum of `value` folded into amaxBits by lane 0.
  void foldWarpAmax(mlir::Value value);
};

} // namespace tessera::cuda::tensor_cores

#endif // TESSERA_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
