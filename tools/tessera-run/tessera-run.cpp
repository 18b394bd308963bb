//===- tessera-run.cpp - runs a model and compares its outputs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Opens any registered artifact kind (or compiles an ONNX model in process
// for a registered target) as a runtime Executable, runs it, and judges
// its outputs with the shared comparison rule.
//
//===----------------------------------------------------------------------===//
#include "tessera/Driver/Compile.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/Driver/PrecisionFlags.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/InitTessera.h"
#include "tessera/Runtime/Compare.h"
#include "tessera/Runtime/Executable.h"
#include "tessera/Runtime/HostTensor.h"
#include "tessera/Runtime/TensorIO.h"
#include "tessera/Target/Target.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <deque>
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
              cl::desc("[model.onnx | an artifact: model.so from "
                       "tessera-compile, program.tsp for the systolic "
                       "simulator, ...]"),
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
static cl::opt<double> maxRelativeL2(
    "max-rel-l2", cl::init(0.0),
    cl::desc("Also require each output's relative L2 error, ||actual - "
             "expected|| / ||expected||, to be at most this (e.g. 0.01 for "
             "--precision=bf16)"),
    cl::value_desc("E"), cl::cat(category));
static tessera::PrecisionFlags precisionFlags(category);
static cl::opt<unsigned>
    seed("seed", cl::init(0),
         cl::desc("Without --input, run on random inputs from this seed "
                  "(floats in [-1, 1], integers in [0, 10))"),
         cl::cat(category));
static cl::opt<unsigned>
    benchmark("benchmark", cl::init(0),
              cl::desc("Run N more times after a warm-up and print the "
                       "minimum and median latency (host to host, copies "
                       "included); on a GPU also the kernels' time by its "
                       "own clock (CUDA events)"),
              cl::value_desc("N"), cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("For a target that compiles for fixed sizes: fix a "
                  "symbolic input dim of the ONNX model to a size, as "
                  "name=size (repeatable); with --test-dir and no --dim, "
                  "each test set's inputs fix them"),
         cl::value_desc("name=size"), cl::cat(category));

/// --target, the artifact loaders' options and the targets' own options
/// (for compiling an ONNX model in process), whose text comes from the
/// registries.
struct RegistryOptions {
  std::unique_ptr<cl::opt<std::string>> target;
  std::vector<std::pair<std::string, std::unique_ptr<cl::opt<std::string>>>>
      loaderOptions;
  /// The names among them that only a compile takes (no loader does).
  llvm::StringSet<> compileOnly;
  std::vector<std::unique_ptr<cl::alias>> aliases;
  /// The help texts: cl::desc and cl::value_desc keep references.
  std::deque<std::string> texts;
  StringRef keep(std::string text) {
    return texts.emplace_back(std::move(text));
  }
};

static RegistryOptions makeRegistryOptions() {
  RegistryOptions r;
  std::string help = "The target an ONNX model is compiled for in process "
                     "(default cpu); an artifact runs where it was compiled "
                     "for:";
  for (const tessera::Target *target : tessera::registeredTargets())
    help += "\n  " + target->name().str() + ": " +
            target->description().str();
  r.target = std::make_unique<cl::opt<std::string>>(
      "target", cl::desc(r.keep(help)),
      cl::value_desc(r.keep(tessera::targetNames())),
      cl::cat(category));
  for (const ExecutableLoader *loader : registeredLoaders())
    for (const LoaderOption &option : loader->options) {
      if (llvm::any_of(r.loaderOptions,
                       [&](auto &entry) { return entry.first == option.name; }))
        continue;
      r.loaderOptions.emplace_back(
          option.name, std::make_unique<cl::opt<std::string>>(
                           StringRef(option.name), cl::desc(option.description),
                           cl::value_desc(option.valueDescription),
                           cl::cat(category)));
    }
  for (const tessera::Target *target : tessera::registeredTargets())
    for (const tessera::TargetOption &option : target->options()) {
      if (llvm::any_of(r.loaderOptions,
                       [&](auto &entry) { return entry.first == option.name; }))
        continue;
      // LLVM's global --threads would be accepted and ignored; the CPU
      // target's replaces it. Another name the tool already has stays the
      // tool's.
      if (cl::Option *existing =
              cl::getRegisteredOptions().lookup(option.name)) {
        if (option.name != "threads")
          continue;
        existing->removeArgument();
      }
      if (!option.alias.empty() &&
          cl::getRegisteredOptions().lookup(option.alias))
        continue;
      auto opt = std::make_unique<cl::opt<std::string>>(
          StringRef(option.name),
          cl::desc(r.keep("For --target=" + target->name().str() +
                          ", when an ONNX model is compiled: " +
                          option.description)),
          cl::value_desc(option.valueDescription), cl::cat(category));
      if (option.prefix)
        opt->setFormattingFlag(cl::Prefix);
      if (!option.alias.empty())
        r.aliases.push_back(std::make_unique<cl::alias>(
            StringRef(option.alias),
            cl::desc(r.keep("Alias for --" + option.name)),
            cl::aliasopt(*opt), cl::cat(category)));
      r.compileOnly.insert(option.name);
      r.loaderOptions.emplace_back(option.name, std::move(opt));
    }
  return r;
}

/// The tolerances of the command line.
static Tolerances tolerances() {
  Tolerances t;
  t.rtol = relTolerance;
  t.atol = absTolerance;
  t.maxErrorRatio = errorRatio;
  t.minCosine = minCosine;
  t.maxRelativeL2 = maxRelativeL2;
  return t;
}

/// The sizes of the symbolic dims of a model's inputs (`params`, as
/// readONNXInputDimParams gives them) in `inputs`; an error names a dim
/// two inputs give different sizes.
static llvm::Expected<std::map<std::string, int64_t>>
symbolicDimSizes(const std::vector<std::vector<std::string>> &params,
                 const std::vector<HostTensor> &inputs) {
  std::map<std::string, int64_t> sizes;
  for (size_t i = 0; i < params.size() && i < inputs.size(); ++i)
    for (size_t d = 0; d < params[i].size(); ++d) {
      const std::string &name = params[i][d];
      if (name.empty())
        continue;
      if (d >= inputs[i].shape.size())
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "input " + std::to_string(i) + " has rank " +
                std::to_string(inputs[i].shape.size()) + ", the model " +
                std::to_string(params[i].size()));
      int64_t size = inputs[i].shape[d];
      auto [it, added] = sizes.try_emplace(name, size);
      if (!added && it->second != size)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "dim '" + name + "' is " + std::to_string(it->second) +
                " in one input and " + std::to_string(size) + " in input " +
                std::to_string(i));
    }
  return sizes;
}

/// Runs one set of inputs, compares with `expected` (when given), prints
/// the worst error per output; false on a mismatch.
static bool runCase(Executable &model, StringRef label,
                    const std::vector<HostTensor> &inputs,
                    const std::vector<HostTensor> &expected) {
  auto outputs = model.run(inputs);
  if (!outputs) {
    WithColor::error(errs(), "tessera-run")
        << label << ": " << toString(outputs.takeError()) << "\n";
    return false;
  }
  if (std::string summary = model.lastRunSummary(); !summary.empty())
    outs() << summary << "\n";
  // The counts --saturation-counts added are no model outputs: printed
  // apart, never compared.
  auto isCount = [](const HostTensor &out) {
    return StringRef(out.name).starts_with(kSaturationOutputPrefix);
  };
  for (const HostTensor &out : *outputs) {
    if (!isCount(out))
      continue;
    int64_t saturated = out.numElements() == 2 ? int64_t(out.at(0)) : -1;
    int64_t total = out.numElements() == 2 ? int64_t(out.at(1)) : -1;
    outs() << label << ": saturated '"
           << StringRef(out.name).drop_front(strlen(kSaturationOutputPrefix))
           << "': " << saturated << " of " << total << " values ("
           << format("%.4g", total > 0 ? 100.0 * saturated / total : 0.0)
           << "%)\n";
  }
  llvm::erase_if(*outputs, isCount);
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
    Verdict verdict = judgeOutput(out, expected[i], tolerances());
    outs() << describeVerdict(verdict, tolerances()) << "\n";
    ok &= verdict.ok;
  }
  return ok;
}

/// Times --benchmark runs after a warm-up; a run that fails stops it
/// (the failure was reported by the run before it), and no latency is
/// printed: the time of a run that did not compute is no latency.
static bool runBenchmark(Executable &model,
                         const std::vector<HostTensor> &inputs) {
  if (auto warmup = model.run(inputs); !warmup) {
    consumeError(warmup.takeError());
    return false;
  }
  std::vector<double> ms, deviceMs;
  for (unsigned i = 0; i < benchmark; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto out = model.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (std::optional<double> device = model.lastRunDeviceMilliseconds())
      deviceMs.push_back(*device);
    if (!out) {
      WithColor::error(errs(), "tessera-run")
          << "benchmark run " << i + 1 << ": " << toString(out.takeError())
          << "\n";
      return false;
    }
  }
  llvm::sort(ms);
  outs() << format("latency over %u runs: min %.3f ms, median %.3f ms\n",
                   benchmark.getValue(), ms.front(), ms[ms.size() / 2]);
  // The device's clock times the kernels alone (no copies to and from the
  // host), where it has one.
  if (deviceMs.size() == ms.size()) {
    llvm::sort(deviceMs);
    outs() << format("device time over %u runs: min %.3f ms, median %.3f ms "
                     "(kernels, by the device's clock)\n",
                     benchmark.getValue(), deviceMs.front(),
                     deviceMs[deviceMs.size() / 2]);
  } else if (model.hasDeviceMemory()) {
    outs() << "device time: not measured (" << model.device()
           << " has no clock of its own)\n";
  }
  return true;
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
static bool runFiles(Executable &model, StringRef label,
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
  if (benchmark && !runBenchmark(model, *inputs))
    ok = false;
  return ok;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  tessera::registerAllTargets();
  registerAllExecutableLoaders();
  RegistryOptions registryOptions = makeRegistryOptions();
  cl::HideUnrelatedOptions({&category, &getColorCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera runner: compiles an ONNX model in process for a target (this "
      "CPU by default, --target to choose) or opens a compiled artifact (a "
      ".so for this CPU, a systolic .tsp program for the simulator), runs "
      "it and compares its outputs.\n\n"
      "  tessera-run model.onnx --input=in0.pb --expected=out0.pb\n"
      "  tessera-run --test-dir=DIR [--target=" +
          tessera::targetNames() + "]\n");
  // With --test-dir, the folder's model.onnx unless a model (a compiled
  // artifact) is given too.
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
  auto usage = [](const Twine &message) {
    WithColor::error(errs(), "tessera-run") << message << "\n";
    return 2;
  };

  LoadOptions loadOptions;
  for (auto &[name, opt] : registryOptions.loaderOptions)
    if (opt->getNumOccurrences())
      loadOptions[name] = *opt;
  std::string targetName = *registryOptions.target;

  // An artifact runs as it is; an ONNX model is compiled in process.
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  tessera::DiagnosticPrinter diagnostics(context, errs());
  std::unique_ptr<Executable> executable;
  if (const ExecutableLoader *loader = findLoaderForPath(model)) {
    if (!targetName.empty()) {
      const tessera::Target *target = tessera::lookupTarget(targetName);
      bool writes = target && llvm::any_of(target->artifacts(),
                                           [&](const tessera::ArtifactKind &k) {
                                             return k.extension ==
                                                    loader->extension;
                                           });
      if (!writes)
        return usage(model + " is a " + loader->kind + " artifact; --target=" +
                     targetName + " compiles an ONNX model");
    }
    if (!dims.empty())
      return usage("--dim applies when an ONNX model is compiled; " + model +
                   " is compiled already");
    for (const auto &[name, value] : loadOptions)
      if (registryOptions.compileOnly.contains(name))
        return usage("--" + name + " applies when an ONNX model is compiled; " +
                     model + " is compiled already");
    if (precisionFlags.given())
      return usage("--precision and the options of the precision policies "
                   "apply when an ONNX model is compiled; " + model +
                   " is compiled already");
    auto loaded = loadExecutable(model, loadOptions);
    if (!loaded) {
      WithColor::error(errs(), "tessera-run")
          << toString(loaded.takeError()) << "\n";
      return 1;
    }
    executable = std::move(*loaded);
  } else {
    tessera::CompileOptions options;
    options.target = targetName.empty() ? tessera::defaultTargetName().str()
                                        : targetName;
    // A loader option the target also declares (the accelerator) applies
    // to the compile as well; one that neither the target nor the loader
    // of its artifacts takes is an error, not ignored.
    if (const tessera::Target *target = tessera::lookupTarget(options.target)) {
      for (const auto &[name, value] : loadOptions) {
        bool compiles = llvm::any_of(
            target->options(),
            [&](const tessera::TargetOption &o) { return o.name == name; });
        bool runs = llvm::any_of(
            target->artifacts(), [&](const tessera::ArtifactKind &kind) {
              const ExecutableLoader *loader =
                  findLoaderForPath("model" + kind.extension);
              for (const ExecutableLoader *candidate : registeredLoaders())
                if (candidate->kind == kind.loaderKind)
                  loader = candidate;
              return loader &&
                     llvm::any_of(loader->options, [&](const LoaderOption &o) {
                       return o.name == name;
                     });
            });
        if (compiles)
          options.targetOptions[name] = value;
        if (!compiles && !runs)
          return usage("--" + name + " does not apply to --target=" +
                       options.target);
      }
    }
    auto dimValues = tessera::parseDimValues(dims);
    if (!dimValues)
      return usage(toString(dimValues.takeError()));
    options.dimValues = std::move(*dimValues);
    precisionFlags.apply(options);
    if (std::optional<std::string> misuse = precisionFlags.misuse())
      return usage(*misuse);
    // Compiles in process into `out`; the exit status on failure (2 for
    // an error in the options), else 0.
    auto compileModel = [&](const tessera::CompileOptions &compile,
                            std::unique_ptr<Executable> &out) -> int {
      auto compiled =
          tessera::compileAndLoad(model, context, compile, loadOptions);
      if (!compiled) {
        llvm::Error error = compiled.takeError();
        if (tessera::isOptionError(error))
          return usage(toString(std::move(error)));
        WithColor::error(errs(), "tessera-run")
            << model << ": " << toString(std::move(error)) << "\n";
        return 1;
      }
      out = std::move(*compiled);
      return 0;
    };
    // A target that compiles for fixed sizes takes the sizes of a test
    // folder's symbolic dims from each test set's inputs: one compile per
    // distinct set of sizes (--dim compiles once, ahead of time).
    const tessera::Target *target = tessera::lookupTarget(options.target);
    if (target && target->needsStaticShapes() && !testDir.empty() &&
        options.dimValues.empty()) {
      auto params = tessera::readONNXInputDimParams(model);
      if (!params) {
        WithColor::error(errs(), "tessera-run")
            << toString(params.takeError()) << "\n";
        return 1;
      }
      if (llvm::any_of(*params, [](const std::vector<std::string> &dims) {
            return llvm::any_of(dims,
                                [](const std::string &d) { return !d.empty(); });
          })) {
        std::vector<std::string> sets = testDataSets(testDir);
        if (sets.empty()) {
          WithColor::error(errs(), "tessera-run")
              << testDir << " has no test_data_set_* folder\n";
          return 1;
        }
        std::map<std::map<std::string, int64_t>, std::unique_ptr<Executable>>
            bySizes;
        bool ok = true;
        for (const std::string &set : sets) {
          StringRef label = sys::path::filename(set);
          std::vector<std::string> inputs = testDataFiles(set, "input");
          auto tensors = readTensorFiles(inputs);
          llvm::Expected<std::map<std::string, int64_t>> sizes =
              tensors ? symbolicDimSizes(*params, *tensors)
                      : llvm::Expected<std::map<std::string, int64_t>>(
                            tensors.takeError());
          if (!sizes) {
            WithColor::error(errs(), "tessera-run")
                << label << ": " << toString(sizes.takeError()) << "\n";
            ok = false;
            continue;
          }
          std::unique_ptr<Executable> &executable = bySizes[*sizes];
          if (!executable) {
            std::string fixed;
            for (const auto &[name, size] : *sizes)
              fixed += (fixed.empty() ? "" : ", ") + name + "=" +
                       std::to_string(size);
            outs() << "compiled for " << fixed << " (from " << label
                   << ")\n";
            options.dimValues = *sizes;
            if (int status = compileModel(options, executable))
              return status;
          }
          ok &= runFiles(*executable, label, inputs,
                         testDataFiles(set, "output"));
        }
        return ok ? 0 : 1;
      }
    }
    if (int status = compileModel(options, executable))
      return status;
  }
  const ModelSignature &signature = executable->signature();
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
    std::vector<std::string> sets = testDataSets(testDir);
    if (sets.empty()) {
      WithColor::error(errs(), "tessera-run")
          << testDir << " has no test_data_set_* folder\n";
      return 1;
    }
    for (const std::string &set : sets)
      ok &= runFiles(*executable, sys::path::filename(set),
                     testDataFiles(set, "input"), testDataFiles(set, "output"));
  } else {
    ok = runFiles(*executable, sys::path::filename(model), inputFiles,
                  expectedFiles);
  }
  return ok ? 0 : 1;
}
