//===- Quantization.cpp - int8 and fp8 matmuls from calibrated ranges -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The int8 and fp8 policies of tessera-assign-precision quantize each
// matmul they narrow: symmetric scales from a constant's own range or the
// calibrated one, weights quantized now (per output channel for int8),
// other operands by tessera.quantize, and the scales applied to the
// accumulator (int8: a tessera.dequantize; fp8: folded into the matmul's
// alpha; or, under fp8 current scaling, computed each run and applied to
// the result). With smooth-quant, int8 first moves the lhs's outlier channels
// into the weights (SmoothQuant).
//
//===----------------------------------------------------------------------===//
#include "Quantization.h"
#include "Matchers.h"
#include "tessera/Support/Numerics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::kPrecisionAttr;
using ::tessera::largestFiniteMagnitude;

namespace {

/// Quantizes one matmul, whose calibration key (without ":lhs"/":rhs") is
/// `currentKey`, with the ranges in `calibrated`.
class MatmulQuantizer {
public:
  MatmulQuantizer(const ::tessera::CalibrationTable &calibrated,
                  StringRef key, StringRef smoothQuant)
      : currentKey(key.str()), calibrated(calibrated),
        smoothQuant(smoothQuant) {}

private:
  /// The largest |x| of operand `operand` of `matmul`: a constant's own,
  /// else the calibrated range (the calibration method's, which may clip).
  std::optional<double> operandRange(MatmulOp matmul, unsigned operand) const {
    if (std::optional<float> largest =
            largestFiniteMagnitude(matmul->getOperand(operand)))
      return *largest;
    return calibrated.quantizationRange(operandKey(operand));
  }

  /// A constant of `values` with `type`: a resource blob when large.
  static Value constant(OpBuilder &builder, Location loc, RankedTensorType type,
                        ArrayRef<char> bytes, StringRef name) {
    ElementsAttr attr;
    if (type.getNumElements() > kInlineElements)
      attr = DenseResourceElementsAttr::get(
          type, name,
          HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float)));
    else
      attr = DenseElementsAttr::getFromRawBuffer(type, bytes);
    return ConstantOp::create(builder, loc, attr);
  }
  static Value scalesConstant(OpBuilder &builder, Location loc,
                              ArrayRef<float> scales, bool perChannel) {
    auto type = RankedTensorType::get(
        perChannel ? ArrayRef<int64_t>{static_cast<int64_t>(scales.size())}
                   : ArrayRef<int64_t>{},
        builder.getF32Type());
    return ConstantOp::create(
        builder, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, scales)));
  }

  /// SmoothQuant's per-channel factors for `matmul` (x / s, diag(s) W),
  /// the alpha they came from and the smoothed lhs's range.
  struct Smoothing {
    SmallVector<float> factors;
    double alpha = 0, lhsRange = 0;
  };

  /// The SmoothQuant factors s_j = amax(x_j)^alpha / amax(W_j)^(1-alpha)
  /// for `matmul`'s lhs channels j (its calibrated per-channel statistics;
  /// under the percentile or entropy method, each channel's range in
  /// place of its amax)
  /// and the rows j of its constant 2-D weight, with `alpha` fixed by the
  /// `smooth-quant` option or, for "auto", the one of 0, 0.05, ..., 1
  /// that minimizes the expected quantization noise of the product (each
  /// operand's rounding error, uniform over its step, times the other
  /// operand's energy). Nothing when the option is off, the statistics are
  /// missing, or smoothing would not lower that noise.
  std::optional<Smoothing> smoothing(MatmulOp matmul,
                                     ArrayRef<float> weights,
                                     RankedTensorType rhsType) const {
    // Statistics are per channel of the lhs's last dim, which is K only
    // without transpose_a.
    if (smoothQuant.empty() || rhsType.getRank() != 2 ||
        matmul.getTransposeA())
      return std::nullopt;
    auto stats = calibrated.channels.find(operandKey(0));
    bool transposed = matmul.getTransposeB();
    int64_t k = rhsType.getDimSize(transposed ? 1 : 0);
    int64_t n = rhsType.getDimSize(transposed ? 0 : 1);
    if (stats == calibrated.channels.end() ||
        static_cast<int64_t>(stats->second.amax.size()) != k)
      return std::nullopt;
    // Each channel's calibrated range: its amax, or the percentile's or
    // entropy's clip of it.
    const std::vector<double> &xAmax = stats->second.ranges();
    std::vector<double> xMeanSquare = stats->second.meanSquare();
    auto weight = [&](int64_t j, int64_t c) -> double {
      return weights[transposed ? c * k + j : j * n + c];
    };
    std::vector<double> wAmax(k, 0.0);
    for (int64_t j = 0; j < k; ++j)
      for (int64_t c = 0; c < n; ++c)
        wAmax[j] = std::max(wAmax[j], std::fabs(weight(j, c)));
    // Expected noise of the int8 product for factors s.
    auto noise = [&](ArrayRef<double> s, double &lhsRange) {
      lhsRange = 0;
      double lhsEnergy = 0, weightEnergy = 0;
      for (int64_t j = 0; j < k; ++j) {
        lhsRange = std::max(lhsRange, xAmax[j] / s[j]);
        lhsEnergy += xMeanSquare[j] / (s[j] * s[j]);
      }
      double weightNoise = 0;
      for (int64_t c = 0; c < n; ++c) {
        double columnRange = 0;
        for (int64_t j = 0; j < k; ++j) {
          double w = weight(j, c) * s[j];
          columnRange = std::max(columnRange, std::fabs(w));
          weightEnergy += w * w;
        }
        double step = columnRange / 127;
        weightNoise += step * step / 12 * lhsEnergy;
      }
      double lhsStep = lhsRange / 127;
      return lhsStep * lhsStep / 12 * weightEnergy + weightNoise;
    };
    auto factorsFor = [&](double alpha) {
      std::vector<double> s(k, 1.0);
      for (int64_t j = 0; j < k; ++j)
        if (xAmax[j] > 0 && wAmax[j] > 0)
          s[j] = std::clamp(std::pow(xAmax[j], alpha) /
                                std::pow(wAmax[j], 1 - alpha),
                            1e-5, 1e5);
      return s;
    };
    std::vector<double> alphas;
    double fixed;
    if (smoothQuant == "auto") {
      for (int step = 0; step <= 20; ++step)
        alphas.push_back(step * 0.05);
    } else if (!StringRef(smoothQuant).getAsDouble(fixed) && fixed >= 0 &&
               fixed <= 1) {
      alphas.push_back(fixed);
    } else {
      return std::nullopt;
    }
    double unsmoothedRange;
    double best = smoothQuant == "auto"
                      ? noise(std::vector<double>(k, 1.0), unsmoothedRange)
                      : INFINITY;
    std::optional<Smoothing> chosen;
    for (double alpha : alphas) {
      std::vector<double> s = factorsFor(alpha);
      double range;
      double value = noise(s, range);
      if (value < best) {
        best = value;
        chosen = Smoothing{SmallVector<float>(s.begin(), s.end()), alpha,
                           range};
      }
    }
    return chosen;
  }

public:
  /// Rewrites `matmul` as quantize -> i8 x i8 -> i32 matmul -> dequantize:
  /// symmetric scales (amax / 127), the lhs per tensor from its range, a
  /// constant 2-D rhs per output channel (quantized now), another rhs per
  /// tensor; the dequantization applies both scales and the matmul's
  /// alpha to the i32 accumulator, whose result this returns; `matmul`
  /// itself is left as it is. Fails, with `reason`, when it stays f32.
  FailureOr<Value> quantizeMatmul(MatmulOp matmul, bool weightsKMajor,
                                  std::string &reason,
                                  ::tessera::OperandScales *chosen) {
    std::optional<double> lhsRange = operandRange(matmul, 0);
    if (!lhsRange) {
      reason = "int8 needs the range of its lhs (--calibrate)";
      return failure();
    }
    auto scaleOf = [](double range) {
      return range > 0 ? static_cast<float>(range / ::tessera::kInt8Max) : 1.0f;
    };
    OpBuilder builder(matmul);
    Location loc = matmul.getLoc();
    Type i8 = builder.getI8Type();
    auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
    SmallVector<float> rhsScales;
    bool perChannel = false;
    Value quantizedRhs;
    bool transposedRhs = false;
    Value lhs = matmul.getLhs();
    std::string precisionName = "int8";
    if (std::optional<SmallVector<float>> weights =
            ::tessera::floatElements(matmul.getRhs())) {
      if (std::optional<Smoothing> smooth =
              smoothing(matmul, *weights, rhsType)) {
        // x / s times diag(s) W: the lhs's outlier channels move into
        // the weights, where per-channel scales absorb them.
        int64_t k = smooth->factors.size();
        int64_t columns = rhsType.getDimSize(1);
        for (size_t i = 0; i < weights->size(); ++i)
          (*weights)[i] *= smooth->factors[matmul.getTransposeB()
                                               ? i % columns
                                               : i / columns];
        SmallVector<float> inverse;
        for (float factor : smooth->factors)
          inverse.push_back(1.0f / factor);
        auto inverseType = RankedTensorType::get(ArrayRef<int64_t>{k},
                                                 builder.getF32Type());
        Value divisor = ConstantOp::create(
            builder, loc,
            cast<ElementsAttr>(
                DenseElementsAttr::get(inverseType, ArrayRef<float>(inverse))));
        lhs = MulOp::create(builder, loc, lhs.getType(), lhs, divisor);
        lhsRange = smooth->lhsRange;
        precisionName = llvm::formatv("int8 (SmoothQuant alpha {0:f2})",
                                      smooth->alpha)
                            .str();
      }
      perChannel = rhsType.getRank() == 2;
      int64_t axis = perChannel ? (matmul.getTransposeB() ? 0 : 1) : 0;
      int64_t channels = perChannel ? rhsType.getDimSize(axis) : 1;
      int64_t columns = rhsType.getRank() == 2 ? rhsType.getDimSize(1) : 1;
      SmallVector<double> ranges(channels, 0.0);
      for (size_t i = 0; i < weights->size(); ++i) {
        float w = (*weights)[i];
        if (!std::isfinite(w))
          continue;
        int64_t channel =
            !perChannel ? 0 : axis == 1 ? i % columns : i / columns;
        ranges[channel] = std::max(ranges[channel],
                                   static_cast<double>(std::fabs(w)));
      }
      for (double range : ranges)
        rhsScales.push_back(scaleOf(range));
      std::vector<uint8_t> bytes(weights->size());
      ::tessera::numerics::QuantizationParams params;
      params.scale = rhsScales;
      params.axis = axis;
      if (llvm::Error error = ::tessera::numerics::quantizeLinear(
              *weights, rhsType.getShape(), params,
              ::tessera::numerics::QuantizedType::I8, bytes)) {
        reason = "its weight could not be quantized: " +
                 llvm::toString(std::move(error));
        return failure();
      }
      RankedTensorType storedType = rhsType.clone(i8);
      if (weightsKMajor && rhsType.getRank() >= 2 && !matmul.getTransposeB()) {
        storedType = transposedInner(storedType, bytes);
        transposedRhs = true;
      }
      quantizedRhs =
          constant(builder, loc, storedType,
                   ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                                  bytes.size()),
                   onnxNodeName(loc) + "_int8");
    } else {
      // A constant the pass cannot read (f16 or bf16 values) would be
      // quantized each run in the layout it has.
      if (weightsKMajor && rhsType.getRank() >= 2 && !matmul.getTransposeB() &&
          matmul.getRhs().getDefiningOp<ConstantOp>()) {
        reason = "its weight's values cannot be read at compile time to be "
                 "stored [n][k], as the target reads int8 weights";
        return failure();
      }
      std::optional<double> rhsRange = operandRange(matmul, 1);
      if (!rhsRange) {
        reason = "int8 needs the range of its rhs (--calibrate)";
        return failure();
      }
      rhsScales.push_back(scaleOf(*rhsRange));
      quantizedRhs = QuantizeOp::create(
          builder, loc, rhsType.clone(i8), matmul.getRhs(),
          scalesConstant(builder, loc, rhsScales, false), Value(),
          IntegerAttr());
    }
    float lhsScale = scaleOf(*lhsRange);
    if (chosen) {
      chosen->lhs.assign({lhsScale});
      chosen->rhs.assign(rhsScales.begin(), rhsScales.end());
    }
    Value quantizedLhs = QuantizeOp::create(
        builder, loc,
        cast<RankedTensorType>(matmul.getLhs().getType()).clone(i8), lhs,
        scalesConstant(builder, loc, {lhsScale}, false), Value(),
        IntegerAttr());
    auto product = cast<MatmulOp>(builder.clone(*matmul));
    product->setOperands({quantizedLhs, quantizedRhs});
    product.getResult().setType(matmul.getType().clone(builder.getI32Type()));
    product.setAlphaAttr(builder.getF32FloatAttr(1.0f));
    if (transposedRhs)
      product.setTransposeB(true);
    product->setAttr(kPrecisionAttr, builder.getStringAttr(precisionName));
    SmallVector<float> scales;
    for (float rhsScale : rhsScales)
      scales.push_back(lhsScale * rhsScale * matmul.getAlpha().convertToFloat());
    IntegerAttr axis;
    if (perChannel)
      axis = builder.getI64IntegerAttr(matmul.getType().getRank() - 1);
    return DequantizeOp::create(
               builder, loc, matmul.getType(), product.getResult(),
               scalesConstant(builder, loc, scales, perChannel), Value(), axis)
        .getResult();
  }

  /// Rewrites `matmul` with fp8 E4M3 operands, each per tensor with a
  /// scale of amax / 448 (ONNX's convention: q = x / scale): a constant rhs
  /// quantized now, other operands by tessera.quantize with their
  /// calibrated range. The product of the two scales joins the matmul's
  /// alpha, so dequantization is one multiplication of the fp32
  /// accumulator, in the GEMM's epilogue. With `weightsKMajor`, a constant
  /// rhs read [.., k, n] is stored transposed and read with transpose_b.
  /// Returns the new matmul's result (`matmul` itself is left as it is), or
  /// fails with `reason`.
  FailureOr<Value> quantizeMatmulFp8(MatmulOp matmul, Type fp8, bool current,
                                     bool weightsKMajor, std::string &reason,
                                     ::tessera::OperandScales *chosen) {
    bool e5m2 = isa<Float8E5M2Type>(fp8);
    double largest = e5m2 ? ::tessera::kE5M2Max : ::tessera::kE4M3Max;
    auto scaleOf = [&](double range) {
      return range > 0 ? static_cast<float>(range / largest) : 1.0f;
    };
    OpBuilder builder(matmul);
    Location loc = matmul.getLoc();
    SmallVector<Value, 2> operands, currentScales;
    float product = matmul.getAlpha().convertToFloat();
    bool transposedRhs = false;
    for (unsigned index : {0u, 1u}) {
      Value operand = matmul->getOperand(index);
      auto type = cast<RankedTensorType>(operand.getType());
      if (current && !largestFiniteMagnitude(operand)) {
        Value scale = currentScale(builder, loc, operand, largest);
        currentScales.push_back(scale);
        operands.push_back(QuantizeOp::create(builder, loc, type.clone(fp8),
                                              operand, scale, Value(),
                                              IntegerAttr()));
        continue;
      }
      std::optional<double> range = operandRange(matmul, index);
      if (!range) {
        reason = std::string("fp8 needs the range of its ") +
                 (index == 0 ? "lhs" : "rhs") + " (--calibrate)";
        return failure();
      }
      float scale = scaleOf(*range);
      product *= scale;
      if (chosen)
        (index == 0 ? chosen->lhs : chosen->rhs).assign({scale});
      if (std::optional<SmallVector<float>> values =
              ::tessera::floatElements(operand)) {
        if (index == 1 && weightsKMajor && type.getRank() >= 2 &&
            !matmul.getTransposeB()) {
          type = transposedInner(type, *values);
          transposedRhs = true;
        }
        std::vector<uint8_t> bytes(values->size());
        ::tessera::numerics::QuantizationParams params;
        params.scale = ArrayRef<float>(scale);
        params.axis = 0;
        if (llvm::Error error = ::tessera::numerics::quantizeLinear(
                *values, type.getShape(), params,
                e5m2 ? ::tessera::numerics::QuantizedType::F8E5M2
                     : ::tessera::numerics::QuantizedType::F8E4M3FN,
                bytes)) {
          reason = "its weight could not be quantized: " +
                   llvm::toString(std::move(error));
          return failure();
        }
        operands.push_back(constant(
            builder, loc, type.clone(fp8),
            ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                           bytes.size()),
            onnxNodeName(loc) + "_fp8"));
        continue;
      }
      operands.push_back(QuantizeOp::create(
          builder, loc, type.clone(fp8), operand,
          scalesConstant(builder, loc, {scale}, false), Value(),
          IntegerAttr()));
    }
    auto narrowed = cast<MatmulOp>(builder.clone(*matmul));
    narrowed->setOperands(operands);
    narrowed.setAlphaAttr(builder.getF32FloatAttr(product));
    if (transposedRhs)
      narrowed.setTransposeB(true);
    narrowed->setAttr(kPrecisionAttr, builder.getStringAttr("fp8"));
    Value result = narrowed.getResult();
    for (Value scale : currentScales)
      result = MulOp::create(builder, loc, result.getType(), result, scale);
    return result;
  }

private:
  /// `values` of `type` ([.., k, n], row-major) rewritten in place as their
  /// transpose over the two inner dims; returns its type [.., n, k].
  template <typename Values>
  static RankedTensorType transposedInner(RankedTensorType type,
                                          Values &values) {
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size(), k = shape[rank - 2], n = shape[rank - 1];
    Values result(values.size());
    for (int64_t start = 0; start < int64_t(values.size()); start += k * n)
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
          result[start + j * k + i] = values[start + i * n + j];
    values = std::move(result);
    SmallVector<int64_t> transposed(shape);
    std::swap(transposed[rank - 2], transposed[rank - 1]);
    return type.clone(transposed);
  }

  /// The scale of fp8 current scaling for `operand`, computed by the
  /// program: max(amax(|operand|), 2^-100) / `largest` (448 for E4M3) as
  /// a 0-D tensor (the floor keeps an all-zero operand's scale finite and
  /// non-zero).
  static Value currentScale(OpBuilder &outer, Location loc, Value operand,
                            double largest) {
    // The same values before a transpose or a reshape (attention's output
    // before its heads are merged), reduced right after the op that
    // computes them, so that the reduction joins that op's kernel (see
    // tessera-outline-kernels and the CPU's
    // tessera-cpu-fuse-full-reductions).
    while (Operation *def = operand.getDefiningOp()) {
      if (!isa<TransposeOp, ReshapeOp>(def))
        break;
      operand = def->getOperand(0);
    }
    OpBuilder builder(outer.getContext());
    if (Operation *def = operand.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(cast<BlockArgument>(operand).getOwner());
    auto type = cast<RankedTensorType>(operand.getType());
    auto scalar = RankedTensorType::get({}, type.getElementType());
    auto splat = [&](float value) -> Value {
      return ConstantOp::create(
          builder, loc,
          cast<ElementsAttr>(DenseElementsAttr::get(scalar, value)));
    };
    Value magnitude = AbsOp::create(builder, loc, type, operand);
    Value amax =
        ReduceMaxOp::create(builder, loc, scalar, magnitude,
                            builder.getDenseI64ArrayAttr(llvm::to_vector(
                                llvm::seq<int64_t>(0, type.getRank()))),
                            builder.getBoolAttr(false));
    Value floored = MaxOp::create(builder, loc, scalar, amax,
                                  splat(std::ldexp(1.0f, -100)));
    return DivOp::create(builder, loc, scalar, floored,
                         splat(static_cast<float>(largest)));
  }

  /// The calibration key of operand `operand` of the matmul being
  /// rewritten (computed before the rewrite began).
  std::string operandKey(unsigned operand) const {
    return currentKey + (operand == 0 ? ":lhs" : ":rhs");
  }

  std::string currentKey;
  static constexpr int64_t kInlineElements = 4096;
  const ::tessera::CalibrationTable &calibrated;
  StringRef smoothQuant;
};

} // namespace

namespace tessera {
FailureOr<Value> quantizeMatmul(MatmulOp matmul,
                                const CalibrationTable &calibrated,
                                StringRef key, StringRef smoothQuant,
                                bool weightsKMajor, std::string &reason,
                                OperandScales *scales) {
  return MatmulQuantizer(calibrated, key, smoothQuant)
      .quantizeMatmul(matmul, weightsKMajor, reason, scales);
}

FailureOr<Value> quantizeMatmulFp8(MatmulOp matmul, Type fp8,
                                   const CalibrationTable &calibrated,
                                   StringRef key, bool current,
                                   bool weightsKMajor, std::string &reason,
                                   OperandScales *scales) {
  return MatmulQuantizer(calibrated, key, /*smoothQuant=*/"")
      .quantizeMatmulFp8(matmul, fp8, current, weightsKMajor, reason, scales);
}
} // namespace tessera
