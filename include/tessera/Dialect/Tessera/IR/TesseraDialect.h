//===- TesseraDialect.h - the tessera dialect and its enums ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DIALECT_TESSERA_IR_TESSERADIALECT_H
#define TESSERA_DIALECT_TESSERA_IR_TESSERADIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "tessera/Dialect/Tessera/IR/TesseraDialect.h.inc"
#include "tessera/Dialect/Tessera/IR/TesseraEnums.h.inc"

#include <string>

namespace mlir::tessera {
/// The ONNX node name an op was imported from (the importer's NameLoc,
/// possibly inside a FusedLoc); "" when there is none.
std::string onnxNodeName(Location loc);
} // namespace mlir::tessera

#endif // TESSERA_DIALECT_TESSERA_IR_TESSERADIALECT_H
