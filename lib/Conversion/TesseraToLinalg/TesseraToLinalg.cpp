//===- TesseraToLinalg.cpp - the convert-tessera-to-linalg pass -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera {
#define GEN_PASS_DEF_CONVERTTESSERATOLINALGPASS
#include "tessera/Conversion/Passes.h.inc"
} // namespace tessera

using namespace mlir;

void ::tessera::populateTesseraToLinalgConversionPatterns(
    RewritePatternSet &patterns, bool tiledAttention,
    std::pair<int64_t, int64_t> attentionBlocks, bool fp8Operands,
    int64_t maxWindowStride) {
  ::tessera::to_linalg::populateElementwisePatterns(patterns);
  ::tessera::to_linalg::populateContractionPatterns(patterns, fp8Operands,
                                                    maxWindowStride);
  if (tiledAttention)
    ::tessera::to_linalg::populateAttentionPatterns(patterns, attentionBlocks);
  ::tessera::to_linalg::populateReductionPatterns(patterns);
  ::tessera::to_linalg::populateDataMovementPatterns(patterns);
  ::tessera::to_linalg::populatePoolingPatterns(patterns, maxWindowStride);
  ::tessera::to_linalg::populatePadPatterns(patterns);
  ::tessera::to_linalg::populateIndexingPatterns(patterns);
  ::tessera::to_linalg::populateResizePatterns(patterns);
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

/// The reasons the patterns give (through notifyMatchFailure) for not
/// lowering `op`, found by matching them once more with a rewriter that
/// records them: the conversion driver keeps them only in debug builds.
SmallVector<std::string>
matchFailureReasons(Operation *op, const FrozenRewritePatternSet &patterns) {
  struct Recorder : RewriterBase::Listener {
    SmallVector<std::string> reasons;
    void notifyMatchFailure(
        Location loc, function_ref<void(Diagnostic &)> reason) override {
      Diagnostic diag(loc, DiagnosticSeverity::Remark);
      reason(diag);
      std::string text = diag.str();
      if (!text.empty() && !llvm::is_contained(reasons, text))
        reasons.push_back(std::move(text));
    }
  } recorder;
  PatternRewriter rewriter(op->getContext());
  rewriter.setListener(&recorder);
  rewriter.setInsertionPoint(op);
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  (void)applicator.matchAndRewrite(op, rewriter);
  return recorder.reasons;
}

/// Runs the conversion; an op that no pattern lowers is reported with the
/// patterns' reasons instead of MLIR's generic "failed to legalize".
LogicalResult convertExplainingFailures(func::FuncOp func,
                                        const ConversionTarget &target,
                                        const FrozenRewritePatternSet &patterns) {
  SmallVector<std::pair<Location, std::string>> illegal;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler handler(func->getContext(), [&](Diagnostic &diag) {
      StringRef prefix = "failed to legalize operation '";
      std::string text = diag.str();
      if (diag.getSeverity() != DiagnosticSeverity::Error ||
          !StringRef(text).starts_with(prefix))
        return failure();
      StringRef name = StringRef(text).drop_front(prefix.size());
      illegal.emplace_back(diag.getLocation(), name.take_until([](char c) {
        return c == '\'';
      }).str());
      return success();
    });
    result = applyPartialConversion(func, target, patterns);
  }
  for (auto &[loc, name] : illegal) {
    Operation *failed = nullptr;
    func.walk([&](Operation *op) {
      if (!failed && op->getLoc() == loc &&
          op->getName().getStringRef() == name)
        failed = op;
    });
    SmallVector<std::string> reasons;
    if (failed)
      reasons = matchFailureReasons(failed, patterns);
    InFlightDiagnostic diag = emitError(loc) << "cannot lower '" << name
                                             << "' to linalg";
    if (reasons.empty())
      diag << " (no pattern applies)";
    else
      diag << ": " << llvm::join(reasons, "; ");
  }
  return result;
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
    if (attentionQueryBlock < 2 || attentionKeyBlock < 2) {
      getOperation().emitError("attention blocks of ")
          << static_cast<int64_t>(attentionQueryBlock) << " queries and "
          << static_cast<int64_t>(attentionKeyBlock)
          << " keys: each must be at least 2";
      return signalPassFailure();
    }
    if (tiledAttention && reportSlowPaths)
      getOperation().walk([](mlir::tessera::AttentionOp op) {
        if (std::optional<std::string> why =
                ::tessera::to_linalg::whyAttentionNotTiled(op))
          op.emitRemark() << "attention stays decomposed (its products and "
                             "a softmax, not the tiled attention kernel): "
                          << *why;
      });
    ::tessera::populateTesseraToLinalgConversionPatterns(
        patterns, tiledAttention, {attentionQueryBlock, attentionKeyBlock},
        fp8Operands, maxWindowStride);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // An op left over is reported at its (ONNX node) location, with why.
    if (failed(convertExplainingFailures(getOperation(), target, frozen)))
      signalPassFailure();
  }
};
} // namespace
