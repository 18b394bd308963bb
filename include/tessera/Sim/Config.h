//===- Config.h - the accelerator's configuration -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Array size and dataflow, on-chip memories, DRAM bandwidth and latency,
// clock and a per-operation energy table, from a preset (`tpu-v1`,
// `default`, `small`) or a JSON file (docs/Systolic.md lists the keys).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SIM_CONFIG_H
#define TESSERA_SIM_CONFIG_H

#include "tessera/Sim/Analytical.h"
#include "tessera/Sim/Numerics.h"

#include <string>
#include <vector>

namespace tessera::sim {

struct EnergyTable {
  /// Picojoules per multiply-accumulate, per byte moved, per vector
  /// element operation.
  double macPJ = 0.2, sramBytePJ = 0.5, dramBytePJ = 20.0, vectorOpPJ = 0.5;
};

struct AcceleratorConfig {
  std::string name;
  ArrayShape array;
  Dataflow dataflow = Dataflow::WeightStationary;
  double clockGHz = 1.0;
  /// On-chip memories in bytes: the unified buffer (activations), the
  /// weight buffer, and the accumulators (fp32 or int32, 4 bytes each).
  int64_t unifiedBufferBytes = 0, weightBufferBytes = 0, accumulatorBytes = 0;
  /// DRAM: bytes per cycle and cycles from a request to its first byte.
  double dramBytesPerCycle = 0;
  int64_t dramLatencyCycles = 0;
  /// Elements the vector unit processes per cycle.
  int64_t vectorLanes = 0;
  /// Whether consecutive folds overlap in the array: the cells hold a
  /// second weight (WS, IS) or output (OS) register, so the next fold's
  /// weights shift in, or the last fold's outputs shift out, while a fold
  /// computes (TPU v1 double-buffers its weights this way). A matmul then
  /// occupies the array for max(streamed, R) cycles and completes its
  /// full fold latency later. False reproduces SCALE-Sim: one fold at a
  /// time.
  bool pipelinedFolds = true;
  std::vector<NumberFormat> operandFormats;
  EnergyTable energy;

  bool supports(NumberFormat format) const;
};

/// The named preset, or an error listing the presets.
Result<AcceleratorConfig> presetConfig(std::string_view name);

/// A configuration from JSON text: a preset to start from ("base",
/// optional, default "default") and any field to override. Every error
/// names the key.
Result<AcceleratorConfig> parseConfig(std::string_view json);

/// A preset by name, or a JSON configuration file (a path ending in
/// .json); errors say which.
Result<AcceleratorConfig> loadConfig(std::string_view presetOrPath);

/// Checks that sizes are positive and consistent (an accumulator row of
/// the array's columns fits, the weight buffer holds one R x C tile).
std::optional<std::string> validateConfig(const AcceleratorConfig &config);

/// Size in bytes of one element of an operand format.
int64_t formatBytes(NumberFormat format);
const char *formatName(NumberFormat format);
std::optional<NumberFormat> parseFormat(std::string_view name);

} // namespace tessera::sim

#endif // TESSERA_SIM_CONFIG_H
