//===- Schedule.h - the systolic backend's schedules ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// How the systolic backend schedules work on the accelerator: a GEMM tiled
// to the array and the on-chip memories (with its epilogue), a computation
// on the vector unit in chunks of rows, strided copies and gathers, each
// appended as instructions of the accelerator's instruction set
// (tessera/Sim/Program.h). The lowering (lib/Target/Systolic) builds
// programs from them; tessera-sim's `gemm` command builds one GEMM. Plain
// C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_SYSTOLIC_SCHEDULE_H
#define TESSERA_TARGET_SYSTOLIC_SCHEDULE_H

#include "tessera/Sim/Analytical.h"
#include "tessera/Sim/Config.h"
#include "tessera/Sim/Program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::sim {

/// A computation on the vector unit over an R x C view of tensors in
/// DRAM (fp32), run in chunks of rows that fit the unified buffer: each
/// chunk's inputs are loaded, the ops run in order on buffers ("slots")
/// of the chunk, and the output slot is stored. A slot holds the chunk's
/// rows x C values (Full), one value per row (Column), or one row of C
/// values shared by every chunk (Row, loaded once).
struct VectorStep {
  enum class Shape : uint8_t { Full, Column, Row };
  struct Slot {
    Shape shape = Shape::Full;
    /// Where an input slot's values are in DRAM (fp32), or none for a
    /// temporary.
    std::optional<uint64_t> dram;
  };
  struct Op {
    VectorFn fn = VectorFn::Copy;
    /// Destination and sources, indices into `slots`. The destination of
    /// a row reduction is a Column slot; otherwise the destination and the
    /// first source have the same shape and the second source's shape
    /// gives the operand mode (or `immediate`).
    int dst = 0, src = 0, src2 = -1;
    std::optional<float> immediate;
  };
  int64_t rows = 0, cols = 0;
  std::vector<Slot> slots;
  std::vector<Op> ops;
  /// The slot stored to `out` (rows x cols, or rows for a Column slot) in
  /// `outFormat`: f32, bf16 or f16 (the last op writing it converts).
  int output = 0;
  uint64_t out = 0;
  NumberFormat outFormat = NumberFormat::F32;
};

/// One GEMM of a program: C = A x B (+ bias, ReLU), A (M x K) and B
/// (K x N) row-major in DRAM in `format`, C (M x N) row-major in
/// `outFormat`, the bias an fp32 row of N values.
struct GemmStep {
  GemmShape shape;
  NumberFormat format = NumberFormat::BF16, outFormat = NumberFormat::F32;
  uint64_t a = 0, b = 0, c = 0;
  std::optional<uint64_t> bias;
  /// Dequantization: the products (int32 for int8 operands) times this
  /// scale, before the bias.
  std::optional<float> scale;
  bool relu = false;
  /// Its first load waits for every earlier store (A is an earlier
  /// GEMM's result).
  bool fence = false;
  /// A batch of independent GEMMs of this shape, operand b at
  /// a + b * aStride, ... (byte strides; 0 shares an operand): one
  /// schedule whose folds follow each other without a fence.
  int64_t batch = 1;
  uint64_t aStride = 0, bStride = 0, cStride = 0;
  /// Vector ops on each output block before its store (fused epilogues:
  /// GELU, a residual add, attention's mask and softmax): slot 0 is the
  /// drained product (Full, fp32, no DRAM); the view is the batch's
  /// outputs stacked, batch * M rows x N columns, and other slots read
  /// their block of it (Full, Column) or its columns (Row). The output
  /// slot is stored in outFormat. Row reductions need N <= the array's
  /// columns (one block holds whole rows).
  std::optional<VectorStep> epilogue;
};

/// Appends the weight-stationary schedule of `step` (below) to `out`; its
/// tokens balance on their own, so steps compose in sequence.
std::optional<std::string> appendGemm(const AcceleratorConfig &config,
                                      const GemmStep &step,
                                      std::vector<Instruction> &out);

/// Appends `step` to `out`; its first load waits for every earlier store
/// and its tokens balance on their own, so steps and GEMMs compose in
/// sequence. Errors when one row of every slot does not fit the unified
/// buffer.
std::optional<std::string> appendVectorStep(const AcceleratorConfig &config,
                                            const VectorStep &step,
                                            std::vector<Instruction> &out);

/// The vector instructions of `step`'s ops on one block of `rows` x
/// `cols` values whose slots are at `address` in the unified buffer (no
/// tokens: the caller adds them to the first and last).
void appendVectorOpsOnBlock(const VectorStep &step,
                            const std::vector<uint32_t> &address, int64_t rows,
                            int64_t cols, std::vector<Instruction> &out);

/// A copy of a strided view of a DRAM tensor into another strided view:
/// element `idx` of `shape` is read at `src + sum(idx[d] * srcStrides[d])`
/// (fp32 elements) and written at `dst + sum(idx[d] * dstStrides[d])`
/// (elements of `dstFormat`, converted on the vector unit). Strides may be
/// 0 (a broadcast) and need not be row-major (a transpose, a slice, an
/// im2col of a convolution, a concatenation's part). The two innermost
/// dims move as blocks: a contiguous innermost dim moves whole rows per DMA
/// row, a strided one element by element.
struct CopyStep {
  std::vector<int64_t> shape, srcStrides, dstStrides;
  uint64_t src = 0, dst = 0;
  NumberFormat dstFormat = NumberFormat::F32;
};

/// Appends `step` to `out` (loads, a vector copy per chunk of blocks,
/// stores); like the other steps its first load waits for every earlier
/// store and its tokens balance on their own.
std::optional<std::string> appendCopyStep(const AcceleratorConfig &config,
                                          const CopyStep &step,
                                          std::vector<Instruction> &out);

/// An embedding lookup: `count` rows of `rowElements` fp32 values from the
/// table at `table` (`tableRows` rows), picked by the fp32 indices at
/// `indices` in DRAM, written at `out` in `outFormat`.
struct GatherStep {
  uint64_t table = 0, indices = 0, out = 0;
  int64_t tableRows = 0, rowElements = 0, count = 0;
  NumberFormat outFormat = NumberFormat::F32;
};

/// Appends `step`: per chunk of indices, a load of the indices, a vector
/// copy that hands them to the load queue, the gather, a vector copy that
/// converts the rows, and a store.
std::optional<std::string> appendGatherStep(const AcceleratorConfig &config,
                                            const GatherStep &step,
                                            std::vector<Instruction> &out);

/// A weight-stationary GEMM program C = A x B (A: M x K, B: K x N, given
/// in fp32 and converted to `format`; C in fp32) tiled to the array and
/// the on-chip memories, with double-buffered weight and activation
/// tiles. Inputs "A" and "B" and output "C" are in the DRAM image.
Result<Program> buildGemmProgram(const AcceleratorConfig &config,
                                 GemmShape gemm, NumberFormat format,
                                 const std::vector<float> &a,
                                 const std::vector<float> &b);

} // namespace tessera::sim

#endif // TESSERA_TARGET_SYSTOLIC_SCHEDULE_H
