//===- ProgramFuzzer.cpp - libFuzzer target: .tsp bytes to a simulated run ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each input is a systolic program file (.tsp, docs/Systolic.md). It is
// decoded and validated against the `small` preset (a 16 x 16 array, the
// one the seeds are built for); a program that loads is run on the
// cycle-level model with its trace kept, and its statistics, trace, HTML
// report and every tensor are read back, as `tessera-sim run --trace
// --report` does. An error is a fine outcome; a crash, a sanitizer report,
// a leak or a timeout is a finding. The run is bounded by the input: the
// decoder rejects anything beyond the preset's memories, and every
// instruction runs once.
//
//===----------------------------------------------------------------------===//
#include "tessera/Sim/Program.h"
#include "tessera/Sim/Simulator.h"

#include <cstdint>
#include <cstdlib>
#include <variant>
#include <vector>

using namespace tessera::sim;

namespace {
const AcceleratorConfig &config() {
  static const AcceleratorConfig small = [] {
    Result<AcceleratorConfig> c = presetConfig("small");
    if (!std::holds_alternative<AcceleratorConfig>(c))
      std::abort();
    return std::get<AcceleratorConfig>(std::move(c));
  }();
  return small;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  Result<Program> decoded = decodeProgram(bytes, config());
  Program *program = std::get_if<Program>(&decoded);
  if (!program)
    return 0;
  Result<SimStats> run = simulate(*program, config(), /*keepTrace=*/true);
  const SimStats *stats = std::get_if<SimStats>(&run);
  if (!stats)
    return 0;
  (void)statsToJSON(*stats, config());
  (void)traceToJSON(*stats, config());
  (void)reportToHTML(*stats, config(), "fuzz", /*buckets=*/8);
  for (const TensorInfo &tensor : program->tensors)
    (void)readTensor(*program, tensor);
  return 0;
}
