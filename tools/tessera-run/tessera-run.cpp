//===- tessera-run.cpp - runs a model and compares its outputs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Compile.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/InitTessera.h"
#include "tessera/Runtime/Artifact.h"
#include "tessera/Runtime/HostTensor.h"
#include "tessera/Runtime/SystolicIO.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Sim/Simulator.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>

using namespace llvm;
using namespace tessera::runtime;

static cl::OptionCategory category("tessera-run options");
static cl::opt<std::string>
    modelPath(cl::Positional,
              cl::desc("[model.onnx | artifact.so from tessera-compile | "
                       "program.tsp for the systolic simulator]"),
              cl::cat(category));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("An input as an ONNX TensorProto (.pb) or a "
                        "NumPy array (.npy), in the model's input "
                        "order"),
               cl::value_desc("file"), cl::cat(category));
static cl::list<std::string> expectedFiles(
    "expected",
    cl::desc("An expected output (.pb or .npy), in the model's output "
             "order"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    testDir("test-dir",
            cl::desc("A folder in ONNX's test layout: model.onnx and "
                     "test_data_set_*/input_K.pb, output_K.pb (a model given "
                     "as well runs instead of the folder's model.onnx)"),
            cl::value_desc("dir"), cl::cat(category));
static cl::opt<double>
    relTolerance("rtol", cl::init(1e-3),
                 cl::desc("Relative tolerance (default 1e-3)"),
                 cl::cat(category));
static cl::opt<double>
    absTolerance("atol", cl::init(1e-5),
                 cl::desc("Absolute tolerance (default 1e-5)"),
                 cl::cat(category));
static cl::opt<double> errorRatio(
    "max-error-ratio", cl::init(0.0),
    cl::desc("Pass when each output's max abs error is at most this "
             "fraction of its max |expected| (instead of --rtol/--atol)"),
    cl::value_desc("F"), cl::cat(category));
static cl::opt<double> minCosine(
    "min-cosine", cl::init(0.0),
    cl::desc("Also require each output's cosine similarity to the expected "
             "one to be at least this (for reduced-precision targets, e.g. "
             "0.999 for bf16)"),
    cl::value_desc("C"), cl::cat(category));
static cl::opt<unsigned>
    seed("seed", cl::init(0),
         cl::desc("Without --input, run on random inputs from this seed "
                  "(floats in [-1, 1], integers in [0, 10))"),
         cl::cat(category));
static cl::opt<unsigned>
    benchmark("benchmark", cl::init(0),
              cl::desc("Run N more times after a warm-up and print the "
                       "minimum and median latency"),
              cl::value_desc("N"), cl::cat(category));

static cl::opt<std::string> target(
    "target", cl::init(""),
    cl::desc("The backend an ONNX model is compiled for in process: cpu "
             "(the default) or systolic (a program run on the accelerator "
             "model); a .so runs on the CPU and a .tsp on the simulator"),
    cl::value_desc("cpu|systolic"), cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("With --target=systolic: fix a symbolic input dim of the "
                  "ONNX model to a size, as name=size (repeatable)"),
         cl::value_desc("name=size"), cl::cat(category));
static cl::opt<std::string>
    accel("accel", cl::init("default"),
          cl::desc("For the systolic target (a .tsp program or "
                   "--target=systolic): the accelerator, a preset (tpu-v1, "
                   "default, small) or a JSON configuration"),
          cl::value_desc("preset|file.json"), cl::cat(category));
static cl::opt<std::string>
    tracePath("trace",
              cl::desc("On the systolic target: write a Chrome trace-event "
                       "timeline of every unit"),
              cl::value_desc("file.json"), cl::cat(category));

static cl::opt<std::string>
    reportPath("report",
               cl::desc("On the systolic target: write a one-page HTML report "
                        "of the last run with a utilization plot"),
               cl::value_desc("file.html"), cl::cat(category));

/// A systolic program (.tsp) as a model: inputs are written into a copy of
/// its DRAM image in their formats, the simulator runs it, and the
/// outputs are read back as fp32; each run prints its cycles.
class SystolicModel {
public:
  static Expected<std::unique_ptr<SystolicModel>> load(StringRef path) {
    auto fail = [&](const Twine &why) {
      return createStringError(inconvertibleErrorCode(), path + ": " + why);
    };
    tessera::sim::Result<tessera::sim::AcceleratorConfig> config =
        tessera::sim::loadConfig(accel);
    if (auto *error = std::get_if<std::string>(&config))
      return createStringError(inconvertibleErrorCode(), *error);
    auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false);
    if (!buffer)
      return fail(buffer.getError().message());
    StringRef data = (*buffer)->getBuffer();
    std::vector<uint8_t> bytes(data.begin(), data.end());
    auto config_ = std::get<tessera::sim::AcceleratorConfig>(config);
    auto program = tessera::sim::decodeProgram(bytes, config_);
    if (auto *error = std::get_if<std::string>(&program))
      return fail(*error);
    return fromProgram(std::move(std::get<tessera::sim::Program>(program)),
                       std::move(config_), path);
  }

  /// A program compiled in process (or loaded) as a model: its inputs and
  /// outputs, fp32 at the boundary.
  static std::unique_ptr<SystolicModel>
  fromProgram(tessera::sim::Program program,
              tessera::sim::AcceleratorConfig config, StringRef path) {
    auto model = std::unique_ptr<SystolicModel>(new SystolicModel);
    model->config = std::move(config);
    model->path = path.str();
    model->program = std::move(program);
    model->signature = tessera::runtime::programSignature(model->program);
    return model;
  }

  Expected<std::vector<HostTensor>> run(ArrayRef<HostTensor> inputs) {
    tessera::sim::Program copy = program;
    if (auto error = tessera::runtime::writeProgramInputs(copy, inputs))
      return std::move(error);
    auto stats = tessera::sim::simulate(
        copy, config, !tracePath.empty() || !reportPath.empty());
    if (auto *error = std::get_if<std::string>(&stats))
      return createStringError(inconvertibleErrorCode(), *error);
    const tessera::sim::SimStats &s = std::get<tessera::sim::SimStats>(stats);
    outs() << formatv("simulated on '{0}': {1} cycles ({2:f2} us at {3} "
                      "GHz), array utilization {4:f1}%, matrix unit "
                      "utilization {5:f1}%\n",
                      config.name, s.cycles, s.seconds * 1e6, config.clockGHz,
                      100 * s.arrayUtilization, 100 * s.matrixUtilization);
    if (!tracePath.empty()) {
      std::error_code ec;
      raw_fd_ostream trace(tracePath, ec);
      if (ec)
        return createStringError(inconvertibleErrorCode(),
                                 "cannot write '" + tracePath +
                                     "': " + ec.message());
      trace << tessera::sim::traceToJSON(s, config) << "\n";
    }
    if (!reportPath.empty()) {
      std::error_code ec;
      raw_fd_ostream report(reportPath, ec);
      if (ec)
        return createStringError(inconvertibleErrorCode(),
                                 "cannot write '" + reportPath +
                                     "': " + ec.message());
      report << tessera::sim::reportToHTML(s, config, "tessera-run: " + path);
    }
    return tessera::runtime::readProgramOutputs(copy);
  }

  const ModelSignature &getSignature() const { return signature; }

private:
  tessera::sim::AcceleratorConfig config;
  std::string path;
  tessera::sim::Program program;
  ModelSignature signature;
};

/// The files named `<prefix>_<K>.pb` in `dir`, by K.
static std::vector<std::string> numberedFiles(StringRef dir, StringRef prefix) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    int k;
    if (name.consume_front(prefix) && name.consume_front("_") &&
        name.consume_back(".pb") && !name.getAsInteger(10, k))
      found.emplace_back(k, it->path());
  }
  llvm::sort(found);
  std::vector<std::string> paths;
  for (auto &f : found)
    paths.push_back(f.second);
  return paths;
}

/// Runs one set of inputs, compares with `expected` (when given), prints
/// the worst error per output; false on a mismatch.
using RunFn =
    std::function<Expected<std::vector<HostTensor>>(ArrayRef<HostTensor>)>;

static bool runCase(const RunFn &model, StringRef label,
                    const std::vector<HostTensor> &inputs,
                    const std::vector<HostTensor> &expected) {
  auto outputs = model(inputs);
  if (!outputs) {
    WithColor::error(errs(), "tessera-run")
        << label << ": " << toString(outputs.takeError()) << "\n";
    return false;
  }
  if (!expected.empty() && expected.size() != outputs->size()) {
    WithColor::error(errs(), "tessera-run")
        << label << ": the model has " << outputs->size() << " outputs but "
        << expected.size() << " expected values\n";
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const HostTensor &out = (*outputs)[i];
    outs() << label << ": output '" << out.name << "' ["
           << join(map_range(out.shape,
                             [](int64_t d) { return std::to_string(d); }),
                   ", ")
           << "] " << elementTypeName(out.type);
    if (expected.empty()) {
      outs() << "\n";
      continue;
    }
    Comparison c = compareTensors(out, expected[i], relTolerance, absTolerance);
    if (!c.shapesMatch) {
      outs() << ": shape differs from the expected one\n";
      ok = false;
      continue;
    }
    outs() << format(": max abs error %.3g, max rel error %.3g", c.maxAbsError,
                     c.maxRelError);
    if (minCosine > 0) {
      outs() << format(", cosine %.6f", c.cosine);
      if (c.cosine < minCosine) {
        outs() << format(" (below %g): FAIL\n", double(minCosine));
        ok = false;
        continue;
      }
    }
    if (errorRatio > 0) {
      double ratio = c.maxAbsError / std::max(c.maxAbsExpected, 1e-30);
      bool within = ratio <= errorRatio;
      outs() << format(", %.3g of max |expected|: %s\n", ratio,
                       within ? "ok" : "FAIL");
      ok &= within;
    } else if (c.mismatches) {
      outs() << ", " << c.mismatches << " elements beyond tolerance: FAIL\n";
      ok = false;
    } else {
      outs() << ": ok\n";
    }
  }
  return ok;
}

static void runBenchmark(const RunFn &model,
                         const std::vector<HostTensor> &inputs) {
  if (auto warmup = model(inputs); !warmup)
    consumeError(warmup.takeError());
  std::vector<double> ms;
  for (unsigned i = 0; i < benchmark; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto out = model(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (!out)
      consumeError(out.takeError());
  }
  llvm::sort(ms);
  outs() << format("latency over %u runs: min %.3f ms, median %.3f ms\n",
                   benchmark.getValue(), ms.front(), ms[ms.size() / 2]);
}

/// Random inputs for the model's signature (set when --input is absent).
static std::vector<HostTensor> randomInputs;

static Expected<std::vector<HostTensor>>
makeRandomInputs(const ModelSignature &sig, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int64_t> integer(0, 9);
  std::vector<HostTensor> tensors;
  for (const TensorSignature &in : sig.inputs) {
    HostTensor t;
    t.name = in.name;
    t.type = in.type;
    for (int64_t d : in.shape) {
      if (d == kDynamic)
        return createStringError(inconvertibleErrorCode(),
                                 "input '" + in.name +
                                     "' has a dynamic dim; give --input");
      t.shape.push_back(d);
    }
    t.data.resize(t.numElements() * elementSize(t.type));
    for (int64_t i = 0; i < t.numElements(); ++i) {
      uint8_t *p = t.data.data() + i * elementSize(t.type);
      if (t.type == ElementType::F32) {
        float v = real(engine);
        std::memcpy(p, &v, 4);
      } else if (t.type == ElementType::I64) {
        int64_t v = integer(engine);
        std::memcpy(p, &v, 8);
      } else if (t.type == ElementType::I32) {
        int32_t v = static_cast<int32_t>(integer(engine));
        std::memcpy(p, &v, 4);
      } else if (t.type == ElementType::I8 || t.type == ElementType::Bool) {
        *p = static_cast<uint8_t>(integer(engine) %
                                  (t.type == ElementType::Bool ? 2 : 10));
      } else {
        return createStringError(inconvertibleErrorCode(),
                                 "random " + elementTypeName(t.type).str() +
                                     " inputs are not supported; give --input");
      }
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

/// Reads a case's .pb files, runs it (and the benchmark when asked); false
/// on an unreadable file or a mismatch.
static bool runFiles(const RunFn &model, StringRef label,
                     const std::vector<std::string> &inputFiles,
                     const std::vector<std::string> &expectedFiles) {
  auto inputs = readTensorFiles(inputFiles);
  if (!inputs) {
    WithColor::error(errs(), "tessera-run")
        << toString(inputs.takeError()) << "\n";
    return false;
  }
  auto expected = readTensorFiles(expectedFiles);
  if (!expected) {
    WithColor::error(errs(), "tessera-run")
        << toString(expected.takeError()) << "\n";
    return false;
  }
  if (inputFiles.empty() && !randomInputs.empty())
    *inputs = randomInputs;
  bool ok = runCase(model, label, *inputs, *expected);
  if (benchmark)
    runBenchmark(model, *inputs);
  return ok;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&category, &getColorCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera runner: compiles an ONNX model for this CPU or, with "
      "--target=systolic, for the accelerator model (or loads a compiled "
      ".so, or a systolic .tsp program for the simulator), runs it and "
      "compares its outputs.\n\n"
      "  tessera-run model.onnx --input=in0.pb --expected=out0.pb\n"
      "  tessera-run --test-dir=DIR [--target=cpu|systolic]\n");
  // With --test-dir, the folder's model.onnx unless a model (a compiled
  // .so or .tsp) is given too.
  std::string model = modelPath;
  if (!testDir.empty() && model.empty()) {
    SmallString<256> path(testDir);
    sys::path::append(path, "model.onnx");
    model = std::string(path);
  }
  if (model.empty()) {
    WithColor::error(errs(), "tessera-run")
        << "give a model.onnx or --test-dir (see --help)\n";
    return 2;
  }

  // An artifact runs as it is; an ONNX model is compiled in process.
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  tessera::DiagnosticPrinter diagnostics(context, errs());
  std::unique_ptr<Artifact> artifact;
  std::unique_ptr<CpuJit> jit;
  std::unique_ptr<SystolicModel> systolic;
  bool program = StringRef(model).ends_with(".tsp"),
       library = StringRef(model).ends_with(".so");
  if (!target.empty() && target != "cpu" && target != "systolic") {
    WithColor::error(errs(), "tessera-run")
        << "unknown --target '" << target << "' (expected cpu or systolic)\n";
    return 2;
  }
  if ((program && target == "cpu") || (library && target == "systolic")) {
    WithColor::error(errs(), "tessera-run")
        << model << " is compiled for the " << (program ? "systolic" : "cpu")
        << " target; --target=" << target << " compiles an ONNX model\n";
    return 2;
  }
  if (!dims.empty() && target != "systolic") {
    WithColor::error(errs(), "tessera-run")
        << "--dim applies to --target=systolic (a CPU model runs at any "
           "size)\n";
    return 2;
  }
  if (target == "systolic" && !program) {
    auto dimValues = tessera::parseDimValues(dims);
    auto config = tessera::sim::loadConfig(accel);
    if (!dimValues || std::holds_alternative<std::string>(config)) {
      WithColor::error(errs(), "tessera-run")
          << (dimValues ? std::get<std::string>(config)
                        : toString(dimValues.takeError()))
          << "\n";
      return 2;
    }
    tessera::SystolicOptions options;
    options.accel = accel;
    options.import.dimValues = std::move(*dimValues);
    auto compiled = tessera::compileONNXForSystolic(model, context, options);
    if (!compiled) {
      WithColor::error(errs(), "tessera-run")
          << model << ": " << toString(compiled.takeError()) << "\n";
      return 1;
    }
    systolic = SystolicModel::fromProgram(
        std::move(*compiled), std::get<tessera::sim::AcceleratorConfig>(config),
        model);
  } else if (program) {
    auto loaded = SystolicModel::load(model);
    if (!loaded) {
      WithColor::error(errs(), "tessera-run")
          << toString(loaded.takeError()) << "\n";
      return 1;
    }
    systolic = std::move(*loaded);
  } else if (library) {
    auto loaded = Artifact::load(model);
    if (!loaded) {
      WithColor::error(errs(), "tessera-run")
          << toString(loaded.takeError()) << "\n";
      return 1;
    }
    artifact = std::move(*loaded);
  } else {
    auto compiled = tessera::compileONNXForCpu(model, context);
    if (!compiled) {
      WithColor::error(errs(), "tessera-run")
          << model << ": " << toString(compiled.takeError()) << "\n";
      return 1;
    }
    jit = std::move(*compiled);
  }
  RunFn run = [&](ArrayRef<HostTensor> inputs) {
    if (systolic)
      return systolic->run(inputs);
    return artifact ? artifact->run(inputs) : jit->run(inputs);
  };
  const ModelSignature &signature = systolic   ? systolic->getSignature()
                                    : artifact ? artifact->signature()
                                               : jit->signature();
  if (testDir.empty() && inputFiles.empty() && !signature.inputs.empty()) {
    auto random = makeRandomInputs(signature, seed);
    if (!random) {
      WithColor::error(errs(), "tessera-run")
          << toString(random.takeError()) << "\n";
      return 1;
    }
    randomInputs = std::move(*random);
    outs() << "random inputs from seed " << seed << "\n";
  }

  bool ok = true;
  if (!testDir.empty()) {
    std::vector<std::string> sets;
    std::error_code ec;
    for (sys::fs::directory_iterator it(testDir, ec), end; it != end && !ec;
         it.increment(ec))
      if (sys::path::filename(it->path()).starts_with("test_data_set_"))
        sets.push_back(it->path());
    llvm::sort(sets);
    if (sets.empty()) {
      WithColor::error(errs(), "tessera-run")
          << testDir << " has no test_data_set_* folder\n";
      return 1;
    }
    for (const std::string &set : sets)
      ok &= runFiles(run, sys::path::filename(set), numberedFiles(set, "input"),
                     numberedFiles(set, "output"));
  } else {
    ok = runFiles(run, sys::path::filename(model), inputFiles, expectedFiles);
  }
  return ok ? 0 : 1;
}
