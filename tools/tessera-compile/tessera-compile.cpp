//===- tessera-compile.cpp - compiles an ONNX model with Tessera ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Conversion/SystolicEmitter.h"
#include "tessera/Driver/Compile.h"
#include "tessera/Driver/Diagnostics.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/InitTessera.h"
#include "tessera/Sim/Config.h"
#include "tessera/Target/CPU/Artifact.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

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
static cl::opt<std::string>
    compileTo("compile-to", cl::init("graph"),
              cl::desc("Stop after this phase and print the IR: import (the "
                       "imported tessera IR), graph (after folding, "
                       "raising composite ops and attention, and fusion "
                       "into kernels; the default), linalg (lowered for "
                       "the CPU, on tensors) or llvm (the LLVM dialect)"),
              cl::value_desc("import|graph|linalg|llvm"), cl::cat(category));
static cl::opt<bool>
    printWeights("print-weights", cl::init(false),
                 cl::desc("Print weight blobs in full instead of eliding "
                          "those over 64 bytes"),
                 cl::cat(category));
static cl::opt<bool> disableOutput(
    "disable-output", cl::init(false), cl::Hidden,
    cl::desc("Compile but write nothing (for measuring the compiler)"),
    cl::cat(category));
static cl::opt<std::string>
    target("target", cl::init("cpu"),
           cl::desc("The hardware to compile for: cpu (this machine's x86 "
                    "CPU) or systolic (Tessera's accelerator model, "
                    "docs/Systolic.md; -o model.tsp writes the program, "
                    "-o - or .mlir the systolic IR); cuda is planned"),
           cl::value_desc("cpu|systolic"), cl::cat(category));
static cl::opt<std::string> emit(
    "emit", cl::init(""),
    cl::desc("What to write: mlir (the IR after --compile-to; the default), "
             "llvm (LLVM IR), asm, obj, or lib (a shared library with the "
             "C ABI the runtime loads). Inferred from -o's extension "
             "(.so, .o, .s, .ll) when not given"),
    cl::value_desc("mlir|llvm|asm|obj|lib"), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::init(3), cl::Prefix,
                                  cl::desc("LLVM optimization level, -O0 to "
                                           "-O3 (default 3)"),
                                  cl::cat(category));
static cl::opt<std::string>
    mcpu("mcpu", cl::init(""),
         cl::desc("LLVM CPU to generate code for (default: this machine's)"),
         cl::value_desc("name"), cl::cat(category));
/// `--threads=N` (and its older spelling `--num-threads`): the OpenMP
/// threads the compiled model uses. LLVM registers a global `--threads`
/// of its own that this tool would otherwise accept and ignore, so the
/// option is made at run time in its place (see main).
static cl::opt<unsigned> &threadsOption() {
  static cl::opt<unsigned> option(
      "threads", cl::init(0),
      cl::desc("OpenMP threads the compiled model uses (default 0: "
               "OMP_NUM_THREADS at run time, else one per core)"),
      cl::value_desc("N"), cl::cat(category));
  static cl::alias alias("num-threads", cl::desc("Alias for --threads"),
                         cl::aliasopt(option), cl::cat(category));
  return option;
}
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
static cl::opt<std::string>
    accel("accel", cl::init("default"),
          cl::desc("For --target=systolic: the accelerator, a preset (tpu-v1, "
                   "default, small) or a JSON configuration file"),
          cl::value_desc("preset|file.json"), cl::cat(category));
static cl::opt<std::string> operandFormat(
    "operand-format", cl::init("bf16"),
    cl::desc("For --target=systolic: the matmul operand format (bf16, f16, "
             "f8E4M3FN, f8E5M2)"),
    cl::cat(category));
static cl::opt<bool> verbose("v", cl::init(false),
                             cl::desc("Print how long each phase took and "
                                      "the fusion report as text"),
                             cl::cat(category));

static tessera::GraphOptions graphOptions() {
  tessera::GraphOptions options;
  options.fuse = !noFusion;
  options.fusionReport = fusionReport;
  options.dotGraph = dumpGraph;
  options.printFusionSummary = verbose;
  return options;
}

static int report(llvm::Error error) {
  errs() << "tessera-compile: " << toString(std::move(error)) << "\n";
  return 1;
}

/// The support archive that artifacts link, installed beside the tools.
static std::string supportArchive() {
  std::string exe = sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&supportArchive));
  SmallString<256> path(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(path, "lib", "libTesseraArtifactSupport.a");
  return std::string(path);
}

static cl::list<std::string>
    dims("dim",
         cl::desc("For --target=systolic: fix a symbolic input dim to a size, "
                  "as name=size (repeat for more); the program runs at that "
                  "size only"),
         cl::value_desc("name=size"), cl::cat(category));

/// The systolic target: the graph phase (without fusion regions), the
/// schedule as a systolic.program, then either that IR (-o -, .mlir) or
/// the .tsp program file.
static int compileForSystolic(mlir::MLIRContext &context,
                              mlir::TimingScope &root) {
  auto dimValues = tessera::parseDimValues(dims);
  if (!dimValues)
    return report(dimValues.takeError());
  tessera::SystolicOptions options;
  options.accel = accel;
  options.operandFormat = operandFormat;
  options.import.dimValues = std::move(*dimValues);
  auto module = tessera::lowerONNXForSystolic(
      inputPath, context, options,
      [&](mlir::PassManager &pm) {
        if (failed(mlir::applyPassManagerCLOptions(pm)))
          return mlir::failure();
        pm.enableTiming(root);
        return mlir::success();
      },
      &root);
  if (!module) {
    // The diagnostics have said what failed.
    consumeError(module.takeError());
    return 1;
  }
  if (disableOutput)
    return 0;
  bool text = outputPath == "-" || StringRef(outputPath).ends_with(".mlir");
  if (text) {
    std::string error;
    auto output = mlir::openOutputFile(outputPath, &error);
    if (!output)
      return report(createStringError(inconvertibleErrorCode(), error));
    mlir::OpPrintingFlags flags;
    if (!printWeights)
      flags.elideLargeElementsAttrs(16);
    (*module)->print(output->os(), flags);
    output->keep();
    return 0;
  }
  auto config = tessera::sim::loadConfig(accel);
  if (auto *error = std::get_if<std::string>(&config))
    return report(createStringError(inconvertibleErrorCode(), *error));
  auto program = tessera::emitSystolicProgram(
      **module, std::get<tessera::sim::AcceleratorConfig>(config));
  if (failed(program))
    return 1;
  std::vector<uint8_t> bytes = tessera::sim::encodeProgram(*program);
  std::error_code ec;
  raw_fd_ostream out(outputPath, ec, sys::fs::OF_None);
  if (ec)
    return report(createStringError(inconvertibleErrorCode(),
                                    "cannot write '" + outputPath +
                                        "': " + ec.message()));
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return 0;
}

/// Compiles the whole way to LLVM IR, assembly, an object or a library.
static int compileToFile(mlir::MLIRContext &context, mlir::TimingScope &root,
                         StringRef kind) {
  mlir::TimingScope lowerTiming = root.nest("Import and lower for the CPU");
  tessera::cpu::CPUOptions cpuOptions;
  cpuOptions.threads = threadsOption();
  auto lowered =
      tessera::lowerONNXForCpu(inputPath, context, cpuOptions, graphOptions());
  lowerTiming.stop();
  if (!lowered)
    return report(lowered.takeError());
  if (failed(tessera::cpu::addArtifactInterface(*lowered->module,
                                                lowered->signature)))
    return 1;
  tessera::cpu::CodegenOptions options;
  options.optLevel = optLevel;
  options.cpu = mcpu;
  auto machine = tessera::cpu::createTargetMachine(options);
  if (!machine)
    return report(machine.takeError());
  mlir::TimingScope llvmTiming = root.nest("LLVM optimization");
  llvm::LLVMContext llvmContext;
  auto llvmModule = tessera::cpu::translateToLLVMIR(
      *lowered->module, llvmContext, **machine, options);
  llvmTiming.stop();
  if (!llvmModule)
    return report(llvmModule.takeError());
  if (disableOutput)
    return 0;
  if (outputPath == "-" && kind != "llvm" && kind != "asm")
    return report(createStringError(inconvertibleErrorCode(),
                                    "--emit=" + kind.str() + " needs -o"));
  mlir::TimingScope codegenTiming = root.nest("Code generation");
  if (kind == "llvm") {
    std::string error;
    auto output = mlir::openOutputFile(outputPath, &error);
    if (!output)
      return report(createStringError(inconvertibleErrorCode(), error));
    (*llvmModule)->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  if (kind != "lib") {
    if (llvm::Error err = tessera::cpu::emitCode(**llvmModule, **machine,
                                                 outputPath, kind == "asm"))
      return report(std::move(err));
    return 0;
  }
  SmallString<128> object;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("tessera-model", "o", object))
    return report(errorCodeToError(ec));
  llvm::FileRemover removeObject(object);
  if (llvm::Error err =
          tessera::cpu::emitCode(**llvmModule, **machine, object, false))
    return report(std::move(err));
  if (llvm::Error err =
          tessera::cpu::linkSharedLibrary(object, outputPath, supportArchive()))
    return report(std::move(err));
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (cl::Option *llvmThreads = cl::getRegisteredOptions().lookup("threads"))
    llvmThreads->removeArgument();
  threadsOption();
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
      "options pass through (--help-hidden lists them).\n");

  std::optional<tessera::CompilePhase> phase =
      tessera::parseCompilePhase(compileTo);
  if (!phase) {
    errs() << "tessera-compile: unknown phase '" << compileTo
           << "' for --compile-to (expected " << tessera::compilePhaseNames()
           << ")\n";
    return 2;
  }

  std::string kind = emit;
  if (kind.empty()) {
    StringRef ext = sys::path::extension(outputPath);
    kind = ext == ".so"   ? "lib"
           : ext == ".o"  ? "obj"
           : ext == ".s"  ? "asm"
           : ext == ".ll" ? "llvm"
                          : "mlir";
  }
  if (!llvm::is_contained({"mlir", "llvm", "asm", "obj", "lib"}, kind)) {
    errs() << "tessera-compile: unknown --emit '" << kind
           << "' (expected mlir|llvm|asm|obj|lib)\n";
    return 2;
  }
  if (target != "cpu" && target != "systolic") {
    errs() << "tessera-compile: target '" << target
           << "' is not available yet (expected cpu or systolic)\n";
    return 2;
  }
  if (optLevel > 3) {
    errs() << "tessera-compile: -O" << optLevel << " is not a level (0-3)\n";
    return 2;
  }

  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  tessera::DiagnosticPrinter diagnostics(context, errs());
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  if (verbose)
    timing.setEnabled(true);
  mlir::TimingScope root = timing.getRootScope();

  if (target == "systolic") {
    if (compileTo.getNumOccurrences() || emit.getNumOccurrences() ||
        !fusionReport.empty() || !dumpGraph.empty())
      return report(createStringError(
          inconvertibleErrorCode(),
          "--compile-to, --emit, --fusion-report and --dump-graph apply to "
          "the cpu target; for --target=systolic, -o model.tsp writes the "
          "program and -o - (or a .mlir file) its IR"));
    return compileForSystolic(context, root);
  }
  if (!dims.empty())
    return report(createStringError(
        inconvertibleErrorCode(),
        "--dim applies to --target=systolic; a CPU model compiles once for "
        "every size"));
  if (kind != "mlir")
    return compileToFile(context, root, kind);

  mlir::TimingScope importTiming = root.nest("Import ONNX");
  auto module = tessera::importONNXFile(inputPath, context);
  importTiming.stop();
  if (failed(module))
    return 1;

  mlir::PassManager pm(&context);
  if (failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableTiming(root);
  if ((!fusionReport.empty() || !dumpGraph.empty()) &&
      *phase < tessera::CompilePhase::Graph)
    return report(createStringError(
        inconvertibleErrorCode(),
        "--fusion-report and --dump-graph need --compile-to=graph or later"));
  tessera::buildPipelineUpTo(pm, *phase, graphOptions());
  if (failed(pm.run(**module)))
    return 1;

  if (disableOutput)
    return 0;
  std::string error;
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    errs() << "tessera-compile: " << error << "\n";
    return 1;
  }
  mlir::OpPrintingFlags flags;
  if (!printWeights)
    flags.elideLargeResourceString(64);
  (*module)->print(output->os(), flags);
  output->keep();
  return 0;
}
