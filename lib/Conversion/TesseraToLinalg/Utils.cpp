//===- Utils.cpp - builders shared by the tessera-to-linalg lowerings -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineExpr.h"

namespace tessera::to_linalg {

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType(), dynamicSizes);
}

SmallVector<Value> broadcastDynamicSizes(OpBuilder &b, Location loc,
                                         RankedTensorType result,
                                         ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t rank = result.getRank();
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!result.isDynamicDim(dim))
      continue;
    Value size;
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t aligned = dim - (rank - type.getRank());
      if (aligned < 0 || type.getDimSize(aligned) == 1)
        continue;
      size = linalg::createOrFoldDimOp(b, loc, operand, aligned);
      break;
    }
    sizes.push_back(size ? size : arith::ConstantIndexOp::create(b, loc, 1));
  }
  return sizes;
}

AffineMap broadcastMap(MLIRContext *context, ShapedType operand,
                       ShapedType result) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = result.getRank() - operand.getRank();
  for (int64_t i = 0; i < operand.getRank(); ++i) {
    bool stretched = operand.getDimSize(i) == 1 &&
                     result.getDimSize(offset + i) != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(offset + i, context));
  }
  return AffineMap::get(result.getRank(), 0, exprs, context);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body,
                       ArrayRef<AffineMap> maps) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> indexing;
  if (maps.empty()) {
    for (Value input : inputs)
      indexing.push_back(
          broadcastMap(context, cast<ShapedType>(input.getType()), resultType));
  } else {
    indexing.assign(maps.begin(), maps.end());
  }
  indexing.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  Value init = emptyTensor(b, loc, resultType,
                           broadcastDynamicSizes(b, loc, resultType, inputs));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, init, indexing, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

Value buildReductionIdentity(OpBuilder &b, Location loc, Type type,
                               ReduceKind kind) {
  if (kind == ReduceKind::Sum)
    return scalarConstant(b, loc, type, 0.0);
  if (kind == ReduceKind::Prod)
    return scalarConstant(b, loc, type, 1.0);
  bool lowest = kind == ReduceKind::Max;
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type, APFloat::getInf(
                                         floatType.getFloatSemantics(),
                                         /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, lowest ? APInt::getSignedMinValue(width)
                                            : APInt::getSignedMaxValue(width)));
}

static Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                     Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::Sum:
    return addScalar(b, loc, x, y);
  case ReduceKind::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case ReduceKind::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  case ReduceKind::Prod:
    return isFloat ? arith::MulFOp::create(b, loc, x, y).getResult()
                   : arith::MulIOp::create(b, loc, x, y).getResult();
  }
  return {};
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> dims, ReduceKind kind) {
  auto type = cast<RankedTensorType>(input.getType());
  MLIRContext *context = b.getContext();
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(dims, i)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    shape.push_back(type.getDimSize(i));
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, i));
    outExprs.push_back(getAffineDimExpr(i, context));
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init = emptyTensor(b, loc, resultType, dynamicSizes);
  Value identity = buildReductionIdentity(b, loc, type.getElementType(), kind);
  Value filled =
      linalg::FillOp::create(b, loc, identity, init).getResult(0);
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(type.getRank()),
      AffineMap::get(type.getRank(), 0, outExprs, context)};
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, input, filled, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc,
                                combine(nb, nloc, kind, args[1], args[0]));
      });
  return generic.getResult(0);
}

Value expandUnitDims(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(value.getType());
  if (dims.empty())
    return value;
  int64_t rank = type.getRank() + dims.size();
  // Each kept dim opens a group; a unit dim joins the group before it (or
  // the first group when it leads).
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outputShape;
  for (int64_t i = 0, source = 0; i < rank; ++i) {
    if (llvm::is_contained(dims, i)) {
      (groups.empty() ? pending : groups.back()).push_back(i);
      shape.push_back(1);
      outputShape.push_back(b.getIndexAttr(1));
      continue;
    }
    groups.emplace_back(pending.begin(), pending.end());
    groups.back().push_back(i);
    pending.clear();
    shape.push_back(type.getDimSize(source));
    outputShape.push_back(
        type.isDynamicDim(source)
            ? OpFoldResult(tensor::DimOp::create(b, loc, value, source)
                               .getResult())
            : OpFoldResult(b.getIndexAttr(type.getDimSize(source))));
    ++source;
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups,
                                       outputShape);
}

Value elementCount(OpBuilder &b, Location loc, Value tensor,
                   ArrayRef<int64_t> dims, Type type) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t dim : dims)
    count = arith::MulIOp::create(
        b, loc, count, linalg::createOrFoldDimOp(b, loc, tensor, dim));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return castScalar(b, loc, asInt, type);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

namespace {
/// An 8-bit float format as its fields: mantissa and exponent bits, bias,
/// largest finite value, and whether the top exponent holds infinities
/// (E5M2) or only the NaN S.1111.111 (E4M3FN).
struct Fp8Format {
  int mantissa, exponent, bias;
  double largest;
  bool ieee;
};

std::optional<Fp8Format> fp8Format(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return Fp8Format{3, 4, 7, 448.0, false};
  if (isa<Float8E5M2Type>(type))
    return Fp8Format{2, 5, 15, 57344.0, true};
  return std::nullopt;
}

Value i32Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// f32 to an fp8 format with integer arithmetic (LLVM has no fp8 types):
/// rounded to nearest even and saturated to the largest finite value (ONNX
/// Cast's and QuantizeLinear's default), NaN to NaN, as the numerics
/// library's conversions with Overflow::Saturate.
Value encodeFp8(OpBuilder &b, Location loc, Value x, Type to,
                const Fp8Format &format, bool saturate) {
  Type i32 = b.getI32Type();
  Type f32 = b.getF32Type();
  auto c = [&](int64_t v) { return i32Constant(b, loc, v); };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(24)), c(0x80));
  Value magnitude = math::AbsFOp::create(b, loc, x);
  Value clamped = arith::MinimumFOp::create(
      b, loc, magnitude, scalarConstant(b, loc, f32, format.largest));
  // Normal numbers: round the f32 mantissa to `mantissa` bits (ties to
  // even) and rebias the exponent.
  int shift = 23 - format.mantissa;
  Value u = arith::BitcastOp::create(b, loc, i32, clamped);
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, u, c(shift)), c(1));
  Value rounded = arith::AddIOp::create(
      b, loc, u,
      arith::AddIOp::create(b, loc, c((int64_t(1) << (shift - 1)) - 1), odd));
  Value exponent = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, rounded, c(23)),
      c(127 - format.bias));
  Value mantissa = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, rounded, c(shift)),
      c((1 << format.mantissa) - 1));
  Value normal = arith::OrIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, exponent, c(format.mantissa)),
      mantissa);
  // Subnormals: multiples of 2^(1 - bias - mantissa), rounded to even (a
  // result of 2^mantissa is the smallest normal's code).
  double step = std::ldexp(1.0, format.bias - 1 + format.mantissa);
  // (Clamped first, so the conversion stays in range where the select
  // takes the normal code.)
  Value subnormal = arith::FPToSIOp::create(
      b, loc, i32,
      math::RoundEvenOp::create(
          b, loc,
          arith::MinimumFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, clamped,
                                    scalarConstant(b, loc, f32, step)),
              scalarConstant(b, loc, f32,
                             std::ldexp(1.0, format.mantissa)))));
  Value isSubnormal = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, clamped,
      scalarConstant(b, loc, f32, std::ldexp(1.0, 1 - format.bias)));
  Value code = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  // The canonical quiet NaN of the format (the sign is or-ed in below).
  code = arith::SelectOp::create(b, loc, isNaN, c(format.ieee ? 0x7E : 0x7F),
                                 code);
  if (!saturate) {
    // Past the largest finite value once rounded (an infinity too): NaN
    // in a format without infinities, else infinity. The bound is the tie
    // above the largest value, which rounds to the even neighbour: the
    // largest itself in E4M3FN (448, mantissa 110, against 480), the next
    // power of two in E5M2 (57344, mantissa 11, against 65536).
    double largestUlp =
        std::ldexp(1.0, std::ilogb(format.largest) - int(format.mantissa));
    Value tie = scalarConstant(b, loc, f32, format.largest + largestUlp / 2);
    Value overflows = arith::CmpFOp::create(
        b, loc,
        format.ieee ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT,
        magnitude, tie);
    code = arith::SelectOp::create(b, loc, overflows,
                                   c(format.ieee ? 0x7C : 0x7F), code);
  }
  code = arith::OrIOp::create(b, loc, code, sign);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), code);
  return arith::BitcastOp::create(b, loc, to, byte);
}

/// An fp8 value to f32 with integer arithmetic, exactly.
Value decodeFp8(OpBuilder &b, Location loc, Value x, const Fp8Format &format) {
  Type i32 = b.getI32Type();
  Type f32 = b.getF32Type();
  auto c = [&](int64_t v) { return i32Constant(b, loc, v); };
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), x);
  Value w = arith::ExtUIOp::create(b, loc, i32, byte);
  Value sign = arith::ShRUIOp::create(b, loc, w, c(7));
  Value exponent = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, w, c(format.mantissa)),
      c((1 << format.exponent) - 1));
  Value mantissa = arith::AndIOp::create(b, loc, w,
                                         c((1 << format.mantissa) - 1));
  Value normalBits = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(
          b, loc, arith::ShLIOp::create(b, loc, sign, c(31)),
          arith::ShLIOp::create(
              b, loc,
              arith::AddIOp::create(b, loc, exponent,
                                    c(127 - format.bias)),
              c(23))),
      arith::ShLIOp::create(b, loc, mantissa, c(23 - format.mantissa)));
  Value normal = arith::BitcastOp::create(b, loc, f32, normalBits);
  Value subnormal = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa),
      scalarConstant(b, loc, f32,
                     std::ldexp(1.0, 1 - format.bias - format.mantissa)));
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         sign, c(0));
  subnormal = arith::SelectOp::create(
      b, loc, negative, arith::NegFOp::create(b, loc, subnormal), subnormal);
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, c(0));
  Value result =
      arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  // The top exponent: E5M2's infinities and NaNs; E4M3FN's one NaN.
  int top = (1 << format.exponent) - 1;
  Value isTop =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, c(top));
  Value nan = arith::SelectOp::create(
      b, loc, negative, scalarConstant(b, loc, f32, -std::nan("")),
      scalarConstant(b, loc, f32, std::nan("")));
  if (format.ieee) {
    Value infinity = arith::SelectOp::create(
        b, loc, negative, scalarConstant(b, loc, f32, -INFINITY),
        scalarConstant(b, loc, f32, INFINITY));
    Value zeroMantissa = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, mantissa, c(0));
    Value special =
        arith::SelectOp::create(b, loc, zeroMantissa, infinity, nan);
    return arith::SelectOp::create(b, loc, isTop, special, result);
  }
  Value isNaN = arith::AndIOp::create(
      b, loc, isTop,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mantissa,
                            c((1 << format.mantissa) - 1)));
  return arith::SelectOp::create(b, loc, isNaN, nan, result);
}
} // namespace

Value castScalar(OpBuilder &b, Location loc, Value value, Type to,
                 bool saturate) {
  Type from = value.getType();
  if (from == to)
    return value;
  // fp8 goes through f32 with integer arithmetic (LLVM has no fp8 types).
  if (std::optional<Fp8Format> format = fp8Format(from))
    return castScalar(b, loc, decodeFp8(b, loc, value, *format), to, saturate);
  if (std::optional<Fp8Format> format = fp8Format(to))
    return encodeFp8(b, loc, castScalar(b, loc, value, b.getF32Type()), to,
                     *format, saturate);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    return arith::TruncFOp::create(b, loc, to, value);
  }
  if (fromFloat) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   scalarConstant(b, loc, from, 0.0));
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  if (toFloat) {
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 scalarConstant(b, loc, from, 0.0));
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return from.isInteger(1) ? arith::ExtUIOp::create(b, loc, to, value)
                                   .getResult()
                             : arith::ExtSIOp::create(b, loc, to, value)
                                   .getResult();
  return arith::TruncIOp::create(b, loc, to, value);
}

Value addScalar(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value mulScalar(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

OpFoldResult strideOneColumns(OpBuilder &b, Location loc, OpFoldResult columns,
                              int64_t stride) {
  if (std::optional<int64_t> known = getConstantIntValue(columns))
    return b.getIndexAttr(*known == 0 ? 0 : (*known - 1) * stride + 1);
  Value cols = getValueOrCreateConstantIndexOp(b, loc, columns);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value spread =
      arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, cols, one),
                            arith::ConstantIndexOp::create(b, loc, stride));
  return arith::MaxSIOp::create(b, loc,
                                arith::AddIOp::create(b, loc, spread, one),
                                arith::ConstantIndexOp::create(b, loc, 0))
      .getResult();
}

Value windowOutputSize(OpBuilder &b, Location loc, Value input,
                       int64_t kernel, int64_t stride, int64_t padBegin,
                       int64_t padEnd, int64_t dilation, bool ceilMode) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t span = dilation * (kernel - 1) + 1;
  // in + pads - span: how far the window's start can move.
  Value room = arith::AddIOp::create(b, loc, input,
                                     c(padBegin + padEnd - span));
  Value steps = arith::DivSIOp::create(b, loc, room, c(stride));
  Value size = arith::AddIOp::create(b, loc, steps, c(1));
  if (ceilMode && stride > 1) {
    // One more window when the last one would be partial, unless it would
    // start past the input and the begin padding.
    Value rest = arith::RemSIOp::create(b, loc, room, c(stride));
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          rest, c(0));
    Value lastStart = arith::MulIOp::create(b, loc, size, c(stride));
    Value inside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, lastStart,
        arith::AddIOp::create(b, loc, input, c(padBegin)));
    Value more = arith::AndIOp::create(b, loc, partial, inside);
    size = arith::SelectOp::create(
        b, loc, more, arith::AddIOp::create(b, loc, size, c(1)), size);
  }
  Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, room,
                                     c(0));
  return arith::SelectOp::create(b, loc, fits, size, c(0));
}

} // namespace tessera::to_linalg

mlir::Value tessera::castElement(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value value, mlir::Type to) {
  return to_linalg::castScalar(b, loc, value, to);
}
