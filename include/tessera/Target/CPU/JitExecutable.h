//===- JitExecutable.h - a model compiled for the CPU in process ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The in-memory form of a CPU artifact: the LLVM-dialect module is JIT
// compiled and called through its C interface, with inputs and outputs in
// host buffers checked against the signature the compiler recorded.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CPU_JITEXECUTABLE_H
#define TESSERA_TARGET_CPU_JITEXECUTABLE_H

#include "tessera/Runtime/Executable.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace tessera::cpu {

class JitExecutable : public runtime::Executable {
public:
  ~JitExecutable() override;
  /// JIT-compiles `module`, lowered to the LLVM dialect with its signature
  /// recorded (tessera-record-signature).
  static llvm::Expected<std::unique_ptr<JitExecutable>>
  create(mlir::ModuleOp module);

  const runtime::ModelSignature &signature() const override { return sig; }

  /// Runs the model on `inputs` (in signature order). Element types, ranks
  /// and static dims are checked, dynamic dims bound by name (inputs that
  /// share a symbolic dim must agree). Outputs take the shapes the model
  /// computed.
  llvm::Expected<std::vector<runtime::HostTensor>>
  run(llvm::ArrayRef<runtime::HostTensor> inputs) override;

  std::string device() const override { return "host CPU (in process)"; }

private:
  JitExecutable(std::unique_ptr<mlir::ExecutionEngine> engine,
                runtime::ModelSignature sig);
  std::unique_ptr<mlir::ExecutionEngine> engine;
  runtime::ModelSignature sig;
};

} // namespace tessera::cpu

#endif // TESSERA_TARGET_CPU_JITEXECUTABLE_H
