//===- FoldConstants.cpp - evaluate ops whose operands are all constants --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Masks and indices that a model computes from shapes and constants (a
// shifted-window transformer builds its window mask with scatter_nd,
// compares and selects, and gathers its relative position bias from a
// table by constant indices) become constants at compile time: no target
// computes them on every run, and a target that has no such ops (the
// systolic accelerator) never sees them. Values are evaluated in double
// (floats) or 64-bit integers and rounded once to the result's element
// type; results over a size limit, integer divisions by zero, out-of-range
// indices and float weights broadcast to a larger shape stay as they are.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Support/ShapeInference.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <limits>

namespace tessera {
#define GEN_PASS_DEF_FOLDCONSTANTSPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// The largest result folded (elements).
constexpr int64_t kMaxElements = 1 << 20;
/// A float broadcast (a bias to a batch) folds only up to this: larger, it
/// would turn a row that a kernel broadcasts into a full constant.
constexpr int64_t kMaxFloatBroadcast = 4096;

/// A constant's values: doubles for float element types, 64-bit integers
/// for integers (i1 as 0 and 1).
struct Values {
  RankedTensorType type;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isa<FloatType>(type.getElementType()); }
  double number(int64_t k) const {
    return isFloat() ? f[k] : static_cast<double>(i[k]);
  }
};

std::optional<Values> read(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!constant || !type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return std::nullopt;
  Values values{type, {}, {}};
  int64_t count = type.getNumElements();
  Type element = type.getElementType();
  if (isa<FloatType>(element)) {
    values.f.reserve(count);
    for (int64_t k = 0; k < count; ++k)
      values.f.push_back(
          dense.getValues<APFloat>()[dense.isSplat() ? 0 : k].convertToDouble());
    return values;
  }
  if (!isa<IntegerType>(element))
    return std::nullopt;
  values.i.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    APInt v = dense.getValues<APInt>()[dense.isSplat() ? 0 : k];
    values.i.push_back(element.isInteger(1) ? v.getZExtValue()
                                            : v.getSExtValue());
  }
  return values;
}

DenseElementsAttr write(const Values &values) {
  Type element = values.type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> out;
    out.reserve(values.f.size());
    for (double v : values.f) {
      APFloat x(v);
      bool lost;
      x.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      out.push_back(x);
    }
    return DenseElementsAttr::get(values.type, out);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> out;
  out.reserve(values.i.size());
  for (int64_t v : values.i)
    out.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/false,
                        /*implicitTrunc=*/true));
  return DenseElementsAttr::get(values.type, out);
}

/// Values of `type` (zero-initialized).
Values empty(RankedTensorType type) {
  Values out{type, {}, {}};
  if (out.isFloat())
    out.f.assign(type.getNumElements(), 0.0);
  else
    out.i.assign(type.getNumElements(), 0);
  return out;
}

/// Copies element `from` of `source` to element `to` of `result` (same
/// element kind).
void copy(Values &result, int64_t to, const Values &source, int64_t from) {
  if (result.isFloat())
    result.f[to] = source.f[from];
  else
    result.i[to] = source.i[from];
}

/// The element of an operand of shape `shape` that element `flat` of a
/// result of shape `result` reads under numpy broadcasting.
int64_t broadcastIndex(int64_t flat, ArrayRef<int64_t> result,
                       ArrayRef<int64_t> shape) {
  int64_t index = 0, stride = 1;
  int64_t offset = result.size() - shape.size();
  for (int64_t d = static_cast<int64_t>(result.size()) - 1; d >= 0; --d) {
    int64_t coordinate = flat % result[d];
    flat /= result[d];
    int64_t s = d - offset;
    if (s < 0)
      continue;
    if (shape[s] != 1)
      index += coordinate * stride;
    stride *= shape[s];
  }
  return index;
}

/// Element k of each operand for element `flat` of the result.
SmallVector<int64_t> operandIndices(int64_t flat, RankedTensorType result,
                                    ArrayRef<Values> operands) {
  SmallVector<int64_t> indices;
  for (const Values &operand : operands)
    indices.push_back(broadcastIndex(flat, result.getShape(),
                                     operand.type.getShape()));
  return indices;
}

/// Integer arithmetic that wraps (as the result's type does) instead of
/// overflowing.
int64_t wrapping(int64_t a, int64_t b, uint64_t (*fn)(uint64_t, uint64_t)) {
  return static_cast<int64_t>(fn(static_cast<uint64_t>(a),
                                 static_cast<uint64_t>(b)));
}

/// An elementwise op over broadcast operands: `number` computes a float or
/// integer result from the operands' elements as doubles and integers, or
/// fails (nothing is folded).
std::optional<Values> elementwise(
    RankedTensorType type, ArrayRef<Values> operands,
    function_ref<std::optional<double>(ArrayRef<double>)> onFloats,
    function_ref<std::optional<int64_t>(ArrayRef<int64_t>)> onIntegers) {
  Values out = empty(type);
  bool floats = llvm::any_of(operands, [](const Values &v) {
    return v.isFloat();
  });
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    SmallVector<int64_t> at = operandIndices(n, type, operands);
    if (floats) {
      if (!onFloats)
        return std::nullopt;
      SmallVector<double> args;
      for (auto [operand, k] : llvm::zip(operands, at))
        args.push_back(operand.number(k));
      std::optional<double> r = onFloats(args);
      if (!r)
        return std::nullopt;
      if (out.isFloat())
        out.f[n] = *r;
      else
        out.i[n] = static_cast<int64_t>(*r); // a comparison: 0 or 1
    } else {
      if (!onIntegers)
        return std::nullopt;
      SmallVector<int64_t> args;
      for (auto [operand, k] : llvm::zip(operands, at))
        args.push_back(operand.i[k]);
      std::optional<int64_t> r = onIntegers(args);
      if (!r)
        return std::nullopt;
      if (out.isFloat())
        out.f[n] = static_cast<double>(*r);
      else
        out.i[n] = *r;
    }
  }
  return out;
}

std::optional<Values> evaluateElementwise(Operation *op,
                                          ArrayRef<Values> in,
                                          RankedTensorType type) {
  using F = std::optional<double>;
  using I = std::optional<int64_t>;
  auto binary = [&](auto onFloat, auto onInt) {
    return elementwise(
        type, in, [&](ArrayRef<double> a) -> F { return onFloat(a[0], a[1]); },
        [&](ArrayRef<int64_t> a) -> I { return onInt(a[0], a[1]); });
  };
  if (isa<AddOp>(op))
    return binary([](double a, double b) -> F { return a + b; },
                  [](int64_t a, int64_t b) -> I {
                    return wrapping(a, b, [](uint64_t x, uint64_t y) {
                      return x + y;
                    });
                  });
  if (isa<SubOp>(op))
    return binary([](double a, double b) -> F { return a - b; },
                  [](int64_t a, int64_t b) -> I {
                    return wrapping(a, b, [](uint64_t x, uint64_t y) {
                      return x - y;
                    });
                  });
  if (isa<MulOp>(op))
    return binary([](double a, double b) -> F { return a * b; },
                  [](int64_t a, int64_t b) -> I {
                    return wrapping(a, b, [](uint64_t x, uint64_t y) {
                      return x * y;
                    });
                  });
  if (isa<DivOp>(op))
    return binary([](double a, double b) -> F { return a / b; },
                  [](int64_t a, int64_t b) -> I {
                    if (b == 0 ||
                        (b == -1 && a == std::numeric_limits<int64_t>::min()))
                      return std::nullopt; // left to run time
                    return a / b;
                  });
  if (isa<PowOp>(op))
    return elementwise(
        type, in,
        [](ArrayRef<double> a) -> F { return std::pow(a[0], a[1]); },
        nullptr);
  if (isa<MaxOp>(op))
    return binary([](double a, double b) -> F {
                    return std::isnan(a) || std::isnan(b) ? NAN
                                                          : std::max(a, b);
                  },
                  [](int64_t a, int64_t b) -> I { return std::max(a, b); });
  if (isa<MinOp>(op))
    return binary([](double a, double b) -> F {
                    return std::isnan(a) || std::isnan(b) ? NAN
                                                          : std::min(a, b);
                  },
                  [](int64_t a, int64_t b) -> I { return std::min(a, b); });
  if (isa<AndOp, OrOp, XorOp>(op))
    return elementwise(type, in, nullptr, [&](ArrayRef<int64_t> a) -> I {
      if (isa<AndOp>(op))
        return a[0] && a[1];
      if (isa<OrOp>(op))
        return a[0] || a[1];
      return (a[0] != 0) != (a[1] != 0);
    });
  if (auto cmp = dyn_cast<CompareOp>(op)) {
    CompareDirection direction = cmp.getDirection();
    return binary(
        [&](double a, double b) -> F {
          return compareValues(direction, a, b);
        },
        [&](int64_t a, int64_t b) -> I {
          return compareValues(direction, a, b);
        });
  }
  if (isa<WhereOp>(op))
    return elementwise(
        type, in,
        [](ArrayRef<double> a) -> F { return a[0] != 0 ? a[1] : a[2]; },
        [](ArrayRef<int64_t> a) -> I { return a[0] != 0 ? a[1] : a[2]; });
  if (isa<NotOp>(op))
    return elementwise(type, in, nullptr,
                       [](ArrayRef<int64_t> a) -> I { return a[0] == 0; });
  if (isa<NegOp>(op))
    return elementwise(
        type, in, [](ArrayRef<double> a) -> F { return -a[0]; },
        [](ArrayRef<int64_t> a) -> I {
          return wrapping(0, a[0], [](uint64_t x, uint64_t y) { return x - y; });
        });
  // Float math on constants (a scale computed as 1 / sqrt(head dim)).
  if (isa<ReciprocalOp, SqrtOp, RsqrtOp, AbsOp>(op))
    return elementwise(
        type, in,
        [&](ArrayRef<double> a) -> F {
          if (isa<ReciprocalOp>(op))
            return 1.0 / a[0];
          if (isa<SqrtOp>(op))
            return std::sqrt(a[0]);
          if (isa<RsqrtOp>(op))
            return 1.0 / std::sqrt(a[0]);
          return std::fabs(a[0]);
        },
        nullptr);
  if (auto castOp = dyn_cast<CastOp>(op)) {
    Type target = type.getElementType();
    // A saturating cast to fp8 (tessera.cast) gives a value past the
    // largest finite one that value; the rounding below would give NaN or
    // infinity, which only a non-saturating one does.
    std::optional<double> largest;
    if (isa<Float8E4M3FNType, Float8E5M2Type>(target) && castOp.getSaturate())
      largest = APFloat::getLargest(cast<FloatType>(target).getFloatSemantics())
                    .convertToDouble();
    return elementwise(
        type, in,
        [&](ArrayRef<double> a) -> F {
          if (largest && std::fabs(a[0]) > *largest)
            return std::copysign(*largest, a[0]);
          if (isa<FloatType>(target))
            return a[0];
          if (target.isInteger(1))
            return a[0] != 0;
          // Float to integer truncates; out of the target's range it is
          // undefined: left to run time.
          double limit = std::ldexp(1.0, target.getIntOrFloatBitWidth() - 1);
          double value = std::trunc(a[0]);
          if (!std::isfinite(value) || value < -limit || value >= limit)
            return std::nullopt;
          return value;
        },
        [&](ArrayRef<int64_t> a) -> I {
          return target.isInteger(1) ? a[0] != 0 : a[0];
        });
  }
  return std::nullopt;
}

std::optional<Values> evaluateMovement(Operation *op, ArrayRef<Values> in,
                                       RankedTensorType type) {
  Values out = empty(type);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t count = type.getNumElements();
  // Element n of the result as coordinates: delinearize(n, outStrides).
  SmallVector<int64_t> outStrides = computeStrides(shape);
  if (isa<ReshapeOp>(op)) {
    out.f = in[0].f;
    out.i = in[0].i;
    return out;
  }
  if (isa<ExpandOp>(op)) {
    for (int64_t n = 0; n < count; ++n)
      copy(out, n, in[0],
           broadcastIndex(n, shape, in[0].type.getShape()));
    return out;
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> strides = computeStrides(in[0].type.getShape());
    ArrayRef<int64_t> perm = transpose.getPermutation();
    for (int64_t n = 0; n < count; ++n) {
      SmallVector<int64_t> c = delinearize(n, outStrides), source(c.size());
      for (auto [d, p] : llvm::enumerate(perm))
        source[p] = c[d];
      copy(out, n, in[0], linearize(source, strides));
    }
    return out;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    ArrayRef<int64_t> inShape = in[0].type.getShape();
    int64_t rank = inShape.size();
    SmallVector<int64_t> first(rank, 0), step(rank, 1);
    ArrayRef<int64_t> starts = slice.getStarts();
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t axis = slice.getAxes() ? (*slice.getAxes())[k]
                                     : static_cast<int64_t>(k);
      if (axis < 0)
        axis += rank;
      int64_t s = slice.getSteps() ? (*slice.getSteps())[k] : 1;
      if (inShape[axis] == 0 || s == 0)
        continue; // an empty slice (the result has no elements)
      first[axis] = ::tessera::sliceFirstIndex(inShape[axis], starts[k], s);
      step[axis] = s;
    }
    SmallVector<int64_t> strides = computeStrides(inShape);
    for (int64_t n = 0; n < count; ++n) {
      SmallVector<int64_t> c = delinearize(n, outStrides);
      for (int64_t d = 0; d < rank; ++d)
        c[d] = first[d] + c[d] * step[d];
      copy(out, n, in[0], linearize(c, strides));
    }
    return out;
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t rank = shape.size();
    auto axis = static_cast<int64_t>(concat.getAxis()); // I64Attr: unsigned
    if (axis < 0)
      axis += rank;
    for (int64_t n = 0; n < count; ++n) {
      SmallVector<int64_t> c = delinearize(n, outStrides);
      for (const Values &part : in) {
        int64_t size = part.type.getDimSize(axis);
        if (c[axis] < size) {
          copy(out, n, part, linearize(c, computeStrides(part.type.getShape())));
          break;
        }
        c[axis] -= size;
      }
    }
    return out;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    // result[outer..., index dims..., inner...] =
    //   input[outer..., indices[index dims...], inner...]
    ArrayRef<int64_t> inShape = in[0].type.getShape();
    int64_t rank = inShape.size();
    auto axis = static_cast<int64_t>(gather.getAxis()); // I64Attr: unsigned
    if (axis < 0)
      axis += rank;
    int64_t indexRank = in[1].type.getRank();
    SmallVector<int64_t> strides = computeStrides(inShape);
    SmallVector<int64_t> indexStrides = computeStrides(in[1].type.getShape());
    for (int64_t n = 0; n < count; ++n) {
      SmallVector<int64_t> c = delinearize(n, outStrides);
      SmallVector<int64_t> source(c.begin(), c.begin() + axis);
      int64_t index = in[1].i[linearize(
          ArrayRef<int64_t>(c).slice(axis, indexRank), indexStrides)];
      if (index < 0)
        index += inShape[axis];
      if (index < 0 || index >= inShape[axis])
        return std::nullopt; // undefined at run time as in ONNX
      source.push_back(index);
      source.append(c.begin() + axis + indexRank, c.end());
      copy(out, n, in[0], linearize(source, strides));
    }
    return out;
  }
  if (auto scatter = dyn_cast<ScatterNDOp>(op)) {
    if (scatter.getReduction() != ScatterReduction::none)
      return std::nullopt;
    out = in[0];
    ArrayRef<int64_t> dataShape = in[0].type.getShape();
    ArrayRef<int64_t> indexShape = in[1].type.getShape();
    int64_t depth = indexShape.back();
    int64_t tuples = in[1].i.size() / std::max<int64_t>(depth, 1);
    int64_t sliceSize = 1;
    for (int64_t d = depth; d < static_cast<int64_t>(dataShape.size()); ++d)
      sliceSize *= dataShape[d];
    SmallVector<int64_t> strides = computeStrides(dataShape);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t base = 0;
      for (int64_t d = 0; d < depth; ++d) {
        int64_t index = in[1].i[t * depth + d];
        if (index < 0)
          index += dataShape[d];
        if (index < 0 || index >= dataShape[d])
          return std::nullopt;
        base += index * strides[d];
      }
      for (int64_t k = 0; k < sliceSize; ++k)
        copy(out, base + k, in[2], t * sliceSize + k);
    }
    return out;
  }
  return std::nullopt;
}

/// Whether folding `op` would be worth it: float data broadcast to a larger
/// shape (a bias to a batch) stays a broadcast that kernels read as a row.
bool worthFolding(Operation *op, RankedTensorType type) {
  if (!isa<ExpandOp>(op) || !isa<FloatType>(type.getElementType()))
    return true;
  return type.getNumElements() <= kMaxFloatBroadcast;
}

struct FoldConstantsPass
    : ::tessera::impl::FoldConstantsPassBase<FoldConstantsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
          op->getNumOperands() == 0 || isa<ConstantOp>(op))
        return;
      auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!type || !type.hasStaticShape() ||
          type.getNumElements() > kMaxElements || !worthFolding(op, type) ||
          !(isa<FloatType>(type.getElementType()) ||
            isa<IntegerType>(type.getElementType())))
        return;
      SmallVector<Values> in;
      for (Value operand : op->getOperands()) {
        std::optional<Values> values = read(operand);
        if (!values)
          return;
        in.push_back(std::move(*values));
      }
      std::optional<Values> result = evaluateElementwise(op, in, type);
      if (!result)
        result = evaluateMovement(op, in, type);
      if (!result)
        return;
      result->type = type;
      OpBuilder b(op);
      Value constant =
          ConstantOp::create(b, op->getLoc(), cast<ElementsAttr>(write(*result)));
      op->getResult(0).replaceAllUsesWith(constant);
      dead.push_back(op);
    });
    // The folded ops, then the constants only they read.
    SetVector<Operation *> inputs;
    for (Operation *op : dead)
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          inputs.insert(def);
    for (Operation *op : dead)
      op->erase();
    for (Operation *op : llvm::reverse(inputs))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
