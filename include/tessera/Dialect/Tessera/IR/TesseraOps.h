//===- TesseraOps.h - the ops of the tessera dialect ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DIALECT_TESSERA_IR_TESSERAOPS_H
#define TESSERA_DIALECT_TESSERA_IR_TESSERAOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tessera/Dialect/Tessera/IR/TesseraTraits.h"
#include "tessera/Dialect/Tessera/IR/TesseraDialect.h"

#define GET_OP_CLASSES
#include "tessera/Dialect/Tessera/IR/TesseraOps.h.inc"

#endif // TESSERA_DIALECT_TESSERA_IR_TESSERAOPS_H
