//===- OpUtils.h - helpers shared by the tessera op implementations -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_DIALECT_TESSERA_IR_OPUTILS_H
#define TESSERA_LIB_DIALECT_TESSERA_IR_OPUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "tessera/Support/ShapeInference.h"

#include <optional>

namespace mlir::tessera {

static_assert(::tessera::kDynamicDim == ShapedType::kDynamic,
              "Tessera's shape helpers and MLIR must agree on unknown dims");

/// Reports a shape-inference failure the way an op verifier would, so that
/// users see which op is wrong: "'tessera.add' op <message>".
inline LogicalResult emitInferError(std::optional<Location> loc,
                                    StringRef opName, const Twine &message) {
  return emitOptionalError(loc, "'", opName, "' op ", message);
}

/// Same as above for an llvm::Error produced by the shape helpers.
inline LogicalResult emitInferError(std::optional<Location> loc,
                                    StringRef opName, llvm::Error error) {
  return emitInferError(loc, opName, llvm::toString(std::move(error)));
}

inline RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks that every axis is within [-rank, rank) and none repeats; returns
/// them normalized to [0, rank).
FailureOr<SmallVector<int64_t>> normalizeAxes(std::optional<Location> loc,
                                              StringRef opName,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank);

/// Whether `from` and `to` differ only by dimensions of size 1 (squeeze and
/// unsqueeze), so that their other dims correspond one to one.
inline bool onlyUnitDimsChange(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  auto nonUnit = [](ArrayRef<int64_t> shape) {
    return llvm::to_vector(
        llvm::make_filter_range(shape, [](int64_t d) { return d != 1; }));
  };
  return nonUnit(from) == nonUnit(to);
}

} // namespace mlir::tessera

#endif // TESSERA_LIB_DIALECT_TESSERA_IR_OPUTILS_H
