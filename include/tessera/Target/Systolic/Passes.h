//===- Passes.h - passes of the systolic backend --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_SYSTOLIC_PASSES_H
#define TESSERA_TARGET_SYSTOLIC_PASSES_H

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"

#include "tessera/Sim/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace tessera {

#define GEN_PASS_DECL
#include "tessera/Target/Systolic/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Target/Systolic/Passes.h.inc"

/// The lowering for an accelerator the caller already loaded (`accel`
/// then only names it); a null `config` loads `options.accel`.
std::unique_ptr<mlir::Pass> createConvertTesseraToSystolicPass(
    const ConvertTesseraToSystolicPassOptions &options,
    std::shared_ptr<const sim::AcceleratorConfig> config);

namespace systolic {

/// Options of the lowering from the graph phase to a systolic.program.
struct LoweringOptions {
  /// The accelerator, loaded once by the caller; the lowering, the emitter
  /// and the runtime share it.
  std::shared_ptr<const sim::AcceleratorConfig> config;
  /// Its name as the user gave it (a preset or a JSON file); the program
  /// records the configuration's own name.
  std::string accel = "default";
  /// The format of the matmuls and convolutions the precision policy
  /// leaves f32 (the array has no f32 operands): f16 under
  /// --precision=fp16, else bf16 (tessera-systolic-operand-formats).
  std::string operandFormat = "bf16";
};

/// Adds the passes that turn graph-phase tessera IR into a
/// systolic.program (the `program` phase of the systolic target).
void buildLoweringPipeline(mlir::OpPassManager &pm,
                           const LoweringOptions &options);

} // namespace systolic
} // namespace tessera

#endif // TESSERA_TARGET_SYSTOLIC_PASSES_H
