//===- SystolicDialect.cpp - the systolic accelerator's program IR --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Dialect/Systolic/IR/SystolicDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::systolic;

#include "tessera/Dialect/Systolic/IR/SystolicDialect.cpp.inc"

void SystolicDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Systolic/IR/SystolicOps.cpp.inc"
      >();
}

LogicalResult TensorOp::verify() {
  StringRef role = getRole();
  if (!llvm::is_contained({"input", "output", "constant", "scratch"}, role))
    return emitOpError("role must be input, output, constant or scratch, "
                       "not '")
           << role << "'";
  StringRef format = getFormat();
  if (!llvm::is_contained({"f32", "bf16", "f16", "f8E4M3FN", "f8E5M2", "i8"},
                          format))
    return emitOpError("unknown format '") << format << "'";
  if (llvm::any_of(getShape(), [](int64_t d) { return d <= 0; }))
    return emitOpError("dims must be positive");
  if ((role == "constant") != getValue().has_value())
    return emitOpError("a constant needs a value, and only a constant has "
                       "one");
  if (auto value = getValue()) {
    int64_t count = 1;
    for (int64_t d : getShape())
      count *= d;
    if (value->getNumElements() != count)
      return emitOpError("value has ")
             << value->getNumElements() << " elements but the shape has "
             << count;
  }
  return success();
}

#define GET_OP_CLASSES
#include "tessera/Dialect/Systolic/IR/SystolicOps.cpp.inc"
