//===- CopyStridedResults.cpp - contiguous function results ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_COPYSTRIDEDRESULTSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// Whether the slice's elements lie contiguously in its source: unit
/// strides, every dim after the first one of more than one element taken
/// whole (statically), and that dim's offset the only one that may move.
bool isContiguous(tensor::ExtractSliceOp slice) {
  if (!slice.hasUnitStride())
    return false;
  RankedTensorType source = slice.getSourceType();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  bool cut = false;
  for (int64_t d = 0, rank = source.getRank(); d < rank; ++d) {
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    if (cut) {
      // Inner dims after the outer cut: whole, from 0.
      if (!size || source.isDynamicDim(d) || *size != source.getDimSize(d) ||
          !isConstantIntValue(offsets[d], 0))
        return false;
      continue;
    }
    if (size && *size == 1)
      continue;
    cut = true;
  }
  return true;
}

struct CopyStridedResultsPass
    : tessera::cpu::impl::CopyStridedResultsPassBase<CopyStridedResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice || isContiguous(slice))
          continue;
        operand.set(bufferization::AllocTensorOp::create(
            b, ret.getLoc(), slice.getType(), ValueRange{}, slice.getResult()));
      }
    });
  }
};

} // namespace
