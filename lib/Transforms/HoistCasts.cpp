//===- HoistCasts.cpp - casts moved to where data is narrow ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-hoist-casts: a float cast and a reshape or transpose commute, so
// the movement runs on the narrower side (see the pass's description).
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera {
#define GEN_PASS_DEF_HOISTCASTSPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// The bit widths of a cast's float input and result element types;
/// nothing when either is not a float of 16 bits or more (integers and
/// fp8 have quantization of their own).
std::optional<std::pair<unsigned, unsigned>> floatWidths(CastOp op) {
  auto in = dyn_cast<FloatType>(getElementTypeOrSelf(op.getInput()));
  auto out = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
  if (!in || !out || in.getWidth() < 16 || out.getWidth() < 16)
    return std::nullopt;
  return std::pair(in.getWidth(), out.getWidth());
}

/// Whether `op` is a movement the cast commutes with.
bool isMovement(Operation *op) { return isa<ReshapeOp, TransposeOp>(op); }

/// `movement` (a reshape or transpose) cloned to read `input` instead of
/// its own input, its result of `input`'s element type.
Value moveOn(PatternRewriter &rewriter, Operation *movement, Value input) {
  Operation *clone = rewriter.clone(*movement);
  clone->setOperand(0, input);
  auto type = cast<RankedTensorType>(movement->getResult(0).getType());
  clone->getResult(0).setType(
      type.clone(getElementTypeOrSelf(input.getType())));
  return clone->getResult(0);
}

/// cast(move(x)) -> move(cast(x)) for a narrowing cast, when the cast is
/// all that reads the movement. Not a transpose whose cast a matmul or a
/// convolution reads: a backend folds a transpose next to the cast into
/// the cast's kernel, one next to the product into the product's operand
/// layout, which the CUDA target's tensor cores take only for the last
/// two dims.
struct HoistNarrowingCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto widths = floatWidths(op);
    Operation *movement = op.getInput().getDefiningOp();
    if (!widths || widths->second >= widths->first || !movement ||
        !isMovement(movement) || !movement->getResult(0).hasOneUse())
      return failure();
    if (isa<TransposeOp>(movement) &&
        llvm::any_of(op->getUsers(), [](Operation *user) {
          return isa<MatmulOp, Conv2dOp>(user);
        }))
      return failure();
    Value input = movement->getOperand(0);
    rewriter.setInsertionPoint(movement);
    Value narrow =
        CastOp::create(rewriter, op.getLoc(),
                       cast<RankedTensorType>(input.getType())
                           .clone(getElementTypeOrSelf(op.getType())),
                       input);
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, moveOn(rewriter, movement, narrow));
    rewriter.eraseOp(movement);
    return success();
  }
};

/// move(cast(x)) -> cast(move(x)) for a widening cast that only movements
/// read (each movement then reads the narrow value).
struct SinkWideningCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto widths = floatWidths(op);
    if (!widths || widths->second <= widths->first || op->use_empty() ||
        !llvm::all_of(op->getUsers(), isMovement))
      return failure();
    for (Operation *movement : llvm::to_vector(op->getUsers())) {
      rewriter.setInsertionPoint(movement);
      Value moved = moveOn(rewriter, movement, op.getInput());
      rewriter.replaceOp(
          movement, CastOp::create(rewriter, op.getLoc(),
                                   movement->getResult(0).getType(), moved));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

class HoistCastsPass
    : public ::tessera::impl::HoistCastsPassBase<HoistCastsPass> {
public:
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<HoistNarrowingCast, SinkWideningCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
