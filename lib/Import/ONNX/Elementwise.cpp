//===- Elementwise.cpp - ONNX arithmetic, logic and activations -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

#include <limits>

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// Integer arithmetic on known (shape) values, entry by entry with scalar
/// broadcasting; an unknown entry stays unknown.
static std::optional<SmallVector<int64_t>>
foldKnown(GraphImporter &im, Value lhs, Value rhs,
          int64_t (*fn)(int64_t, int64_t)) {
  auto a = im.knownInts(lhs), b = im.knownInts(rhs);
  if (!a || !b || tensorType(lhs).getRank() > 1 ||
      tensorType(rhs).getRank() > 1)
    return std::nullopt;
  if (a->empty() || b->empty() ||
      (a->size() != b->size() && a->size() != 1 && b->size() != 1))
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  SmallVector<int64_t> result;
  for (size_t i = 0; i < n; ++i) {
    int64_t x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
    result.push_back(x == ::tessera::kDynamicDim || y == ::tessera::kDynamicDim
                         ? ::tessera::kDynamicDim
                         : fn(x, y));
  }
  return result;
}

template <typename OpTy>
static LogicalResult convertBinary(GraphImporter &im, const onnx::NodeProto &) {
  Value lhs = im.input(0), rhs = im.input(1);
  if (!lhs || !rhs)
    return failure();
  auto build = [&] { return im.inferred<OpTy>(lhs, rhs); };
  // Shape arithmetic (Shape -> Mul -> Reshape) keeps folding.
  int64_t (*fn)(int64_t, int64_t) = nullptr;
  if constexpr (std::is_same_v<OpTy, ts::AddOp>)
    fn = [](int64_t x, int64_t y) { return x + y; };
  if constexpr (std::is_same_v<OpTy, ts::SubOp>)
    fn = [](int64_t x, int64_t y) { return x - y; };
  if constexpr (std::is_same_v<OpTy, ts::MulOp>)
    fn = [](int64_t x, int64_t y) { return x * y; };
  if constexpr (std::is_same_v<OpTy, ts::DivOp>)
    fn = [](int64_t x, int64_t y) {
      if (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min()))
        return ::tessera::kDynamicDim; // left to the op
      return x / y;
    };
  std::optional<SmallVector<int64_t>> ints;
  if (fn && isa<IntegerType>(elementType(lhs)))
    ints = foldKnown(im, lhs, rhs, fn);
  if (!ints)
    return im.setOutput(0, build());
  auto shape = ::tessera::broadcastShapes(tensorType(lhs).getShape(),
                                          tensorType(rhs).getShape());
  if (!shape) {
    llvm::consumeError(shape.takeError());
    return im.setOutput(0, build());
  }
  return im.setIntsOutput(*ints, *shape, build);
}

/// ONNX Pow allows an exponent of another type; tessera.pow wants one type.
static LogicalResult convertPow(GraphImporter &im, const onnx::NodeProto &) {
  Value base = im.input(0), exponent = im.input(1);
  if (!base || !exponent)
    return failure();
  if (elementType(exponent) != elementType(base))
    exponent = im.create<ts::CastOp>(
        RankedTensorType::get(tensorType(exponent).getShape(),
                              elementType(base)),
        exponent);
  return im.setOutput(0, im.inferred<ts::PowOp>(base, exponent));
}

/// Max and Min take one or more inputs.
template <typename OpTy>
static LogicalResult convertVariadic(GraphImporter &im,
                                     const onnx::NodeProto &node) {
  Value result = im.input(0);
  for (int i = 1; result && i < node.input_size(); ++i) {
    Value next = im.input(i);
    result = next ? im.inferred<OpTy>(result, next) : Value();
  }
  return im.setOutput(0, result);
}

template <ts::CompareDirection direction>
static LogicalResult convertCompare(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value lhs = im.input(0), rhs = im.input(1);
  if (!lhs || !rhs)
    return failure();
  auto build = [&] { return im.inferred<ts::CompareOp>(direction, lhs, rhs); };
  // Comparisons of shape values (Equal(shape, -1) in exported Expand
  // chains) fold like the arithmetic.
  auto compare = [](int64_t x, int64_t y) -> int64_t {
    return ts::compareValues(direction, x, y);
  };
  std::optional<SmallVector<int64_t>> ints;
  if (isa<IntegerType>(elementType(lhs)))
    ints = foldKnown(im, lhs, rhs, compare);
  auto shape = ::tessera::broadcastShapes(tensorType(lhs).getShape(),
                                          tensorType(rhs).getShape());
  if (!ints || !shape) {
    if (!shape)
      llvm::consumeError(shape.takeError());
    return im.setOutput(0, build());
  }
  return im.setIntsOutput(*ints, *shape, build, im.builder().getI1Type());
}

template <typename OpTy>
static LogicalResult convertUnary(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  auto build = [&]() -> Value { return im.create<OpTy>(x); };
  // Negated shape values (-axis in exported LayerNorm) keep folding.
  if constexpr (std::is_same_v<OpTy, ts::NegOp>) {
    std::optional<ArrayRef<int64_t>> known = im.knownInts(x);
    if (known && isa<IntegerType>(elementType(x)) &&
        tensorType(x).getRank() <= 1) {
      SmallVector<int64_t> negated;
      for (int64_t v : *known)
        negated.push_back(v == ::tessera::kDynamicDim ? v : -v);
      return im.setIntsOutput(negated, tensorType(x).getShape(), build,
                              elementType(x));
    }
  }
  return im.setOutput(0, build());
}

/// Identity, and Dropout at inference: the input passes through.
static LogicalResult convertIdentity(GraphImporter &im,
                                     const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  if (node.op_type() == "Dropout") {
    // Training mode drops nothing when the ratio is 0 (the default is
    // 0.5), as exports of F.dropout(x, p=0.0, training=True) say.
    if (Value training = im.optionalInput(2)) {
      std::optional<double> flag = im.constantFloat(training);
      Value ratio = im.optionalInput(1);
      std::optional<double> p = ratio ? im.constantFloat(ratio) : 0.5;
      if ((!flag || *flag != 0.0) && (!p || *p != 0.0))
        return im.emitError() << "only inference (training_mode = false, "
                                 "or a ratio of 0) is supported";
    }
    // At inference every element is kept: the mask is all true.
    if (node.output_size() > 1 && !node.output(1).empty()) {
      RankedTensorType type = tensorType(x);
      auto maskType = RankedTensorType::get(
          type.getShape(), IntegerType::get(&im.context(), 1));
      Value mask;
      if (type.hasStaticShape()) {
        mask = im.create<ts::ConstantOp>(
            cast<ElementsAttr>(DenseElementsAttr::get(maskType, true)));
      } else {
        // x == x or x != x holds for every element, NaN included.
        Value same = im.inferred<ts::CompareOp>(ts::CompareDirection::eq, x, x);
        Value differ =
            im.inferred<ts::CompareOp>(ts::CompareDirection::ne, x, x);
        mask = same && differ ? im.inferred<ts::OrOp>(same, differ) : Value();
      }
      if (failed(im.setOutput(1, mask)))
        return failure();
    }
  }
  return im.setOutput(0, x);
}

/// LeakyRelu(x) = x < 0 ? alpha * x : x.
static LogicalResult convertLeakyRelu(GraphImporter &im,
                                      const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  Value zero = im.constantScalar(0.0, type);
  Value alpha = im.constantScalar(im.floatAttr("alpha", 0.01f), type);
  Value negative =
      im.inferred<ts::CompareOp>(ts::CompareDirection::lt, x, zero);
  Value scaled = im.inferred<ts::MulOp>(x, alpha);
  return im.setOutput(0, im.inferred<ts::WhereOp>(negative, scaled, x));
}

/// alpha * (exp(x) - 1) where x < 0 (<= 0 for Selu), x elsewhere, times
/// gamma: Elu (gamma 1) and Selu.
static Value exponentialUnit(GraphImporter &im, Value x, double alpha,
                             double gamma, ts::CompareDirection negative) {
  Type type = elementType(x);
  Value below = im.inferred<ts::CompareOp>(negative, x,
                                           im.constantScalar(0.0, type));
  Value expm1 = im.inferred<ts::SubOp>(im.create<ts::ExpOp>(x),
                                       im.constantScalar(1.0, type));
  Value scaled =
      expm1 ? im.inferred<ts::MulOp>(expm1, im.constantScalar(alpha, type))
            : Value();
  Value picked =
      below && scaled ? im.inferred<ts::WhereOp>(below, scaled, x) : Value();
  if (!picked || gamma == 1.0)
    return picked;
  return im.inferred<ts::MulOp>(picked, im.constantScalar(gamma, type));
}

static LogicalResult convertElu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  return im.setOutput(0, exponentialUnit(im, x, im.floatAttr("alpha", 1.0f),
                                         1.0, ts::CompareDirection::lt));
}

static LogicalResult convertSelu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  return im.setOutput(
      0, exponentialUnit(im, x, im.floatAttr("alpha", 1.67326319217681884765625f),
                         im.floatAttr("gamma", 1.05070102214813232421875f),
                         ts::CompareDirection::le));
}

/// log(1 + exp(x)).
static LogicalResult convertSoftplus(GraphImporter &im,
                                     const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Value shifted = im.inferred<ts::AddOp>(
      im.create<ts::ExpOp>(x), im.constantScalar(1.0, elementType(x)));
  return im.setOutput(0, shifted ? im.create<ts::LogOp>(shifted) : Value());
}

/// x / (1 + |x|).
static LogicalResult convertSoftsign(GraphImporter &im,
                                     const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Value denominator = im.inferred<ts::AddOp>(
      im.create<ts::AbsOp>(x), im.constantScalar(1.0, elementType(x)));
  return im.setOutput(
      0, denominator ? im.inferred<ts::DivOp>(x, denominator) : Value());
}

/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
static LogicalResult convertCelu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  double alpha = im.floatAttr("alpha", 1.0f);
  if (alpha == 0.0)
    return im.emitError() << "alpha must not be 0";
  Value zero = im.constantScalar(0.0, type);
  Value scaled = im.inferred<ts::DivOp>(x, im.constantScalar(alpha, type));
  Value expm1 =
      scaled ? im.inferred<ts::SubOp>(im.create<ts::ExpOp>(scaled),
                                      im.constantScalar(1.0, type))
             : Value();
  Value negative =
      expm1 ? im.inferred<ts::MinOp>(
                  im.inferred<ts::MulOp>(expm1, im.constantScalar(alpha, type)),
                  zero)
            : Value();
  Value positive = im.inferred<ts::MaxOp>(x, zero);
  return im.setOutput(0, negative && positive
                             ? im.inferred<ts::AddOp>(positive, negative)
                             : Value());
}

/// The remainder of a / b. With fmod = 1, C's fmod: a - trunc(a / b) * b,
/// the sign of a; with fmod = 0 (integers only), the sign of b: that
/// remainder plus b where it is non-zero and its sign differs from b's.
/// ONNX Mod's two rules: fmod = 1 takes the dividend's sign (C's %),
/// fmod = 0 the divisor's (Python's %); kDynamicDim for a zero divisor.
static int64_t remainderTowardZero(int64_t x, int64_t y) {
  if (y == 0)
    return ::tessera::kDynamicDim;
  return y == -1 ? 0 : x % y; // INT64_MIN % -1 overflows in C++
}
static int64_t remainderFloor(int64_t x, int64_t y) {
  int64_t r = remainderTowardZero(x, y);
  if (y == 0)
    return r;
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static LogicalResult convertMod(GraphImporter &im, const onnx::NodeProto &) {
  Value a = im.input(0), b = im.input(1);
  if (!a || !b)
    return failure();
  Type type = elementType(a);
  bool fmod = im.intAttr("fmod", 0) != 0;
  bool isFloat = isa<FloatType>(type);
  if (isFloat && !fmod)
    return im.emitError() << "fmod = 0 is defined for integers only (ONNX "
                             "requires fmod = 1 for floats)";
  // Shape arithmetic (a pad to a whole number of windows) keeps folding;
  // a zero divisor leaves the entry to the op.
  if (!isFloat)
    if (std::optional<SmallVector<int64_t>> ints =
            foldKnown(im, a, b, fmod ? remainderTowardZero : remainderFloor)) {
      auto shape = ::tessera::broadcastShapes(tensorType(a).getShape(),
                                              tensorType(b).getShape());
      if (!shape)
        llvm::consumeError(shape.takeError());
      else if (llvm::none_of(*ints, [](int64_t v) {
                 return v == ::tessera::kDynamicDim;
               }))
        return im.setIntsOutput(*ints, *shape, nullptr, type);
    }
  Value quotient = im.inferred<ts::DivOp>(a, b);
  if (quotient && isFloat) {
    // trunc(q): ceil below zero, floor above.
    Value below = im.inferred<ts::CompareOp>(ts::CompareDirection::lt,
                                             quotient,
                                             im.constantScalar(0.0, type));
    quotient = below ? im.inferred<ts::WhereOp>(
                           below, im.create<ts::CeilOp>(quotient),
                           im.create<ts::FloorOp>(quotient))
                     : Value();
  }
  Value product = quotient ? im.inferred<ts::MulOp>(quotient, b) : Value();
  Value remainder = product ? im.inferred<ts::SubOp>(a, product) : Value();
  if (!remainder || fmod)
    return im.setOutput(0, remainder);
  Value zero = im.constantScalar(0.0, type);
  Value nonZero =
      im.inferred<ts::CompareOp>(ts::CompareDirection::ne, remainder, zero);
  Value signsDiffer = im.inferred<ts::XorOp>(
      im.inferred<ts::CompareOp>(ts::CompareDirection::lt, remainder, zero),
      im.inferred<ts::CompareOp>(ts::CompareDirection::lt, b, zero));
  Value adjust = nonZero && signsDiffer
                     ? im.inferred<ts::AndOp>(nonZero, signsDiffer)
                     : Value();
  Value shifted = im.inferred<ts::AddOp>(remainder, b);
  return im.setOutput(0, adjust && shifted ? im.inferred<ts::WhereOp>(
                                                 adjust, shifted, remainder)
                                           : Value());
}

/// x != x.
static LogicalResult convertIsNaN(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  return im.setOutput(
      0, im.inferred<ts::CompareOp>(ts::CompareDirection::ne, x, x));
}

/// x == +inf (detect_positive) or x == -inf (detect_negative).
static LogicalResult convertIsInf(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  bool positive = im.intAttr("detect_positive", 1) != 0;
  bool negative = im.intAttr("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  Value result;
  for (auto [wanted, value] : {std::pair(positive, inf),
                               std::pair(negative, -inf)}) {
    if (!wanted)
      continue;
    Value is = im.inferred<ts::CompareOp>(ts::CompareDirection::eq, x,
                                          im.constantScalar(value, type));
    result = result && is ? im.inferred<ts::OrOp>(result, is) : is;
  }
  // Detecting neither: false everywhere (x != x and x == x never both hold).
  if (!positive && !negative)
    result = im.inferred<ts::AndOp>(
        im.inferred<ts::CompareOp>(ts::CompareDirection::ne, x, x),
        im.inferred<ts::CompareOp>(ts::CompareDirection::eq, x, x));
  return im.setOutput(0, result);
}

/// x where x > alpha, 0 elsewhere.
static LogicalResult convertThresholdedRelu(GraphImporter &im,
                                            const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  Value above = im.inferred<ts::CompareOp>(
      ts::CompareDirection::gt, x,
      im.constantScalar(im.floatAttr("alpha", 1.0f), type));
  return im.setOutput(0, above ? im.inferred<ts::WhereOp>(
                                     above, x, im.constantScalar(0.0, type))
                               : Value());
}

/// max(0, min(1, alpha * x + beta)): HardSigmoid, and inside HardSwish.
static Value hardSigmoid(GraphImporter &im, Value x, double alpha,
                         double beta) {
  Type type = elementType(x);
  Value scaled = im.inferred<ts::MulOp>(x, im.constantScalar(alpha, type));
  Value shifted =
      scaled ? im.inferred<ts::AddOp>(scaled, im.constantScalar(beta, type))
             : Value();
  Value high = shifted ? im.inferred<ts::MinOp>(
                             shifted, im.constantScalar(1.0, type))
                       : Value();
  return high ? im.inferred<ts::MaxOp>(high, im.constantScalar(0.0, type))
              : Value();
}

static LogicalResult convertHardSigmoid(GraphImporter &im,
                                        const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  return im.setOutput(0, hardSigmoid(im, x, im.floatAttr("alpha", 0.2f),
                                     im.floatAttr("beta", 0.5f)));
}

/// HardSwish(x) = x * HardSigmoid(x) with alpha 1/6 and beta 1/2.
static LogicalResult convertHardSwish(GraphImporter &im,
                                      const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Value gate = hardSigmoid(im, x, 1.0 / 6.0, 0.5);
  return im.setOutput(0, gate ? im.inferred<ts::MulOp>(x, gate) : Value());
}

static LogicalResult convertGelu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  std::string approximate = im.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return im.emitError() << "unknown approximate = '" << approximate
                          << "' (expected 'none' or 'tanh')";
  auto form = approximate == "tanh" ? ts::GeluApproximation::tanh
                                    : ts::GeluApproximation::erf;
  return im.setOutput(0, im.create<ts::GeluOp>(x, form));
}

static LogicalResult convertWhere(GraphImporter &im, const onnx::NodeProto &) {
  Value cond = im.input(0), x = im.input(1), y = im.input(2);
  if (!cond || !x || !y)
    return failure();
  auto build = [&] { return im.inferred<ts::WhereOp>(cond, x, y); };
  // Selecting between shape values folds when all three are known 1-D.
  auto c = im.knownInts(cond), a = im.knownInts(x), b = im.knownInts(y);
  if (!c || !a || !b || !isa<IntegerType>(elementType(x)) ||
      tensorType(x).getRank() > 1 || tensorType(y).getRank() > 1 ||
      tensorType(cond).getRank() > 1)
    return im.setOutput(0, build());
  size_t n = std::max({c->size(), a->size(), b->size()});
  auto at = [&](ArrayRef<int64_t> v, size_t i) {
    return v.size() == 1 ? v[0] : i < v.size() ? v[i] : ::tessera::kDynamicDim;
  };
  SmallVector<int64_t> picked;
  for (size_t i = 0; i < n; ++i) {
    int64_t pick = at(*c, i);
    picked.push_back(pick == ::tessera::kDynamicDim ? ::tessera::kDynamicDim
                     : pick                         ? at(*a, i)
                                                    : at(*b, i));
  }
  SmallVector<int64_t, 1> shape;
  if (n != 1 || tensorType(cond).getRank() + tensorType(x).getRank() +
                        tensorType(y).getRank() >
                    0)
    shape.push_back(n);
  return im.setIntsOutput(picked, shape, build, elementType(x));
}

static LogicalResult convertCast(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  int64_t to = im.intAttr("to", 0);
  Type target = convertElementType(to, im.context());
  if (!target)
    return im.emitError() << "cannot cast to "
                          << dataTypeName(static_cast<int32_t>(to))
                          << ", which Tessera does not support";
  auto type = RankedTensorType::get(tensorType(x).getShape(), target);
  if (type == x.getType())
    return im.setOutput(0, x);
  // Opset 19's saturate (to fp8 types only): 0 makes values past the
  // largest finite one NaN or infinity instead of that value.
  bool saturate = im.intAttr("saturate", 1) != 0;
  Value result = im.create<ts::CastOp>(type, x, saturate);
  // Integer shape values survive casts between integer types.
  if (isa<IntegerType>(target) && !target.isInteger(1))
    if (auto ints = im.knownInts(x); ints && isa<IntegerType>(elementType(x)))
      im.setKnownInts(result, *ints);
  return im.setOutput(0, result);
}

/// CastLike: Cast to the element type of the second input.
static LogicalResult convertCastLike(GraphImporter &im,
                                     const onnx::NodeProto &) {
  Value x = im.input(0), like = im.input(1);
  if (!x || !like)
    return failure();
  auto type =
      RankedTensorType::get(tensorType(x).getShape(), elementType(like));
  if (type == x.getType())
    return im.setOutput(0, x);
  bool saturate = im.intAttr("saturate", 1) != 0;
  return im.setOutput(0, im.create<ts::CastOp>(type, x, saturate));
}

/// QuantizeLinear and DequantizeLinear: tessera.quantize (to the zero
/// point's int8 type) and tessera.dequantize; a 1-D scale of more than one
/// element is per channel along `axis` (default 1).
template <bool Quantize>
static LogicalResult convertQuantizeLinear(GraphImporter &im,
                                           const onnx::NodeProto &node) {
  Value x = im.input(0), scale = im.input(1);
  if (!x || !scale)
    return failure();
  Value zeroPoint = im.optionalInput(2);
  if (Quantize && !zeroPoint)
    return im.emitError()
           << "QuantizeLinear without a zero point produces uint8, which "
              "Tessera does not support; give an int8 zero point";
  // An fp8 zero point (opset 19) only names the type: ONNX requires it to
  // be zero.
  Type fp8;
  if (zeroPoint &&
      isa<Float8E4M3FNType, Float8E5M2Type>(elementType(zeroPoint))) {
    fp8 = elementType(zeroPoint);
    // Zeros, +0 or -0, in the bytes of a dense or resource constant.
    ElementsAttr zeros;
    std::optional<ArrayRef<char>> bytes;
    if (matchPattern(zeroPoint, m_Constant(&zeros))) {
      if (auto dense = dyn_cast<DenseElementsAttr>(zeros))
        bytes = dense.getRawData();
      else if (auto resource = dyn_cast<DenseResourceElementsAttr>(zeros))
        if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
          bytes = blob->getData();
    }
    if (!bytes || !llvm::all_of(*bytes, [](char b) { return (b & 0x7F) == 0; }))
      return im.emitError() << "an fp8 zero point must be a constant of "
                               "zeros (ONNX requires it)";
    zeroPoint = nullptr;
  }
  if (Quantize && fp8 && im.intAttr("saturate", 1) == 0)
    return im.emitError() << "QuantizeLinear with saturate=0 is not "
                             "supported: Tessera's fp8 quantization "
                             "saturates";
  IntegerAttr axis;
  auto scaleType = tensorType(scale);
  if (scaleType.getRank() == 1 && scaleType.getNumElements() != 1) {
    int64_t rank = tensorType(x).getRank();
    int64_t a = im.intAttr("axis", 1);
    if (a < -rank || a >= rank)
      return im.emitError()
             << "axis " << a << " is outside the input's rank " << rank;
    axis = im.builder().getI64IntegerAttr(a < 0 ? a + rank : a);
  }
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  Type element = !Quantize ? elementType(scale)
                 : fp8     ? fp8
                           : elementType(zeroPoint);
  auto type = RankedTensorType::get(shape, element);
  Operation *op;
  if (Quantize)
    op = im.create<ts::QuantizeOp>(type, x, scale, zeroPoint, axis);
  else
    op = im.create<ts::DequantizeOp>(type, x, scale, zeroPoint, axis);
  if (failed(mlir::verify(op)))
    return failure();
  return im.setOutput(0, op->getResult(0));
}

/// Sum and Mean of one or more inputs, with broadcasting.
static LogicalResult convertSumMean(GraphImporter &im,
                                    const onnx::NodeProto &node) {
  Value result = im.input(0);
  for (int i = 1; result && i < node.input_size(); ++i) {
    Value next = im.input(i);
    result = next ? im.inferred<ts::AddOp>(result, next) : Value();
  }
  if (result && node.op_type() == "Mean" && node.input_size() > 1)
    result = im.inferred<ts::DivOp>(
        result, im.constantScalar(node.input_size(), elementType(result)));
  return im.setOutput(0, result);
}

/// PRelu(x) = x < 0 ? slope * x : x, the slope broadcasting to x.
static LogicalResult convertPRelu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), slope = im.input(1);
  if (!x || !slope)
    return failure();
  Value zero = im.constantScalar(0.0, elementType(x));
  Value negative =
      im.inferred<ts::CompareOp>(ts::CompareDirection::lt, x, zero);
  Value scaled = im.inferred<ts::MulOp>(x, slope);
  if (!negative || !scaled)
    return failure();
  return im.setOutput(0, im.inferred<ts::WhereOp>(negative, scaled, x));
}

/// Clip: bounds from attributes before opset 11, optional inputs after.
static LogicalResult convertClip(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Value low = im.optionalInput(1), high = im.optionalInput(2);
  Value result = x;
  if (low)
    result = im.inferred<ts::MaxOp>(result, low);
  if (result && high)
    result = im.inferred<ts::MinOp>(result, high);
  return im.setOutput(0, result);
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
static LogicalResult convertShrink(GraphImporter &im,
                                   const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  if (!isa<FloatType>(type))
    return im.emitError() << "Shrink of " << type
                          << " is not supported (floating-point only)";
  double lambd = im.floatAttr("lambd", 0.5f), bias = im.floatAttr("bias", 0.0f);
  Value below = im.inferred<ts::CompareOp>(ts::CompareDirection::lt, x,
                                           im.constantScalar(-lambd, type));
  Value above = im.inferred<ts::CompareOp>(ts::CompareDirection::gt, x,
                                           im.constantScalar(lambd, type));
  Value raised = im.inferred<ts::AddOp>(x, im.constantScalar(bias, type));
  Value lowered = im.inferred<ts::SubOp>(x, im.constantScalar(bias, type));
  if (!below || !above || !raised || !lowered)
    return failure();
  Value upper =
      im.inferred<ts::WhereOp>(above, lowered, im.constantScalar(0.0, type));
  return im.setOutput(0, upper ? im.inferred<ts::WhereOp>(below, raised, upper)
                               : Value());
}

/// Sign: 1, -1 or 0 (two selects).
static LogicalResult convertSign(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Type type = elementType(x);
  if (type.isInteger(1))
    return im.emitError() << "Sign of booleans is not supported";
  Value zero = im.constantScalar(0.0, type);
  Value positive = im.inferred<ts::CompareOp>(ts::CompareDirection::gt, x, zero);
  Value negative = im.inferred<ts::CompareOp>(ts::CompareDirection::lt, x, zero);
  if (!positive || !negative)
    return failure();
  Value rest =
      im.inferred<ts::WhereOp>(negative, im.constantScalar(-1.0, type), zero);
  Value sign = rest ? im.inferred<ts::WhereOp>(
                          positive, im.constantScalar(1.0, type), rest)
                    : Value();
  // A scalar-only select broadcasts to x's shape through x's compare.
  return im.setOutput(0, sign);
}

void registerElementwiseConverters(ConverterRegistry &r) {
  r["Add"] = convertBinary<ts::AddOp>;
  r["Sub"] = convertBinary<ts::SubOp>;
  r["Mul"] = convertBinary<ts::MulOp>;
  r["Div"] = convertBinary<ts::DivOp>;
  r["And"] = convertBinary<ts::AndOp>;
  r["Or"] = convertBinary<ts::OrOp>;
  r["Xor"] = convertBinary<ts::XorOp>;
  r["Pow"] = convertPow;
  r["Max"] = convertVariadic<ts::MaxOp>;
  r["Min"] = convertVariadic<ts::MinOp>;
  r["Equal"] = convertCompare<ts::CompareDirection::eq>;
  r["Less"] = convertCompare<ts::CompareDirection::lt>;
  r["LessOrEqual"] = convertCompare<ts::CompareDirection::le>;
  r["Greater"] = convertCompare<ts::CompareDirection::gt>;
  r["GreaterOrEqual"] = convertCompare<ts::CompareDirection::ge>;
  r["Sqrt"] = convertUnary<ts::SqrtOp>;
  r["Reciprocal"] = convertUnary<ts::ReciprocalOp>;
  r["Neg"] = convertUnary<ts::NegOp>;
  r["Abs"] = convertUnary<ts::AbsOp>;
  r["Exp"] = convertUnary<ts::ExpOp>;
  r["Log"] = convertUnary<ts::LogOp>;
  r["Erf"] = convertUnary<ts::ErfOp>;
  r["Tanh"] = convertUnary<ts::TanhOp>;
  r["Sigmoid"] = convertUnary<ts::SigmoidOp>;
  r["Relu"] = convertUnary<ts::ReluOp>;
  r["Not"] = convertUnary<ts::NotOp>;
  r["Identity"] = convertIdentity;
  r["Dropout"] = convertIdentity;
  r["LeakyRelu"] = convertLeakyRelu;
  r["Gelu"] = convertGelu;
  r["HardSigmoid"] = convertHardSigmoid;
  r["Shrink"] = convertShrink;
  r["Sign"] = convertSign;
  r["Sin"] = convertUnary<ts::SinOp>;
  r["Cos"] = convertUnary<ts::CosOp>;
  r["Tan"] = convertUnary<ts::TanOp>;
  r["Asin"] = convertUnary<ts::AsinOp>;
  r["Acos"] = convertUnary<ts::AcosOp>;
  r["Atan"] = convertUnary<ts::AtanOp>;
  r["Sinh"] = convertUnary<ts::SinhOp>;
  r["Cosh"] = convertUnary<ts::CoshOp>;
  r["Asinh"] = convertUnary<ts::AsinhOp>;
  r["Acosh"] = convertUnary<ts::AcoshOp>;
  r["Atanh"] = convertUnary<ts::AtanhOp>;
  r["Ceil"] = convertUnary<ts::CeilOp>;
  r["Floor"] = convertUnary<ts::FloorOp>;
  r["Round"] = convertUnary<ts::RoundOp>;
  r["Elu"] = convertElu;
  r["Selu"] = convertSelu;
  r["ThresholdedRelu"] = convertThresholdedRelu;
  r["Softplus"] = convertSoftplus;
  r["Softsign"] = convertSoftsign;
  r["Celu"] = convertCelu;
  r["IsNaN"] = convertIsNaN;
  r["Mod"] = convertMod;
  r["IsInf"] = convertIsInf;
  r["HardSwish"] = convertHardSwish;
  r["Where"] = convertWhere;
  r["Cast"] = convertCast;
  r["Clip"] = convertClip;
  r["CastLike"] = convertCastLike;
  r["Sum"] = convertSumMean;
  r["Mean"] = convertSumMean;
  r["PRelu"] = convertPRelu;
  r["QuantizeLinear"] = convertQuantizeLinear<true>;
  r["DequantizeLinear"] = convertQuantizeLinear<false>;
}

} // namespace tessera::onnx_import
