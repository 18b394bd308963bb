//===- PrecisionRuns.h - the programs the precision options run -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_LIB_DRIVER_PRECISIONRUNS_H
#define TESSERA_LIB_DRIVER_PRECISIONRUNS_H

#include "tessera/Driver/Compile.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileUtilities.h"

#include <optional>
#include <string>

namespace tessera {

/// Calibration (`--calibrate`, docs/Precision.md): compiles the model for
/// this CPU with the operands the precision passes may narrow as extra
/// outputs (attention raised as `raiseAttention` says, as in the compile it
/// serves), runs it on each test set's inputs (twice for the percentile
/// and entropy methods: amax, then histograms) and writes the ranges to
/// `options.calibrationCache`, or to a temporary file that `temporary`
/// then removes. Returns the cache's path.
llvm::Expected<std::string>
runCalibration(llvm::StringRef modelPath, mlir::MLIRContext &context,
               const CompileOptions &options, bool raiseAttention,
               std::optional<llvm::FileRemover> &temporary);

/// The per-op accuracy report (`--precision-report`): runs the report's
/// samples through the f32 program with a narrow copy of each narrowed
/// matmul fed its f32 operands (local error, and the share of those
/// operands that saturate or flush) and through the narrowed program
/// (accumulated error), with the ranges of `calibrationCache`, and writes
/// the matmuls ranked by local relative L2 error as JSON and HTML.
llvm::Error writePrecisionReport(llvm::StringRef modelPath,
                                 mlir::MLIRContext &context,
                                 const CompileOptions &options,
                                 llvm::StringRef calibrationCache,
                                 bool raiseAttention);

} // namespace tessera

#endif // TESSERA_LIB_DRIVER_PRECISIONRUNS_H
