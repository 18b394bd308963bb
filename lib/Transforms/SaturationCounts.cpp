//===- SaturationCounts.cpp - how many values each quantize clips ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera-count-saturation: for each quantize with a scale fixed at compile
// time, the number of elements it saturates on a run, returned as an extra
// output of the entry function (docs/Precision.md, "Saturation at run
// time").
//
//===----------------------------------------------------------------------===//
#include "Matchers.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Runtime/Invoke.h"
#include "tessera/Support/ShapeInference.h"
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace tessera {
#define GEN_PASS_DEF_COUNTSATURATIONPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// Whether `value` is known when the program is compiled: a constant,
/// possibly through casts, reshapes and transposes (a weight, a
/// calibrated scale).
bool isConstant(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<ConstantOp>(def))
      return true;
    if (!isa<CastOp, ReshapeOp, TransposeOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return false;
}

/// The name of `quantize`'s count: the calibration key of the operand it
/// feeds when the quantize was made for that op (same ONNX node; one
/// quantize may feed several matmuls, such as attention's projections,
/// once equal quantizes merge), else the quantize's own node name, else
/// its position.
std::string countKey(QuantizeOp quantize, unsigned position) {
  std::string node = onnxNodeName(quantize.getLoc());
  if (node.empty())
    return "#quantize" + std::to_string(position);
  for (OpOperand &use : quantize->getUses())
    if (onnxNodeName(use.getOwner()->getLoc()) == node &&
        use.getOperandNumber() < 3)
      return ::tessera::calibrationKey(use.getOwner(), use.getOperandNumber());
  return node;
}

class CountSaturationPass
    : public ::tessera::impl::CountSaturationPassBase<CountSaturationPass> {
public:
  using CountSaturationPassBase::CountSaturationPassBase;

  void runOnOperation() override {
    func::FuncOp entry = ::tessera::entryFunction(getOperation());
    if (!entry)
      return;
    unsigned position = 0;
    SmallVector<std::pair<std::string, Value>> counts;
    llvm::StringSet<> keys;
    // Top-level quantizes only: before fusion, where the counts may be
    // returned (one inside a fusion region would not dominate the return).
    for (QuantizeOp quantize : entry.getOps<QuantizeOp>()) {
      unsigned index = position++;
      if (isConstant(quantize.getInput()) || !isConstant(quantize.getScale()))
        continue;
      std::string key = countKey(quantize, index);
      // Two quantizes of one operand name (a model's own): keep both.
      for (int n = 2; !keys.insert(key).second; ++n)
        key = countKey(quantize, index) + "#" + std::to_string(n);
      counts.emplace_back(key, countSaturated(quantize));
    }
    if (counts.empty()) {
      entry.emitWarning("no quantize with a fixed scale to count saturation "
                        "at: the program has no int8 or fp8 activation "
                        "(fp8 current scaling saturates nothing)");
      return;
    }
    for (auto &[key, count] : counts)
      key = ::tessera::runtime::kSaturationOutputPrefix + key;
    if (failed(::tessera::appendNamedResults(entry, counts)))
      signalPassFailure();
  }

private:
  /// Builds, after `quantize`, the count of the elements it saturates and
  /// of all its elements, as a tensor<2xi64>.
  static Value countSaturated(QuantizeOp quantize) {
    OpBuilder builder(quantize->getContext());
    builder.setInsertionPointAfter(quantize);
    Location loc = quantize.getLoc();
    Type f32 = builder.getF32Type();
    auto inputType = cast<RankedTensorType>(quantize.getInput().getType());
    auto type = inputType.clone(f32);
    int64_t rank = type.getRank();
    Value x = quantize.getInput();
    if (!inputType.getElementType().isF32())
      x = CastOp::create(builder, loc, type, x);
    // A per-channel parameter [C] along `axis` broadcast as [1, .., C, .., 1].
    auto broadcastable = [&](Value param) -> Value {
      auto paramType = cast<RankedTensorType>(param.getType());
      if (paramType.getElementType() != f32)
        param = CastOp::create(builder, loc, paramType.clone(f32), param);
      // One value for the whole tensor: as a 0-D tensor (a [1] would
      // broadcast a 0-D input to [1]).
      if (paramType.getRank() == 1 && paramType.getDimSize(0) == 1 &&
          (!quantize.getAxis() || rank == 0))
        return ReshapeOp::create(builder, loc, RankedTensorType::get({}, f32),
                                 param, Value());
      if (!quantize.getAxis() || paramType.getRank() != 1 || rank == 0)
        return param;
      int64_t axis = *::tessera::normalizeAxis(*quantize.getAxis(), rank);
      SmallVector<int64_t> shape(rank, 1);
      shape[axis] = paramType.getDimSize(0);
      return ReshapeOp::create(builder, loc, RankedTensorType::get(shape, f32),
                               param, Value());
    };
    auto splat = [&](double value) -> Value {
      auto scalar = RankedTensorType::get({}, f32);
      return ConstantOp::create(builder, loc,
                                cast<ElementsAttr>(DenseElementsAttr::get(
                                    scalar, static_cast<float>(value))));
    };
    auto boolType = type.clone(builder.getI1Type());
    auto beyond = [&](CompareDirection direction, Value value, double bound) {
      return CompareOp::create(builder, loc, boolType, direction, value,
                               splat(bound))
          .getResult();
    };
    Value scaled = DivOp::create(builder, loc, type, x,
                                 broadcastable(quantize.getScale()));
    Type quantized = quantize.getType().getElementType();
    Value saturated;
    if (auto fp8 = dyn_cast<FloatType>(quantized)) {
      double largest = isa<Float8E5M2Type>(fp8) ? 57344.0 : 448.0;
      saturated = beyond(CompareDirection::gt,
                         AbsOp::create(builder, loc, type, scaled), largest);
    } else {
      // round_half_even(x / s) + zp, an integer q, lies outside [low, high]
      // exactly when |q - (low + high) / 2| > (high - low) / 2 (-0.5 and
      // 127.5 for i8: exact in f32): one chain of single-use ops, which
      // fuses into the count's reduction.
      Value rounded = RoundOp::create(builder, loc, type, scaled);
      if (Value zeroPoint = quantize.getZeroPoint())
        rounded = AddOp::create(builder, loc, type, rounded,
                                broadcastable(zeroPoint));
      unsigned width = quantized.getIntOrFloatBitWidth();
      double low = -std::ldexp(1.0, width - 1), high = -low - 1;
      Value centered =
          SubOp::create(builder, loc, type, rounded, splat((low + high) / 2));
      saturated =
          beyond(CompareDirection::gt,
                 AbsOp::create(builder, loc, type, centered), (high - low) / 2);
    }
    Type i64 = builder.getI64Type();
    auto pair = RankedTensorType::get({1}, i64);
    Value ones = CastOp::create(builder, loc, type.clone(i64), saturated);
    // A 0-D value is its own count (a reduction takes at least one axis).
    Value count = ones;
    if (rank > 0)
      count = ReduceSumOp::create(builder, loc, RankedTensorType::get({}, i64),
                                  ones,
                                  builder.getDenseI64ArrayAttr(llvm::to_vector(
                                      llvm::seq<int64_t>(0, rank))),
                                  builder.getBoolAttr(false));
    count = ReshapeOp::create(builder, loc, pair, count, Value());
    // The number of values, from the (possibly symbolic) shape.
    Value total;
    if (rank == 0) {
      total = ConstantOp::create(
          builder, loc,
          cast<ElementsAttr>(DenseElementsAttr::get(pair, int64_t(1))));
    } else {
      Value shape =
          ShapeOp::create(builder, loc, RankedTensorType::get({rank}, i64), x);
      total = ReduceProdOp::create(builder, loc, pair, shape,
                                   builder.getDenseI64ArrayAttr({0}),
                                   builder.getBoolAttr(true));
    }
    return ConcatOp::create(builder, loc, RankedTensorType::get({2}, i64),
                            ValueRange{count, total},
                            builder.getI64IntegerAttr(0));
  }
};

} // namespace
