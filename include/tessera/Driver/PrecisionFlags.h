//===- PrecisionFlags.h - the precision options of the tools --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The command-line options of the precision policies that tessera-compile
// and tessera-run share (docs/Precision.md), declared once.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DRIVER_PRECISIONFLAGS_H
#define TESSERA_DRIVER_PRECISIONFLAGS_H

#include "tessera/Driver/Compile.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace tessera {

/// --precision, --keep-fp32, --quantize-heads, --quantize-first-layers,
/// --smooth-quant, --fp8-scaling,
/// --fp8-format, --saturation-counts,
/// --calibrate, --calibration-cache, --calibration-method,
/// --calibration-percentile and --allow-tf32, registered in `category` when
/// constructed (a tool declares one as a global, like any cl::opt).
class PrecisionFlags {
public:
  explicit PrecisionFlags(llvm::cl::OptionCategory &category);

  /// Copies the flags into `options`.
  void apply(CompileOptions &options) const;

  /// Whether any of them was given (they apply when a model is compiled).
  bool given() const;

  /// What is wrong with the flags given together, if anything:
  /// --quantize-heads and --quantize-first-layers outside the 8-bit
  /// policies (they narrow nothing there).
  std::optional<std::string> misuse() const;

private:
  llvm::cl::opt<std::string> precision;
  llvm::cl::list<std::string> keepFp32;
  llvm::cl::opt<bool> quantizeHeads;
  llvm::cl::opt<bool> quantizeFirstLayers;
  llvm::cl::opt<bool> allowTF32;
  llvm::cl::opt<std::string> smoothQuant;
  llvm::cl::opt<std::string> fp8Scaling;
  llvm::cl::opt<std::string> fp8Format;
  llvm::cl::opt<bool> saturationCounts;
  llvm::cl::opt<std::string> calibrate;
  llvm::cl::opt<std::string> calibrationCache;
  llvm::cl::opt<std::string> calibrationMethod;
  llvm::cl::opt<double> calibrationPercentile;
  llvm::cl::opt<std::string> accuracyBudget;
  llvm::cl::opt<std::string> precisionPlan;
  llvm::cl::opt<std::string> precisionCosts;
};

} // namespace tessera

#endif // TESSERA_DRIVER_PRECISIONFLAGS_H
