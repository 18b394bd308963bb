//===- ProgramExecutable.cpp - a systolic program run on the simulator ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Systolic/ProgramExecutable.h"
#include "tessera/Target/Systolic/SystolicIO.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace tessera;
using namespace tessera::systolic;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string option(const runtime::LoadOptions &options,
                          llvm::StringRef name, llvm::StringRef fallback) {
  auto it = options.find(name.str());
  return it == options.end() ? fallback.str() : it->second;
}

llvm::Expected<std::shared_ptr<const sim::AcceleratorConfig>>
tessera::systolic::loadAccelerator(llvm::StringRef accel) {
  sim::Result<sim::AcceleratorConfig> config = sim::loadConfig(accel.str());
  if (auto *error = std::get_if<std::string>(&config))
    return fail(*error);
  return std::make_shared<const sim::AcceleratorConfig>(
      std::move(std::get<sim::AcceleratorConfig>(config)));
}

llvm::Expected<std::unique_ptr<ProgramExecutable>>
ProgramExecutable::load(llvm::StringRef path,
                        const runtime::LoadOptions &options) {
  auto config = loadAccelerator(option(options, "accel", "default"));
  if (!config)
    return config.takeError();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  llvm::StringRef data = (*buffer)->getBuffer();
  std::vector<uint8_t> bytes(data.begin(), data.end());
  auto program = sim::decodeProgram(bytes, **config);
  if (auto *error = std::get_if<std::string>(&program))
    return fail(path + ": " + *error);
  runtime::LoadOptions labelled = options;
  labelled.emplace("label", path.str());
  return fromProgram(std::move(std::get<sim::Program>(program)),
                     std::move(*config), labelled);
}

std::unique_ptr<ProgramExecutable> ProgramExecutable::fromProgram(
    sim::Program program, std::shared_ptr<const sim::AcceleratorConfig> config,
    const runtime::LoadOptions &options) {
  auto executable = std::unique_ptr<ProgramExecutable>(new ProgramExecutable);
  executable->accelerator = std::move(config);
  executable->image = std::move(program);
  executable->sig = runtime::programSignature(executable->image);
  executable->tracePath = option(options, "trace", "");
  executable->reportPath = option(options, "report", "");
  executable->label = option(options, "label", "a systolic program");
  return executable;
}

std::string ProgramExecutable::device() const {
  return "systolic simulator '" + accelerator->name + "'";
}

llvm::Expected<SimulatedRun>
ProgramExecutable::simulate(llvm::ArrayRef<runtime::HostTensor> inputs,
                            bool keepTrace) const {
  SimulatedRun run;
  run.program = image;
  if (!inputs.empty())
    if (llvm::Error error = runtime::writeProgramInputs(run.program, inputs))
      return std::move(error);
  auto start = std::chrono::steady_clock::now();
  auto stats = sim::simulate(run.program, *accelerator, keepTrace);
  run.wallSeconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  if (auto *error = std::get_if<std::string>(&stats))
    return fail(*error);
  run.stats = std::move(std::get<sim::SimStats>(stats));
  return std::move(run);
}

llvm::Expected<std::vector<runtime::HostTensor>>
ProgramExecutable::run(llvm::ArrayRef<runtime::HostTensor> inputs) {
  auto ran = simulate(inputs, !tracePath.empty() || !reportPath.empty());
  if (!ran)
    return ran.takeError();
  const sim::SimStats &s = ran->stats;
  const sim::AcceleratorConfig &config = *accelerator;
  summary = llvm::formatv("simulated on '{0}': {1} cycles ({2:f2} us at {3} "
                          "GHz), array utilization {4:f1}%, matrix unit "
                          "utilization {5:f1}%",
                          config.name, s.cycles, s.seconds * 1e6,
                          config.clockGHz, 100 * s.arrayUtilization,
                          100 * s.matrixUtilization);
  if (llvm::Error error = writeTraceAndReport(s, config, tracePath, reportPath,
                                              "Tessera: " + label))
    return std::move(error);
  return runtime::readProgramOutputs(ran->program);
}

llvm::Error tessera::systolic::writeTraceAndReport(
    const sim::SimStats &stats, const sim::AcceleratorConfig &config,
    llvm::StringRef tracePath, llvm::StringRef reportPath,
    const std::string &title) {
  auto write = [](llvm::StringRef path,
                  const std::string &text) -> llvm::Error {
    std::error_code ec;
    llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    out.os() << text;
    out.os().close();
    if (out.os().has_error()) {
      std::string why = out.os().error().message();
      out.os().clear_error();
      return fail("cannot write '" + path + "': " + why);
    }
    out.keep();
    return llvm::Error::success();
  };
  if (!tracePath.empty())
    if (llvm::Error error =
            write(tracePath, sim::traceToJSON(stats, config) + "\n"))
      return error;
  if (!reportPath.empty())
    if (llvm::Error error =
            write(reportPath, sim::reportToHTML(stats, config, title)))
      return error;
  return llvm::Error::success();
}

void tessera::systolic::registerLoaders() {
  runtime::registerExecutableLoader(
      {"systolic-program",
       ".tsp",
       "a program for the systolic accelerator, run on its cycle-level "
       "simulator (tessera-compile --target=systolic -o model.tsp)",
       {{"accel", "preset|file.json",
         "the accelerator a .tsp runs on: a preset (tpu-v1, default, small) "
         "or a JSON configuration"},
        {"trace", "file.json",
         "for a .tsp: write a Chrome trace-event timeline of every unit"},
        {"report", "file.html",
         "for a .tsp: write a one-page HTML report of the last run with a "
         "utilization plot"}},
       [](llvm::StringRef path, const runtime::LoadOptions &options)
           -> llvm::Expected<std::unique_ptr<runtime::Executable>> {
         auto loaded = ProgramExecutable::load(path, options);
         if (!loaded)
           return loaded.takeError();
         return std::unique_ptr<runtime::Executable>(std::move(*loaded));
       }});
}
