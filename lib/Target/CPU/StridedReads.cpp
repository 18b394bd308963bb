//===- StridedReads.cpp - strided vector reads as contiguous ones ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A vector read of a view whose elements are a few apart along its last
// dim (every other column: a depthwise convolution computed at stride 1
// and subsampled, a stride-2 convolution's taps) lowers to one scalar load
// and one insert per lane. This pass reads the span the lanes cover
// contiguously instead and keeps every stride-th element with one shuffle.
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

namespace {

/// The widest stride read through a contiguous span: each 16-lane load
/// then keeps at least 4 lanes, against one scalar load per lane.
constexpr int64_t kMaxStride = 4;

/// The lane count of `read`'s mask when it is a 1-D vector.create_mask (the
/// last, partial step of a row of symbolic width), else null.
Value maskedLanes(vector::TransferReadOp read) {
  auto mask = read.getMask() ? read.getMask().getDefiningOp<vector::CreateMaskOp>()
                             : vector::CreateMaskOp();
  return mask && mask.getNumOperands() == 1 ? mask.getOperand(0) : Value();
}

/// `read`'s stride along the memref's last dim when it reads a row of lanes
/// along that dim that are a few elements apart (2 to kMaxStride), in
/// bounds, unmasked or masked to its first lanes; else nullopt.
std::optional<int64_t> readStride(vector::TransferReadOp read) {
  auto memref = dyn_cast<MemRefType>(read.getBase().getType());
  VectorType vector = read.getVectorType();
  if (!memref || memref.getRank() == 0 || vector.getRank() != 1 ||
      vector.isScalable() || (read.getMask() && !maskedLanes(read)) ||
      read->getParentOfType<vector::MaskOp>() || !read.isDimInBounds(0) ||
      !read.getPermutationMap().isMinorIdentity() ||
      memref.getElementType() != vector.getElementType() ||
      !memref.getElementType().isIntOrFloat() ||
      memref.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  int64_t stride = strides.back();
  if (ShapedType::isDynamic(stride) || stride < 2 || stride > kMaxStride)
    return std::nullopt;
  return stride;
}

/// vector.transfer_read %view[%i...] : memref<... strided<[..., s]>>,
/// vector<n x T> as a masked read of the n * s elements from the first
/// lane's one on, through a 1-D view of the buffer that ends at the view's
/// last element (so that no lane reads past it), and a shuffle that keeps
/// lanes 0, s, ..., (n - 1) * s. A read masked to its first m lanes reads
/// at most the (m - 1) * s + 1 elements they span.
struct ContiguousStridedRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> stride = readStride(read);
    if (!stride)
      return failure();
    Location loc = read.getLoc();
    Value view = read.getBase();
    auto memref = cast<MemRefType>(view.getType());
    int64_t lanes = read.getVectorType().getDimSize(0);
    auto metadata = memref::ExtractStridedMetadataOp::create(rewriter, loc,
                                                             view);
    // The first lane's element and the view's last one (plus one), both
    // counted from the buffer's base.
    SmallVector<OpFoldResult> strides = metadata.getConstifiedMixedStrides();
    SmallVector<OpFoldResult> sizes = metadata.getConstifiedMixedSizes();
    OpFoldResult first = metadata.getConstifiedMixedOffset();
    OpFoldResult end = first;
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr sum = getAffineDimExpr(0, ctx), i = getAffineDimExpr(1, ctx),
               s = getAffineDimExpr(2, ctx);
    for (int64_t d = 0, rank = memref.getRank(); d < rank; ++d) {
      first = affine::makeComposedFoldedAffineApply(
          rewriter, loc, AffineMap::get(3, 0, sum + i * s),
          {first, read.getIndices()[d], strides[d]});
      end = affine::makeComposedFoldedAffineApply(
          rewriter, loc, AffineMap::get(3, 0, sum + (i - 1) * s),
          {end, sizes[d], strides[d]});
    }
    end = affine::makeComposedFoldedAffineApply(
        rewriter, loc, AffineMap::get(1, 0, sum + 1), {end});
    Type element = memref.getElementType();
    auto flatType = MemRefType::get({ShapedType::kDynamic}, element,
                                    MemRefLayoutAttrInterface{},
                                    memref.getMemorySpace());
    Value flat = memref::ReinterpretCastOp::create(
        rewriter, loc, flatType, metadata.getBaseBuffer(),
        rewriter.getIndexAttr(0), ArrayRef<OpFoldResult>{end},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    Value firstValue = getValueOrCreateConstantIndexOp(rewriter, loc, first);
    Value left = affine::makeComposedAffineApply(
        rewriter, loc, AffineMap::get(2, 0, sum - i), {end, first});
    if (Value masked = maskedLanes(read))
      left = affine::makeComposedAffineMin(
          rewriter, loc,
          AffineMap::get(2, 0, {sum, i * *stride - (*stride - 1)}, ctx),
          {left, masked});
    auto wideType = VectorType::get({lanes * *stride}, element);
    Value mask = vector::CreateMaskOp::create(
        rewriter, loc, VectorType::get({lanes * *stride}, rewriter.getI1Type()),
        ValueRange{left});
    Value wide = vector::TransferReadOp::create(
        rewriter, loc, wideType, flat, ValueRange{firstValue},
        AffineMapAttr::get(rewriter.getMultiDimIdentityMap(1)),
        read.getPadding(), mask, rewriter.getBoolArrayAttr({true}));
    SmallVector<int64_t> keep;
    for (int64_t lane = 0; lane < lanes; ++lane)
      keep.push_back(lane * *stride);
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(read, wide, wide, keep);
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
