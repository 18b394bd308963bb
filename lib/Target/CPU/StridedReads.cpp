//===- StridedReads.cpp - strided vector reads as contiguous ones ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A vector read of a view whose elements are a few apart along its last
// dim (a depthwise convolution's or a max pool's taps read at stride 2, a
// stride-2 convolution's im2col taps) lowers to one scalar load and one
// insert per lane. This pass reads the span the lanes cover contiguously
// instead and keeps every stride-th element with one shuffle.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_STRIDEDREADSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;
using tessera::cpu::kMaxReadStride;

namespace {

/// The lane count of `read`'s mask when it is a 1-D vector.create_mask (the
/// last, partial step of a row of symbolic width), else null.
Value maskedLanes(vector::TransferReadOp read) {
  auto mask = read.getMask()
                  ? read.getMask().getDefiningOp<vector::CreateMaskOp>()
                  : vector::CreateMaskOp();
  return mask && mask.getNumOperands() == 1 ? mask.getOperand(0) : Value();
}

/// vector.transfer_read %view[%i...] : memref<... strided<[..., s]>>,
/// vector<n x T>, in bounds, unmasked or masked to its first m lanes, of
/// 32- or 64-bit elements (a masked load of narrower ones is a load per
/// lane without AVX-512BW), along the last dim at a static stride s of 2
/// to kMaxReadStride: a read of the n * s elements from the first lane's
/// on, through a 1-D view of the buffer there, masked to the
/// (min(m, n) - 1) * s + 1 elements the lanes span (so that it reads no
/// element past the last lane's, which is in bounds), and a shuffle that
/// keeps lanes 0, s, ..., (n - 1) * s. Masked-off lanes stay the padding.
struct ContiguousStridedRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto memref = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType vector = read.getVectorType();
    if (!memref || memref.getRank() == 0 || vector.getRank() != 1 ||
        vector.isScalable() || !read.isDimInBounds(0) ||
        !read.getPermutationMap().isMinorIdentity() ||
        memref.getElementType() != vector.getElementType() ||
        !memref.getElementType().isIntOrFloat() ||
        (memref.getElementTypeBitWidth() != 32 &&
         memref.getElementTypeBitWidth() != 64))
      return rewriter.notifyMatchFailure(read, "not a 1-D in-bounds read of "
                                               "32- or 64-bit elements");
    Value masked = maskedLanes(read);
    if ((read.getMask() && !masked) || read->getParentOfType<vector::MaskOp>())
      return rewriter.notifyMatchFailure(
          read, "masked other than to its first lanes");
    SmallVector<int64_t> staticStrides;
    int64_t staticOffset;
    if (failed(memref.getStridesAndOffset(staticStrides, staticOffset)) ||
        ShapedType::isDynamic(staticStrides.back()) ||
        staticStrides.back() < 2 || staticStrides.back() > kMaxReadStride)
      return rewriter.notifyMatchFailure(read,
                                         "not 2 to 4 elements apart (static)");
    int64_t stride = staticStrides.back();
    Location loc = read.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t lanes = vector.getDimSize(0);
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, read.getBase());
    // The first lane's element, counted from the buffer's base: offset +
    // sum of index * stride (all symbols: strides may be dynamic).
    SmallVector<OpFoldResult> strides = metadata.getConstifiedMixedStrides();
    OpFoldResult first = metadata.getConstifiedMixedOffset();
    AffineExpr sum = getAffineSymbolExpr(0, ctx),
               index = getAffineSymbolExpr(1, ctx),
               step = getAffineSymbolExpr(2, ctx);
    for (int64_t d = 0, rank = memref.getRank(); d < rank; ++d)
      first = affine::makeComposedFoldedAffineApply(
          rewriter, loc, AffineMap::get(0, 3, sum + index * step),
          {first, read.getIndices()[d], strides[d]});
    int64_t wide = lanes * stride;
    Type element = memref.getElementType();
    Value flat = memref::ReinterpretCastOp::create(
        rewriter, loc,
        MemRefType::get({wide}, element,
                        StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {1}),
                        memref.getMemorySpace()),
        metadata.getBaseBuffer(), first,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(wide)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    OpFoldResult span = rewriter.getIndexAttr((lanes - 1) * stride + 1);
    if (masked)
      span = affine::makeComposedFoldedAffineMin(
          rewriter, loc,
          AffineMap::get(0, 1,
                         {getAffineSymbolExpr(0, ctx) * stride - (stride - 1),
                          getAffineConstantExpr((lanes - 1) * stride + 1, ctx)},
                         ctx),
          {masked});
    Value mask = vector::CreateMaskOp::create(
        rewriter, loc, VectorType::get({wide}, rewriter.getI1Type()),
        ValueRange{getValueOrCreateConstantIndexOp(rewriter, loc, span)});
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value contiguous = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get({wide}, element), flat, ValueRange{zero},
        AffineMapAttr::get(rewriter.getMultiDimIdentityMap(1)),
        read.getPadding(), mask, rewriter.getBoolArrayAttr({true}));
    SmallVector<int64_t> keep;
    for (int64_t lane = 0; lane < lanes; ++lane)
      keep.push_back(lane * stride);
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(read, contiguous, contiguous,
                                                   keep);
    return success();
  }
};

struct StridedReadsPass
    : tessera::cpu::impl::StridedReadsPassBase<StridedReadsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ContiguousStridedRead>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
