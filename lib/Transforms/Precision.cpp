//===- Precision.cpp - precision policies as IR types ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-assign-precision writes a policy's decisions into the IR as
// element types and explicit casts; tessera-legalize-precision widens what
// the target cannot compute. Both read an op's precision class from its
// ODS trait, never from a list of ops. The int8 and fp8 policies quantize
// matmuls with Quantization.cpp.
//
//===----------------------------------------------------------------------===//
#include "tessera/Transforms/Precision.h"
#include "Matchers.h"
#include "Quantization.h"
#include "tessera/Dialect/Tessera/IR/ElementTypes.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

#include <cstring>

namespace tessera {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::kPrecisionAttr;
using ::tessera::largestFiniteMagnitude;
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

std::string reportOutputName(StringRef role, Operation *op, StringRef key) {
  StringRef kind = isa<AttentionOp>(op) ? "attention"
                   : isa<Conv2dOp>(op)  ? "conv"
                   : isa<MatmulOp>(op)  ? "matmul"
                                        : op->getName().stripDialect();
  return (kReportOutputPrefix + role + ":" + kind + ":" + key).str();
}

std::optional<ReportOutput> parseReportOutputName(StringRef name) {
  if (!name.consume_front(kReportOutputPrefix))
    return std::nullopt;
  auto [role, rest] = name.split(':');
  auto [op, key] = rest.split(':');
  if (role.empty() || op.empty() || key.empty())
    return std::nullopt;
  return ReportOutput{role, op, key};
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
    else if (policy == "fp8" && fp8Format == "e5m2")
      narrow = Float8E5M2Type::get(context);
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
    if (fp8Format != "e4m3" && fp8Format != "e5m2") {
      func.emitError() << "unknown fp8 format '" << fp8Format
                       << "' (expected e4m3 or e5m2)";
      return signalPassFailure();
    }
    if (fp8Scaling != "static" && fp8Scaling != "current") {
      func.emitError() << "unknown fp8 scaling '" << fp8Scaling
                       << "' (expected static or current)";
      return signalPassFailure();
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
    quantizedWeightsKMajor = info->storesQuantizedWeightsKMajor();
    if ((policy == "int8" || policy == "fp8") && keepHeads)
      heads = outputHeads(func);
    if ((policy == "int8" || policy == "fp8") && keepFirstLayers)
      firstLayers = inputLayers(func);
    // Keys first: the rewrite adds matmuls (which would shift the
    // positional keys of unnamed ones).
    keys.clear();
    llvm::StringMap<unsigned> unnamed;
    func.walk([&](Operation *op) {
      if (isa<MatmulOp, Conv2dOp, AttentionOp>(op)) {
        std::string key = ::tessera::calibrationKey(op, 0);
        keys[op] = key.substr(0, key.rfind(':'));
      } else if (isReportedNormalization(op)) {
        std::string node = onnxNodeName(op->getLoc());
        StringRef kind = op->getName().stripDialect();
        keys[op] = !node.empty() ? node
                                 : ("#" + kind + Twine(unnamed[kind]++)).str();
      }
    });
    reported.clear();
    reportedOps.clear();
    copies.clear();
    // Contractions whose operands the model dequantizes itself, found
    // before the rewrite adds dequantizations of its own.
    llvm::DenseSet<Operation *> modelQuantized;
    func.walk([&](Operation *op) {
      if (::tessera::precisionClass(op) == OpClass::Contraction &&
          readsModelDequantization(op))
        modelQuantized.insert(op);
    });

    func.walk([&](Operation *op) {
      if (::tessera::precisionClass(op) != OpClass::Contraction)
        return;
      // A model quantized by its exporter (QuantizeLinear/DequantizeLinear
      // around its products) keeps the precision it chose.
      if (modelQuantized.contains(op)) {
        if (onlyNodes.empty() ||
            llvm::is_contained(onlyNodes, onnxNodeName(op->getLoc())))
          op->setAttr(kPrecisionAttr,
                      StringAttr::get(context,
                                      "f32: the model dequantizes its operands "
                                      "itself (DequantizeLinear): kept as "
                                      "exported"));
        return;
      }
      auto matmul = dyn_cast<MatmulOp>(op);
      auto attention = dyn_cast<AttentionOp>(op);
      if (attention && (policy == "bf16" || policy == "fp16") &&
          attention.getQuery().getType().getElementType().isF32() &&
          (onlyNodes.empty() ||
           llvm::is_contained(onlyNodes, onnxNodeName(attention.getLoc())))) {
        decideAttention(attention, narrow, *info, targetHasNarrow, keep);
        return;
      }
      if (auto conv = dyn_cast<Conv2dOp>(op);
          conv && (policy == "bf16" || policy == "fp16") &&
          conv.getInput().getType().getElementType().isF32() &&
          onlyNodes.empty()) {
        decideConvolution(conv, narrow, *info, keep);
        return;
      }
      if (!matmul) {
        if (!onlyNodes.empty())
          return;
        op->setAttr(kPrecisionAttr,
                    StringAttr::get(context,
                                    "f32: " + op->getName().getStringRef() +
                                        " stays f32 under every policy"));
        return;
      }
      if (!::tessera::isNarrowingCandidate(matmul))
        return;
      currentKey = keys.lookup(op);
      if (!onlyNodes.empty() && !llvm::is_contained(onlyNodes, currentKey))
        return;
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
      if (policy == "int8" || policy == "fp8")
        if (std::optional<std::string> reason = info->rejectQuantizedMatmul(
                matmul, policy == "fp8" && fp8Scaling == "current"
                            ? "fp8-current"
                            : policy.getValue())) {
          op->setAttr(kPrecisionAttr,
                      StringAttr::get(context, "f32: " + *reason));
          return;
        }
      // With report=local, a narrow copy reads the same f32 operands and
      // the program goes on in f32: the copy's error is the op's own.
      MatmulOp target = reportTarget(matmul);
      std::string reason;
      ::tessera::OperandScales scales;
      Value result = narrowMatmul(target, narrow, reason, &scales);
      if (!result) {
        if (target != matmul) {
          copies.erase(target);
          target.erase();
        }
        op->setAttr(kPrecisionAttr, StringAttr::get(context, "f32: " + reason));
        return;
      }
      // (Named now: under report=accumulated the matmul may go below.)
      reportNarrowed(matmul, matmul.getResult(), result);
      if (report == "local")
        for (auto [side, values] :
             {std::pair(StringRef("scale_lhs"), ArrayRef<float>(scales.lhs)),
              std::pair(StringRef("scale_rhs"), ArrayRef<float>(scales.rhs))})
          if (!values.empty())
            reported.emplace_back(
                ::tessera::reportOutputName(side, op, keys.lookup(op)),
                scalesConstant(OpBuilder(op), op->getLoc(), values));
      if (result != target.getResult()) {
        if (target == matmul)
          matmul.getResult().replaceAllUsesWith(result);
        // (No erased op stays in the report's sets.)
        copies.erase(target);
        reportedOps.erase(target);
        target.erase();
      }
    });
    // The contractions kept f32 join the report too (under a plan each
    // policy's pass reports its own narrowed matmuls only).
    if (!report.empty() && onlyNodes.empty())
      func.walk([&](Operation *op) {
        if (reportedOps.contains(op) || copies.contains(op))
          return;
        auto decision = op->getAttrOfType<StringAttr>(kPrecisionAttr);
        if ((isa<MatmulOp, AttentionOp, Conv2dOp>(op) && decision &&
             decision.getValue().starts_with("f32")) ||
            isReportedNormalization(op))
          reportKept(op);
      });
    if (remarks)
      func.walk([&](Operation *op) {
        if (!isa<MatmulOp, AttentionOp, Conv2dOp>(op))
          return;
        // Under a plan, each policy's pass speaks for its own matmuls.
        if (!onlyNodes.empty() &&
            !llvm::is_contained(onlyNodes, onnxNodeName(op->getLoc())))
          return;
        if (auto decision = op->getAttrOfType<StringAttr>(kPrecisionAttr))
          op->emitRemark() << "precision " << policy << ": "
                           << decision.getValue();
      });
    if (!reported.empty() && func.isPublic()) {
      Operation *terminator = func.getBody().back().getTerminator();
      for (auto &[outputName, value] : reported) {
        NamedAttribute name(StringAttr::get(context, "tessera.name"),
                            StringAttr::get(context, outputName));
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
  Value narrowMatmul(MatmulOp matmul, Type narrow, std::string &reason,
                     ::tessera::OperandScales *scales) {
    if (policy == "int8") {
      FailureOr<Value> result =
          ::tessera::quantizeMatmul(matmul, calibrated, currentKey, smoothQuant,
                                    quantizedWeightsKMajor, reason, scales);
      return succeeded(result) ? *result : Value();
    }
    if (policy == "fp8") {
      FailureOr<Value> result = ::tessera::quantizeMatmulFp8(
          matmul, narrow, calibrated, currentKey, fp8Scaling == "current",
          quantizedWeightsKMajor, reason, scales);
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
      decide("f32: " + *why + "; its products " + policy +
             " when lowered as matmuls");
      // Its narrow products are reported as a narrowed op's are: under
      // report=local a copy takes them and the op itself stays f32 (so
      // that every reference is f32).
      AttentionOp target = reportTarget(attention);
      target->setAttr(::tessera::kNarrowProductsAttr, TypeAttr::get(narrow));
      reportNarrowed(attention, attention.getResult(), target.getResult());
      return;
    }
    // With report=local a narrow copy reads the same f32 operands, as a
    // matmul's does.
    AttentionOp target = reportTarget(attention);
    Value result = narrowAccumulatingWide(target,
                                          {&target.getQueryMutable(),
                                           &target.getKeyMutable(),
                                           &target.getValueMutable()},
                                          narrow);
    reportNarrowed(attention, attention.getResult(), result);
    // (Under report=local the op itself stays f32: its copy is narrow.)
    target->setAttr(kPrecisionAttr, StringAttr::get(context, policy));
  }

  /// `op` (accumulating in f32 whatever its inputs, as the target computes
  /// it) on `operands` cast to `narrow`, its result of that type too and
  /// cast back to the wide type for its users; returns that cast.
  static Value narrowAccumulatingWide(Operation *op,
                                      ArrayRef<OpOperand *> operands,
                                      Type narrow) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    for (OpOperand *operand : operands)
      operand->set(CastOp::create(
          builder, loc, withElementType(operand->get().getType(), narrow),
          operand->get()));
    builder.setInsertionPointAfter(op);
    Value result = op->getResult(0);
    Type wide = result.getType();
    result.setType(withElementType(wide, narrow));
    auto back = CastOp::create(builder, loc, wide, result);
    result.replaceAllUsesExcept(back, back);
    return back;
  }

  /// The op to narrow: under report=local a copy of `op` beside it (the
  /// program stays f32), else `op` itself.
  template <typename OpTy> OpTy reportTarget(OpTy op) {
    if (report != "local")
      return op;
    auto copy = cast<OpTy>(OpBuilder(op).clone(*op));
    copies.insert(copy);
    return copy;
  }

  /// For the precision report: `op`'s f32 result `reference` and its
  /// narrowed result `narrowed` (report=local: a narrow copy's, beside the
  /// f32 program), or the narrowed program's own (report=accumulated).
  void reportNarrowed(Operation *op, Value reference, Value narrowed) {
    auto name = [&](StringRef role) {
      return ::tessera::reportOutputName(role, op, keys.lookup(op));
    };
    reportedOps.insert(op);
    if (report == "local") {
      reported.emplace_back(name("reference"), reference);
      reported.emplace_back(name("local"), narrowed);
    } else if (report == "accumulated") {
      reported.emplace_back(name("accumulated"), narrowed);
    }
  }

  /// For the precision report: a contraction the policy keeps f32, whose
  /// result is reported beside the narrowed ones' (its own error is none;
  /// under report=accumulated it shows what the narrowed ops before it
  /// pass on): under report=local as the reference and as `kept`.
  void reportKept(Operation *op) {
    auto name = [&](StringRef role) {
      return ::tessera::reportOutputName(role, op, keys.lookup(op));
    };
    Value result = op->getResult(0);
    if (report == "local") {
      reported.emplace_back(name("reference"), result);
      reported.emplace_back(name("kept"), result);
    } else if (report == "accumulated") {
      reported.emplace_back(name("accumulated"), result);
    }
  }

  /// The ops besides contractions that the report lists (f32 under every
  /// policy): normalizations and softmax of f32 values, which show the
  /// error that reaches them.
  static bool isReportedNormalization(Operation *op) {
    return isa<LayerNormOp, RmsNormOp, SoftmaxOp, LogSoftmaxOp>(op) &&
           getElementTypeOrSelf(op->getResult(0).getType()).isF32();
  }

  /// `values` as a constant 1-D f32 tensor.
  static Value scalesConstant(OpBuilder builder, Location loc,
                              ArrayRef<float> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      builder.getF32Type());
    return ConstantOp::create(
        builder, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
  }

  /// A convolution under bf16: its input and filter narrow where the target
  /// accumulates it in f32 (`rejectWideAccumulation` gives no reason), its
  /// result cast back to f32. The bias stays as it is (it is added to the
  /// f32 accumulator). Under fp16 it stays f32: no range rule bounds a
  /// convolution's results yet.
  void decideConvolution(Conv2dOp conv, Type narrow,
                         const ::tessera::TargetInfo &info,
                         ArrayRef<std::pair<std::string, llvm::Regex>> keep) {
    auto decide = [&](const Twine &decision) {
      conv->setAttr(kPrecisionAttr,
                    StringAttr::get(conv.getContext(), decision.str()));
    };
    std::string node = onnxNodeName(conv.getLoc());
    for (const auto &[pattern, regex] : keep)
      if (!node.empty() && regex.match(node))
        return decide("f32: kept by --keep-fp32 pattern '" + pattern + "'");
    if (policy == "fp16")
      return decide("f32: fp16 would round a convolution's results to "
                    "fp16's range, which nothing bounds yet");
    if (std::optional<std::string> why =
            info.rejectWideAccumulation(conv, narrow))
      return decide("f32: " + *why);
    Conv2dOp target = reportTarget(conv);
    Value result = narrowAccumulatingWide(
        target, {&target.getInputMutable(), &target.getFilterMutable()},
        narrow);
    reportNarrowed(conv, conv.getResult(), result);
    target->setAttr(kPrecisionAttr, StringAttr::get(conv.getContext(), policy));
  }

  /// Whether an operand of `op` is, through data movement only (each op's
  /// data operand, its first), the dequantization of 8-bit values: the
  /// model's own DequantizeLinear. (What the int8 policy dequantizes is a
  /// product's i32 accumulator.)
  static bool readsModelDequantization(Operation *op) {
    SmallVector<Value> work(op->getOperands());
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !seen.insert(v).second)
        continue;
      if (auto dequantize = dyn_cast<DequantizeOp>(def)) {
        Type quantized =
            getElementTypeOrSelf(dequantize->getOperand(0).getType());
        if (quantized.getIntOrFloatBitWidth() == 8)
          return true;
        continue;
      }
      if (::tessera::precisionClass(def) == OpClass::DataMovement &&
          def->getNumOperands() > 0)
        work.push_back(def->getOperand(0));
    }
    return false;
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
    if (firstLayers.contains(matmul))
      return "a first layer stays f32 under 8-bit policies";

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
    // The model's own outputs, not the operands calibration and the
    // precision report expose as extra ones.
    func.walk([&](func::ReturnOp ret) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        auto name = func.getResultAttrOfType<StringAttr>(i, "tessera.name");
        if (!name ||
            !name.getValue().starts_with(::tessera::kCalibrationOutputPrefix))
          worklist.push_back(value);
      }
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

  /// Matmuls whose lhs (the activation) the function's arguments reach
  /// through elementwise ops and data movement only: the model's first
  /// layers, which 8-bit policies keep f32 by default as they do output
  /// heads.
  /// Only float values carry activations: a data movement op passes on its
  /// data operand (its first; not a reshape's shape nor a gather's
  /// indices), and an elementwise op whose every other operand is a
  /// constant or reached as well (a residual sum with a deeper value is
  /// not a first layer's input).
  static llvm::DenseSet<Operation *> inputLayers(func::FuncOp func) {
    llvm::DenseSet<Operation *> found;
    llvm::DenseSet<Value> reached;
    auto isFloat = [](Value v) {
      return isa<FloatType>(getElementTypeOrSelf(v.getType()));
    };
    SmallVector<Value> worklist;
    for (BlockArgument arg : func.getArguments())
      if (isFloat(arg))
        worklist.push_back(arg);
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (!reached.insert(value).second)
        continue;
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (auto matmul = dyn_cast<MatmulOp>(user)) {
          if (use.getOperandNumber() == 0)
            found.insert(matmul);
          continue;
        }
        std::optional<OpClass> opClass = ::tessera::precisionClass(user);
        bool passes = false;
        if (opClass == OpClass::DataMovement)
          passes = use.getOperandNumber() == 0;
        else if (isa<CastOp>(user) || opClass == OpClass::Elementwise)
          passes = llvm::all_of(user->getOperands(), [&](Value operand) {
            return reached.contains(operand) ||
                   operand.getDefiningOp<ConstantOp>();
          });
        if (!passes)
          continue;
        for (Value result : user->getResults())
          if (isFloat(result))
            worklist.push_back(result);
      }
    }
    return found;
  }

  /// The calibration key of operand `operand` of the matmul being
  /// rewritten (computed before the rewrite began).
  std::string operandKey(unsigned operand) const {
    return currentKey + (operand == 0 ? ":lhs" : ":rhs");
  }

  static constexpr float kF16Max = 65504.0f;
  std::string currentKey;
  /// The target stores quantized (fp8, int8) weights [.., n, k].
  bool quantizedWeightsKMajor = false;
  ::tessera::CalibrationTable calibrated;
  llvm::DenseSet<Operation *> heads, firstLayers;
  /// Each contraction's report key: its calibration key without the
  /// operand's suffix (taken before the rewrite adds any).
  llvm::DenseMap<Operation *, std::string> keys;
  /// The values report=local|accumulated returns, by output name.
  SmallVector<std::pair<std::string, Value>> reported;
  /// The ops reportNarrowed reported, and the narrow copies report=local
  /// adds beside them.
  llvm::DenseSet<Operation *> reportedOps, copies;
};

} // namespace
