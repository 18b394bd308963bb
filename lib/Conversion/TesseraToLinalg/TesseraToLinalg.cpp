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
struct ConvertTesseraToLinalgPass
    : ::tessera::impl::ConvertTesseraToLinalgPassBase<
          ConvertTesseraToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<mlir::tessera::TesseraDialect>();
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
