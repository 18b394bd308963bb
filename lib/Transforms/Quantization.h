//===- Quantization.h - int8 and fp8 matmuls for the precision pass -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What tessera-assign-precision calls under its int8 and fp8 policies: a
// matmul rewritten with quantized operands (Quantization.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TRANSFORMS_QUANTIZATION_H
#define TESSERA_LIB_TRANSFORMS_QUANTIZATION_H

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tessera {

/// The scales a quantized matmul's operands were given (ONNX's convention:
/// q = x / scale), for the precision report: one per tensor or one per
/// output channel; empty where the program computes the scale each run
/// (fp8's current scaling).
struct OperandScales {
  llvm::SmallVector<float, 1> lhs, rhs;
};

/// `matmul` as quantize -> i8 x i8 -> i32 matmul -> dequantize, with
/// scales from its constants and `calibrated` (`key` is the matmul's
/// calibration key without ":lhs"/":rhs", taken before the rewrite began;
/// `smoothQuant` the pass's smooth-quant option; with `weightsKMajor` a
/// constant weight read [.., k, n] is stored transposed and read with
/// transpose_b). Returns the dequantized result; `matmul` itself is left as
/// it is. Fails, with `reason`, when it stays f32.
mlir::FailureOr<mlir::Value>
quantizeMatmul(mlir::tessera::MatmulOp matmul,
               const CalibrationTable &calibrated, llvm::StringRef key,
               llvm::StringRef smoothQuant, bool weightsKMajor,
               std::string &reason, OperandScales *scales = nullptr);

/// `matmul` with `fp8` (E4M3) operands: constants scaled by their own
/// range, other operands by their calibrated one or, with `current`, by
/// the largest |value| the program computes for them each run. Static
/// scales fold into the matmul's alpha, current ones multiply its result.
/// Returns the (rescaled) result of the new matmul (`matmul` itself is left
/// as it is), or fails with `reason`.
mlir::FailureOr<mlir::Value>
quantizeMatmulFp8(mlir::tessera::MatmulOp matmul, mlir::Type fp8,
                  const CalibrationTable &calibrated, llvm::StringRef key,
                  bool current, bool weightsKMajor, std::string &reason,
                  OperandScales *scales = nullptr);

} // namespace tessera

#endif // TESSERA_LIB_TRANSFORMS_QUANTIZATION_H
