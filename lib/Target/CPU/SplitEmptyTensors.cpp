//===- SplitEmptyTensors.cpp - one tensor.empty per use -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SPLITEMPTYTENSORSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// The tensor that `value` was computed in place of: followed through the
/// destinations of destination-style ops and the shared outputs of
/// scf.forall.
Value writtenInto(Value value) {
  while (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      value = dps.getTiedOpOperand(result)->get();
    else if (auto forall = dyn_cast<scf::ForallOp>(op))
      value = forall.getTiedOpOperand(result)->get();
    else
      break;
  }
  return value;
}

struct SplitEmptyTensorsPass
    : tessera::cpu::impl::SplitEmptyTensorsPassBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        shared.push_back(empty);
    });
    for (tensor::EmptyOp empty : shared) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      // A slice and an insert of the same slice back into the tensor (a
      // part computed in place, as a split contraction's parts are) keep
      // one tensor between them: apart, the insert would be a copy.
      llvm::DenseMap<OpOperand *, OpOperand *> partner;
      for (OpOperand *use : uses) {
        auto insert = dyn_cast<tensor::InsertSliceOp>(use->getOwner());
        if (!insert || use->get() != insert.getDest())
          continue;
        auto slice = writtenInto(insert.getSource())
                         .getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice || slice.getSource() != empty.getResult() ||
            !cast<OffsetSizeAndStrideOpInterface>(insert.getOperation())
                 .isSameAs(slice, [](OpFoldResult a, OpFoldResult b) {
                   return isEqualConstantIntOrValue(a, b);
                 }))
          continue;
        OpOperand *other = &slice.getSourceMutable();
        partner[use] = other;
        partner[other] = use;
      }
      // The first use keeps the original; each other gets a clone next to
      // it (where the original is, so that a use inside a loop does not
      // allocate on every step).
      OpBuilder b(empty);
      b.setInsertionPointAfter(empty);
      llvm::DenseMap<OpOperand *, Value> given;
      given[uses.front()] = empty.getResult();
      if (OpOperand *other = partner.lookup(uses.front()))
        given[other] = empty.getResult();
      for (OpOperand *use : llvm::drop_begin(uses)) {
        Value value = given.lookup(use);
        if (!value) {
          value = b.clone(*empty)->getResult(0);
          if (OpOperand *other = partner.lookup(use))
            given[other] = value;
        }
        use->set(value);
      }
    }
  }
};

} // namespace
