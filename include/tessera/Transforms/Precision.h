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

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

/// How calibration turns the values it saw into the range an 8-bit
/// quantizer scales to (`--calibration-method`): the largest |value|
/// (max), the |value| below which a given percentage of them lie
/// (percentile), or the threshold whose clipped and 128-level-quantized
/// histogram of |value| is closest to the original one in KL divergence
/// (entropy).
enum class CalibrationMethod { Max, Percentile, Entropy };

/// The methods by name ("max", "percentile", "entropy"), in the order
/// `--help` lists them.
llvm::ArrayRef<llvm::StringRef> calibrationMethods();
std::optional<CalibrationMethod> parseCalibrationMethod(llvm::StringRef name);
llvm::StringRef calibrationMethodName(CalibrationMethod method);

/// The largest quantized magnitudes of the 8-bit policies' symmetric
/// scales: an operand whose range is R is quantized with the scale
/// R / kInt8Max (int8), R / kE4M3Max (fp8 E4M3) or R / kE5M2Max (fp8
/// E5M2, `--fp8-format=e5m2`).
inline constexpr double kInt8Max = 127.0;
inline constexpr double kE4M3Max = 448.0;
inline constexpr double kE5M2Max = 57344.0;

/// The bins of the histograms of |value| over [0, amax] that percentile
/// and entropy calibration read.
inline constexpr int64_t kCalibrationBins = 2048;
/// Bins of each channel's histogram of |value| (percentile and entropy per
/// channel, which SmoothQuant reads): fewer than a tensor's, since a
/// tensor has hundreds of channels.
inline constexpr int64_t kChannelCalibrationBins = 512;

/// The upper edge of the first bin of `histogram` (over [0, amax]) at
/// which `percent` of its counts lie at or below.
double percentileThreshold(llvm::ArrayRef<uint64_t> histogram, double amax,
                           double percent);

/// The threshold (a bin's middle, at least `levels` bins up) that
/// minimizes the KL divergence between the histogram clipped there (what
/// lies above counted in the last bin) and that clipped histogram
/// quantized to `levels` levels (each level's count spread over its
/// non-empty bins).
double entropyThreshold(llvm::ArrayRef<uint64_t> histogram, double amax,
                        int64_t levels = 128);

/// What calibration measured: the largest finite |value| of each matmul
/// operand the precision passes may narrow, over every sample, and for
/// the percentile and entropy methods the range chosen below it. Keys are
/// `calibrationKey`s. As JSON (the calibration cache, shared by every
/// target): {"format": "tessera-calibration", "version": 1, "method":
/// "max", "samples": N, "tensors": {key: {"amax": A}, ...}} (with
/// "range": R beside "amax" and, for percentile, the "percentile"), keys
/// sorted, so the same samples give the same bytes.
struct CalibrationTable {
  int64_t samples = 0;
  CalibrationMethod method = CalibrationMethod::Max;
  /// The percentage the percentile method keeps.
  double percentile = 99.99;
  std::map<std::string, double> amax;
  /// The method's range per tensor (percentile, entropy); 8-bit
  /// quantizers scale to it and saturate what lies beyond. The fp16 rule
  /// reads amax, the values' true extent.
  std::map<std::string, double> range;
  /// Per channel (the tensor's last dim): the largest finite |value| and
  /// the mean square (SmoothQuant reads them). In the JSON as
  /// "channel_amax" and "channel_mean_square" beside "amax".
  struct Channels {
    std::vector<double> amax, sumSquares;
    int64_t rows = 0;
    /// Each channel's histogram of |value| over [0, its amax]
    /// (kChannelCalibrationBins bins, one channel after another), filled
    /// with the tensor's histogram.
    std::vector<uint32_t> histograms;
    /// The method's range per channel (percentile, entropy), which
    /// SmoothQuant reads in place of amax; in the JSON as "channel_range".
    std::vector<double> range;
    std::vector<double> meanSquare() const;
    /// The range per channel: the method's, else amax.
    const std::vector<double> &ranges() const {
      return range.size() == amax.size() ? range : amax;
    }
  };
  std::map<std::string, Channels> channels;
  /// Histograms of |value| over [0, amax] (kCalibrationBins bins), filled
  /// by a second pass over the samples once amax is known.
  std::map<std::string, std::vector<uint64_t>> histograms;

  /// Folds a sample's values of the tensor `key`, whose last dim has
  /// `channels` elements, into its statistics.
  void record(const std::string &key, llvm::ArrayRef<float> values,
              int64_t channels = 1);
  /// Counts a sample's finite values of `key` into its histogram, and into
  /// its channels' when its last dim has `channels` > 1 elements (after
  /// every sample has been through record()).
  void recordHistogram(const std::string &key, llvm::ArrayRef<float> values,
                       int64_t channels = 1);
  /// Sets each histogram's range by `method`, the tensor's and its
  /// channels'.
  void chooseRanges();
  /// The range an 8-bit quantizer scales `key` to: the method's range,
  /// else amax; nothing when calibration did not see `key`.
  std::optional<double> quantizationRange(const std::string &key) const;
  std::string toJSON() const;
  static llvm::Expected<CalibrationTable> fromJSON(llvm::StringRef json);
};

/// The name under which calibration records operand `operand` of a matmul
/// (0: lhs, 1: rhs) or of an attention (0: query, 1: key, 2: value):
/// "<ONNX node>:lhs", ":rhs", ":query", ":key" or ":value", or "#<n>:..."
/// (matmuls), "#attention<n>:..." and "#conv<n>:..." (a convolution's
/// input and filter, for the precision report) with the op's position
/// among its kind in its function when it has no node name.
std::string calibrationKey(mlir::Operation *op, unsigned operand);

/// The prefix of the names of the extra outputs that
/// tessera-expose-calibration-values adds (the rest is the key).
inline constexpr char kCalibrationOutputPrefix[] = "tessera.calibration:";

/// The prefix of the names of the outputs tessera-assign-precision adds
/// with `report`: "<prefix><role>:<op>:<region key>", role `reference`
/// (the f32 result), `local` (the narrow op fed f32 inputs), `accumulated`
/// (the narrow program's own result), `kept` (an op the policy kept f32,
/// its own reference), `scale_lhs` or `scale_rhs` (the scales an int8 or
/// fp8 matmul's operands were given, per tensor or per output channel); op
/// `matmul`, `conv`, `attention`, or a normalization's or softmax's name
/// (`layer_norm`, `rms_norm`, `softmax`, `log_softmax`).
inline constexpr char kReportOutputPrefix[] = "tessera.report:";

/// The name of a report output (kReportOutputPrefix) of `op`.
std::string reportOutputName(llvm::StringRef role, mlir::Operation *op,
                             llvm::StringRef key);

/// A report output's name taken apart; nothing for another output.
struct ReportOutput {
  llvm::StringRef role, op, key;
};
std::optional<ReportOutput> parseReportOutputName(llvm::StringRef name);

} // namespace tessera

#endif // TESSERA_TRANSFORMS_PRECISION_H
