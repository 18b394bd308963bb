//===- TesseraTraits.h - op traits of the tessera dialect -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DIALECT_TESSERA_IR_TESSERATRAITS_H
#define TESSERA_DIALECT_TESSERA_IR_TESSERATRAITS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tessera::OpTrait {

/// Runs the op's result-type inference as a verifier, with the op's location,
/// so that a shape error reaches the user with its reason ("shapes [2, 3] and
/// [4] do not broadcast") rather than a bare "failed to infer" from the
/// generic interface check, which runs later and without the message.
template <typename ConcreteOp>
class InferredResultShape
    : public mlir::OpTrait::TraitBase<ConcreteOp, InferredResultShape> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    SmallVector<Type, 1> inferred;
    if (failed(ConcreteOp::inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), inferred)))
      return failure();
    if (!ConcreteOp::isCompatibleReturnTypes(inferred, op->getResultTypes()))
      return op->emitOpError("result type ")
             << op->getResultTypes() << " differs from the inferred type "
             << TypeRange(inferred);
    return success();
  }
};

/// Precision classes (TesseraBase.td): how the precision passes treat an
/// op. They carry no verification; `tessera::precisionClass` reads them.
template <typename ConcreteOp>
class ComputesNarrow
    : public mlir::OpTrait::TraitBase<ConcreteOp, ComputesNarrow> {};
template <typename ConcreteOp>
class FollowsInputs
    : public mlir::OpTrait::TraitBase<ConcreteOp, FollowsInputs> {};
template <typename ConcreteOp>
class ComputesWide : public mlir::OpTrait::TraitBase<ConcreteOp, ComputesWide> {
};
template <typename ConcreteOp>
class MovesData : public mlir::OpTrait::TraitBase<ConcreteOp, MovesData> {};

} // namespace mlir::tessera::OpTrait

#endif // TESSERA_DIALECT_TESSERA_IR_TESSERATRAITS_H
