//===- Precision.cpp - precision policies as IR types ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-assign-precision writes a policy's decisions into the IR as
// element types and explicit casts; tessera-legalize-precision widens what
// the target cannot compute. Both read an op's precision class from its
// ODS trait, never from a list of ops.
//
//===----------------------------------------------------------------------===//
#include "tessera/Transforms/Precision.h"
#include "Matchers.h"
#include "tessera/Dialect/Tessera/IR/ElementTypes.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Support/Numerics.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <cstring>

namespace tessera {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::kPrecisionAttr;
using ::tessera::OpClass;

namespace tessera {
std::optional<OpClass> precisionClass(Operation *op) {
  if (op->hasTrait<mlir::tessera::OpTrait::ComputesNarrow>())
    return OpClass::Contraction;
  if (op->hasTrait<mlir::tessera::OpTrait::FollowsInputs>())
    return OpClass::Elementwise;
  if (op->hasTrait<mlir::tessera::OpTrait::ComputesWide>())
    return OpClass::Reduction;
  if (op->hasTrait<mlir::tessera::OpTrait::MovesData>())
    return OpClass::DataMovement;
  return std::nullopt;
}

ArrayRef<StringRef> precisionPolicies() {
  static const StringRef kPolicies[] = {"fp32", "bf16", "fp16", "fp8",
                                        "int8"};
  return kPolicies;
}

bool isPrecisionPolicy(StringRef policy) {
  return llvm::is_contained(precisionPolicies(), policy);
}

bool isNarrowingCandidate(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  if (!matmul)
    return false;
  auto isF32 = [](Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType().isF32();
  };
  return isF32(matmul.getLhs()) && isF32(matmul.getRhs()) &&
         isa<FloatType>(matmul.getType().getElementType());
}

} // namespace tessera

/// `type` with `element` as its element type.
static RankedTensorType withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}


/// The largest finite |x| of `values`.
static float largestFinite(ArrayRef<float> values) {
  float largest = 0;
  for (float element : values)
    if (std::isfinite(element))
      largest = std::max(largest, std::fabs(element));
  return largest;
}

/// The largest finite |value| of a float constant, or nothing when `value`
/// is not an f32 constant the compiler can read.
static std::optional<float> largestFiniteMagnitude(Value value) {
  if (std::optional<SmallVector<float>> values = ::tessera::floatElements(value))
    return largestFinite(*values);
  return std::nullopt;
}

namespace {

class AssignPrecisionPass
    : public ::tessera::impl::AssignPrecisionPassBase<AssignPrecisionPass> {
public:
  using AssignPrecisionPassBase::AssignPrecisionPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    Type narrow;
    if (policy == "bf16")
      narrow = BFloat16Type::get(context);
    else if (policy == "fp16")
      narrow = Float16Type::get(context);
    else if (policy == "fp8")
      narrow = Float8E4M3FNType::get(context);
    else if (policy == "int8")
      narrow = IntegerType::get(context, 8);
    else if (policy != "fp32") {
      func.emitError() << "unknown precision policy '" << policy
                       << "' (expected one of: fp32, bf16, fp16, fp8, int8)";
      return signalPassFailure();
    }
    SmallVector<std::pair<std::string, llvm::Regex>> keep;
    for (const std::string &pattern : keepFp32) {
      llvm::Regex regex("^(" + pattern + ")$");
      std::string error;
      if (!regex.isValid(error)) {
        func.emitError() << "--keep-fp32 pattern '" << pattern
                         << "' is not a valid regular expression: " << error;
        return signalPassFailure();
      }
      keep.emplace_back(pattern, std::move(regex));
    }
    if (report != "" && report != "local" && report != "accumulated") {
      func.emitError() << "unknown report mode '" << report
                       << "' (expected local or accumulated)";
      return signalPassFailure();
    }
    if (!narrow)
      return;
    if (!calibration.empty()) {
      auto buffer = llvm::MemoryBuffer::getFile(calibration);
      if (!buffer) {
        func.emitError() << "cannot read the calibration cache '"
                         << calibration << "': " << buffer.getError().message();
        return signalPassFailure();
      }
      auto table = ::tessera::CalibrationTable::fromJSON(
          (*buffer)->getBuffer());
      if (!table) {
        func.emitError() << calibration << ": "
                         << llvm::toString(table.takeError());
        return signalPassFailure();
      }
      calibrated = std::move(*table);
    }
    std::unique_ptr<::tessera::TargetInfo> info =
        ::tessera::lookupTargetInfo(target);
    if (!info) {
      func.emitError() << "no target named '" << target << "'";
      return signalPassFailure();
    }
    std::optional<::tessera::ElementType> narrowType =
        ::tessera::elementTypeOf(narrow);
    bool targetHasNarrow =
        narrowType &&
        llvm::is_contained(info->supportedElementTypes(OpClass::Contraction),
                           *narrowType);
    if ((policy == "int8" || policy == "fp8") && keepHeads)
      heads = outputHeads(func);
    // Keys first: the rewrite adds matmuls (which would shift the
    // positional keys of unnamed ones).
    llvm::DenseMap<Operation *, std::string> keys;
    func.walk([&](MatmulOp matmul) {
      std::string key = ::tessera::calibrationKey(matmul, 0);
      keys[matmul] = key.substr(0, key.size() - StringRef(":lhs").size());
    });
    SmallVector<std::tuple<StringRef, std::string, Value>> reported;

    func.walk([&](Operation *op) {
      if (::tessera::precisionClass(op) != OpClass::Contraction)
        return;
      auto matmul = dyn_cast<MatmulOp>(op);
      auto attention = dyn_cast<AttentionOp>(op);
      if (attention && (policy == "bf16" || policy == "fp16") &&
          attention.getQuery().getType().getElementType().isF32()) {
        decideAttention(attention, narrow, *info, targetHasNarrow, keep);
        return;
      }
      if (!matmul) {
        op->setAttr(kPrecisionAttr,
                    StringAttr::get(context,
                                    "f32: " + op->getName().getStringRef() +
                                        " stays f32 under every policy"));
        return;
      }
      if (!::tessera::isNarrowingCandidate(matmul))
        return;
      currentKey = keys.lookup(op);
      if (!targetHasNarrow) {
        op->setAttr(kPrecisionAttr,
                    StringAttr::get(context, "f32: the " + target +
                                                 " target has no " + policy +
                                                 " contractions"));
        return;
      }
      if (std::optional<std::string> reason = keepReason(matmul, keep)) {
        op->setAttr(kPrecisionAttr, StringAttr::get(context, "f32: " + *reason));
        return;
      }
      // With report=local, a narrow copy reads the same f32 operands and
      // the program goes on in f32: the copy's error is the op's own.
      auto target = report == "local"
                        ? cast<MatmulOp>(OpBuilder(op).clone(*op))
                        : matmul;
      std::string reason;
      Value result = narrowMatmul(target, narrow, reason);
      if (!result) {
        if (target != matmul)
          target.erase();
        op->setAttr(kPrecisionAttr, StringAttr::get(context, "f32: " + reason));
        return;
      }
      if (result != target.getResult()) {
        if (target == matmul)
          matmul.getResult().replaceAllUsesWith(result);
        target.erase();
      }
      const std::string &key = keys.lookup(op);
      if (report == "local") {
        reported.emplace_back("reference", key, matmul.getResult());
        reported.emplace_back("local", key, result);
      } else if (report == "accumulated") {
        reported.emplace_back("accumulated", key, result);
      }
    });
    if (remarks)
      func.walk([&](Operation *op) {
        if (!isa<MatmulOp, AttentionOp>(op))
          return;
        if (auto decision = op->getAttrOfType<StringAttr>(kPrecisionAttr))
          op->emitRemark() << "precision " << policy << ": "
                           << decision.getValue();
      });
    if (!reported.empty() && func.isPublic()) {
      Operation *terminator = func.getBody().back().getTerminator();
      for (auto &[role, key, value] : reported) {
        NamedAttribute name(
            StringAttr::get(context, "tessera.name"),
            StringAttr::get(context, ::tessera::kReportOutputPrefix +
                                         role.str() + ":" + key));
        if (failed(func.insertResult(func.getNumResults(), value.getType(),
                                     DictionaryAttr::get(context, {name}))))
          return signalPassFailure();
        terminator->insertOperands(terminator->getNumOperands(), value);
      }
    }
  }

private:
  /// `matmul` made narrow: its operands cast to `narrow` (bf16, fp16), or
  /// quantized (int8: the dequantized result is a new value, `matmul` is
  /// left for the caller to replace). Null, with `reason`, when it stays
  /// f32.
  Value narrowMatmul(MatmulOp matmul, Type narrow, std::string &reason) {
    if (policy == "int8") {
      FailureOr<Value> result = quantizeMatmul(matmul, reason);
      return succeeded(result) ? *result : Value();
    }
    if (policy == "fp8") {
      FailureOr<Value> result = quantizeMatmulFp8(matmul, narrow, reason);
      return succeeded(result) ? *result : Value();
    }
    OpBuilder builder(matmul);
    for (OpOperand &operand : matmul->getOpOperands())
      operand.set(CastOp::create(
          builder, matmul.getLoc(),
          withElementType(operand.get().getType(), narrow), operand.get()));
    matmul->setAttr(kPrecisionAttr, builder.getStringAttr(policy));
    return matmul.getResult();
  }

  /// Attention under bf16/fp16: with narrow query, key and value where the
  /// target accumulates it in f32 (a fused kernel; the mask stays as it
  /// is, the result is cast back to f32). Where it does not, it stays f32
  /// but its two products take the narrow type when the lowering computes
  /// them as matmuls, as the policy narrows any other matmul (on a target
  /// with narrow contractions). Nothing narrows under a --keep-fp32
  /// pattern that names its node, nor under fp16 with an operand beyond
  /// fp16's range.
  void decideAttention(AttentionOp attention, Type narrow,
                       const ::tessera::TargetInfo &info, bool targetHasNarrow,
                       ArrayRef<std::pair<std::string, llvm::Regex>> keep) {
    MLIRContext *context = attention.getContext();
    auto decide = [&](const Twine &decision) {
      attention->setAttr(kPrecisionAttr,
                         StringAttr::get(context, decision.str()));
    };
    std::string node = onnxNodeName(attention.getLoc());
    for (const auto &[pattern, regex] : keep)
      if (!node.empty() && regex.match(node))
        return decide("f32: kept by --keep-fp32 pattern '" + pattern + "'");
    if (policy == "fp16")
      for (unsigned i : {0u, 1u, 2u}) {
        if (std::optional<float> largest =
                largestFiniteMagnitude(attention->getOperand(i));
            largest && *largest > kF16Max)
          return decide(llvm::formatv("f32: an operand holds values beyond "
                                      "fp16's range (largest |x| {0:e0})",
                                      *largest)
                            .str());
        // An activation, by what calibration saw.
        auto it =
            calibrated.amax.find(::tessera::calibrationKey(attention, i));
        if (it != calibrated.amax.end() && it->second > kF16Max)
          return decide(llvm::formatv("f32: its {0} reaches {1:e1} in "
                                      "calibration, beyond fp16's range",
                                      i == 0   ? "query"
                                      : i == 1 ? "key"
                                               : "value",
                                      it->second)
                            .str());
      }
    if (std::optional<std::string> why =
            info.rejectWideAccumulation(attention, narrow)) {
      if (!targetHasNarrow)
        return decide("f32: " + *why);
      attention->setAttr(::tessera::kNarrowProductsAttr, TypeAttr::get(narrow));
      return decide("f32: " + *why + "; its products " + policy +
                    " when lowered as matmuls");
    }
    OpBuilder builder(attention);
    Location loc = attention.getLoc();
    for (OpOperand *operand :
         {&attention.getQueryMutable(), &attention.getKeyMutable(),
          &attention.getValueMutable()})
      operand->set(CastOp::create(
          builder, loc, withElementType(operand->get().getType(), narrow),
          operand->get()));
    builder.setInsertionPointAfter(attention);
    Value result = attention.getResult();
    Type wide = result.getType();
    result.setType(withElementType(wide, narrow));
    auto back = CastOp::create(builder, loc, wide, result);
    result.replaceAllUsesExcept(back, back);
    decide(policy);
  }

  /// Why `matmul` stays f32 under this policy, or nothing.
  std::optional<std::string>
  keepReason(MatmulOp matmul,
             ArrayRef<std::pair<std::string, llvm::Regex>> keep) const {
    std::string node = onnxNodeName(matmul.getLoc());
    for (const auto &[pattern, regex] : keep)
      if (!node.empty() && regex.match(node))
        return "kept by --keep-fp32 pattern '" + pattern + "'";
    if (heads.contains(matmul))
      return "an output head stays f32 under 8-bit policies";

    if (policy != "fp16")
      return std::nullopt;
    for (Value operand : {matmul.getLhs(), matmul.getRhs()})
      if (std::optional<float> largest = largestFiniteMagnitude(operand);
          largest && *largest > kF16Max)
        return llvm::formatv("a weight holds values beyond fp16's range "
                             "(largest |x| {0:e0})",
                             *largest)
            .str();
    for (unsigned operand : {0u, 1u}) {
      auto it = calibrated.amax.find(operandKey(operand));
      if (it != calibrated.amax.end() && it->second > kF16Max)
        return llvm::formatv("its {0} reaches {1:e1} in calibration, beyond "
                             "fp16's range",
                             operand == 0 ? "lhs" : "rhs", it->second)
            .str();
    }
    return std::nullopt;
  }

  /// The matmuls whose results reach the function's results through
  /// elementwise ops and data movement only (output heads, which 8-bit
  /// policies keep wide as the anchors do).
  static llvm::DenseSet<Operation *> outputHeads(func::FuncOp func) {
    llvm::DenseSet<Operation *> found, visited;
    SmallVector<Value> worklist;
    func.walk([&](func::ReturnOp ret) {
      worklist.append(ret.getOperands().begin(), ret.getOperands().end());
    });
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val().getDefiningOp();
      if (!op || !visited.insert(op).second)
        continue;
      if (isa<MatmulOp>(op)) {
        found.insert(op);
        continue;
      }
      std::optional<OpClass> opClass = ::tessera::precisionClass(op);
      if (isa<CastOp>(op) || opClass == OpClass::Elementwise ||
          opClass == OpClass::DataMovement)
        worklist.append(op->getOperands().begin(), op->getOperands().end());
    }
    return found;
  }

  /// The largest |x| of operand `operand` of `matmul`: a constant's own,
  /// else the calibrated one.
  std::optional<double> operandRange(MatmulOp matmul, unsigned operand) const {
    if (std::optional<float> largest =
            largestFiniteMagnitude(matmul->getOperand(operand)))
      return *largest;
    auto it = calibrated.amax.find(operandKey(operand));
    if (it == calibrated.amax.end())
      return std::nullopt;
    return it->second;
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
  /// for `matmul`'s lhs channels j (its calibrated per-channel statistics)
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
    const std::vector<double> &xAmax = stats->second.amax;
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

  /// Rewrites `matmul` as quantize -> i8 x i8 -> i32 matmul -> dequantize:
  /// symmetric scales (amax / 127), the lhs per tensor from its range, a
  /// constant 2-D rhs per output channel (quantized now), another rhs per
  /// tensor; the dequantization applies both scales and the matmul's
  /// alpha to the i32 accumulator, whose result this returns; `matmul`
  /// itself is left as it is. Fails, with `reason`, when it stays f32.
  FailureOr<Value> quantizeMatmul(MatmulOp matmul, std::string &reason) {
    std::optional<double> lhsRange = operandRange(matmul, 0);
    if (!lhsRange) {
      reason = "int8 needs the range of its lhs (--calibrate)";
      return failure();
    }
    auto scaleOf = [](double range) {
      return range > 0 ? static_cast<float>(range / 127.0) : 1.0f;
    };
    OpBuilder builder(matmul);
    Location loc = matmul.getLoc();
    Type i8 = builder.getI8Type();
    auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
    SmallVector<float> rhsScales;
    bool perChannel = false;
    Value quantizedRhs;
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
      quantizedRhs = constant(
          builder, loc, rhsType.clone(i8),
          ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                         bytes.size()),
          onnxNodeName(loc) + "_int8");
    } else {
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
    Value quantizedLhs = QuantizeOp::create(
        builder, loc,
        cast<RankedTensorType>(matmul.getLhs().getType()).clone(i8), lhs,
        scalesConstant(builder, loc, {lhsScale}, false), Value(),
        IntegerAttr());
    auto product = cast<MatmulOp>(builder.clone(*matmul));
    product->setOperands({quantizedLhs, quantizedRhs});
    product.getResult().setType(matmul.getType().clone(builder.getI32Type()));
    product.setAlphaAttr(builder.getF32FloatAttr(1.0f));
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
  /// accumulator, in the GEMM's epilogue. Returns the new matmul's result
  /// (`matmul` itself is left as it is), or fails with `reason`.
  FailureOr<Value> quantizeMatmulFp8(MatmulOp matmul, Type fp8,
                                     std::string &reason) {
    constexpr double kE4M3Max = 448.0;
    auto scaleOf = [](double range) {
      return range > 0 ? static_cast<float>(range / kE4M3Max) : 1.0f;
    };
    OpBuilder builder(matmul);
    Location loc = matmul.getLoc();
    SmallVector<Value, 2> operands;
    float product = matmul.getAlpha().convertToFloat();
    for (unsigned index : {0u, 1u}) {
      Value operand = matmul->getOperand(index);
      auto type = cast<RankedTensorType>(operand.getType());
      std::optional<double> range = operandRange(matmul, index);
      if (!range) {
        reason = std::string("fp8 needs the range of its ") +
                 (index == 0 ? "lhs" : "rhs") + " (--calibrate)";
        return failure();
      }
      float scale = scaleOf(*range);
      product *= scale;
      if (std::optional<SmallVector<float>> values =
              ::tessera::floatElements(operand)) {
        std::vector<uint8_t> bytes(values->size());
        ::tessera::numerics::QuantizationParams params;
        params.scale = ArrayRef<float>(scale);
        params.axis = 0;
        if (llvm::Error error = ::tessera::numerics::quantizeLinear(
                *values, type.getShape(), params,
                ::tessera::numerics::QuantizedType::F8E4M3FN, bytes)) {
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
    narrowed->setAttr(kPrecisionAttr, builder.getStringAttr("fp8"));
    return narrowed.getResult();
  }

  /// The calibration key of operand `operand` of the matmul being
  /// rewritten (computed before the rewrite began).
  std::string operandKey(unsigned operand) const {
    return currentKey + (operand == 0 ? ":lhs" : ":rhs");
  }

  static constexpr float kF16Max = 65504.0f;
  std::string currentKey;
  static constexpr int64_t kInlineElements = 4096;
  ::tessera::CalibrationTable calibrated;
  llvm::DenseSet<Operation *> heads;
};

} // namespace
