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

namespace mlir::tessera {
/// `x direction y`, as tessera.compare computes it (false for a NaN but
/// for ne).
template <typename T>
bool compareValues(CompareDirection direction, T x, T y) {
  switch (direction) {
  case CompareDirection::eq:
    return x == y;
  case CompareDirection::ne:
    return x != y;
  case CompareDirection::lt:
    return x < y;
  case CompareDirection::le:
    return x <= y;
  case CompareDirection::gt:
    return x > y;
  case CompareDirection::ge:
    return x >= y;
  }
  return false;
}
} // namespace mlir::tessera

#endif // TESSERA_DIALECT_TESSERA_IR_TESSERAOPS_H
