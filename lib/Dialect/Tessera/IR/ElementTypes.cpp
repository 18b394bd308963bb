//===- ElementTypes.cpp - MLIR element types and Tessera's ElementType ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Dialect/Tessera/IR/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using tessera::ElementType;

std::optional<ElementType> tessera::elementTypeOf(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  if (isa<Float8E4M3FNType>(type))
    return ElementType::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ElementType::F8E5M2;
  if (type.isInteger(1))
    return ElementType::Bool;
  if (type.isInteger(8))
    return ElementType::I8;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  return std::nullopt;
}

Type tessera::toMLIRType(ElementType type, MLIRContext *context) {
  Builder b(context);
  switch (type) {
  case ElementType::F32:
    return b.getF32Type();
  case ElementType::F16:
    return b.getF16Type();
  case ElementType::BF16:
    return b.getBF16Type();
  case ElementType::F8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case ElementType::F8E5M2:
    return b.getType<Float8E5M2Type>();
  case ElementType::Bool:
    return b.getI1Type();
  case ElementType::I8:
    return b.getI8Type();
  case ElementType::I32:
    return b.getI32Type();
  case ElementType::I64:
    return b.getI64Type();
  }
  return b.getF32Type();
}
