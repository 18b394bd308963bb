//===- TesseraDialect.cpp - registration of the tessera dialect -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Dialect/Tessera/IR/TesseraDialect.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessera;

#include "tessera/Dialect/Tessera/IR/TesseraDialect.cpp.inc"
#include "tessera/Dialect/Tessera/IR/TesseraEnums.cpp.inc"

void TesseraDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Tessera/IR/TesseraOps.cpp.inc"
      >();
}

Operation *TesseraDialect::materializeConstant(OpBuilder &builder,
                                               Attribute value, Type type,
                                               Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

std::string mlir::tessera::onnxNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = onnxNodeName(inner); !name.empty())
        return name;
  return "";
}
