//===- SimTest.cpp - unit tests of the systolic accelerator model ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Analytical.h"
#include "tessera/Sim/Numerics.h"

#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace tessera::sim;

namespace {

AnalyticalResult analyzed(ArrayShape array, Dataflow dataflow, GemmShape gemm) {
  Result<AnalyticalResult> result = analyzeGemm(array, dataflow, gemm);
  EXPECT_TRUE(std::holds_alternative<AnalyticalResult>(result));
  return std::get<AnalyticalResult>(result);
}

// SCALE-Sim v3's golden runs: 32x32 array, M = 256, N = 128, K = 256.
TEST(Analytical, ScaleSimReferenceOS) {
  AnalyticalResult r =
      analyzed({32, 32}, Dataflow::OutputStationary, {256, 128, 256});
  EXPECT_EQ(r.folds, 32);
  EXPECT_EQ(r.cyclesPerFold, 318);
  EXPECT_EQ(r.computeCycles, 10175);
  EXPECT_NEAR(100 * r.computeUtilization, 80.503, 5e-4);
  EXPECT_DOUBLE_EQ(r.mappingEfficiency, 1.0);
}

TEST(Analytical, ScaleSimReferenceWS) {
  AnalyticalResult r =
      analyzed({32, 32}, Dataflow::WeightStationary, {256, 128, 256});
  EXPECT_EQ(r.folds, 32);
  EXPECT_EQ(r.cyclesPerFold, 350);
  EXPECT_EQ(r.computeCycles, 11199);
  EXPECT_NEAR(100 * r.computeUtilization, 67.192, 5e-4);
}

TEST(Analytical, ScaleSimReferenceIS) {
  AnalyticalResult r =
      analyzed({32, 32}, Dataflow::InputStationary, {256, 128, 256});
  EXPECT_EQ(r.folds, 64);
  EXPECT_EQ(r.cyclesPerFold, 222);
  EXPECT_EQ(r.computeCycles, 14207);
  EXPECT_NEAR(100 * r.computeUtilization, 50.593, 5e-4);
}

// A 4x4 output-stationary array on a 4x4x4 job: 9 cycles (SCALE-Sim v2).
TEST(Analytical, SmallOutputStationary) {
  EXPECT_EQ(
      analyzed({4, 4}, Dataflow::OutputStationary, {4, 4, 4}).computeCycles, 9);
}

TEST(Analytical, PartialFolds) {
  // 40 = 32 + 8 rows and columns: four folds using 32x32, 32x8, 8x32, 8x8.
  AnalyticalResult r =
      analyzed({32, 32}, Dataflow::OutputStationary, {40, 40, 40});
  EXPECT_EQ(r.folds, 4);
  EXPECT_DOUBLE_EQ(r.mappingEfficiency, 1600.0 / 4096.0);
  EXPECT_DOUBLE_EQ(r.computeUtilization,
                   1600.0 / 4096.0 * 40.0 / (40 + 32 + 32 - 2));
}

TEST(Analytical, ConvToGemm) {
  auto gemm = std::get<GemmShape>(convToGemm({8, 8, 3, 3, 2, 4, 1}));
  EXPECT_EQ(gemm.m, 36);
  EXPECT_EQ(gemm.k, 18);
  EXPECT_EQ(gemm.n, 4);
  // Eh = ceil((8 - 3 + 2) / 2) = 4.
  EXPECT_EQ(std::get<GemmShape>(convToGemm({8, 8, 3, 3, 2, 4, 2})).m, 16);
}

TEST(Analytical, BadSizes) {
  auto zero = analyzeGemm({0, 32}, Dataflow::WeightStationary, {1, 1, 1});
  ASSERT_TRUE(std::holds_alternative<std::string>(zero));
  EXPECT_EQ(std::get<std::string>(zero), "array rows must be positive (got 0)");
  auto negative = analyzeGemm({32, 32}, Dataflow::WeightStationary, {4, -1, 4});
  EXPECT_EQ(std::get<std::string>(negative), "N must be positive (got -1)");
  auto huge = analyzeGemm({32, 32}, Dataflow::WeightStationary,
                          {int64_t(1) << 40, 1, 1});
  EXPECT_TRUE(std::holds_alternative<std::string>(huge));
  auto filter = convToGemm({4, 4, 5, 5, 1, 1, 1});
  EXPECT_EQ(std::get<std::string>(filter),
            "the filter (5x5) is larger than the input (4x4)");
  EXPECT_FALSE(parseDataflow("xs"));
  EXPECT_EQ(parseDataflow("is"), Dataflow::InputStationary);
}

// The conversions and requantization are the numerics library's, tested
// in NumericsTest.cpp; what follows is the array's own arithmetic.

TEST(SimNumerics, RoundingShiftAndInt8Dot) {
  EXPECT_EQ(roundingShiftRight(5, 1), 2);
  EXPECT_EQ(roundingShiftRight(7, 1), 4);
  EXPECT_EQ(roundingShiftRight(-5, 1), -2);
  EXPECT_EQ(roundingShiftRight(-7, 1), -4);
  EXPECT_EQ(roundingShiftRight(6, 2), 2);  // 1.5 -> 2
  EXPECT_EQ(roundingShiftRight(10, 2), 2); // 2.5 -> 2
  EXPECT_EQ(roundingShiftRight(123, 0), 123);
  int8_t a[] = {127, -128, 3}, b[] = {127, -128, -3};
  EXPECT_EQ(dotI8(a, b, 3, 10), 127 * 127 + 128 * 128 - 9 + 10);
}

TEST(SimNumerics, DotAddsInIndexOrder) {
  // In order: (0 + 2^25) + 1 rounds back to 2^25, then - 2^25 = 0; the
  // exact sum is 1.
  float a[] = {33554432.0f, 1.0f, -33554432.0f}, b[] = {1.0f, 1.0f, 1.0f};
  EXPECT_EQ(dot(a, b, 3, 0.0f), 0.0f);
  float c[] = {33554432.0f, -33554432.0f, 1.0f};
  EXPECT_EQ(dot(c, b, 3, 0.0f), 1.0f);
}

} // namespace

#include "tessera/Sim/Config.h"
#include "tessera/Sim/Program.h"
#include "tessera/Sim/Simulator.h"
#include "tessera/Target/Systolic/Schedule.h"

namespace {

AcceleratorConfig config(std::string_view json) {
  Result<AcceleratorConfig> parsed = parseConfig(json);
  if (auto *error = std::get_if<std::string>(&parsed))
    ADD_FAILURE() << *error;
  return std::get<AcceleratorConfig>(parsed);
}

std::string configError(std::string_view json) {
  Result<AcceleratorConfig> parsed = parseConfig(json);
  EXPECT_TRUE(std::holds_alternative<std::string>(parsed));
  return std::holds_alternative<std::string>(parsed)
             ? std::get<std::string>(parsed)
             : "";
}

TEST(Config, Presets) {
  auto tpu = std::get<AcceleratorConfig>(presetConfig("tpu-v1"));
  EXPECT_EQ(tpu.array.rows, 256);
  EXPECT_TRUE(tpu.supports(NumberFormat::I8));
  EXPECT_FALSE(tpu.supports(NumberFormat::BF16));
  EXPECT_FALSE(validateConfig(tpu));
  auto base = std::get<AcceleratorConfig>(presetConfig("default"));
  EXPECT_EQ(base.array.cols, 128);
  EXPECT_FALSE(validateConfig(base));
  EXPECT_EQ(std::get<std::string>(presetConfig("tpu-v9")),
            "unknown accelerator preset 'tpu-v9' (presets: tpu-v1, default, "
            "small)");
}

TEST(Config, JsonOverridesAPreset) {
  AcceleratorConfig c = config(R"({"base": "small", "rows": 8, "cols": 32,
      "dataflow": "os", "formats": ["bf16", "i8"],
      "energy": {"mac_pj": 0.1}})");
  EXPECT_EQ(c.array.rows, 8);
  EXPECT_EQ(c.array.cols, 32);
  EXPECT_EQ(c.dataflow, Dataflow::OutputStationary);
  EXPECT_EQ(c.energy.macPJ, 0.1);
  EXPECT_EQ(c.operandFormats.size(), 2u);
}

TEST(Config, BadConfigurations) {
  EXPECT_NE(configError("{").find("malformed configuration JSON"),
            std::string::npos);
  EXPECT_EQ(configError("[1]"), "the configuration must be a JSON object");
  EXPECT_EQ(configError(R"({"rowz": 4})"), "unknown configuration key 'rowz'");
  EXPECT_EQ(configError(R"({"rows": "many"})"), "'rows' must be an integer");
  EXPECT_EQ(configError(R"({"pipelined_folds": 1})"),
            "'pipelined_folds' must be true or false");
  EXPECT_EQ(configError(R"({"rows": -4})"), "'rows' must be positive");
  EXPECT_EQ(configError(R"({"base": "small", "weight_buffer_bytes": 100})"),
            "the weight buffer (100 bytes) cannot hold one 16 x 16 weight "
            "tile");
  EXPECT_EQ(configError(R"({"dataflow": "rs"})"),
            "'dataflow' must be \"os\", \"ws\" or \"is\"");
  EXPECT_EQ(configError(R"({"formats": ["f64"]})"),
            "'formats' entries must be one of bf16, f16, f8E4M3FN, f8E5M2, "
            "i8");
  EXPECT_EQ(configError(R"({"energy": {"mac": 1}})"),
            "unknown key 'energy.mac'");
}

std::vector<float> randomMatrix(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(static_cast<size_t>(count));
  for (float &v : values)
    v = normal(rng);
  return values;
}

/// C = A x B the accelerator's way: operands rounded to `format`, each
/// fold's partial sum along k in order, folds added in order.
std::vector<float> reference(const std::vector<float> &a,
                             const std::vector<float> &b, GemmShape g,
                             int64_t foldDepth, NumberFormat format) {
  std::vector<float> c(static_cast<size_t>(g.m * g.n));
  std::vector<float> row, column;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      float acc = 0;
      for (int64_t k0 = 0; k0 < g.k; k0 += foldDepth) {
        int64_t depth = std::min(foldDepth, g.k - k0);
        row.assign(depth, 0);
        column.assign(depth, 0);
        for (int64_t k = 0; k < depth; ++k) {
          row[k] = roundTo(format, a[i * g.k + k0 + k]);
          column[k] = roundTo(format, b[(k0 + k) * g.n + j]);
        }
        float partial = dot(row.data(), column.data(), depth, 0.0f);
        acc = k0 == 0 ? partial : acc + partial;
      }
      c[i * g.n + j] = acc;
    }
  return c;
}

TEST(Simulator, GemmIsBitExact) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  for (NumberFormat format : {NumberFormat::BF16, NumberFormat::F16,
                              NumberFormat::F8E4M3FN, NumberFormat::F8E5M2}) {
    // Sizes that leave partial tiles in every dimension.
    GemmShape g{40, 24, 37};
    std::vector<float> a = randomMatrix(g.m * g.k, 1),
                       b = randomMatrix(g.k * g.n, 2);
    Result<Program> built = buildGemmProgram(small, g, format, a, b);
    ASSERT_TRUE(std::holds_alternative<Program>(built))
        << std::get<std::string>(built);
    Program program = std::get<Program>(built);
    Result<SimStats> stats = simulate(program, small);
    ASSERT_TRUE(std::holds_alternative<SimStats>(stats))
        << std::get<std::string>(stats);
    std::vector<float> got = readOutput(program, "C");
    std::vector<float> expected = reference(a, b, g, small.array.rows, format);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(llvm::bit_cast<uint32_t>(got[e]),
                llvm::bit_cast<uint32_t>(expected[e]))
          << formatName(format) << " element " << e;
    EXPECT_EQ(std::get<SimStats>(stats).macs, g.m * g.k * g.n);
  }
}

/// Runs a compute-bound GEMM program of `g` on random data and expects
/// its cycles within 2% of the analytical figure for the configuration
/// (pipelined folds or one fold at a time).
std::pair<SimStats, AnalyticalResult>
runAgainstAnalytical(const AcceleratorConfig &c, GemmShape g, unsigned seed) {
  Program program = std::get<Program>(
      buildGemmProgram(c, g, NumberFormat::BF16, randomMatrix(g.m * g.k, seed),
                       randomMatrix(g.k * g.n, seed + 1)));
  SimStats stats = std::get<SimStats>(simulate(program, c));
  AnalyticalResult analytical =
      std::get<AnalyticalResult>(analyzeGemm(c.array, c.dataflow, g));
  int64_t expected =
      c.pipelinedFolds ? analytical.pipelinedCycles : analytical.computeCycles;
  double ratio = double(stats.cycles) / double(expected);
  EXPECT_GT(ratio, 0.98) << stats.cycles << " vs " << expected;
  EXPECT_LT(ratio, 1.02) << stats.cycles << " vs " << expected;
  return {stats, analytical};
}

TEST(Simulator, AgreesWithTheAnalyticalModel) {
  // Compute bound, ample bandwidth: the cycle model within 2% of the
  // analytical weight-stationary figure, one fold at a time (SCALE-Sim's
  // model) and with pipelined folds.
  for (bool pipelined : {false, true}) {
    AcceleratorConfig c = config(std::string(R"({"base": "small",
        "dram_bytes_per_cycle": 4096, "dram_latency_cycles": 10,
        "pipelined_folds": )") + (pipelined ? "true}" : "false}"));
    GemmShape g{256, 256, 256};
    auto [stats, analytical] = runAgainstAnalytical(c, g, 3);
    if (pipelined) {
      // The folds follow each other without a gap: only the last one's
      // fill and drain remain.
      EXPECT_LT(stats.cycles, analytical.computeCycles * 0.9);
      EXPECT_GT(stats.matrixUtilization, 0.99);
      continue;
    }
    EXPECT_EQ(stats.units[int(Queue::Matrix)].busy,
              analytical.computeCycles + 1);
    // Of the matrix unit's busy cycles: every MAC over every cell-cycle.
    EXPECT_DOUBLE_EQ(stats.matrixUtilization,
                     double(g.m * g.n * g.k) /
                         (double(analytical.computeCycles + 1) * 16 * 16));
  }
}

TEST(Simulator, PipelinedFoldsKeepResultsAndOrder) {
  // Overlapping folds changes the timing, never the numbers.
  GemmShape g{40, 24, 37};
  std::vector<float> a = randomMatrix(g.m * g.k, 21),
                     b = randomMatrix(g.k * g.n, 22);
  std::vector<float> expected = reference(a, b, g, 16, NumberFormat::BF16);
  int64_t cycles[2];
  for (bool pipelined : {false, true}) {
    AcceleratorConfig c = config(std::string(R"({"base": "small",
        "pipelined_folds": )") + (pipelined ? "true}" : "false}"));
    Program p =
        std::get<Program>(buildGemmProgram(c, g, NumberFormat::BF16, a, b));
    SimStats stats = std::get<SimStats>(simulate(p, c));
    cycles[pipelined] = stats.cycles;
    std::vector<float> got = readOutput(p, "C");
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(llvm::bit_cast<uint32_t>(got[e]),
                llvm::bit_cast<uint32_t>(expected[e]))
          << "element " << e;
  }
  EXPECT_LT(cycles[1], cycles[0]);
}

TEST(Simulator, OutputStationaryGemm) {
  // Bit-exact (one fold streams the whole depth, added in order) and,
  // compute bound, within 2% of the analytical output-stationary figure
  // (both fold models).
  for (bool pipelined : {false, true}) {
    AcceleratorConfig c = config(std::string(R"({"base": "small",
        "dataflow": "os", "dram_bytes_per_cycle": 4096,
        "dram_latency_cycles": 10, "pipelined_folds": )") +
                                 (pipelined ? "true}" : "false}"));
    GemmShape small{40, 24, 37};
    std::vector<float> a = randomMatrix(small.m * small.k, 11),
                       b = randomMatrix(small.k * small.n, 12);
    Program p =
        std::get<Program>(buildGemmProgram(c, small, NumberFormat::BF16, a, b));
    ASSERT_TRUE(std::holds_alternative<SimStats>(simulate(p, c)));
    std::vector<float> got = readOutput(p, "C");
    std::vector<float> expected =
        reference(a, b, small, small.k, NumberFormat::BF16);
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(llvm::bit_cast<uint32_t>(got[e]),
                llvm::bit_cast<uint32_t>(expected[e]))
          << "element " << e;

    runAgainstAnalytical(c, {256, 256, 512}, 13);
  }
}

TEST(Simulator, LowBandwidthStallsOnMemory) {
  AcceleratorConfig c = config(R"({"base": "small",
      "dram_bytes_per_cycle": 2, "dram_latency_cycles": 200})");
  GemmShape g{64, 64, 64};
  Program program = std::get<Program>(
      buildGemmProgram(c, g, NumberFormat::BF16, randomMatrix(g.m * g.k, 5),
                       randomMatrix(g.k * g.n, 6)));
  SimStats stats = std::get<SimStats>(simulate(program, c, true));
  AnalyticalResult analytical = std::get<AnalyticalResult>(
      analyzeGemm(c.array, Dataflow::WeightStationary, g));
  EXPECT_GT(stats.cycles, 2 * analytical.computeCycles);
  EXPECT_GT(stats.units[int(Queue::Matrix)].waitDependency, 0);
  EXPECT_GT(stats.units[int(Queue::Load)].waitMemory, 0);
  EXPECT_EQ(stats.trace.size(), program.instructions.size());
  EXPECT_GT(stats.energyPJ, 0);
}

Program tinyProgram() {
  Program p;
  p.dram.resize(1024);
  Instruction load;
  load.opcode = Opcode::Load;
  load.c = 64;
  load.signalMask = 1u << LoadToMatrix;
  Instruction mm;
  mm.opcode = Opcode::Matmul;
  mm.format = NumberFormat::BF16;
  mm.rows = 2;
  mm.depth = 4;
  mm.cols = 4;
  mm.waitMask = 1u << LoadToMatrix;
  p.instructions = {load, mm};
  return p;
}

TEST(Program, ValidationErrors) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  EXPECT_FALSE(validateProgram(tinyProgram(), small));
  Program big = tinyProgram();
  big.instructions[1].depth = 17;
  EXPECT_EQ(*validateProgram(big, small),
            "instruction 1 (matrix): a 17 x 4 weight tile does not fit the "
            "16 x 16 array");
  Program outside = tinyProgram();
  outside.instructions[0].a = 256 * 1024 - 8;
  EXPECT_EQ(*validateProgram(outside, small),
            "instruction 0 (load): the unified-buffer range [262136, 262200) "
            "is beyond its 262144 bytes");
  Program dram = tinyProgram();
  dram.instructions[0].dram = 1000;
  EXPECT_NE(validateProgram(dram, small)->find("the DRAM range"),
            std::string::npos);
  Program unbalanced = tinyProgram();
  unbalanced.instructions[1].waitMask = 0;
  EXPECT_EQ(*validateProgram(unbalanced, small),
            "token channel 0 (load -> matrix) has 1 more signals than waits");
  Program wrongQueue = tinyProgram();
  wrongQueue.instructions[0].waitMask = 1u << LoadToMatrix;
  EXPECT_EQ(*validateProgram(wrongQueue, small),
            "instruction 0 (load): waits on token channel 0, which does not "
            "lead into its queue");
  Program format = tinyProgram();
  AcceleratorConfig tpu = std::get<AcceleratorConfig>(presetConfig("tpu-v1"));
  EXPECT_EQ(*validateProgram(format, tpu),
            "instruction 1 (matrix): operand format bf16 is not supported by "
            "this accelerator");
}

TEST(Program, Deadlock) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  // The load waits for the matmul, which waits for the load.
  Program p = tinyProgram();
  p.instructions[0].waitMask = 1u << MatrixToLoad;
  p.instructions[1].signalMask = 1u << MatrixToLoad;
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<std::string>(result));
  EXPECT_NE(std::get<std::string>(result).find("deadlock"), std::string::npos);
}

TEST(Program, EncodingRoundTripsAndRejectsBadFiles) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  GemmShape g{20, 20, 20};
  Program program = std::get<Program>(
      buildGemmProgram(small, g, NumberFormat::BF16, randomMatrix(400, 7),
                       randomMatrix(400, 8)));
  std::vector<uint8_t> bytes = encodeProgram(program);
  Result<Program> decoded = decodeProgram(bytes, small);
  ASSERT_TRUE(std::holds_alternative<Program>(decoded))
      << std::get<std::string>(decoded);
  const Program &back = std::get<Program>(decoded);
  EXPECT_EQ(back.instructions.size(), program.instructions.size());
  EXPECT_EQ(back.dram, program.dram);
  EXPECT_EQ(back.tensors[2].name, "C");
  EXPECT_EQ(encodeProgram(back), bytes);

  std::vector<uint8_t> magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(std::get<std::string>(decodeProgram(magic, small)),
            "not a Tessera systolic program (bad magic)");
  std::vector<uint8_t> version = bytes;
  version[4] = 9;
  EXPECT_EQ(std::get<std::string>(decodeProgram(version, small)),
            "unsupported program version 9 (this simulator reads versions 1 "
            "to 2)");
  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + 40);
  EXPECT_TRUE(
      std::holds_alternative<std::string>(decodeProgram(truncated, small)));
  std::vector<uint8_t> opcode = bytes;
  opcode[24] = 9; // the first instruction's opcode
  EXPECT_EQ(std::get<std::string>(decodeProgram(opcode, small)),
            "instruction 0: unknown opcode 9");
  std::vector<uint8_t> shorter(bytes.begin(), bytes.end() - 1);
  EXPECT_NE(std::get<std::string>(decodeProgram(shorter, small))
                .find("the DRAM image is"),
            std::string::npos);
  // Random corruption never crashes.
  std::mt19937 rng(9);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> mutated = bytes;
    for (int flips = 0; flips < 4; ++flips)
      mutated[rng() % mutated.size()] ^=
          static_cast<uint8_t>(1u << (rng() % 8));
    Result<Program> result = decodeProgram(mutated, small);
    if (auto *p = std::get_if<Program>(&result))
      (void)simulate(*p, small);
  }
}

/// A program that loads `x` (rows x cols f32 at DRAM 0) into the unified
/// buffer at 0, runs `ops` in order on the vector queue, and stores the
/// `outRows` x `outCols` f32 result at unified-buffer `result` to DRAM
/// `rows * cols * 4` onwards.
Program vectorProgram(const std::vector<float> &x, uint32_t rows, uint32_t cols,
                      std::vector<Instruction> ops, uint32_t result,
                      uint32_t outRows, uint32_t outCols) {
  Program p;
  size_t in = x.size() * 4;
  p.dram.resize(in + size_t(outRows) * outCols * 4);
  std::memcpy(p.dram.data(), x.data(), in);
  Instruction load;
  load.opcode = Opcode::Load;
  load.c = rows * cols * 4;
  load.signalMask = 1u << LoadToVector;
  p.instructions.push_back(load);
  for (size_t n = 0; n < ops.size(); ++n) {
    ops[n].opcode = Opcode::Vector;
    if (n == 0)
      ops[n].waitMask = 1u << LoadToVector;
    if (n + 1 == ops.size())
      ops[n].signalMask = 1u << VectorToStore;
    p.instructions.push_back(ops[n]);
  }
  Instruction store;
  store.opcode = Opcode::Store;
  store.dram = in;
  store.a = result;
  store.c = outRows * outCols * 4;
  store.waitMask = 1u << VectorToStore;
  p.instructions.push_back(store);
  return p;
}

Instruction vop(VectorFn fn, uint32_t src, uint32_t dst, uint32_t rows,
                uint32_t cols, VectorMode mode = VectorMode::Full,
                uint32_t src2 = 0, float imm = 0,
                NumberFormat format = NumberFormat::F32) {
  Instruction i;
  i.depth = static_cast<uint32_t>(fn);
  i.a = src;
  i.b = src2;
  i.c = dst;
  i.rows = rows;
  i.cols = cols;
  i.format = format;
  if (isBinary(fn)) {
    i.flags = static_cast<uint8_t>(mode);
    uint32_t bits;
    std::memcpy(&bits, &imm, 4);
    i.dram = bits;
  }
  return i;
}

std::vector<float> readResult(const Program &p, size_t offset, size_t count) {
  std::vector<float> out(count);
  std::memcpy(out.data(), p.dram.data() + offset, count * 4);
  return out;
}

TEST(Simulator, VectorSoftmaxIsBitExact) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  const uint32_t rows = 5, cols = 37, block = rows * cols * 4;
  std::vector<float> x = randomMatrix(rows * cols, 21);
  // max, x - max, exp, sum, / sum: the softmax of each row.
  uint32_t stats = block, shifted = block + 64, sums = 2 * block + 64;
  Program p = vectorProgram(
      x, rows, cols,
      {vop(VectorFn::RowMax, 0, stats, rows, cols),
       vop(VectorFn::Sub, 0, shifted, rows, cols, VectorMode::Column, stats),
       vop(VectorFn::Exp, shifted, shifted, rows, cols),
       vop(VectorFn::RowSum, shifted, sums, rows, cols),
       vop(VectorFn::Div, shifted, shifted, rows, cols, VectorMode::Column,
           sums)},
      shifted, rows, cols);
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  std::vector<float> got = readResult(p, block, rows * cols);
  for (uint32_t r = 0; r < rows; ++r) {
    float max = x[r * cols], sum;
    for (uint32_t j = 1; j < cols; ++j)
      max = std::max(max, x[r * cols + j]);
    std::vector<float> e(cols);
    for (uint32_t j = 0; j < cols; ++j) {
      volatile float d = x[r * cols + j] - max;
      e[j] = std::exp(float(d));
    }
    sum = e[0];
    for (uint32_t j = 1; j < cols; ++j) {
      volatile float s = sum + e[j];
      sum = s;
    }
    for (uint32_t j = 0; j < cols; ++j) {
      volatile float q = e[j] / sum;
      EXPECT_EQ(got[r * cols + j], float(q)) << r << "," << j;
    }
  }
  // Timing: each instruction takes its elements over the 16 lanes times
  // its cost, plus 4; reductions add log2(16) for the lanes' tree.
  const SimStats &stats_ = std::get<SimStats>(result);
  int64_t steps = (rows * cols + 15) / 16;
  EXPECT_EQ(stats_.units[static_cast<int>(Queue::Vector)].busy,
            (steps + 4 + 4) + (steps + 4) + (4 * steps + 4) + (steps + 4 + 4) +
                (2 * steps + 4));
  EXPECT_EQ(stats_.units[static_cast<int>(Queue::Vector)].instructions, 5);
}

TEST(Simulator, VectorOperandModesAndConversions) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  const uint32_t rows = 3, cols = 4, block = rows * cols * 4;
  std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8, 9.5f, -10, 11, -12};
  // Row operand: the first row of x; column operand: the first `rows`
  // values at the same address (x[r], flat); immediate
  // 0.5; then relu and a conversion to bf16 and back through copy.
  uint32_t t = block;
  Program p = vectorProgram(
      x, rows, cols,
      {vop(VectorFn::Mul, 0, t, rows, cols, VectorMode::Row, 0),
       vop(VectorFn::Add, t, t, rows, cols, VectorMode::Column, 0),
       vop(VectorFn::Mul, t, t, rows, cols, VectorMode::Immediate, 0, 0.5f),
       vop(VectorFn::Relu, t, t, rows, cols),
       vop(VectorFn::Add, t, t, rows, cols, VectorMode::Immediate, 0,
           1.0f / 3.0f),
       vop(VectorFn::Copy, t, 2 * block, rows, cols, VectorMode::Full, 0, 0,
           NumberFormat::BF16)},
      2 * block, rows, cols / 2);
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  std::vector<uint16_t> bits(rows * cols);
  std::memcpy(bits.data(), p.dram.data() + block, bits.size() * 2);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t j = 0; j < cols; ++j) {
      volatile float v = x[r * cols + j] * x[j];
      v = v + x[r];
      v = v * 0.5f;
      float relu = v < 0 ? 0.0f : float(v);
      volatile float w = relu + 1.0f / 3.0f;
      EXPECT_EQ(fromBF16(bits[r * cols + j]), roundTo(NumberFormat::BF16, w))
          << r << "," << j;
    }
}

TEST(Simulator, ComparisonsAndSelections) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  const uint32_t rows = 2, cols = 4, block = rows * cols * 4;
  // A row of values against the immediate 1: NaN compares false but for
  // ne. Then a Where as when + unless: y = x where the comparison holds,
  // -inf elsewhere; a -0.0 kept stays -0.0 (the unchosen term is -0.0).
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.5f, 1, 2, nan, -0.0f, 1, 3, -1};
  struct Case {
    VectorFn fn;
    std::vector<float> expected;
  };
  std::vector<Case> cases = {
      {VectorFn::Less, {1, 0, 0, 0, 1, 0, 0, 1}},
      {VectorFn::LessEqual, {1, 1, 0, 0, 1, 1, 0, 1}},
      {VectorFn::Greater, {0, 0, 1, 0, 0, 0, 1, 0}},
      {VectorFn::GreaterEqual, {0, 1, 1, 0, 0, 1, 1, 0}},
      {VectorFn::Equal, {0, 1, 0, 0, 0, 1, 0, 0}},
      {VectorFn::NotEqual, {1, 0, 1, 1, 1, 0, 1, 1}},
  };
  for (const Case &c : cases) {
    Program p = vectorProgram(
        x, rows, cols,
        {vop(c.fn, 0, block, rows, cols, VectorMode::Immediate, 0, 1.0f)},
        block, rows, cols);
    Result<SimStats> result = simulate(p, small);
    ASSERT_TRUE(std::holds_alternative<SimStats>(result))
        << std::get<std::string>(result);
    EXPECT_EQ(readResult(p, block, rows * cols), c.expected)
        << vectorFnName(c.fn);
  }
  // when(x <= 1, x) + unless(x <= 1, -inf).
  uint32_t cond = block, kept = 2 * block, other = 3 * block;
  Program p = vectorProgram(
      x, rows, cols,
      {vop(VectorFn::LessEqual, 0, cond, rows, cols, VectorMode::Immediate, 0,
           1.0f),
       vop(VectorFn::When, cond, kept, rows, cols, VectorMode::Full, 0),
       vop(VectorFn::Unless, cond, other, rows, cols, VectorMode::Immediate,
           0, -std::numeric_limits<float>::infinity()),
       vop(VectorFn::Add, kept, kept, rows, cols, VectorMode::Full, other)},
      kept, rows, cols);
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  std::vector<float> out = readResult(p, x.size() * 4, rows * cols);
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> expected = {0.5f, 1, -inf, -inf, -0.0f, 1, -inf, -1};
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(out[k], expected[k]) << k;
    EXPECT_EQ(std::signbit(out[k]), std::signbit(expected[k])) << k;
  }
  EXPECT_STREQ(vectorFnName(VectorFn::When), "when");
  EXPECT_EQ(parseVectorFn("unless"), VectorFn::Unless);
  EXPECT_TRUE(isBinary(VectorFn::Unless));
}

TEST(Simulator, StridedCopies) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  // x: 2 x 3 x 4 at DRAM 0. A transpose of the last two dims (a strided
  // innermost dim), then a broadcast of row 1 of x[0] to 3 x 4 in bf16
  // (stride 0), into the DRAM after x.
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) * 1.5f - 7;
  Program p;
  p.dram.resize(24 * 4 + 24 * 4 + 12 * 2);
  std::memcpy(p.dram.data(), x.data(), 96);
  CopyStep transpose;
  transpose.shape = {2, 4, 3};
  transpose.srcStrides = {12, 1, 4};
  transpose.dstStrides = {12, 3, 1};
  transpose.src = 0;
  transpose.dst = 96;
  ASSERT_FALSE(appendCopyStep(small, transpose, p.instructions));
  CopyStep broadcast;
  broadcast.shape = {3, 4};
  broadcast.srcStrides = {0, 1};
  broadcast.dstStrides = {4, 1};
  broadcast.src = 16;
  broadcast.dst = 192;
  broadcast.dstFormat = NumberFormat::BF16;
  ASSERT_FALSE(appendCopyStep(small, broadcast, p.instructions));
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  std::vector<float> t = readResult(p, 96, 24);
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(t[b * 12 + j * 3 + i], x[b * 12 + i * 4 + j]);
  std::vector<uint16_t> bits(12);
  std::memcpy(bits.data(), p.dram.data() + 192, 24);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(fromBF16(bits[r * 4 + j]),
                roundTo(NumberFormat::BF16, x[4 + j]));
  // Chunks: on a tiny unified buffer the blocks go a few at a time.
  AcceleratorConfig tiny = small;
  tiny.unifiedBufferBytes = 256;
  std::vector<Instruction> code;
  ASSERT_FALSE(appendCopyStep(tiny, transpose, code));
  int copies = 0;
  for (const Instruction &i : code)
    copies += i.opcode == Opcode::Vector;
  EXPECT_EQ(copies, 2);
  tiny.unifiedBufferBytes = 64;
  EXPECT_EQ(*appendCopyStep(tiny, transpose, code),
            "a 4 x 3 copy block does not fit the unified buffer");
}

TEST(Simulator, GatherLooksUpRowsAndRejectsBadIndices) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  // A 5 x 3 table at DRAM 0, indices [4, 0, 2, 4] at 64, rows out at 128.
  auto build = [&](std::vector<float> indices) {
    Program p;
    p.dram.resize(128 + 4 * 3 * 2);
    for (int r = 0; r < 5; ++r)
      for (int j = 0; j < 3; ++j) {
        float v = float(10 * r + j);
        std::memcpy(p.dram.data() + (r * 3 + j) * 4, &v, 4);
      }
    std::memcpy(p.dram.data() + 64, indices.data(), 16);
    GatherStep step;
    step.table = 0;
    step.tableRows = 5;
    step.rowElements = 3;
    step.count = 4;
    step.indices = 64;
    step.out = 128;
    step.outFormat = NumberFormat::BF16;
    EXPECT_FALSE(appendGatherStep(small, step, p.instructions));
    return p;
  };
  Program p = build({4, 0, 2, 4});
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  std::vector<uint16_t> bits(12);
  std::memcpy(bits.data(), p.dram.data() + 128, 24);
  int expected[4] = {4, 0, 2, 4};
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(fromBF16(bits[r * 3 + j]), float(10 * expected[r] + j));
  // An index outside the table, or not an integer, stops the run.
  for (float bad : {5.0f, -1.0f, 1.5f}) {
    Program q = build({0, bad, 1, 2});
    Result<SimStats> stopped = simulate(q, small);
    ASSERT_TRUE(std::holds_alternative<std::string>(stopped));
    EXPECT_NE(std::get<std::string>(stopped).find("(load): gather index"),
              std::string::npos)
        << std::get<std::string>(stopped);
  }
  // Validation: the table must lie in DRAM.
  Program outside = build({0, 1, 2, 3});
  for (Instruction &i : outside.instructions)
    if (i.opcode == Opcode::Gather)
      i.cols = 50;
  EXPECT_NE(validateProgram(outside, small)->find("the DRAM table"),
            std::string::npos);
}

TEST(Simulator, QuantizeAndInt8Dequantization) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  // quantize: x / 0.5 rounded half to even and saturated to int8, and
  // to fp8 E4M3FN (saturating at 448).
  std::vector<float> x = {1.25f, -0.75f, 100.0f, -300.0f};
  Program p =
      vectorProgram(x, 1, 4,
                    {vop(VectorFn::Quantize, 0, 64, 1, 4, VectorMode::Full, 0,
                         0.5f, NumberFormat::I8),
                     vop(VectorFn::Quantize, 0, 128, 1, 4, VectorMode::Full, 0,
                         0.5f, NumberFormat::F8E4M3FN)},
                    64, 1, 2);
  // vop() puts the immediate in dram only for binary functions.
  for (Instruction &i : p.instructions)
    if (i.opcode == Opcode::Vector) {
      float half = 0.5f;
      std::memcpy(&i.dram, &half, 4);
    }
  Result<SimStats> result = simulate(p, small);
  ASSERT_TRUE(std::holds_alternative<SimStats>(result))
      << std::get<std::string>(result);
  const int8_t *q = reinterpret_cast<const int8_t *>(p.dram.data() + 16);
  EXPECT_EQ(q[0], 2);    // 2.5 -> 2 (half to even)
  EXPECT_EQ(q[1], -2);   // -1.5 -> -2
  EXPECT_EQ(q[2], 127);  // 200 saturates
  EXPECT_EQ(q[3], -128); // -600 saturates
  // Only quantize writes narrow formats.
  Program bad = vectorProgram(x, 1, 4,
                              {vop(VectorFn::Exp, 0, 64, 1, 4, VectorMode::Full,
                                   0, 0, NumberFormat::I8)},
                              64, 1, 1);
  EXPECT_EQ(*validateProgram(bad, small),
            "instruction 1 (vector): cannot write i8 from the vector unit "
            "(only quantize writes i8 and fp8)");

  // An int8 GEMM dequantized by the drain: int32 sums times the scale.
  GemmShape g{8, 8, 40};
  std::vector<float> a(320), b(320);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(int(i % 23) - 11);
    b[i] = float(int(i % 17) - 8);
  }
  Program gemm;
  gemm.dram.resize(320 + 320 + 8 * 8 * 4);
  for (size_t i = 0; i < 320; ++i) {
    gemm.dram[i] = static_cast<uint8_t>(static_cast<int8_t>(a[i]));
    gemm.dram[320 + i] = static_cast<uint8_t>(static_cast<int8_t>(b[i]));
  }
  GemmStep step;
  step.shape = g;
  step.format = NumberFormat::I8;
  step.a = 0;
  step.b = 320;
  step.c = 640;
  step.scale = 0.125f;
  ASSERT_FALSE(appendGemm(small, step, gemm.instructions));
  ASSERT_TRUE(std::holds_alternative<SimStats>(simulate(gemm, small)));
  std::vector<float> c = readResult(gemm, 640, 64);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      int32_t acc = 0;
      for (int k = 0; k < 40; ++k)
        acc += int32_t(a[i * 40 + k]) * int32_t(b[k * 8 + j]);
      EXPECT_EQ(c[i * 8 + j], float(acc) * 0.125f);
    }
  step.outFormat = NumberFormat::I8;
  std::vector<Instruction> code;
  EXPECT_EQ(*appendGemm(small, step, code),
            "an int8 GEMM's products go out dequantized (f32, bf16 or f16)");
}

TEST(Program, CorruptedVectorAndGatherProgramsNeverCrash) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  // A softmax and a gather in one program, then random bit flips: each
  // mutant is rejected when loaded, stops with an error, or runs.
  const uint32_t rows = 4, cols = 8, block = rows * cols * 4;
  std::vector<float> x = randomMatrix(rows * cols, 5);
  Program p = vectorProgram(
      x, rows, cols,
      {vop(VectorFn::RowMax, 0, block, rows, cols),
       vop(VectorFn::Sub, 0, block + 64, rows, cols, VectorMode::Column, block),
       vop(VectorFn::Exp, block + 64, block + 64, rows, cols)},
      block + 64, rows, cols);
  size_t table = p.dram.size();
  p.dram.resize(table + 6 * 16 + 16 + 4 * 16);
  float ids[4] = {5, 0, 3, 1};
  std::memcpy(p.dram.data() + table + 96, ids, 16);
  GatherStep step;
  step.table = table;
  step.tableRows = 6;
  step.rowElements = 4;
  step.count = 4;
  step.indices = table + 96;
  step.out = table + 112;
  ASSERT_FALSE(appendGatherStep(small, step, p.instructions));
  ASSERT_TRUE(std::holds_alternative<SimStats>(simulate(p, small)));
  std::vector<uint8_t> bytes = encodeProgram(p);
  std::mt19937 rng(11);
  int ran = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> mutated = bytes;
    for (int flips = 0; flips < 3; ++flips)
      mutated[24 + rng() % (p.instructions.size() * 32)] ^=
          static_cast<uint8_t>(1u << (rng() % 8));
    Result<Program> result = decodeProgram(mutated, small);
    if (auto *decoded = std::get_if<Program>(&result))
      ran += std::holds_alternative<SimStats>(simulate(*decoded, small));
  }
  EXPECT_GT(ran, 0);
}

TEST(Program, VectorValidation) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  std::vector<float> x(8, 1.0f);
  auto check = [&](Instruction i) {
    Program p = vectorProgram(x, 2, 4, {i}, 0, 2, 4);
    return validateProgram(p, small).value_or("");
  };
  EXPECT_EQ(check(vop(VectorFn::Exp, 0, 0, 2, 4)), "");
  Instruction unknown = vop(VectorFn::Exp, 0, 0, 2, 4);
  unknown.depth = 99;
  EXPECT_EQ(check(unknown),
            "instruction 1 (vector): unknown vector function 99");
  EXPECT_EQ(check(vop(VectorFn::RowSum, 0, 0, 2, 4, VectorMode::Full, 0, 0,
                      NumberFormat::BF16)),
            "instruction 1 (vector): cannot write bf16 from the vector unit "
            "(row reductions write f32)");
  Instruction operand = vop(VectorFn::Exp, 0, 0, 2, 4);
  operand.flags = 1;
  EXPECT_EQ(check(operand), "instruction 1 (vector): only binary vector "
                            "functions take a second operand");
  EXPECT_EQ(check(vop(VectorFn::Add, 0, 256 * 1024 - 16, 2, 4)),
            "instruction 1 (vector): the destination [262128, 262160) is "
            "beyond its 262144 bytes");
  EXPECT_EQ(
      check(vop(VectorFn::Add, 0, 0, 2, 4, VectorMode::Row, 256 * 1024 - 8)),
      "instruction 1 (vector): the second source [262136, 262152) is "
      "beyond its 262144 bytes");
  Instruction mode = vop(VectorFn::Add, 0, 0, 2, 4);
  mode.flags = 7;
  EXPECT_EQ(check(mode),
            "instruction 1 (vector): unknown second-operand mode 7");
  // Version 1 files have no vector instruction.
  Program p = vectorProgram(x, 2, 4, {vop(VectorFn::Exp, 0, 0, 2, 4)}, 0, 2, 4);
  std::vector<uint8_t> bytes = encodeProgram(p);
  ASSERT_TRUE(std::holds_alternative<Program>(decodeProgram(bytes, small)));
  bytes[4] = 1;
  EXPECT_EQ(std::get<std::string>(decodeProgram(bytes, small)),
            "instruction 1: unknown opcode 5");
}

} // namespace

TEST(Simulator, BatchedGemmsFollowEachOther) {
  // Three independent GEMMs as one batched schedule: the same bits as
  // three fenced steps, in fewer cycles (no fence, no fill and drain of
  // the pipeline between them), in both dataflows.
  GemmShape g{16, 16, 32};
  const int64_t batch = 3;
  uint64_t aBytes = g.m * g.k * 2, bBytes = g.k * g.n * 2,
           cBytes = g.m * g.n * 4;
  std::vector<float> a = randomMatrix(batch * g.m * g.k, 31),
                     b = randomMatrix(batch * g.k * g.n, 32);
  for (const char *dataflow : {"ws", "os"}) {
    AcceleratorConfig c = config(std::string(R"({"base": "small",
        "dataflow": ")") + dataflow +
                                 "\"}");
    int64_t cycles[2];
    for (bool batched : {false, true}) {
      Program p;
      p.dram.resize(batch * (aBytes + bBytes + cBytes));
      auto put = [&](const std::vector<float> &values, uint64_t at) {
        for (size_t e = 0; e < values.size(); ++e) {
          uint16_t bits = toBF16(values[e]);
          std::memcpy(p.dram.data() + at + 2 * e, &bits, 2);
        }
      };
      put(a, 0);
      put(b, batch * aBytes);
      GemmStep step;
      step.shape = g;
      step.a = 0;
      step.b = batch * aBytes;
      step.c = batch * (aBytes + bBytes);
      if (batched) {
        step.batch = batch;
        step.aStride = aBytes;
        step.bStride = bBytes;
        step.cStride = cBytes;
        ASSERT_FALSE(appendGemm(c, step, p.instructions));
      } else {
        for (int64_t n = 0; n < batch; ++n) {
          GemmStep one = step;
          one.a += n * aBytes;
          one.b += n * bBytes;
          one.c += n * cBytes;
          one.fence = n > 0;
          ASSERT_FALSE(appendGemm(c, one, p.instructions));
        }
      }
      ASSERT_FALSE(validateProgram(p, c));
      Result<SimStats> result = simulate(p, c);
      ASSERT_TRUE(std::holds_alternative<SimStats>(result))
          << std::get<std::string>(result);
      cycles[batched] = std::get<SimStats>(result).cycles;
      for (int64_t n = 0; n < batch; ++n) {
        std::vector<float> an(a.begin() + n * g.m * g.k,
                              a.begin() + (n + 1) * g.m * g.k),
            bn(b.begin() + n * g.k * g.n, b.begin() + (n + 1) * g.k * g.n);
        std::vector<float> expected = reference(
            an, bn, g, dataflow[0] == 'o' ? g.k : 16, NumberFormat::BF16);
        std::vector<float> got =
            readResult(p, step.c + n * cBytes, size_t(g.m * g.n));
        for (size_t e = 0; e < got.size(); ++e)
          ASSERT_EQ(llvm::bit_cast<uint32_t>(got[e]),
                    llvm::bit_cast<uint32_t>(expected[e]))
              << dataflow << " batch " << n << " element " << e;
      }
    }
    EXPECT_LT(cycles[1], cycles[0]) << dataflow;
  }
  GemmStep empty;
  empty.shape = g;
  empty.batch = 0;
  std::vector<Instruction> out;
  EXPECT_EQ(*appendGemm(std::get<AcceleratorConfig>(presetConfig("small")),
                        empty, out),
            "GEMM sizes must be positive");
}

TEST(Simulator, GemmEpilogueMatchesASeparateVectorStep) {
  // A batch of two 40 x 16 x 37 GEMMs whose outputs get a residual add
  // (Full, from DRAM), a per-column scale (Row) and a row softmax, stored
  // in bf16: the same bits as the GEMMs followed by a vector step over
  // their fp32 products, in fewer cycles and DRAM bytes (the products
  // never leave the chip), in both dataflows.
  using Shape = VectorStep::Shape;
  using F = VectorFn;
  GemmShape g{40, 16, 37};
  const int64_t batch = 2, rows = batch * g.m;
  uint64_t aBytes = g.m * g.k * 2, bBytes = g.k * g.n * 2;
  std::vector<float> a = randomMatrix(batch * g.m * g.k, 41),
                     b = randomMatrix(batch * g.k * g.n, 42),
                     residual = randomMatrix(rows * g.n, 43),
                     scale = randomMatrix(g.n, 44);
  // DRAM: A, B (bf16), residual, scale (f32), product (f32), out (bf16).
  uint64_t atB = batch * aBytes, atResidual = atB + batch * bBytes,
           atScale = atResidual + rows * g.n * 4, atProduct = atScale + g.n * 4,
           atOut = atProduct + rows * g.n * 4;
  VectorStep ops;
  ops.rows = rows;
  ops.cols = g.n;
  ops.slots = {{Shape::Full, std::nullopt},   {Shape::Full, atResidual},
               {Shape::Row, atScale},         {Shape::Full, std::nullopt},
               {Shape::Column, std::nullopt}, {Shape::Full, std::nullopt}};
  ops.ops = {
      {F::Add, 3, 0, 1, std::nullopt},     {F::Mul, 3, 3, 2, std::nullopt},
      {F::RowMax, 4, 3, -1, std::nullopt}, {F::Sub, 5, 3, 4, std::nullopt},
      {F::Exp, 5, 5, -1, std::nullopt},    {F::RowSum, 4, 5, -1, std::nullopt},
      {F::Div, 5, 5, 4, std::nullopt}};
  ops.output = 5;
  ops.outFormat = NumberFormat::BF16;
  ops.out = atOut;
  for (const char *dataflow : {"ws", "os"}) {
    AcceleratorConfig c = config(std::string(R"({"base": "small",
        "dataflow": ")") + dataflow +
                                 "\"}");
    std::vector<uint8_t> results[2];
    SimStats stats[2];
    for (bool fused : {false, true}) {
      Program p;
      p.dram.resize(atOut + rows * g.n * 2);
      for (size_t e = 0; e < a.size(); ++e) {
        uint16_t bits = toBF16(a[e]);
        std::memcpy(p.dram.data() + 2 * e, &bits, 2);
      }
      for (size_t e = 0; e < b.size(); ++e) {
        uint16_t bits = toBF16(b[e]);
        std::memcpy(p.dram.data() + atB + 2 * e, &bits, 2);
      }
      std::memcpy(p.dram.data() + atResidual, residual.data(),
                  residual.size() * 4);
      std::memcpy(p.dram.data() + atScale, scale.data(), scale.size() * 4);
      GemmStep step;
      step.shape = g;
      step.batch = batch;
      step.a = 0;
      step.b = atB;
      step.aStride = aBytes;
      step.bStride = bBytes;
      if (fused) {
        step.c = atOut;
        step.cStride = g.m * g.n * 2;
        step.outFormat = NumberFormat::BF16;
        step.epilogue = ops;
        ASSERT_FALSE(appendGemm(c, step, p.instructions));
      } else {
        step.c = atProduct;
        step.cStride = g.m * g.n * 4;
        ASSERT_FALSE(appendGemm(c, step, p.instructions));
        VectorStep separate = ops;
        separate.slots[0].dram = atProduct;
        ASSERT_FALSE(appendVectorStep(c, separate, p.instructions));
      }
      ASSERT_FALSE(validateProgram(p, c));
      Result<SimStats> result = simulate(p, c);
      ASSERT_TRUE(std::holds_alternative<SimStats>(result))
          << std::get<std::string>(result);
      stats[fused] = std::get<SimStats>(result);
      results[fused].assign(p.dram.begin() + atOut, p.dram.end());
    }
    EXPECT_EQ(results[0], results[1]) << dataflow;
    EXPECT_LT(stats[1].cycles, stats[0].cycles) << dataflow;
    EXPECT_LT(stats[1].dramBytes, stats[0].dramBytes) << dataflow;
    // Softmax rows sum to about 1.
    for (int64_t r = 0; r < rows; r += 17) {
      float sum = 0;
      for (int64_t j = 0; j < g.n; ++j) {
        uint16_t bits;
        std::memcpy(&bits, results[1].data() + 2 * (r * g.n + j), 2);
        sum += fromBF16(bits);
      }
      EXPECT_NEAR(sum, 1.0f, 0.02f) << dataflow << " row " << r;
    }
  }
  // Bad epilogues are errors, never a wrong schedule.
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  std::vector<Instruction> out;
  GemmStep step;
  step.shape = g;
  step.batch = batch;
  step.outFormat = NumberFormat::BF16;
  step.epilogue = ops;
  step.epilogue->rows = g.m;
  EXPECT_EQ(*appendGemm(small, step, out),
            "a GEMM epilogue's view must be the batch's outputs (batch * M "
            "rows x N columns)");
  step.epilogue = ops;
  step.epilogue->slots[0].dram = 0;
  EXPECT_EQ(*appendGemm(small, step, out),
            "a GEMM epilogue needs ops, the product in slot 0 and a "
            "whole-view output slot");
  step.epilogue = ops;
  step.epilogue->ops[0].src2 = 9;
  EXPECT_EQ(*appendGemm(small, step, out),
            "a GEMM epilogue's op names a slot it does not have");
  step.epilogue = ops;
  step.epilogue->outFormat = NumberFormat::F32;
  EXPECT_EQ(*appendGemm(small, step, out),
            "a GEMM epilogue stores in the GEMM's output format");
  GemmStep wide = step;
  wide.shape.n = 32;
  wide.epilogue = ops;
  wide.epilogue->cols = 32;
  EXPECT_EQ(*appendGemm(small, wide, out),
            "a GEMM epilogue reduces rows only when one block holds whole "
            "rows (N <= the array's columns)");
}

// Found by the program fuzzer (test/Fuzz/ProgramFuzzer.cpp): a tensor whose
// size overflows 64 bits, or whose offset + size wraps around, must be
// rejected when the file is read, not read out of bounds later.
TEST(Program, TensorTableSizesCannotOverflow) {
  AcceleratorConfig small = std::get<AcceleratorConfig>(presetConfig("small"));
  auto withTensor = [](std::vector<int64_t> shape, uint64_t offset) {
    Program program;
    program.dram.assign(16, 0);
    TensorInfo t;
    t.name = "x";
    t.role = TensorInfo::Role::Output;
    t.format = NumberFormat::F32;
    t.shape = std::move(shape);
    t.offset = offset;
    program.tensors.push_back(t);
    return encodeProgram(program);
  };
  // Control: four fp32 values at offset 0 fill the 16-byte image exactly.
  Result<Program> fits = decodeProgram(withTensor({4}, 0), small);
  ASSERT_TRUE(std::holds_alternative<Program>(fits))
      << std::get<std::string>(fits);
  EXPECT_EQ(readTensor(std::get<Program>(fits), std::get<Program>(fits).tensors[0]),
            std::vector<float>(4, 0.0f));
  // 16 bytes at offset 2^64 - 8: the end wrapped around to 8.
  EXPECT_EQ(std::get<std::string>(
                decodeProgram(withTensor({4}, ~uint64_t(0) - 7), small)),
            "tensor 'x' lies beyond the DRAM image");
  // 2^32 x 2^32 elements: the element count overflowed int64_t.
  EXPECT_EQ(std::get<std::string>(decodeProgram(
                withTensor({int64_t(1) << 32, int64_t(1) << 32}, 0), small)),
            "tensor 'x' lies beyond the DRAM image");
  // One byte too many, and one too far.
  EXPECT_EQ(std::get<std::string>(decodeProgram(withTensor({5}, 0), small)),
            "tensor 'x' lies beyond the DRAM image");
  EXPECT_EQ(std::get<std::string>(decodeProgram(withTensor({4}, 1), small)),
            "tensor 'x' lies beyond the DRAM image");
}
