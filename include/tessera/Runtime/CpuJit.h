//===- CpuJit.h - runs a model compiled for the CPU in process ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The in-memory form of a CPU artifact: the LLVM-dialect module is JIT
// compiled and called through its C interface, with inputs and outputs in
// caller-owned host buffers checked against the model's signature.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CPUJIT_H
#define TESSERA_RUNTIME_CPUJIT_H

#include "tessera/Runtime/Invoke.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace tessera::runtime {

/// Reads the signature of the module's entry function while it is still at
/// the tensor level (before bufferization changes its arguments).
llvm::Expected<ModelSignature> readSignature(mlir::ModuleOp module);

class CpuJit {
public:
  ~CpuJit();
  /// JIT-compiles `module`, already lowered to the LLVM dialect.
  static llvm::Expected<std::unique_ptr<CpuJit>>
  create(mlir::ModuleOp module, ModelSignature signature);

  const ModelSignature &signature() const { return sig; }

  /// Runs the model on `inputs` (in signature order). Element types, ranks
  /// and static dims are checked, dynamic dims bound by name (inputs that
  /// share a symbolic dim must agree). Outputs take the shapes the model
  /// computed.
  llvm::Expected<std::vector<HostTensor>>
  run(llvm::ArrayRef<HostTensor> inputs);

private:
  CpuJit(std::unique_ptr<mlir::ExecutionEngine> engine, ModelSignature sig);
  std::unique_ptr<mlir::ExecutionEngine> engine;
  ModelSignature sig;
};

} // namespace tessera::runtime

#endif // TESSERA_RUNTIME_CPUJIT_H
