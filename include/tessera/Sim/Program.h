//===- Program.h - the accelerator's instructions and program format ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A program is a list of 32-byte instructions, each executed by one of four
// decoupled queues (load, matrix, vector, store), plus the initial DRAM
// image and the tensors it holds. Queues synchronize through dependency
// tokens on eight channels, each from one queue to another: an
// instruction may wait for (pop) tokens on channels into its queue and
// signal (push) tokens on channels out of it. docs/Systolic.md documents
// the encoding and the version-1 file layout.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_PROGRAM_H
#define TESSERA_SIM_PROGRAM_H

#include "tessera/Sim/Config.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::sim {

enum class Opcode : uint8_t {
  /// DRAM -> unified buffer or weight buffer (load queue).
  Load = 1,
  /// Weights (weight buffer) x activations (unified buffer) into the
  /// accumulators (matrix queue).
  Matmul = 2,
  /// Accumulators -> unified buffer, converted, optionally with ReLU and
  /// int8 requantization (vector queue).
  Drain = 3,
  /// Unified buffer -> DRAM (store queue).
  Store = 4,
  /// An elementwise operation or a row reduction on fp32 rows in the
  /// unified buffer (vector queue; program version 2).
  Vector = 5,
  /// DRAM table rows picked by indices in the unified buffer -> unified
  /// buffer (load queue; program version 2).
  Gather = 6,
};

/// What a vector instruction computes (its `depth` field): unary
/// functions of the first source, binary operations of both sources, and
/// reductions of each row to one value.
enum class VectorFn : uint16_t {
  Copy = 0,
  Exp = 1,
  Tanh = 2,
  Erf = 3,
  Sigmoid = 4,
  Relu = 5,
  GeluErf = 6,
  GeluTanh = 7,
  Silu = 8,
  Sqrt = 9,
  Rsqrt = 10,
  Reciprocal = 11,
  Neg = 12,
  Abs = 13,
  Log = 14,
  /// x / immediate converted to the destination format: for i8 rounded
  /// half to even and saturated, for fp8 rounded to nearest even and
  /// saturated (the quantize ops; the only function that writes i8 or
  /// fp8).
  Quantize = 16,
  Add = 32,
  Sub = 33,
  Mul = 34,
  Div = 35,
  Max = 36,
  Min = 37,
  Pow = 38,
  /// Comparisons: 1.0 where `x op y` holds, else 0.0 (IEEE: false for a
  /// NaN, `ne` true). Booleans are held as fp32 0.0 and 1.0.
  Less = 39,
  LessEqual = 40,
  Greater = 41,
  GreaterEqual = 42,
  Equal = 43,
  NotEqual = 44,
  /// Selections by a boolean first operand: `when` is y where x != 0 and
  /// -0.0 elsewhere, `unless` y where x == 0 and -0.0 elsewhere (a Where is
  /// their sum, exact to the bit: -0.0 is the additive identity).
  When = 45,
  Unless = 46,
  RowSum = 64,
  RowMax = 65,
};
/// Where a binary vector instruction's second operand comes from (its
/// `flags`): a full rows x cols block, one row of cols values shared by
/// every row, one value per row, or the fp32 immediate in `dram`.
enum class VectorMode : uint8_t {
  Full = 0,
  Row = 1,
  Column = 2,
  Immediate = 3
};
bool isUnary(VectorFn fn);
bool isBinary(VectorFn fn);
bool isRowReduction(VectorFn fn);
/// The function's name in the assembly form, or null for an unknown code.
const char *vectorFnName(VectorFn fn);
std::optional<VectorFn> parseVectorFn(const std::string &name);

enum class Queue : uint8_t { Load, Matrix, Vector, Store };
const char *queueName(Queue queue);

/// Token channels: bit i of an instruction's wait/signal masks.
enum Channel : uint8_t {
  LoadToMatrix = 0,
  MatrixToLoad = 1,
  MatrixToVector = 2,
  VectorToMatrix = 3,
  VectorToStore = 4,
  StoreToVector = 5,
  LoadToVector = 6,
  VectorToLoad = 7,
  kNumChannels = 8,
};
Queue channelProducer(Channel channel);
Queue channelConsumer(Channel channel);

/// Where a load goes.
enum class Buffer : uint8_t { Unified = 0, Weights = 1 };
constexpr uint8_t kLoadFence = 2;
constexpr uint8_t kDrainRelu = 1, kDrainBias = 2;
/// Drain flags: multiply by the fp32 scale whose bits are `c` first (a
/// dequantization); the accumulators hold int32 (an int8 matmul's), to
/// convert to fp32 before.
constexpr uint8_t kDrainScale = 4, kDrainInt32 = 8;

struct Instruction {
  Opcode opcode = Opcode::Load;
  NumberFormat format = NumberFormat::BF16;
  uint8_t waitMask = 0, signalMask = 0;
  /// Load: bit 0 the buffer (Buffer), bit 1 a fence (start only after
  /// every store before it in program order has completed). Matmul: 1 =
  /// add to the accumulators, 0 = overwrite. Drain: bit 0 ReLU, bit 1 add
  /// an fp32 bias row of `cols` values read from the unified buffer at
  /// address `dram`.
  uint8_t flags = 0;
  /// Load/Store: `rows` rows (0 counts as 1) of `c` bytes, from/to DRAM
  ///   at `dram` with a row stride of `b` bytes, to/from SRAM at `a`
  ///   contiguously.
  /// Matmul: weight byte address, activation byte address, first
  ///   accumulator row, rows m, depth k (<= array rows), columns n
  ///   (<= array columns); activations are m x k row-major, weights k x n.
  /// Drain: first accumulator row, unified-buffer byte address, rows,
  ///   columns, requantization scale (fp32 bits; int8 output only) or,
  ///   with kDrainScale, the dequantization scale.
  /// Vector: first source `a`, second source `b` and destination `c`
  ///   (unified-buffer byte addresses; sources fp32, the destination in
  ///   `format`: f32, bf16 or f16, or f32 rows x 1 for a row reduction),
  ///   `rows` x `cols` elements, the function in `depth` (VectorFn), the
  ///   second source's VectorMode in `flags`, an fp32 immediate in the low
  ///   32 bits of `dram`.
  /// Gather: `rows` rows of `c` bytes from the DRAM table at `dram` (rows
  ///   of `c` bytes, `cols + 65536 * depth` of them) to the unified buffer
  ///   at `a`, row r being the table row whose index is the fp32 value at
  ///   unified-buffer address `b + 4 r` (an integer within the table, else
  ///   the run stops with an error); flags bit 1 is a fence as for loads.
  uint64_t dram = 0;
  uint32_t a = 0, b = 0, c = 0, rows = 0, depth = 0, cols = 0;
};

Queue queueOf(Opcode opcode);

/// A named tensor in DRAM: its format, shape, byte offset and whether the
/// host fills it (input), reads it (output) or it is part of the image.
struct TensorInfo {
  /// Scratch: intermediate results, written and read by the program.
  enum class Role : uint8_t {
    Input = 0,
    Output = 1,
    Constant = 2,
    Scratch = 3
  };
  std::string name;
  Role role = Role::Input;
  NumberFormat format = NumberFormat::F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  int64_t bytes() const;
};

struct Program {
  std::vector<Instruction> instructions;
  std::vector<uint8_t> dram;
  std::vector<TensorInfo> tensors;
};

/// Version 2 adds the vector instruction; version-1 programs still load.
constexpr uint32_t kProgramVersion = 2;

/// The version-1 binary encoding.
std::vector<uint8_t> encodeProgram(const Program &program);
/// Decodes and validates against `config`; every error says what and
/// where (instruction index, field).
Result<Program> decodeProgram(const std::vector<uint8_t> &bytes,
                              const AcceleratorConfig &config);
/// Checks opcodes, formats, sizes against the array and SRAM bounds,
/// token channels against queues, and that every channel's pushes and pops
/// balance.
std::optional<std::string> validateProgram(const Program &program,
                                           const AcceleratorConfig &config);

} // namespace tessera::sim

#endif // TESSERA_SIM_PROGRAM_H
