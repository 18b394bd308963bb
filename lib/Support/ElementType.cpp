//===- ElementType.cpp - the element types every layer shares -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Support/ElementType.h"

using namespace tessera;

llvm::ArrayRef<ElementType> tessera::allElementTypes() {
  static const ElementType kTypes[] = {
      ElementType::F32,  ElementType::F16,      ElementType::BF16,
      ElementType::I8,   ElementType::I32,      ElementType::I64,
      ElementType::Bool, ElementType::F8E4M3FN, ElementType::F8E5M2};
  return kTypes;
}

std::optional<uint64_t> tessera::denseByteSize(llvm::ArrayRef<int64_t> shape,
                                               ElementType type) {
  // The non-zero dims must multiply within range even when another dim is
  // zero: strides and element counts are products of them.
  bool empty = false;
  int64_t bytes = static_cast<int64_t>(elementSize(type));
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
    if (d && __builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  }
  return empty ? 0 : static_cast<uint64_t>(bytes);
}

size_t tessera::elementSize(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I8:
  case ElementType::Bool:
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return 1;
  case ElementType::I64:
    return 8;
  }
  return 4;
}

llvm::StringRef tessera::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I8:
    return "i8";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::Bool:
    return "i1";
  case ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ElementType::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

std::optional<ElementType> tessera::parseElementType(llvm::StringRef name) {
  if (name == "bool")
    return ElementType::Bool;
  for (ElementType type : allElementTypes())
    if (name == elementTypeName(type))
      return type;
  return std::nullopt;
}

bool tessera::isFloat(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
    return true;
  default:
    return false;
  }
}

std::optional<ElementType> tessera::elementTypeFromValue(int64_t value) {
  for (ElementType type : allElementTypes())
    if (static_cast<int64_t>(type) == value)
      return type;
  return std::nullopt;
}
