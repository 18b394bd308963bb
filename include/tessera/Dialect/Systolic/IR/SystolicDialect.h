//===- SystolicDialect.h - the systolic accelerator's program IR ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H
#define TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "tessera/Dialect/Systolic/IR/SystolicDialect.h.inc"

#define GET_OP_CLASSES
#include "tessera/Dialect/Systolic/IR/SystolicOps.h.inc"

#endif // TESSERA_DIALECT_SYSTOLIC_IR_SYSTOLICDIALECT_H
