//===- tessera-compile.cpp - compiles an ONNX model with Tessera ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Parses arguments into tessera::CompileOptions and calls the driver; the
// targets, their options, phases and artifacts come from the registry.
//
//===----------------------------------------------------------------------===//
#include "tessera/Driver/Compile.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Driver/PrecisionFlags.h"
#include "tessera/InitTessera.h"
#include "tessera/Target/Target.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <deque>
#include <memory>

using namespace llvm;

static cl::OptionCategory category("tessera-compile options");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::init("-"),
                                       cl::desc("Output file (default: "
                                                "standard output)"),
                                       cl::value_desc("file"),
                                       cl::cat(category));
static cl::opt<bool>
    printWeights("print-weights", cl::init(false),
                 cl::desc("Print weight blobs in full instead of eliding "
                          "those over 64 bytes"),
                 cl::cat(category));
static cl::opt<bool> disableOutput(
    "disable-output", cl::init(false), cl::Hidden,
    cl::desc("Compile but write nothing (for measuring the compiler)"),
    cl::cat(category));
static cl::opt<std::string> fusionReport(
    "fusion-report",
    cl::desc("Write the fusion report to this file: a JSON object whose "
             "'regions' list gives each fused kernel's kind, ops and ONNX "
             "nodes, and whose 'rejected' list gives each candidate not "
             "fused and why"),
    cl::value_desc("file.json"), cl::cat(category));
static cl::opt<std::string>
    dumpGraph("dump-graph",
              cl::desc("Write the fused graph for Graphviz (one node per "
                       "kernel)"),
              cl::value_desc("file.dot"), cl::cat(category));
static cl::opt<bool>
    noFusion("no-fusion", cl::init(false),
             cl::desc("Compile one kernel per op: no fusion regions, and "
                      "attention stays its matmuls and softmax"),
             cl::cat(category));
static tessera::PrecisionFlags precisionFlags(category);
static cl::opt<std::string> precisionReport(
    "precision-report",
    cl::desc("Write the per-op accuracy report of --precision (JSON): for "
             "each matmul, convolution and attention (narrowed or kept "
             "fp32) and each normalization and softmax, by ONNX node, its "
             "error against fp32 on the --report-inputs samples, local (fed "
             "fp32 inputs) and accumulated (in the narrowed program), worst "
             "first; the same as a page to read beside it, FILE.html"),
    cl::value_desc("file.json"), cl::cat(category));
static cl::opt<std::string> reportInputs(
    "report-inputs",
    cl::desc("The samples --precision-report runs: a folder in ONNX's test "
             "layout (default: the --calibrate folder)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("Fix a symbolic input dim to a size, as name=size (repeat "
                  "for more), for targets that compile for fixed sizes; the "
                  "program runs at that size only"),
         cl::value_desc("name=size"), cl::cat(category));
static cl::opt<bool> verbose("v", cl::init(false),
                             cl::desc("Print how long each phase took, "
                                      "the fusion report as text, with "
                                      "--precision a remark for each matmul "
                                      "(its type, or why it stays fp32), "
                                      "and (cpu) how many kernels were "
                                      "compiled once and shared by "
                                      "identical layers, and a remark for "
                                      "each contraction or convolution left "
                                      "on a generic loop nest, and why"),
                             cl::cat(category));

/// The options whose text comes from the target registry, made once the
/// targets are registered (before the command line is parsed).
struct RegistryOptions {
  std::unique_ptr<cl::opt<std::string>> target, compileTo, emit;
  /// Each target's own options, by name (one option for a name several
  /// targets share).
  std::vector<std::pair<std::string, std::unique_ptr<cl::opt<std::string>>>>
      targetOptions;
  std::vector<std::unique_ptr<cl::alias>> aliases;
  /// The help texts: cl::desc and cl::value_desc keep references.
  std::deque<std::string> texts;
  StringRef keep(std::string text) {
    return texts.emplace_back(std::move(text));
  }
};

static RegistryOptions makeRegistryOptions() {
  RegistryOptions r;
  std::string targetHelp = "The hardware to compile for:";
  std::string phases = "import|graph", emits = "mlir";
  std::string phaseHelp = "Stop after this phase and print the IR: import "
                          "(the imported tessera IR), graph (after folding, "
                          "raising composite ops and attention, and fusion "
                          "into kernels)";
  std::string defaults;
  std::string emitHelp = "What to write: mlir (the IR after --compile-to; "
                         "the default)";
  for (const tessera::Target *target : tessera::registeredTargets()) {
    StringRef name = target->name();
    targetHelp += "\n  " + name.str() + ": " + target->description().str();
    defaults += (defaults.empty() ? "" : ", ") +
                target->defaultPrintPhase().str() + " for " + name.str();
    // Names several targets share (linalg, llvm, lib) are listed once.
    auto listed = [](const std::string &list, const std::string &name) {
      return llvm::is_contained(llvm::split(list, '|'), name);
    };
    for (const tessera::TargetPhase &phase : target->phases()) {
      if (!listed(phases, phase.name))
        phases += "|" + phase.name;
      phaseHelp += ", " + phase.name + " (" + name.str() + ": " +
                   phase.description + ")";
    }
    for (const tessera::ArtifactKind &kind : target->artifacts()) {
      if (!listed(emits, kind.name))
        emits += "|" + kind.name;
      emitHelp += ", " + kind.name + " (" + name.str() + ": " +
                  kind.description + ", " + kind.extension + ")";
    }
    for (const tessera::TargetOption &option : target->options()) {
      if (llvm::any_of(r.targetOptions,
                       [&](auto &entry) { return entry.first == option.name; }))
        continue;
      // LLVM registers a global --threads of its own that the tool would
      // accept and ignore; a target's option of the same name replaces it.
      if (cl::Option *existing =
              cl::getRegisteredOptions().lookup(option.name))
        existing->removeArgument();
      auto opt = std::make_unique<cl::opt<std::string>>(
          StringRef(option.name),
          cl::desc(r.keep("For --target=" + name.str() + ": " +
                          option.description)),
          cl::value_desc(option.valueDescription), cl::cat(category));
      if (option.prefix)
        opt->setFormattingFlag(cl::Prefix);
      if (!option.alias.empty())
        r.aliases.push_back(std::make_unique<cl::alias>(
            StringRef(option.alias), cl::desc(r.keep("Alias for --" + option.name)),
            cl::aliasopt(*opt), cl::cat(category)));
      r.targetOptions.emplace_back(option.name, std::move(opt));
    }
  }
  r.target = std::make_unique<cl::opt<std::string>>(
      "target", cl::init(tessera::defaultTargetName().str()),
      cl::desc(r.keep(targetHelp)),
      cl::value_desc(r.keep(tessera::targetNames())), cl::cat(category));
  r.compileTo = std::make_unique<cl::opt<std::string>>(
      "compile-to",
      cl::desc(r.keep(phaseHelp + ". Default: " + defaults)),
      cl::value_desc(r.keep(phases)),
      cl::cat(category));
  r.emit = std::make_unique<cl::opt<std::string>>(
      "emit",
      cl::desc(r.keep(emitHelp +
                      ". Inferred from -o's extension when not given")),
      cl::value_desc(r.keep(emits)), cl::cat(category));
  return r;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  tessera::registerAllTargets();
  RegistryOptions registryOptions = makeRegistryOptions();
  cl::HideUnrelatedOptions({&category, &getColorCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera compiler: reads an ONNX model and compiles it.\n\n"
      "  tessera-compile model.onnx -o model.so          a library for this "
      "CPU\n"
      "  tessera-compile model.onnx --compile-to=import   print the imported "
      "IR\n"
      "  tessera-compile model.onnx --target=systolic -o model.tsp\n\n"
      "MLIR's --mlir-timing, --mlir-print-ir-after-all and the other --mlir-* "
      "options pass through on every path (--help-hidden lists them).\n");

  tessera::CompileOptions options;
  options.target = *registryOptions.target;
  for (auto &[name, opt] : registryOptions.targetOptions)
    if (opt->getNumOccurrences())
      options.targetOptions[name] = *opt;
  options.fuse = !noFusion;
  precisionFlags.apply(options);
  if (std::optional<std::string> misuse = precisionFlags.misuse()) {
    errs() << "tessera-compile: " << *misuse << "\n";
    return 2;
  }
  options.precisionReport = precisionReport;
  options.reportInputs = reportInputs;
  options.fusionReport = fusionReport;
  options.dotGraph = dumpGraph;
  options.printFusionSummary = verbose;
  options.verbose = verbose;
  options.compileTo = *registryOptions.compileTo;
  options.emit = *registryOptions.emit;
  options.output = outputPath;
  options.printWeights = printWeights;
  options.disableOutput = disableOutput;
  auto dimValues = tessera::parseDimValues(dims);
  if (!dimValues) {
    errs() << "tessera-compile: " << toString(dimValues.takeError()) << "\n";
    return 2;
  }
  options.dimValues = std::move(*dimValues);

  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  tessera::DiagnosticPrinter diagnostics(context, errs());
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  if (verbose)
    timing.setEnabled(true);
  mlir::TimingScope root = timing.getRootScope();
  options.timing = &root;
  options.configurePassManager = [&](mlir::PassManager &pm) {
    if (failed(mlir::applyPassManagerCLOptions(pm)))
      return mlir::failure();
    pm.enableTiming(root);
    return mlir::success();
  };
  if (llvm::Error error = tessera::compile(inputPath, context, options)) {
    // A failure the diagnostics have described needs no more words; an
    // error in the options is a usage error.
    if (tessera::isReportedFailure(error))
      return 1;
    bool usage = tessera::isOptionError(error);
    errs() << "tessera-compile: " << toString(std::move(error)) << "\n";
    return usage ? 2 : 1;
  }
  return 0;
}
