//===- Elementwise.cpp - elementwise tessera ops to linalg.generic --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// Runs `fn` in f32 for narrower floats (f16, bf16, fp8), whose math
/// functions would lose too much or have no lowering, and rounds back.
template <typename Fn>
Value inF32(OpBuilder &b, Location loc, Value x, Fn fn) {
  Type type = x.getType();
  if (type.isF32() || !isa<FloatType>(type))
    return fn(x);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

Value floatConst(OpBuilder &b, Location loc, Value like, double v) {
  return scalarConstant(b, loc, like.getType(), v);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = floatConst(b, loc, x, 1.0);
  Value negated = arith::NegFOp::create(b, loc, x);
  Value denom = arith::AddFOp::create(
      b, loc, one, math::ExpOp::create(b, loc, negated));
  return arith::DivFOp::create(b, loc, one, denom);
}

Value gelu(OpBuilder &b, Location loc, Value x, ts::GeluApproximation form) {
  Value half = floatConst(b, loc, x, 0.5), one = floatConst(b, loc, x, 1.0);
  Value inner;
  if (form == ts::GeluApproximation::erf) {
    Value scaled = arith::MulFOp::create(b, loc, x,
                                         floatConst(b, loc, x, M_SQRT1_2));
    inner = math::ErfOp::create(b, loc, scaled);
  } else {
    Value cube = arith::MulFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, cube, floatConst(b, loc, x, 0.044715)));
    Value scaled = arith::MulFOp::create(
        b, loc, poly, floatConst(b, loc, x, 0.7978845608028654));
    inner = math::TanhOp::create(b, loc, scaled);
  }
  Value factor = arith::AddFOp::create(b, loc, one, inner);
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, x),
                               factor);
}

arith::CmpFPredicate floatPredicate(ts::CompareDirection d) {
  switch (d) {
  case ts::CompareDirection::eq:
    return arith::CmpFPredicate::OEQ;
  case ts::CompareDirection::ne:
    return arith::CmpFPredicate::UNE;
  case ts::CompareDirection::lt:
    return arith::CmpFPredicate::OLT;
  case ts::CompareDirection::le:
    return arith::CmpFPredicate::OLE;
  case ts::CompareDirection::gt:
    return arith::CmpFPredicate::OGT;
  case ts::CompareDirection::ge:
    return arith::CmpFPredicate::OGE;
  }
  return arith::CmpFPredicate::OEQ;
}

arith::CmpIPredicate intPredicate(ts::CompareDirection d) {
  switch (d) {
  case ts::CompareDirection::eq:
    return arith::CmpIPredicate::eq;
  case ts::CompareDirection::ne:
    return arith::CmpIPredicate::ne;
  case ts::CompareDirection::lt:
    return arith::CmpIPredicate::slt;
  case ts::CompareDirection::le:
    return arith::CmpIPredicate::sle;
  case ts::CompareDirection::gt:
    return arith::CmpIPredicate::sgt;
  case ts::CompareDirection::ge:
    return arith::CmpIPredicate::sge;
  }
  return arith::CmpIPredicate::eq;
}

/// The scalar computation of each elementwise op; `args` are the operands'
/// elements, `type` the result's element type.
Value scalarOp(Operation *op, OpBuilder &b, Location loc, ValueRange args,
               Type type) {
  Value x = args.empty() ? Value() : args[0];
  bool isFloat = x && isa<FloatType>(x.getType());
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](ts::AddOp) { return addScalar(b, loc, args[0], args[1]); })
      .Case([&](ts::SubOp) -> Value {
        if (isFloat)
          return arith::SubFOp::create(b, loc, args[0], args[1]);
        return arith::SubIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::MulOp) { return mulScalar(b, loc, args[0], args[1]); })
      .Case([&](ts::DivOp) -> Value {
        if (isFloat)
          return arith::DivFOp::create(b, loc, args[0], args[1]);
        return arith::DivSIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::PowOp) -> Value {
        if (isFloat)
          return inF32(b, loc, args[0], [&](Value base) -> Value {
            Value exponent = castScalar(b, loc, args[1], base.getType());
            return math::PowFOp::create(b, loc, base, exponent);
          });
        return math::IPowIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::MaxOp) -> Value {
        if (isFloat)
          return arith::MaximumFOp::create(b, loc, args[0], args[1]);
        return arith::MaxSIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::MinOp) -> Value {
        if (isFloat)
          return arith::MinimumFOp::create(b, loc, args[0], args[1]);
        return arith::MinSIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::AndOp) {
        return arith::AndIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::OrOp) {
        return arith::OrIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::XorOp) {
        return arith::XOrIOp::create(b, loc, args[0], args[1]);
      })
      .Case([&](ts::NotOp) {
        Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
        return arith::XOrIOp::create(b, loc, x, one);
      })
      .Case([&](ts::CompareOp cmp) -> Value {
        if (isFloat)
          return arith::CmpFOp::create(
              b, loc, floatPredicate(cmp.getDirection()), args[0], args[1]);
        return arith::CmpIOp::create(b, loc, intPredicate(cmp.getDirection()),
                                     args[0], args[1]);
      })
      .Case([&](ts::WhereOp) {
        return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
      })
      .Case([&](ts::NegOp) -> Value {
        if (isFloat)
          return arith::NegFOp::create(b, loc, x);
        return arith::SubIOp::create(b, loc, scalarConstant(b, loc, type, 0),
                                     x);
      })
      .Case([&](ts::AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(b, loc, x);
        return math::AbsIOp::create(b, loc, x);
      })
      .Case([&](ts::ReluOp) -> Value {
        Value zero = scalarConstant(b, loc, type, 0.0);
        if (isFloat)
          return arith::MaximumFOp::create(b, loc, x, zero);
        return arith::MaxSIOp::create(b, loc, x, zero);
      })
      .Case([&](ts::ExpOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::ExpOp::create(b, loc, v);
        });
      })
      .Case([&](ts::LogOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::LogOp::create(b, loc, v);
        });
      })
      .Case([&](ts::SqrtOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::SqrtOp::create(b, loc, v);
        });
      })
      .Case([&](ts::RsqrtOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::RsqrtOp::create(b, loc, v);
        });
      })
      .Case([&](ts::ReciprocalOp) -> Value {
        return arith::DivFOp::create(b, loc, floatConst(b, loc, x, 1.0), x);
      })
      .Case([&](ts::TanhOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::TanhOp::create(b, loc, v);
        });
      })
      .Case([&](ts::ErfOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::ErfOp::create(b, loc, v);
        });
      })
      .Case([&](ts::SinOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::SinOp::create(b, loc, v);
        });
      })
      .Case([&](ts::CosOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::CosOp::create(b, loc, v);
        });
      })
      .Case([&](ts::TanOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::TanOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AsinOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AsinOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AcosOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AcosOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AtanOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AtanOp::create(b, loc, v);
        });
      })
      .Case([&](ts::SinhOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::SinhOp::create(b, loc, v);
        });
      })
      .Case([&](ts::CoshOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::CoshOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AsinhOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AsinhOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AcoshOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AcoshOp::create(b, loc, v);
        });
      })
      .Case([&](ts::AtanhOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::AtanhOp::create(b, loc, v);
        });
      })
      .Case([&](ts::CeilOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::CeilOp::create(b, loc, v);
        });
      })
      .Case([&](ts::FloorOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::FloorOp::create(b, loc, v);
        });
      })
      .Case([&](ts::RoundOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return math::RoundEvenOp::create(b, loc, v);
        });
      })
      .Case([&](ts::SigmoidOp) {
        return inF32(b, loc, x, [&](Value v) { return sigmoid(b, loc, v); });
      })
      .Case([&](ts::SiluOp) {
        return inF32(b, loc, x, [&](Value v) -> Value {
          return arith::MulFOp::create(b, loc, v, sigmoid(b, loc, v));
        });
      })
      .Case([&](ts::GeluOp g) {
        return inF32(b, loc, x, [&](Value v) {
          return gelu(b, loc, v, g.getApproximate());
        });
      })
      .Case([&](ts::CastOp cast) {
        return castScalar(b, loc, x, type, cast.getSaturate());
      })
      .Default([](Operation *) { return Value(); });
}

template <typename OpTy>
struct ElementwiseLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Operation *raw = op.getOperation();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, raw->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return scalarOp(raw, b, loc, args, resultType.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<
      ElementwiseLowering<ts::AddOp>, ElementwiseLowering<ts::SubOp>,
      ElementwiseLowering<ts::MulOp>, ElementwiseLowering<ts::DivOp>,
      ElementwiseLowering<ts::PowOp>, ElementwiseLowering<ts::MaxOp>,
      ElementwiseLowering<ts::MinOp>, ElementwiseLowering<ts::AndOp>,
      ElementwiseLowering<ts::OrOp>, ElementwiseLowering<ts::XorOp>,
      ElementwiseLowering<ts::NotOp>, ElementwiseLowering<ts::CompareOp>,
      ElementwiseLowering<ts::WhereOp>, ElementwiseLowering<ts::NegOp>,
      ElementwiseLowering<ts::AbsOp>, ElementwiseLowering<ts::ReluOp>,
      ElementwiseLowering<ts::ExpOp>, ElementwiseLowering<ts::LogOp>,
      ElementwiseLowering<ts::SqrtOp>, ElementwiseLowering<ts::RsqrtOp>,
      ElementwiseLowering<ts::ReciprocalOp>, ElementwiseLowering<ts::TanhOp>,
      ElementwiseLowering<ts::ErfOp>, ElementwiseLowering<ts::SigmoidOp>,
      ElementwiseLowering<ts::SiluOp>, ElementwiseLowering<ts::GeluOp>,
      ElementwiseLowering<ts::CastOp>,
      ElementwiseLowering<ts::SinOp>,
      ElementwiseLowering<ts::CosOp>,
      ElementwiseLowering<ts::TanOp>,
      ElementwiseLowering<ts::AsinOp>,
      ElementwiseLowering<ts::AcosOp>,
      ElementwiseLowering<ts::AtanOp>,
      ElementwiseLowering<ts::SinhOp>,
      ElementwiseLowering<ts::CoshOp>,
      ElementwiseLowering<ts::AsinhOp>,
      ElementwiseLowering<ts::AcoshOp>,
      ElementwiseLowering<ts::AtanhOp>,
      ElementwiseLowering<ts::CeilOp>,
      ElementwiseLowering<ts::FloorOp>,
      ElementwiseLowering<ts::RoundOp>>(patterns.getContext());
}

} // namespace tessera::to_linalg
