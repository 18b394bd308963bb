//===- ProgramExecutable.h - a systolic program run on the simulator ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A systolic program (.tsp, or one compiled in process) as an Executable:
// inputs are written into a copy of its DRAM image in their formats, the
// cycle-level simulator runs it, and outputs are read back as fp32. Shared
// by tessera-run, tessera-sim and the C API. No MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_SYSTOLIC_PROGRAMEXECUTABLE_H
#define TESSERA_TARGET_SYSTOLIC_PROGRAMEXECUTABLE_H

#include "tessera/Runtime/Executable.h"
#include "tessera/Sim/Config.h"
#include "tessera/Sim/Program.h"
#include "tessera/Sim/Simulator.h"

#include <memory>
#include <optional>

namespace tessera::systolic {

/// One simulated run: its statistics and the program's DRAM image after it.
struct SimulatedRun {
  sim::SimStats stats;
  sim::Program program;
  /// Wall-clock seconds the simulation took.
  double wallSeconds = 0;
};

class ProgramExecutable : public runtime::Executable {
public:
  /// Reads the program at `path` and validates it against the accelerator
  /// that `options` names (`accel`: a preset or a JSON file, default
  /// "default"); `trace` and `report` name files each run writes (a Chrome
  /// trace, an HTML report).
  static llvm::Expected<std::unique_ptr<ProgramExecutable>>
  load(llvm::StringRef path, const runtime::LoadOptions &options);

  /// A program compiled in process for `config`.
  static std::unique_ptr<ProgramExecutable>
  fromProgram(sim::Program program,
              std::shared_ptr<const sim::AcceleratorConfig> config,
              const runtime::LoadOptions &options = {});

  const runtime::ModelSignature &signature() const override { return sig; }

  /// Simulates the program on `inputs` (fp32, or integer indices) and
  /// returns its outputs as fp32; writes the trace and report when asked.
  llvm::Expected<std::vector<runtime::HostTensor>>
  run(llvm::ArrayRef<runtime::HostTensor> inputs) override;

  std::string device() const override;
  std::string lastRunSummary() const override { return summary; }

  /// Simulates with `inputs` written into the image (none: the image's
  /// own values), keeping the trace when `keepTrace`.
  llvm::Expected<SimulatedRun> simulate(llvm::ArrayRef<runtime::HostTensor> inputs,
                                        bool keepTrace) const;

  const sim::AcceleratorConfig &config() const { return *accelerator; }
  const sim::Program &program() const { return image; }

private:
  ProgramExecutable() = default;
  std::shared_ptr<const sim::AcceleratorConfig> accelerator;
  sim::Program image;
  runtime::ModelSignature sig;
  std::string tracePath, reportPath, label;
  std::string summary;
};

/// Loads the accelerator configuration `accel` (a preset or a JSON file).
llvm::Expected<std::shared_ptr<const sim::AcceleratorConfig>>
loadAccelerator(llvm::StringRef accel);

/// Writes `stats` as a Chrome trace to `tracePath` and as an HTML report
/// titled `title` to `reportPath` (each when not empty).
llvm::Error writeTraceAndReport(const sim::SimStats &stats,
                                const sim::AcceleratorConfig &config,
                                llvm::StringRef tracePath,
                                llvm::StringRef reportPath,
                                const std::string &title);

/// Registers the loader of systolic programs (`.tsp`).
void registerLoaders();

} // namespace tessera::systolic

#endif // TESSERA_TARGET_SYSTOLIC_PROGRAMEXECUTABLE_H
