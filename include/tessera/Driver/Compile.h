//===- Compile.h - whole-model compilation entry points -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DRIVER_COMPILE_H
#define TESSERA_DRIVER_COMPILE_H

#include "tessera/Driver/Pipelines.h"
#include "tessera/Import/ONNX/ImportONNX.h"
#include "tessera/Runtime/CpuJit.h"
#include "tessera/Sim/Program.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace tessera {

/// A model lowered for the CPU: the LLVM-dialect module and the signature
/// read before lowering.
struct LoweredModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  runtime::ModelSignature signature;
};

/// Imports the ONNX model at `path` and lowers it for the CPU.
/// Diagnostics go to the context's handler; the error says which phase
/// failed.
llvm::Expected<LoweredModel>
lowerONNXForCpu(llvm::StringRef path, mlir::MLIRContext &context,
                const cpu::CPUOptions &options = {},
                const GraphOptions &graph = {});

/// Compiles the ONNX model at `path` for this CPU and loads it in process.
llvm::Expected<std::unique_ptr<runtime::CpuJit>>
compileONNXForCpu(llvm::StringRef path, mlir::MLIRContext &context);

/// Options of the systolic target.
struct SystolicOptions {
  /// The accelerator: a preset (tpu-v1, default, small) or a JSON file.
  std::string accel = "default";
  /// The operand format of float matmuls (bf16, f16, f8E4M3FN, f8E5M2).
  std::string operandFormat = "bf16";
  /// The import's options: symbolic input dims fixed to sizes (the program
  /// runs at those sizes only).
  ONNXImportOptions import;
};

/// Symbolic dims fixed to sizes from `name=size` strings (the tools'
/// `--dim`), or an error naming the malformed one.
llvm::Expected<std::map<std::string, int64_t>>
parseDimValues(llvm::ArrayRef<std::string> dims);

/// Imports the ONNX model at `path` and lowers it to a `systolic.program`
/// (the graph phase without fusion regions, then
/// convert-tessera-to-systolic). `configure` may set up the pass manager
/// (command-line options, timing); the import is timed under `timing`
/// when given. Diagnostics go to the context's handler; the error says
/// which phase failed.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> lowerONNXForSystolic(
    llvm::StringRef path, mlir::MLIRContext &context,
    const SystolicOptions &options,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure =
        nullptr,
    mlir::TimingScope *timing = nullptr);

/// Compiles the ONNX model at `path` into a program for the accelerator
/// `options.accel` (lowerONNXForSystolic, then the emitter).
llvm::Expected<sim::Program>
compileONNXForSystolic(llvm::StringRef path, mlir::MLIRContext &context,
                       const SystolicOptions &options);

} // namespace tessera

#endif // TESSERA_DRIVER_COMPILE_H
