//===- RaiseComposites.cpp - GELU, SiLU, LayerNorm, RMSNorm from parts ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Matchers.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace tessera {
#define GEN_PASS_DEF_RAISECOMPOSITESPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::collectFactors;
using ::tessera::hasOneUse;
using ::tessera::isSplat;
using ::tessera::isSquareOf;
using ::tessera::matchCommutative;
using ::tessera::reducesLastAxis;
using ::tessera::sameType;
using ::tessera::takeFactor;
using ::tessera::takeSplatFactor;

namespace {

constexpr double kSqrtHalf = 0.70710678118654752;
constexpr double kSqrtTwoOverPi = 0.79788456080286536;

/// Whether `value` is `x * c` or `x / (1 / c)`, used once.
bool isScaled(Value value, Value x, double c) {
  if (!hasOneUse(value))
    return false;
  if (auto div = value.getDefiningOp<DivOp>())
    return div.getLhs() == x && isSplat(div.getRhs(), 1.0 / c);
  auto product =
      matchCommutative<MulOp>(value, [&](Value v) { return isSplat(v, c); });
  return product && product->second == x;
}

/// `1 + f(...)` used once: the `f` operand, or null.
Value onePlus(Value value) {
  if (!hasOneUse(value))
    return {};
  auto sum =
      matchCommutative<AddOp>(value, [](Value v) { return isSplat(v, 1.0); });
  return sum ? sum->second : Value();
}

/// x * 0.5 * (1 + erf(x / sqrt(2))) and the tanh form, in any order of the
/// products.
struct RaiseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> factors;
    SmallVector<Operation *> muls;
    if (!collectFactors(op.getResult(), factors, muls, 3) ||
        factors.size() != 3 || !takeSplatFactor(factors, 0.5))
      return failure();
    for (int i = 0; i < 2; ++i) {
      Value x = factors[i], gate = onePlus(factors[1 - i]);
      if (!gate || !hasOneUse(gate) || !sameType(op.getResult(), x))
        continue;
      if (auto erf = gate.getDefiningOp<ErfOp>();
          erf && isScaled(erf.getInput(), x, kSqrtHalf)) {
        rewriter.replaceOpWithNewOp<GeluOp>(op, x, GeluApproximation::erf);
        return success();
      }
      if (auto tanh = gate.getDefiningOp<TanhOp>();
          tanh && isTanhArgument(tanh.getInput(), x)) {
        rewriter.replaceOpWithNewOp<GeluOp>(op, x, GeluApproximation::tanh);
        return success();
      }
    }
    return failure();
  }

  /// sqrt(2/pi) * (x + 0.044715 * x^3), each part used once.
  static bool isTanhArgument(Value value, Value x) {
    SmallVector<Value> factors;
    SmallVector<Operation *> muls;
    if (!hasOneUse(value) || !collectFactors(value, factors, muls, 2) ||
        factors.size() != 2 || !takeSplatFactor(factors, kSqrtTwoOverPi))
      return false;
    Value inner = factors.front();
    if (!hasOneUse(inner))
      return false;
    auto sum = matchCommutative<AddOp>(inner, [&](Value v) { return v == x; });
    if (!sum || !hasOneUse(sum->second))
      return false;
    SmallVector<Value> cube;
    SmallVector<Operation *> cubeMuls;
    if (!collectFactors(sum->second, cube, cubeMuls, 4) ||
        !takeSplatFactor(cube, 0.044715))
      return false;
    if (cube.size() == 1) {
      auto pow = cube.front().getDefiningOp<PowOp>();
      return pow && hasOneUse(cube.front()) && pow.getLhs() == x &&
             isSplat(pow.getRhs(), 3.0, 0);
    }
    // x * x * x: the products below the root are used once, and x itself
    // has other users, so it is never expanded.
    return cube.size() == 3 && takeFactor(cube, x) && takeFactor(cube, x) &&
           takeFactor(cube, x);
  }
};

/// x * sigmoid(x).
struct RaiseSilu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [gate, x] : {std::pair(op.getLhs(), op.getRhs()),
                           std::pair(op.getRhs(), op.getLhs())}) {
      auto sigmoid = gate.getDefiningOp<SigmoidOp>();
      if (sigmoid && sigmoid.getInput() == x && hasOneUse(gate) &&
          sameType(op.getResult(), x)) {
        rewriter.replaceOpWithNewOp<SiluOp>(op, x);
        return success();
      }
    }
    return failure();
  }
};

/// The epsilon of `sqrt(v + eps)` (each used once) with `v` returned, or
/// nothing.
std::optional<std::pair<Value, double>> sqrtOfSumWithEpsilon(Value value) {
  auto sqrt = value.getDefiningOp<SqrtOp>();
  if (!sqrt || !hasOneUse(value) || !hasOneUse(sqrt.getInput()))
    return std::nullopt;
  auto sum = matchCommutative<AddOp>(sqrt.getInput(), [](Value v) {
    return ::tessera::splatValue(v).has_value();
  });
  if (!sum)
    return std::nullopt;
  return std::make_pair(sum->second, *::tessera::splatValue(sum->first));
}

/// `numerator / sqrt(v + eps)`, `numerator * rsqrt(v + eps)`,
/// `numerator * reciprocal(sqrt(v + eps))` or `numerator * (1 / sqrt(...))`:
/// the numerator, v and eps. Each part below `value` is used once.
struct Normalization {
  Value numerator, variance;
  double epsilon;
};
std::optional<Normalization> matchNormalization(Value value) {
  if (auto div = value.getDefiningOp<DivOp>()) {
    if (auto root = sqrtOfSumWithEpsilon(div.getRhs()))
      return Normalization{div.getLhs(), root->first, root->second};
    return std::nullopt;
  }
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [numerator, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                   std::pair(mul.getRhs(), mul.getLhs())}) {
    if (!hasOneUse(factor))
      continue;
    std::optional<std::pair<Value, double>> root;
    if (auto rsqrt = factor.getDefiningOp<RsqrtOp>()) {
      auto sum = matchCommutative<AddOp>(rsqrt.getInput(), [](Value v) {
        return ::tessera::splatValue(v).has_value();
      });
      if (sum && hasOneUse(rsqrt.getInput()))
        root = std::make_pair(sum->second, *::tessera::splatValue(sum->first));
    } else if (auto reciprocal = factor.getDefiningOp<ReciprocalOp>()) {
      root = sqrtOfSumWithEpsilon(reciprocal.getInput());
    } else if (auto div = factor.getDefiningOp<DivOp>();
               div && isSplat(div.getLhs(), 1.0)) {
      root = sqrtOfSumWithEpsilon(div.getRhs());
    }
    if (root)
      return Normalization{numerator, root->first, root->second};
  }
  return std::nullopt;
}

/// The mean over the last axis, with keepdims, of `base` squared (each
/// used once), as its reduce op.
bool isMeanOfSquare(Value value, Value base) {
  auto mean = value.getDefiningOp<ReduceMeanOp>();
  return mean && hasOneUse(value) && reducesLastAxis(mean) &&
         hasOneUse(mean.getInput()) && isSquareOf(mean.getInput(), base);
}

/// A rank-1 tensor as long as the last dim of `x`.
bool isRowVector(Value value, Value x) {
  auto type = cast<RankedTensorType>(value.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  return type.getRank() == 1 && !xType.isDynamicDim(xType.getRank() - 1) &&
         type.getDimSize(0) == xType.getDimSize(xType.getRank() - 1);
}

/// Whether the single user of `value`, if any, would extend the pattern
/// ending at `value` (a product with or a sum with a row vector), so that
/// the larger match is left to it.
bool extendsFurther(Value value, Value x, bool viaMul, bool viaAdd) {
  if (!hasOneUse(value))
    return false;
  Operation *user = *value.getUsers().begin();
  if (!((viaMul && isa<MulOp>(user)) || (viaAdd && isa<AddOp>(user))))
    return false;
  for (Value operand : user->getOperands())
    if (operand != value && isRowVector(operand, x))
      return true;
  return false;
}

struct RaiseNorm : RewritePattern {
  RaiseNorm(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<AddOp, MulOp, DivOp>(op))
      return failure();
    Value root = op->getResult(0);
    // Largest pattern first: norm * scale + bias, norm * scale, norm.
    for (int form = 0; form < 3; ++form) {
      if (succeeded(tryForm(op, root, form, rewriter)))
        return success();
    }
    return failure();
  }

  LogicalResult tryForm(Operation *op, Value root, int form,
                        PatternRewriter &rewriter) const {
    // The input is found from the normalization; the scale and bias forms
    // peel the affine parts first.
    Value norm = root, scale, bias;
    if (form < 2) {
      Operation *outer = root.getDefiningOp();
      Value body;
      if (form == 0) {
        auto add = dyn_cast<AddOp>(outer);
        if (!add)
          return failure();
        for (auto [b, v] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())})
          if (cast<RankedTensorType>(v.getType()).getRank() == 1 &&
              hasOneUse(b) && b.getDefiningOp<MulOp>()) {
            body = b;
            bias = v;
            break;
          }
        if (!body)
          return failure();
        outer = body.getDefiningOp();
      }
      auto mul = dyn_cast<MulOp>(outer);
      if (!mul)
        return failure();
      for (auto [b, v] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())})
        if (cast<RankedTensorType>(v.getType()).getRank() == 1 &&
            hasOneUse(b)) {
          norm = b;
          scale = v;
          break;
        }
      if (!scale)
        return failure();
    }
    std::optional<Normalization> parts = matchNormalization(norm);
    if (!parts)
      return failure();
    // LayerNorm: the numerator is x - mean(x).
    Value x;
    bool layerNorm = false;
    if (auto sub = parts->numerator.getDefiningOp<SubOp>()) {
      auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
      if (mean && mean.getInput() == sub.getLhs() && reducesLastAxis(mean) &&
          hasOneUse(sub.getRhs())) {
        Value centered = parts->numerator;
        // Users of x - mean: the square (one or two operand uses) and the
        // normalization.
        Operation *square = parts->variance.getDefiningOp<ReduceMeanOp>()
                                ? parts->variance.getDefiningOp<ReduceMeanOp>()
                                      .getInput()
                                      .getDefiningOp()
                                : nullptr;
        bool usersOk =
            square && llvm::all_of(centered.getUsers(), [&](Operation *u) {
              return u == square || u == norm.getDefiningOp();
            });
        if (usersOk && isMeanOfSquare(parts->variance, centered)) {
          x = sub.getLhs();
          layerNorm = true;
        }
      }
    }
    if (!layerNorm) {
      x = parts->numerator;
      if (!isMeanOfSquare(parts->variance, x))
        return failure();
    }
    if (!sameType(root, x) || (scale && !isRowVector(scale, x)) ||
        (bias && !isRowVector(bias, x)))
      return failure();
    // Leave a larger match to the user: a scale for the bare norm, a bias
    // for a scaled layer norm.
    if ((form == 2 && extendsFurther(root, x, true, false)) ||
        (form == 1 && extendsFurther(root, x, false, layerNorm)))
      return failure();
    if (bias && !layerNorm)
      return failure();
    auto epsilon = rewriter.getF32FloatAttr(parts->epsilon);
    auto axis = rewriter.getI64IntegerAttr(-1);
    if (layerNorm)
      rewriter.replaceOpWithNewOp<LayerNormOp>(op, x.getType(), x, scale, bias,
                                               axis, epsilon);
    else
      rewriter.replaceOpWithNewOp<RmsNormOp>(op, x.getType(), x, scale, axis,
                                             epsilon);
    return success();
  }
};

/// matmul(transpose(x), y), the transpose swapping the last two dims and
/// used only here, as matmul(x, y) {transpose_a}; likewise for the rhs.
struct FoldTransposeIntoMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Value operands[2] = {op.getLhs(), op.getRhs()};
    bool flags[2] = {op.getTransposeA(), op.getTransposeB()};
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
      auto transpose = operands[i].getDefiningOp<TransposeOp>();
      if (!transpose || !hasOneUse(operands[i]))
        continue;
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      int64_t rank = static_cast<int64_t>(permutation.size());
      if (rank < 2)
        continue;
      bool swapsLastTwo = permutation[rank - 2] == rank - 1 &&
                          permutation[rank - 1] == rank - 2;
      for (int64_t d = 0; d + 2 < rank; ++d)
        swapsLastTwo &= permutation[d] == d;
      if (!swapsLastTwo)
        continue;
      operands[i] = transpose.getInput();
      flags[i] = !flags[i];
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), operands[0],
                                          operands[1], flags[0], flags[1],
                                          op.getAlpha());
    return success();
  }
};

/// A float matmul used only by a product with (or a division by) a scalar
/// constant, as the matmul's alpha.
template <typename OpTy> struct FoldScaleIntoMatmul : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool divides = std::is_same_v<OpTy, DivOp>;
    for (int i = 0; i < (divides ? 1 : 2); ++i) {
      Value product = op->getOperand(i), factor = op->getOperand(1 - i);
      auto matmul = product.template getDefiningOp<MatmulOp>();
      std::optional<double> c = ::tessera::splatValue(factor);
      if (!matmul || !c || !hasOneUse(product) ||
          op.getResult().getType() != product.getType() ||
          !isa<FloatType>(matmul.getType().getElementType()) ||
          (divides && *c == 0))
        continue;
      double alpha =
          matmul.getAlpha().convertToDouble() * (divides ? 1.0 / *c : *c);
      rewriter.replaceOpWithNewOp<MatmulOp>(
          op, matmul.getType(), matmul.getLhs(), matmul.getRhs(),
          matmul.getTransposeA(), matmul.getTransposeB(),
          APFloat(static_cast<float>(alpha)));
      return success();
    }
    return failure();
  }
};

struct RaiseCompositesPass
    : ::tessera::impl::RaiseCompositesPassBase<RaiseCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseGelu, RaiseSilu, RaiseNorm, FoldTransposeIntoMatmul,
                 FoldScaleIntoMatmul<MulOp>, FoldScaleIntoMatmul<DivOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
