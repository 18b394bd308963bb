//===- Simulator.cpp - runs accelerator programs: numbers and cycles ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Simulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

using namespace tessera::sim;

namespace {

float loadElement(const uint8_t *p, NumberFormat format) {
  switch (format) {
  case NumberFormat::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case NumberFormat::BF16:
    return fromBF16(static_cast<uint16_t>(p[0] | p[1] << 8));
  case NumberFormat::F16:
    return fromF16(static_cast<uint16_t>(p[0] | p[1] << 8));
  case NumberFormat::F8E4M3FN:
    return fromF8E4M3FN(p[0]);
  case NumberFormat::F8E5M2:
    return fromF8E5M2(p[0]);
  case NumberFormat::I8:
    return static_cast<float>(static_cast<int8_t>(p[0]));
  }
  return 0;
}

void storeElement(uint8_t *p, NumberFormat format, float value) {
  switch (format) {
  case NumberFormat::F32:
    std::memcpy(p, &value, 4);
    return;
  case NumberFormat::BF16:
  case NumberFormat::F16: {
    uint16_t bits = format == NumberFormat::BF16 ? toBF16(value) : toF16(value);
    p[0] = bits & 0xff;
    p[1] = bits >> 8;
    return;
  }
  case NumberFormat::F8E4M3FN:
    p[0] = toF8E4M3FN(value);
    return;
  case NumberFormat::F8E5M2:
    p[0] = toF8E5M2(value);
    return;
  case NumberFormat::I8:
    p[0] = static_cast<uint8_t>(
        static_cast<int8_t>(roundTo(NumberFormat::I8, value)));
    return;
  }
}

/// Cycles of one matrix instruction: its dataflow's cycles per fold with
/// the tile's dims mapped as the analytical model maps a GEMM's.
int64_t matmulCycles(const AcceleratorConfig &config, const Instruction &i) {
  int64_t r = config.array.rows, c = config.array.cols;
  switch (config.dataflow) {
  case Dataflow::OutputStationary:
    return i.depth + r + c - 2;
  case Dataflow::WeightStationary:
    return i.rows + 2 * r + c - 2;
  case Dataflow::InputStationary:
    return i.cols + 2 * r + c - 2;
  }
  return 0;
}

/// Cycles a matrix instruction holds the array before the next may start:
/// its whole fold, or with pipelined folds the longer of the streamed dim
/// and the R cycles that shift the next weights in (or the outputs out).
int64_t matmulInterval(const AcceleratorConfig &config, const Instruction &i) {
  if (!config.pipelinedFolds)
    return matmulCycles(config, i);
  int64_t streamed = config.dataflow == Dataflow::OutputStationary   ? i.depth
                     : config.dataflow == Dataflow::WeightStationary ? i.rows
                                                                     : i.cols;
  return std::max<int64_t>(streamed, config.array.rows);
}

/// Cycles of one vector instruction: the elements in steps of the lanes,
/// times the function's cost per step (1; 2 for divisions and roots; 4 for
/// exponentials, logarithms and the functions built on them), plus the
/// lanes' reduction tree for a row reduction, plus 4 of pipeline.
int64_t vectorCycles(const AcceleratorConfig &config, const Instruction &i) {
  auto fn = static_cast<VectorFn>(i.depth);
  int64_t cost = 1;
  switch (fn) {
  case VectorFn::Div:
  case VectorFn::Sqrt:
  case VectorFn::Rsqrt:
  case VectorFn::Reciprocal:
    cost = 2;
    break;
  case VectorFn::Exp:
  case VectorFn::Tanh:
  case VectorFn::Erf:
  case VectorFn::Sigmoid:
  case VectorFn::GeluErf:
  case VectorFn::GeluTanh:
  case VectorFn::Silu:
  case VectorFn::Log:
  case VectorFn::Pow:
    cost = 4;
    break;
  default:
    break;
  }
  int64_t lanes = std::max<int64_t>(config.vectorLanes, 1);
  int64_t steps = (int64_t(i.rows) * i.cols + lanes - 1) / lanes;
  int64_t tree = 0;
  if (isRowReduction(fn))
    for (int64_t width = 1; width < lanes; width *= 2)
      ++tree;
  return steps * cost + tree + 4;
}

struct Machine {
  const AcceleratorConfig &config;
  Program &program;
  std::vector<uint8_t> unified, weights;
  /// Accumulators: fp32 or int32 bits, array-columns entries per row.
  std::vector<uint32_t> accumulators;

  Machine(const AcceleratorConfig &config, Program &program)
      : config(config), program(program),
        unified(static_cast<size_t>(config.unifiedBufferBytes)),
        weights(static_cast<size_t>(config.weightBufferBytes)),
        accumulators(static_cast<size_t>(config.accumulatorBytes / 4)) {}

  void execute(const Instruction &i) {
    switch (i.opcode) {
    case Opcode::Load: {
      std::vector<uint8_t> &to = (i.flags & 1) ? weights : unified;
      for (uint32_t r = 0; r < std::max<uint32_t>(i.rows, 1); ++r)
        std::memcpy(to.data() + i.a + size_t(r) * i.c,
                    program.dram.data() + i.dram + size_t(r) * i.b, i.c);
      return;
    }
    case Opcode::Store:
      for (uint32_t r = 0; r < std::max<uint32_t>(i.rows, 1); ++r)
        std::memcpy(program.dram.data() + i.dram + size_t(r) * i.b,
                    unified.data() + i.a + size_t(r) * i.c, i.c);
      return;
    case Opcode::Matmul:
      return matmul(i);
    case Opcode::Drain:
      return drain(i);
    case Opcode::Vector:
      return vector(i);
    case Opcode::Gather:
      return gather(i);
    }
  }

  /// The first run-time error (a gather index outside its table).
  std::string error;

  void gather(const Instruction &i) {
    uint64_t tableRows = uint64_t(i.cols) + 65536 * uint64_t(i.depth);
    for (uint32_t r = 0; r < i.rows; ++r) {
      float index = readF32(i.b, r);
      if (!(index >= 0 && index < double(tableRows) &&
            index == std::floor(index))) {
        if (error.empty())
          error = "gather index " + std::to_string(index) + " (row " +
                  std::to_string(r) + ") is not a row of the " +
                  std::to_string(tableRows) + "-row table";
        return;
      }
      std::memcpy(unified.data() + i.a + size_t(r) * i.c,
                  program.dram.data() + i.dram + uint64_t(index) * i.c, i.c);
    }
  }

  float readF32(uint32_t address, size_t index) const {
    float value;
    std::memcpy(&value, unified.data() + address + index * 4, 4);
    return value;
  }

  /// fp32 arithmetic, one rounding per operation in the order written;
  /// transcendental functions are the C library's float functions.
  static float unary(VectorFn fn, float x) {
    volatile float t;
    switch (fn) {
    case VectorFn::Copy:
      return x;
    case VectorFn::Exp:
      return std::exp(x);
    case VectorFn::Tanh:
      return std::tanh(x);
    case VectorFn::Erf:
      return std::erf(x);
    case VectorFn::Sigmoid:
      t = 1.0f + std::exp(-x);
      return 1.0f / t;
    case VectorFn::Relu:
      return x < 0 ? 0.0f : x;
    case VectorFn::GeluErf:
      t = 1.0f + std::erf(x * 0.70710678f);
      t = 0.5f * x * t;
      return t;
    case VectorFn::GeluTanh: {
      t = x * x;
      t = t * x;
      t = 0.044715f * t;
      t = x + t;
      t = 1.0f + std::tanh(0.79788456f * t);
      t = 0.5f * x * t;
      return t;
    }
    case VectorFn::Silu:
      t = 1.0f + std::exp(-x);
      t = x / t;
      return t;
    case VectorFn::Sqrt:
      return std::sqrt(x);
    case VectorFn::Rsqrt:
      t = std::sqrt(x);
      return 1.0f / t;
    case VectorFn::Reciprocal:
      return 1.0f / x;
    case VectorFn::Neg:
      return -x;
    case VectorFn::Abs:
      return std::fabs(x);
    case VectorFn::Log:
      return std::log(x);
    default:
      return x;
    }
  }

  float immediateOf(const Instruction &i) const {
    float immediate;
    uint32_t bits = static_cast<uint32_t>(i.dram);
    std::memcpy(&immediate, &bits, 4);
    return immediate;
  }

  static float binary(VectorFn fn, float x, float y) {
    volatile float t;
    switch (fn) {
    case VectorFn::Add:
      t = x + y;
      return t;
    case VectorFn::Sub:
      t = x - y;
      return t;
    case VectorFn::Mul:
      t = x * y;
      return t;
    case VectorFn::Div:
      t = x / y;
      return t;
    case VectorFn::Max:
      return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case VectorFn::Min:
      return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case VectorFn::Pow:
      return std::pow(x, y);
    case VectorFn::Less:
      return x < y ? 1.0f : 0.0f;
    case VectorFn::LessEqual:
      return x <= y ? 1.0f : 0.0f;
    case VectorFn::Greater:
      return x > y ? 1.0f : 0.0f;
    case VectorFn::GreaterEqual:
      return x >= y ? 1.0f : 0.0f;
    case VectorFn::Equal:
      return x == y ? 1.0f : 0.0f;
    case VectorFn::NotEqual:
      return x != y ? 1.0f : 0.0f;
    case VectorFn::When:
      return x != 0 ? y : -0.0f;
    case VectorFn::Unless:
      return x == 0 ? y : -0.0f;
    default:
      return x;
    }
  }

  void vector(const Instruction &i) {
    auto fn = static_cast<VectorFn>(i.depth);
    size_t rows = i.rows, cols = i.cols;
    if (isRowReduction(fn)) {
      // Each row left to right in fp32.
      std::vector<float> out(rows);
      for (size_t r = 0; r < rows; ++r) {
        float acc = readF32(i.a, r * cols);
        for (size_t j = 1; j < cols; ++j) {
          float x = readF32(i.a, r * cols + j);
          acc = fn == VectorFn::RowSum ? binary(VectorFn::Add, acc, x)
                                       : binary(VectorFn::Max, acc, x);
        }
        out[r] = acc;
      }
      std::memcpy(unified.data() + i.c, out.data(), rows * 4);
      return;
    }
    auto mode = static_cast<VectorMode>(i.flags);
    float immediate;
    uint32_t bits = static_cast<uint32_t>(i.dram);
    std::memcpy(&immediate, &bits, 4);
    int64_t size = formatBytes(i.format);
    // Computed whole before writing, so the destination may overlap a
    // source.
    std::vector<float> out(rows * cols);
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < cols; ++j) {
        float x = readF32(i.a, r * cols + j);
        if (fn == VectorFn::Quantize) {
          // x / scale in fp32; the store rounds and saturates.
          volatile float q = x / immediateOf(i);
          out[r * cols + j] = q;
          continue;
        }
        if (!isBinary(fn)) {
          out[r * cols + j] = unary(fn, x);
          continue;
        }
        float y = mode == VectorMode::Full     ? readF32(i.b, r * cols + j)
                  : mode == VectorMode::Row    ? readF32(i.b, j)
                  : mode == VectorMode::Column ? readF32(i.b, r)
                                               : immediate;
        out[r * cols + j] = binary(fn, x, y);
      }
    for (size_t n = 0; n < out.size(); ++n)
      storeElement(unified.data() + i.c + n * size, i.format, out[n]);
  }

  void matmul(const Instruction &i) {
    int64_t size = formatBytes(i.format);
    int64_t cols = config.array.cols;
    std::vector<float> w(size_t(i.depth) * i.cols), a(i.depth);
    if (i.format == NumberFormat::I8) {
      std::vector<int8_t> wi(w.size()), ai(i.depth), ci(i.depth);
      std::memcpy(wi.data(), weights.data() + i.a, wi.size());
      for (uint32_t r = 0; r < i.rows; ++r) {
        std::memcpy(ai.data(), unified.data() + i.b + size_t(r) * i.depth,
                    i.depth);
        for (uint32_t j = 0; j < i.cols; ++j) {
          for (uint32_t k = 0; k < i.depth; ++k)
            ci[k] = wi[size_t(k) * i.cols + j];
          uint32_t &slot = accumulators[size_t(i.c + r) * cols + j];
          int32_t start = 0;
          if (i.flags & 1)
            std::memcpy(&start, &slot, 4);
          int32_t sum = dotI8(ai.data(), ci.data(), i.depth, start);
          std::memcpy(&slot, &sum, 4);
        }
      }
      return;
    }
    // The weight tile column by column (w[j * depth + k]), decoded once.
    for (uint32_t k = 0; k < i.depth; ++k)
      for (uint32_t j = 0; j < i.cols; ++j)
        w[size_t(j) * i.depth + k] = loadElement(
            weights.data() + i.a + (size_t(k) * i.cols + j) * size, i.format);
    for (uint32_t r = 0; r < i.rows; ++r) {
      for (uint32_t k = 0; k < i.depth; ++k)
        a[k] = loadElement(
            unified.data() + i.b + (size_t(r) * i.depth + k) * size, i.format);
      for (uint32_t j = 0; j < i.cols; ++j) {
        // Along k within the fold, then into the accumulator.
        float partial =
            dot(a.data(), w.data() + size_t(j) * i.depth, i.depth, 0.0f);
        uint32_t &slot = accumulators[size_t(i.c + r) * cols + j];
        float acc = 0;
        if (i.flags & 1)
          std::memcpy(&acc, &slot, 4);
        volatile float sum = (i.flags & 1) ? acc + partial : partial;
        float stored = sum;
        std::memcpy(&slot, &stored, 4);
      }
    }
  }

  void drain(const Instruction &i) {
    int64_t cols = config.array.cols;
    int64_t size = formatBytes(i.format);
    float scale;
    std::memcpy(&scale, &i.c, 4);
    for (uint32_t r = 0; r < i.rows; ++r)
      for (uint32_t j = 0; j < i.cols; ++j) {
        uint32_t bits = accumulators[size_t(i.a + r) * cols + j];
        uint8_t *out = unified.data() + i.b + (size_t(r) * i.cols + j) * size;
        if (i.format == NumberFormat::I8) {
          int32_t acc;
          std::memcpy(&acc, &bits, 4);
          if ((i.flags & 1) && acc < 0)
            acc = 0;
          out[0] = static_cast<uint8_t>(requantize(acc, scale));
          continue;
        }
        float value;
        if (i.flags & kDrainInt32) {
          int32_t acc;
          std::memcpy(&acc, &bits, 4);
          value = static_cast<float>(acc);
        } else {
          std::memcpy(&value, &bits, 4);
        }
        if (i.flags & kDrainScale) {
          volatile float scaled = value * scale;
          value = scaled;
        }
        if (i.flags & kDrainBias) {
          float bias;
          std::memcpy(&bias, unified.data() + i.dram + size_t(j) * 4, 4);
          volatile float sum = value + bias;
          value = sum;
        }
        if ((i.flags & kDrainRelu) && value < 0)
          value = 0;
        storeElement(out, i.format, value);
      }
  }
};

} // namespace

Result<SimStats> tessera::sim::simulate(Program &program,
                                        const AcceleratorConfig &config,
                                        bool keepTrace) {
  if (auto error = validateConfig(config))
    return "invalid configuration: " + *error;
  if (auto error = validateProgram(program, config))
    return *error;
  Machine machine(config, program);
  SimStats stats;
  std::array<std::deque<size_t>, 4> queues;
  for (size_t n = 0; n < program.instructions.size(); ++n)
    queues[static_cast<size_t>(queueOf(program.instructions[n].opcode))]
        .push_back(n);
  std::array<int64_t, 4> queueFree = {0, 0, 0, 0};
  std::array<std::deque<int64_t>, kNumChannels> tokens;
  int64_t dramFree = 0;
  int64_t vectorElements = 0;
  // The array is busy while any matmul is in flight (pipelined folds
  // overlap): the union of their spans, which start in queue order.
  int64_t matrixBusyUntil = 0;
  double cells = double(config.array.rows) * double(config.array.cols);

  // Stores in program order, for fences: issued so far and when the last
  // of them completes.
  std::vector<size_t> storeIndices;
  for (size_t n = 0; n < program.instructions.size(); ++n)
    if (program.instructions[n].opcode == Opcode::Store)
      storeIndices.push_back(n);
  size_t storesIssued = 0;
  /// Completion of the first n stores (in program order), n = index + 1.
  std::vector<int64_t> storesDone;
  auto storesBefore = [&](size_t index) {
    return size_t(
        std::lower_bound(storeIndices.begin(), storeIndices.end(), index) -
        storeIndices.begin());
  };
  auto fenced = [&](size_t index) {
    const Instruction &i = program.instructions[index];
    return (i.opcode == Opcode::Load || i.opcode == Opcode::Gather) &&
           (i.flags & kLoadFence);
  };
  auto ready = [&](size_t index) {
    const Instruction &i = program.instructions[index];
    for (int ch = 0; ch < kNumChannels; ++ch)
      if ((i.waitMask >> ch & 1) && tokens[ch].empty())
        return false;
    return !fenced(index) || storesIssued >= storesBefore(index);
  };
  while (true) {
    // Among the queue heads whose tokens are there, the one that can start
    // first.
    int best = -1;
    int64_t bestStart = 0;
    for (int q = 0; q < 4; ++q) {
      if (queues[q].empty())
        continue;
      const Instruction &i = program.instructions[queues[q].front()];
      if (!ready(queues[q].front()))
        continue;
      int64_t start = queueFree[q];
      if (size_t before = storesBefore(queues[q].front());
          fenced(queues[q].front()) && before > 0)
        start = std::max(start, storesDone[before - 1]);
      for (int ch = 0; ch < kNumChannels; ++ch)
        if (i.waitMask >> ch & 1)
          start = std::max(start, tokens[ch].front());
      if (best < 0 || start < bestStart) {
        best = q;
        bestStart = start;
      }
    }
    if (best < 0)
      break;
    size_t index = queues[best].front();
    queues[best].pop_front();
    const Instruction &i = program.instructions[index];
    UnitStats &unit = stats.units[best];
    unit.waitDependency += bestStart - queueFree[best];
    for (int ch = 0; ch < kNumChannels; ++ch)
      if (i.waitMask >> ch & 1)
        tokens[ch].pop_front();
    int64_t start = bestStart, end = bestStart;
    int64_t issueEnd = -1; // DMA: when the queue may issue again
    switch (i.opcode) {
    case Opcode::Load:
    case Opcode::Gather:
    case Opcode::Store: {
      int64_t bytes = int64_t(std::max<uint32_t>(i.rows, 1)) * i.c;
      int64_t transfer = static_cast<int64_t>(
          std::ceil(double(bytes) / config.dramBytesPerCycle));
      int64_t begin = std::max(start, dramFree);
      unit.waitMemory += begin - start;
      dramFree = begin + transfer;
      // The DMA engine pipelines requests: its queue is free once the
      // transfer has its slot on the channel; the data lands (and the
      // instruction's tokens are signalled) a latency later.
      issueEnd = begin + transfer;
      end = issueEnd + config.dramLatencyCycles;
      stats.dramBytes += bytes;
      stats.sramBytes += bytes;
      break;
    }
    case Opcode::Matmul:
      end = start + matmulCycles(config, i);
      issueEnd = start + matmulInterval(config, i);
      stats.macs += int64_t(i.rows) * i.depth * i.cols;
      stats.sramBytes +=
          (int64_t(i.depth) * i.cols + int64_t(i.rows) * i.depth) *
          formatBytes(i.format);
      break;
    case Opcode::Drain: {
      int64_t elements = int64_t(i.rows) * i.cols;
      end =
          start + (elements + config.vectorLanes - 1) / config.vectorLanes + 4;
      vectorElements += elements;
      stats.sramBytes += elements * (4 + formatBytes(i.format));
      break;
    }
    case Opcode::Vector: {
      int64_t elements = int64_t(i.rows) * i.cols;
      end = start + vectorCycles(config, i);
      vectorElements += elements;
      auto fn = static_cast<VectorFn>(i.depth);
      int64_t reads =
          isBinary(fn) && static_cast<VectorMode>(i.flags) == VectorMode::Full
              ? 2
              : 1;
      stats.sramBytes +=
          elements * 4 * reads + (isRowReduction(fn)
                                      ? int64_t(i.rows) * 4
                                      : elements * formatBytes(i.format));
      break;
    }
    }
    machine.execute(i);
    if (!machine.error.empty())
      return "instruction " + std::to_string(index) + " (" +
             queueName(queueOf(i.opcode)) + "): " + machine.error;
    if (i.opcode == Opcode::Store) {
      ++storesIssued;
      storesDone.push_back(
          std::max(storesDone.empty() ? 0 : storesDone.back(), end));
    }
    if (i.opcode == Opcode::Matmul) {
      unit.busy += std::max<int64_t>(0, end - std::max(start, matrixBusyUntil));
      matrixBusyUntil = std::max(matrixBusyUntil, end);
    } else {
      unit.busy += (issueEnd >= 0 ? issueEnd : end) - start;
    }
    ++unit.instructions;
    queueFree[best] = issueEnd >= 0 ? issueEnd : end;
    for (int ch = 0; ch < kNumChannels; ++ch)
      if (i.signalMask >> ch & 1)
        tokens[ch].push_back(end);
    stats.cycles = std::max(stats.cycles, end);
    if (keepTrace)
      stats.trace.push_back({Queue(best), i.opcode, index, start, end,
                             i.opcode == Opcode::Matmul
                                 ? int64_t(i.rows) * i.depth * i.cols
                                 : 0});
  }
  for (int q = 0; q < 4; ++q)
    if (!queues[q].empty()) {
      const Instruction &i = program.instructions[queues[q].front()];
      if (fenced(queues[q].front()) &&
          storesIssued < storesBefore(queues[q].front()))
        return "deadlock: instruction " + std::to_string(queues[q].front()) +
               " on the load queue waits for earlier stores that cannot "
               "start";
      std::string channels;
      for (int ch = 0; ch < kNumChannels; ++ch)
        if ((i.waitMask >> ch & 1) && tokens[ch].empty())
          channels += (channels.empty() ? "" : ", ") + std::to_string(ch);
      return "deadlock: instruction " + std::to_string(queues[q].front()) +
             " on the " + queueName(Queue(q)) +
             " queue waits on token channel " + channels +
             ", which nothing left will signal";
    }
  stats.arrayUtilization =
      stats.cycles ? double(stats.macs) / (double(stats.cycles) * cells) : 0;
  int64_t matrixBusy = stats.units[int(Queue::Matrix)].busy;
  stats.matrixUtilization =
      matrixBusy ? double(stats.macs) / (double(matrixBusy) * cells) : 0;
  stats.energyPJ = double(stats.macs) * config.energy.macPJ +
                   double(stats.sramBytes) * config.energy.sramBytePJ +
                   double(stats.dramBytes) * config.energy.dramBytePJ +
                   double(vectorElements) * config.energy.vectorOpPJ;
  stats.seconds = double(stats.cycles) / (config.clockGHz * 1e9);
  return stats;
}

std::string tessera::sim::statsToJSON(const SimStats &stats,
                                      const AcceleratorConfig &config) {
  llvm::json::Object units;
  for (int q = 0; q < 4; ++q) {
    const UnitStats &u = stats.units[q];
    units[queueName(Queue(q))] =
        llvm::json::Object{{"busy_cycles", u.busy},
                           {"instructions", u.instructions},
                           {"stall_dependency_cycles", u.waitDependency},
                           {"stall_memory_cycles", u.waitMemory}};
  }
  llvm::json::Object root{{"accelerator", config.name},
                          {"cycles", stats.cycles},
                          {"seconds", stats.seconds},
                          {"macs", stats.macs},
                          {"array_utilization", stats.arrayUtilization},
                          {"matrix_utilization", stats.matrixUtilization},
                          {"sram_bytes", stats.sramBytes},
                          {"dram_bytes", stats.dramBytes},
                          {"energy_uj", stats.energyPJ * 1e-6},
                          {"units", std::move(units)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)));
  return text;
}

std::string tessera::sim::traceToJSON(const SimStats &stats,
                                      const AcceleratorConfig &config) {
  static const char *names[] = {"?",     "load",   "matmul", "drain",
                                "store", "vector", "gather"};
  llvm::json::Array events;
  double microsPerCycle = 1e-3 / config.clockGHz;
  for (int q = 0; q < 4; ++q)
    events.push_back(llvm::json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", 0},
        {"tid", q},
        {"args", llvm::json::Object{{"name", queueName(Queue(q))}}}});
  for (const TraceEvent &e : stats.trace)
    events.push_back(llvm::json::Object{
        {"name", names[static_cast<int>(e.opcode)]},
        {"ph", "X"},
        {"pid", 0},
        {"tid", static_cast<int>(e.queue)},
        {"ts", double(e.start) * microsPerCycle},
        {"dur", double(e.end - e.start) * microsPerCycle},
        {"args", llvm::json::Object{{"instruction", int64_t(e.index)},
                                    {"start_cycle", e.start},
                                    {"end_cycle", e.end}}}});
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(llvm::json::Object{{"traceEvents", std::move(events)},
                                             {"displayTimeUnit", "ns"}});
  return text;
}

void tessera::sim::writeTensor(Program &program, const TensorInfo &tensor,
                               const float *values) {
  int64_t size = formatBytes(tensor.format);
  int64_t count = tensor.bytes() / size;
  for (int64_t e = 0; e < count; ++e)
    storeElement(program.dram.data() + tensor.offset + e * size, tensor.format,
                 values[e]);
}

std::vector<float> tessera::sim::readTensor(const Program &program,
                                            const TensorInfo &tensor) {
  int64_t size = formatBytes(tensor.format);
  std::vector<float> out(static_cast<size_t>(tensor.bytes() / size));
  for (size_t e = 0; e < out.size(); ++e)
    out[e] = loadElement(program.dram.data() + tensor.offset + e * size,
                         tensor.format);
  return out;
}

std::vector<float> tessera::sim::readOutput(const Program &program,
                                            const std::string &name) {
  for (const TensorInfo &t : program.tensors)
    if (t.name == name)
      return readTensor(program, t);
  return {};
}
