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

/// Reads the fp32 output `name` from a program's DRAM image.
std::vector<float> readOutput(const Program &program, const std::string &name);

/// Writes `values` (fp32, one per element) into `tensor`'s place in the
/// DRAM image, converted to its format; reads a tensor back as fp32.
void writeTensor(Program &program, const TensorInfo &tensor,
                 const float *values);
std::vector<float> readTensor(const Program &program, const TensorInfo &tensor);

} // namespace tessera::sim

#endif // TESSERA_SIM_SIMULATOR_H
