//===- ReshapesToViews.cpp - host-computed reshapes as views --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_RESHAPESTOVIEWSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

/// The values stored into each element of `shape` (a 1-d buffer of static
/// size whose only users are stores at constant indices, reshapes and its
/// deallocation), or failure.
FailureOr<SmallVector<Value>> storedShape(Value shape,
                                          SmallVectorImpl<Operation *> &stores) {
  auto alloc = shape.getDefiningOp<memref::AllocOp>();
  auto type = dyn_cast<MemRefType>(shape.getType());
  if (!alloc || !type || type.getRank() != 1 || !type.hasStaticShape())
    return failure();
  SmallVector<Value> values(type.getDimSize(0));
  for (Operation *user : shape.getUsers()) {
    if (isa<memref::ReshapeOp, memref::DeallocOp>(user))
      continue;
    auto store = dyn_cast<memref::StoreOp>(user);
    if (!store || store.getMemRef() != shape)
      return failure();
    auto index = getConstantIntValue(store.getIndices()[0]);
    if (!index || *index < 0 || *index >= int64_t(values.size()) ||
        values[*index])
      return failure();
    values[*index] = store.getValueToStore();
    stores.push_back(store);
  }
  if (llvm::any_of(values, [](Value v) { return !v; }))
    return failure();
  return values;
}

struct ReshapesToViewsPass
    : tessera::cuda::impl::ReshapesToViewsPassBase<ReshapesToViewsPass> {
  void runOnOperation() override {
    SmallVector<memref::ReshapeOp> reshapes;
    getOperation().walk([&](memref::ReshapeOp r) { reshapes.push_back(r); });
    for (memref::ReshapeOp reshape : reshapes) {
      SmallVector<Operation *> stores;
      Value shape = reshape.getShape();
      auto sizes = storedShape(shape, stores);
      auto resultType = dyn_cast<MemRefType>(reshape.getResult().getType());
      if (failed(sizes) || !resultType || !resultType.getLayout().isIdentity())
        continue;
      // The shape's values must exist where the view is made.
      if (llvm::any_of(*sizes, [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && def->getBlock() == reshape->getBlock() &&
                   !def->isBeforeInBlock(reshape);
          }))
        continue;
      OpBuilder b(reshape);
      Location loc = reshape.getLoc();
      SmallVector<OpFoldResult> foldedSizes, strides(resultType.getRank());
      for (auto [i, v] : llvm::enumerate(*sizes)) {
        Value size = v;
        if (!size.getType().isIndex())
          size = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
        foldedSizes.push_back(resultType.isDynamicDim(i)
                                  ? OpFoldResult(size)
                                  : OpFoldResult(b.getIndexAttr(
                                        resultType.getDimSize(i))));
      }
      // Row-major strides, innermost first: static while the sizes inside
      // are.
      OpFoldResult stride = b.getIndexAttr(1);
      for (int64_t i = resultType.getRank() - 1; i >= 0; --i) {
        strides[i] = stride;
        auto staticStride = getConstantIntValue(stride);
        auto staticSize = getConstantIntValue(foldedSizes[i]);
        if (staticStride && staticSize) {
          stride = b.getIndexAttr(*staticStride * *staticSize);
          continue;
        }
        stride = arith::MulIOp::create(
                     b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                     getValueOrCreateConstantIndexOp(b, loc, foldedSizes[i]))
                     .getResult();
      }
      auto view = memref::ReinterpretCastOp::create(
          b, loc, resultType, reshape.getSource(), b.getIndexAttr(0),
          foldedSizes, strides);
      reshape.getResult().replaceAllUsesWith(view.getResult());
      reshape.erase();
      if (llvm::all_of(shape.getUsers(), [](Operation *user) {
            return isa<memref::StoreOp, memref::DeallocOp>(user);
          })) {
        for (Operation *user : llvm::make_early_inc_range(shape.getUsers()))
          user->erase();
        shape.getDefiningOp()->erase();
      }
    }
  }
};

} // namespace
