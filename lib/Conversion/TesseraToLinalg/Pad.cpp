//===- Pad.cpp - tessera.pad to tensor.pad or an index-mapping generic ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// constant: tensor.pad yielding the value. reflect and edge: a generic
/// over the result whose element reads the input at the mirrored or clamped
/// position (i - before, reflected about the first and last element, or
/// clamped into [0, n)).
struct PadLowering : OpRewritePattern<ts::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ts::PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    int64_t rank = inType.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    if (op.getMode() == ts::PadMode::constant) {
      SmallVector<OpFoldResult> low, high;
      for (int64_t d = 0; d < rank; ++d) {
        low.push_back(rewriter.getIndexAttr(pads[d]));
        high.push_back(rewriter.getIndexAttr(pads[rank + d]));
      }
      Value value = scalarConstant(rewriter, loc, elementType,
                                   op.getValue().convertToDouble());
      rewriter.replaceOpWithNewOp<tensor::PadOp>(op, resultType, op.getInput(),
                                                 low, high, value);
      return success();
    }
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(
          op, "reflect and edge padding of dynamic dims");
    bool reflect = op.getMode() == ts::PadMode::reflect;
    Value input = op.getInput();
    Value result = buildElementwise(
        rewriter, loc, resultType, ValueRange{},
        [&](OpBuilder &b, Location nloc, ValueRange) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, nloc, d);
            int64_t n = inType.getDimSize(d);
            if (pads[d] == 0 && pads[rank + d] == 0) {
              indices.push_back(i);
              continue;
            }
            auto constant = [&](int64_t v) -> Value {
              return arith::ConstantIndexOp::create(b, nloc, v);
            };
            Value j = arith::SubIOp::create(b, nloc, i, constant(pads[d]));
            Value zero = constant(0), last = constant(n - 1);
            if (reflect) {
              // -j before the start; 2 (n - 1) - j past the end.
              Value mirrored = arith::SubIOp::create(b, nloc, zero, j);
              Value before = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::slt, j, zero);
              j = arith::SelectOp::create(b, nloc, before, mirrored, j);
              Value past = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::sgt, j, last);
              Value back = arith::SubIOp::create(b, nloc, constant(2 * (n - 1)),
                                                 j);
              j = arith::SelectOp::create(b, nloc, past, back, j);
            } else {
              j = arith::MaxSIOp::create(b, nloc, j, zero);
              j = arith::MinSIOp::create(b, nloc, j, last);
            }
            indices.push_back(j);
          }
          return tensor::ExtractOp::create(b, nloc, input, indices);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populatePadPatterns(RewritePatternSet &patterns) {
  patterns.add<PadLowering>(patterns.getContext());
}

} // namespace tessera::to_linalg
