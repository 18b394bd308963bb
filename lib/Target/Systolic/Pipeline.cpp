//===- Pipeline.cpp - the systolic backend's lowering pipeline ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/Systolic/Passes.h"

void tessera::systolic::buildLoweringPipeline(mlir::OpPassManager &pm,
                                              const LoweringOptions &options) {
  SystolicOperandFormatsPassOptions formats;
  formats.format = options.operandFormat;
  pm.addPass(createSystolicOperandFormatsPass(formats));
  ConvertTesseraToSystolicPassOptions lowering;
  lowering.accel = options.accel;
  pm.addPass(createConvertTesseraToSystolicPass(lowering, options.config));
}
