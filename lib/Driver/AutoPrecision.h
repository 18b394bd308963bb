//===- AutoPrecision.h - the automatic precision policy ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_DRIVER_AUTOPRECISION_H
#define TESSERA_LIB_DRIVER_AUTOPRECISION_H

#include "tessera/Driver/Compile.h"
#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace tessera {

/// What `--precision=auto` must keep against the f32 program: each
/// output's cosine similarity at least `minCosine`, its relative L2 error
/// at most `maxRelativeL2`.
struct AccuracyBudget {
  double minCosine = 0.999;
  double maxRelativeL2 = 0.02;
};

/// `--accuracy-budget`: "cos:C,nrel:E" (either may be left out).
llvm::Expected<AccuracyBudget> parseAccuracyBudget(llvm::StringRef text);

/// `--precision-costs`: "policy:cost,..." (bf16, fp16, fp8, int8; a
/// contraction's time relative to its time at the same shape in what the
/// plan leaves wide: fp32, or the systolic array's bf16).
llvm::Expected<std::map<std::string, double>>
parsePrecisionCosts(llvm::StringRef text);

/// The nodes and policies of a plan file `--precision=auto` wrote.
llvm::Expected<std::map<std::string, std::string>>
readPrecisionPlan(llvm::StringRef path);

/// How --precision=auto divides the calibration samples: the first three
/// quarters calibrate the ranges and measure each matmul's error, the rest
/// verify the plan on data it was not fitted to (one sample does both).
struct AutoSampleSplit {
  std::vector<std::string> measure, verify;
};
AutoSampleSplit splitAutoSamples(std::vector<std::string> sets);

/// The automatic policy: measures each matmul's own error under every
/// narrow policy the target computes (on the first samples of
/// `options.calibrate`, with the ranges in `calibrationCache`), prices
/// each choice with `info`'s cost model at the matmul's shape
/// (TargetInfo::contractionTime), picks greedily the choices that save
/// the most time per unit of predicted error within the budget, then
/// verifies the plan end to end on the held-out samples and widens the
/// worst matmuls until it holds. Writes the plan to
/// `options.precisionPlan` when given; returns node -> policy.
llvm::Expected<std::map<std::string, std::string>>
searchPrecisionPlan(llvm::StringRef modelPath, mlir::MLIRContext &context,
                    const CompileOptions &options,
                    llvm::StringRef calibrationCache, bool raiseAttention,
                    const TargetInfo &info);

} // namespace tessera

#endif // TESSERA_LIB_DRIVER_AUTOPRECISION_H
