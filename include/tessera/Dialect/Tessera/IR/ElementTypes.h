//===- ElementTypes.h - MLIR element types and Tessera's ElementType ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one mapping between MLIR's element types and the ElementType that the
// runtime, the simulator and the C API share (tessera/Support/ElementType.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_TESSERA_IR_ELEMENTTYPES_H
#define TESSERA_DIALECT_TESSERA_IR_ELEMENTTYPES_H

#include "tessera/Support/ElementType.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace tessera {

/// The shared element type of an MLIR element type, or nothing when the
/// runtime cannot pass it.
std::optional<ElementType> elementTypeOf(mlir::Type type);

/// The MLIR element type of `type`.
mlir::Type toMLIRType(ElementType type, mlir::MLIRContext *context);

} // namespace tessera

#endif // TESSERA_DIALECT_TESSERA_IR_ELEMENTTYPES_H
