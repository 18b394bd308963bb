//===- Precision.h - precision classes and policies -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the precision passes (tessera-assign-precision,
// tessera-legalize-precision) share with the driver: an op's precision
// class, read from its ODS trait, and the policies a user may choose.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TRANSFORMS_PRECISION_H
#define TESSERA_TRANSFORMS_PRECISION_H

#include "tessera/Transforms/TargetInfo.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace tessera {

/// The attribute that records a precision decision on an op: the type it
/// computes in, and why when that is not what the policy asked for
/// ("f32: kept by --keep-fp32 pattern '/head.*'").
inline constexpr char kPrecisionAttr[] = "tessera.precision";

/// On attention that stays f32 as a whole (its target cannot accumulate it
/// wide in a narrow type): the type its two products take (bf16, f16) when
/// the lowering computes it as products and a softmax, as the policy
/// narrows any other matmul.
inline constexpr char kNarrowProductsAttr[] = "tessera.narrow_products";

/// The precision class of a tessera op (its `Tessera_ComputesNarrow`,
/// `Tessera_FollowsInputs`, `Tessera_ComputesWide` or `Tessera_MovesData`
/// trait); nothing for the conversions (cast, quantize, dequantize), the
/// structure ops and ops of other dialects.
std::optional<OpClass> precisionClass(mlir::Operation *op);

/// The policies `--precision` takes, in the order `--help` lists them.
llvm::ArrayRef<llvm::StringRef> precisionPolicies();

/// Whether `policy` is one of precisionPolicies().
bool isPrecisionPolicy(llvm::StringRef policy);

/// Whether the precision policies may narrow `op`: a tessera.matmul whose
/// operands are f32 (not already narrow, not integers) with a float
/// result.
bool isNarrowingCandidate(mlir::Operation *op);

/// What calibration measured: the largest finite |value| of each matmul
/// operand the precision passes may narrow, over every sample. Keys are
/// `calibrationKey`s. As JSON (the calibration cache, shared by every
/// target): {"format": "tessera-calibration", "version": 1, "method":
/// "max", "samples": N, "tensors": {key: {"amax": A}, ...}}, keys sorted,
/// so the same samples give the same bytes.
struct CalibrationTable {
  int64_t samples = 0;
  std::map<std::string, double> amax;
  /// Per channel (the tensor's last dim): the largest finite |value| and
  /// the mean square (SmoothQuant reads them). In the JSON as
  /// "channel_amax" and "channel_mean_square" beside "amax".
  struct Channels {
    std::vector<double> amax, sumSquares;
    int64_t rows = 0;
    std::vector<double> meanSquare() const;
  };
  std::map<std::string, Channels> channels;

  /// Folds a sample's values of the tensor `key`, whose last dim has
  /// `channels` elements, into its statistics.
  void record(const std::string &key, llvm::ArrayRef<float> values,
              int64_t channels = 1);
  std::string toJSON() const;
  static llvm::Expected<CalibrationTable> fromJSON(llvm::StringRef json);
};

/// The name under which calibration records operand `operand` of a matmul
/// (0: lhs, 1: rhs) or of an attention (0: query, 1: key, 2: value):
/// "<ONNX node>:lhs", ":rhs", ":query", ":key" or ":value", or "#<n>:..."
/// (matmuls) and "#attention<n>:..." with the op's position among its
/// kind in its function when it has no node name.
std::string calibrationKey(mlir::Operation *op, unsigned operand);

/// The prefix of the names of the extra outputs that
/// tessera-expose-calibration-values adds (the rest is the key).
inline constexpr char kCalibrationOutputPrefix[] = "tessera.calibration:";

/// The prefix of the names of the outputs tessera-assign-precision adds
/// with `report`: "<prefix><role>:<region key>", role `reference` (the f32
/// result), `local` (the narrow op fed f32 inputs) or `accumulated` (the
/// narrow program's own result).
inline constexpr char kReportOutputPrefix[] = "tessera.report:";

} // namespace tessera

#endif // TESSERA_TRANSFORMS_PRECISION_H
