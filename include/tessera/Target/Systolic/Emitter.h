//===- Emitter.h - systolic programs between IR and instructions ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_SYSTOLIC_EMITTER_H
#define TESSERA_TARGET_SYSTOLIC_EMITTER_H

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"
#include "tessera/Sim/Program.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <vector>

namespace tessera {

/// The f32 values of a constant (dense or dense_resource), or nothing.
std::optional<std::vector<float>> floatValues(mlir::ElementsAttr value);

/// The systolic op for one instruction.
mlir::Operation *buildInstructionOp(mlir::OpBuilder &builder,
                                    mlir::Location loc,
                                    const sim::Instruction &instruction);

/// The module's systolic.program as a program (constants written into the
/// DRAM image in their formats), validated against `config`; errors are
/// reported at the program's location.
mlir::FailureOr<sim::Program>
emitSystolicProgram(mlir::ModuleOp module,
                    const sim::AcceleratorConfig &config);

} // namespace tessera

#endif // TESSERA_TARGET_SYSTOLIC_EMITTER_H
