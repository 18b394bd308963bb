//===- Matchers.h - helpers of the graph passes ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_TRANSFORMS_MATCHERS_H
#define TESSERA_LIB_TRANSFORMS_MATCHERS_H

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>

namespace tessera {

/// The module's entry: its first public function with a body (null when
/// it has none).
mlir::func::FuncOp entryFunction(mlir::ModuleOp module);

/// Appends `results` to `entry`'s results, each named (its `tessera.name`
/// result attribute) by its string: the extra outputs of calibration and
/// of saturation counts.
llvm::LogicalResult
appendNamedResults(mlir::func::FuncOp entry,
                   llvm::ArrayRef<std::pair<std::string, mlir::Value>> results);

/// The value of every element of a float constant whose elements are all
/// equal (a splat or a one-element tensor).
std::optional<double> splatValue(mlir::Value value);

/// The elements of an f32 constant (dense or dense_resource) in row-major
/// order, or nothing when `value` is not one.
std::optional<llvm::SmallVector<float>> floatElements(mlir::Value value);

/// The largest finite |value| of a float constant, or nothing when `value`
/// is not an f32 constant the compiler can read.
std::optional<float> largestFiniteMagnitude(mlir::Value value);

/// Whether `value` is such a constant within `relative` of `expected`.
bool isSplat(mlir::Value value, double expected, double relative = 1e-4);

/// Whether `value` has exactly one use.
bool hasOneUse(mlir::Value value);

/// The factors of a product: `value` itself, or, when it is a tessera.mul
/// (and, below the root, used only once), the factors of its operands.
/// The muls walked are added to `ops`. Fails beyond `limit` factors.
bool collectFactors(mlir::Value value,
                    llvm::SmallVectorImpl<mlir::Value> &factors,
                    llvm::SmallVectorImpl<mlir::Operation *> &ops,
                    unsigned limit = 5);

/// Removes the first factor equal to `value`; false when there is none.
bool takeFactor(llvm::SmallVectorImpl<mlir::Value> &factors, mlir::Value value);

/// Removes the first factor that is a splat close to `expected`.
bool takeSplatFactor(llvm::SmallVectorImpl<mlir::Value> &factors,
                     double expected);

/// For a commutative binary op: the operand other than one satisfying
/// `isFirst` (tried on both), as (first, other).
template <typename OpTy, typename Predicate>
std::optional<std::pair<mlir::Value, mlir::Value>>
matchCommutative(mlir::Value value, Predicate isFirst) {
  auto op = value.getDefiningOp<OpTy>();
  if (!op)
    return std::nullopt;
  if (isFirst(op.getLhs()))
    return std::make_pair(op.getLhs(), op.getRhs());
  if (isFirst(op.getRhs()))
    return std::make_pair(op.getRhs(), op.getLhs());
  return std::nullopt;
}

/// Whether `op` reduces only the last axis of its input and keeps it.
bool reducesLastAxis(mlir::tessera::ReduceMeanOp op);

/// Whether `value` is `base` squared: pow(base, 2) or base * base.
bool isSquareOf(mlir::Value value, mlir::Value base);

/// Whether `value` has the same type as `reference` (no broadcast added).
bool sameType(mlir::Value value, mlir::Value reference);

/// Whether `mask`, built at run time from the sequence length of the
/// queries `q` (a range-built Trilu, a tril buffer gathered by ranges), is
/// causal on the square scores it is added to: 0 where key j <= query i and
/// at most `maskedAtMost` elsewhere; with `keepOn`, whether a select's
/// condition keeps exactly those positions where it is `keepOn`
/// (SymbolicCausal.cpp).
bool isSymbolicCausal(mlir::Value mask, mlir::Value q,
                      std::optional<bool> keepOn, double maskedAtMost);

} // namespace tessera

#endif // TESSERA_LIB_TRANSFORMS_MATCHERS_H
