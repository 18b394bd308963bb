//===- SystolicDialect.h - the systolic accelerator's program IR ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H
#define TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H

#include "tessera/Support/ElementType.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include <optional>

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h.inc"
#include "tessera/Dialect/Systolic/IR/SystolicEnums.h.inc"

#define GET_OP_CLASSES
#include "tessera/Dialect/Systolic/IR/SystolicOps.h.inc"

namespace mlir::systolic {

/// The number format an element type stores (f32, bf16, f16, fp8, i8), or
/// nothing for a type the accelerator does not store.
std::optional<::tessera::ElementType> getNumberFormat(Type type);

/// The element type of a number format.
Type getFormatType(MLIRContext *context, ::tessera::ElementType format);

} // namespace mlir::systolic

#endif // TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H
