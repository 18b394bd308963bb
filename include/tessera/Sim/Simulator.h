//===- Simulator.h - runs accelerator programs: numbers and cycles --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One run gives both the bit-exact results (in the program's DRAM image)
// and the timing of an event model: four queues issue their instructions
// in order, each waiting for its queue, its dependency tokens and, for
// DMA, the DRAM channel (shared by loads and stores: one transfer at a
// time at the configured bandwidth, plus the latency). A matrix
// instruction takes its dataflow's cycles per fold (docs/Systolic.md), a
// drain ceil(elements / lanes) + 4.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_SIMULATOR_H
#define TESSERA_SIM_SIMULATOR_H

#include "tessera/Sim/Program.h"

#include <array>

namespace tessera::sim {

struct UnitStats {
  int64_t busy = 0, instructions = 0;
  /// Cycles the queue sat ready but waiting: for a dependency token, or
  /// for the DRAM channel.
  int64_t waitDependency = 0, waitMemory = 0;
};

struct TraceEvent {
  Queue queue;
  Opcode opcode;
  size_t index;
  int64_t start, end;
  /// Multiply-accumulates (matmul instructions).
  int64_t macs = 0;
};

struct SimStats {
  int64_t cycles = 0;
  std::array<UnitStats, 4> units;
  int64_t macs = 0, sramBytes = 0, dramBytes = 0;
  /// MACs over cycles x array cells: of the whole run, and of the cycles
  /// the matrix unit was busy.
  double arrayUtilization = 0, matrixUtilization = 0;
  double energyPJ = 0, seconds = 0;
  std::vector<TraceEvent> trace;
};

/// Runs `program` (validated against `config`) in place: its DRAM image
/// ends up holding the outputs. Errors for a deadlock (a queue waiting on
/// a token nobody will signal).
Result<SimStats> simulate(Program &program, const AcceleratorConfig &config,
                          bool keepTrace = false);

/// The statistics as JSON text (cycles, busy and stall cycles per unit,
/// utilization, bytes, energy, time at the configured clock).
std::string statsToJSON(const SimStats &stats, const AcceleratorConfig &config);

/// A Chrome trace-event file of `stats.trace` (one row per unit).
std::string traceToJSON(const SimStats &stats, const AcceleratorConfig &config);

/// A one-page HTML report of a run with a kept trace: the configuration,
/// the totals (cycles, time, utilization, MACs, bytes, energy), busy and
/// stall cycles per unit, and an SVG plot of the array's utilization and
/// each unit's busy fraction over time (`buckets` intervals).
std::string reportToHTML(const SimStats &stats, const AcceleratorConfig &config,
                         const std::string &title, int buckets = 100);

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

/// Reads the fp32 output `name` from a program's DRAM image.
std::vector<float> readOutput(const Program &program, const std::string &name);

/// Writes `values` (fp32, one per element) into `tensor`'s place in the
/// DRAM image, converted to its format; reads a tensor back as fp32.
void writeTensor(Program &program, const TensorInfo &tensor,
                 const float *values);
std::vector<float> readTensor(const Program &program, const TensorInfo &tensor);

} // namespace tessera::sim

#endif // TESSERA_SIM_SIMULATOR_H
