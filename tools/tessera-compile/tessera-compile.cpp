//===- tessera-compile.cpp - compiles an ONNX model with Tessera ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Driver/Diagnostics.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/InitTessera.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/ToolOutputFile.h"

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
                       "imported tessera IR), graph (after folding and "
                       "simplification; the default), linalg (lowered for "
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
static cl::opt<bool> verbose("v", cl::init(false),
                             cl::desc("Print how long each phase took"),
                             cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions({&category, &getColorCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessera compiler: reads an ONNX model and compiles it.\n\n"
      "  tessera-compile model.onnx --compile-to=import   print the imported "
      "IR\n");

  std::optional<tessera::CompilePhase> phase =
      tessera::parseCompilePhase(compileTo);
  if (!phase) {
    errs() << "tessera-compile: unknown phase '" << compileTo
           << "' for --compile-to (expected "
           << tessera::compilePhaseNames() << ")\n";
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

  mlir::TimingScope importTiming = root.nest("Import ONNX");
  auto module = tessera::importONNXFile(inputPath, context);
  importTiming.stop();
  if (failed(module))
    return 1;

  mlir::PassManager pm(&context);
  if (failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableTiming(root);
  tessera::buildPipelineUpTo(pm, *phase);
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
