//===- Compile.h - whole-model compilation entry points -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DRIVER_COMPILE_H
#define TESSERA_DRIVER_COMPILE_H

#include "tessera/Runtime/CpuJit.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

namespace tessera {

/// Imports the ONNX model at `path`, compiles it for this CPU and loads it
/// in process. Diagnostics go to the context's handler; the error says
/// which phase failed.
llvm::Expected<std::unique_ptr<runtime::CpuJit>>
compileONNXForCpu(llvm::StringRef path, mlir::MLIRContext &context);

} // namespace tessera

#endif // TESSERA_DRIVER_COMPILE_H
