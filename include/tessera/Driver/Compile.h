//===- Compile.h - whole-model compilation entry points -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DRIVER_COMPILE_H
#define TESSERA_DRIVER_COMPILE_H

#include "tessera/Runtime/CpuJit.h"
#include "tessera/Driver/Pipelines.h"
#include "tessera/Target/CPU/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
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

} // namespace tessera

#endif // TESSERA_DRIVER_COMPILE_H
