//===- TesseraToLinalg.cpp - the convert-tessera-to-linalg pass -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera {
#define GEN_PASS_DEF_CONVERTTESSERATOLINALGPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace tessera

using namespace mlir;

void ::tessera::populateTesseraToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  ::tessera::to_linalg::populateElementwisePatterns(patterns);
  ::tessera::to_linalg::populateContractionPatterns(patterns);
  ::tessera::to_linalg::populateAttentionPatterns(patterns);
  ::tessera::to_linalg::populateReductionPatterns(patterns);
  ::tessera::to_linalg::populateDataMovementPatterns(patterns);
}

namespace {
/// Wraps a softmax, log_softmax, layer_norm or rms_norm that no fusion
/// region holds into a reduction region of its own, so that a backend
/// compiles its decomposition as one kernel too.
void wrapLoneReductions(func::FuncOp func) {
  SmallVector<Operation *> lone;
  func.walk([&](Operation *op) {
    if (isa<mlir::tessera::SoftmaxOp, mlir::tessera::LogSoftmaxOp,
            mlir::tessera::LayerNormOp, mlir::tessera::RmsNormOp>(op) &&
        !op->getParentOfType<mlir::tessera::FusionOp>())
      lone.push_back(op);
  });
  for (Operation *op : lone) {
    OpBuilder builder(op);
    auto region = mlir::tessera::FusionOp::create(
        builder, op->getLoc(), op->getResultTypes(),
        mlir::tessera::FusionKind::reduction);
    Block *body = new Block;
    region.getBody().push_back(body);
    op->replaceAllUsesWith(region);
    op->moveBefore(body, body->end());
    builder.setInsertionPointToEnd(body);
    mlir::tessera::YieldOp::create(builder, op->getLoc(), op->getResults());
  }
}

struct ConvertTesseraToLinalgPass
    : ::tessera::impl::ConvertTesseraToLinalgPassBase<
          ConvertTesseraToLinalgPass> {
  using ConvertTesseraToLinalgPassBase::ConvertTesseraToLinalgPassBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<mlir::tessera::TesseraDialect>();
    if (keepReductionRegions) {
      wrapLoneReductions(getOperation());
      auto kept = [](mlir::tessera::FusionOp op) {
        if (op.getKind() != mlir::tessera::FusionKind::reduction ||
            op->getNumResults() != 1)
          return false;
        return isa<RankedTensorType>(op->getResult(0).getType());
      };
      target.addDynamicallyLegalOp<mlir::tessera::FusionOp>(kept);
      target.addDynamicallyLegalOp<mlir::tessera::YieldOp>(
          [kept](mlir::tessera::YieldOp op) {
            auto parent = dyn_cast<mlir::tessera::FusionOp>(op->getParentOp());
            return parent && kept(parent);
          });
    }
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect>();
    RewritePatternSet patterns(ctx);
    ::tessera::populateTesseraToLinalgConversionPatterns(patterns);
    // An op left over is reported at its (ONNX node) location.
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
