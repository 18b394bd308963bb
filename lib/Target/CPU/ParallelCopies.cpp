//===- ParallelCopies.cpp - strided buffer copies on every thread ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_PARALLELCOPIESPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// Elements a row step moves: one AVX-512 register of f32.
constexpr int64_t kLanes = 16;

/// Whether the memref lowering copies `type` with one memcpy.
bool isContiguous(MemRefType type) {
  return type.getLayout().isIdentity() ||
         (type.hasStaticShape() && type.getNumElements() > 0 &&
          memref::isStaticShapeAndContiguousRowMajor(type));
}

/// Whether `type`'s last dim has a unit stride, known at compile time.
bool hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// Whether `copy` is one this pass rewrites (see the pass description).
bool isStridedRowCopy(memref::CopyOp copy) {
  auto source = dyn_cast<MemRefType>(copy.getSource().getType());
  auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
  if (!source || !target || source.getRank() < 2 ||
      (isContiguous(source) && isContiguous(target)) ||
      !hasUnitInnerStride(source) || !hasUnitInnerStride(target))
    return false;
  // Memory holds i1 as bytes, vectors as bits (and pads i24 or f80 where
  // vectors pack them).
  Type element = source.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8 ||
      !llvm::isPowerOf2_32(element.getIntOrFloatBitWidth()))
    return false;
  return !copy->getParentOfType<LoopLikeOpInterface>();
}

/// `copy` as a parallel loop over its rows, each moved in masked vector
/// steps.
void rewriteCopy(memref::CopyOp copy) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  Value source = copy.getSource(), target = copy.getTarget();
  auto type = cast<MemRefType>(source.getType());
  int64_t rank = type.getRank();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(getValueOrCreateConstantIndexOp(
        b, loc, memref::getMixedSize(b, loc, source, d)));
  SmallVector<Value> lower(rank - 1, zero), steps(rank - 1, one);
  Value width = sizes.back();
  Type element = type.getElementType();
  scf::ParallelOp::create(
      b, loc, lower, ArrayRef(sizes).drop_back(), steps,
      [&](OpBuilder &pb, Location ploc, ValueRange rows) {
        Value lanes = arith::ConstantIndexOp::create(pb, ploc, kLanes);
        Value padding =
            arith::ConstantOp::create(pb, ploc, pb.getZeroAttr(element));
        scf::ForOp::create(
            pb, ploc, zero, width, lanes, ValueRange{},
            [&](OpBuilder &fb, Location floc, Value column, ValueRange) {
              AffineExpr d0, s0;
              bindDims(fb.getContext(), d0);
              bindSymbols(fb.getContext(), s0);
              Value count = affine::AffineMinOp::create(
                  fb, floc,
                  AffineMap::get(1, 1, {s0 - d0, fb.getAffineConstantExpr(kLanes)},
                                 fb.getContext()),
                  ValueRange{column, width});
              auto vectorType = VectorType::get({kLanes}, element);
              Value mask = vector::CreateMaskOp::create(
                  fb, floc, VectorType::get({kLanes}, fb.getI1Type()),
                  ValueRange{count});
              SmallVector<Value> indices(rows);
              indices.push_back(column);
              auto inBounds = fb.getBoolArrayAttr({true});
              AffineMap minor = AffineMap::getMinorIdentityMap(
                  rank, 1, fb.getContext());
              Value row = vector::TransferReadOp::create(
                  fb, floc, vectorType, source, indices,
                  AffineMapAttr::get(minor), padding, mask, inBounds);
              vector::TransferWriteOp::create(fb, floc, row, target, indices,
                                              AffineMapAttr::get(minor), mask,
                                              inBounds);
              scf::YieldOp::create(fb, floc);
            });
        scf::ReduceOp::create(pb, ploc);
      });
  copy.erase();
}

struct ParallelCopiesPass
    : tessera::cpu::impl::ParallelCopiesPassBase<ParallelCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (isStridedRowCopy(copy))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies)
      rewriteCopy(copy);
  }
};

} // namespace
