//===- RaiseAttention.cpp - scaled dot-product attention from parts -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Matchers.h"
#include "tessera/Support/ShapeInference.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <string>
#include <variant>

namespace tessera {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;
using ::tessera::hasOneUse;
using ::tessera::floatElements;
using ::tessera::splatValue;

namespace {

/// Masked positions must hold at most this (exp underflows to 0 in f32).
constexpr double kMaskedAtMost = -1.0e4;
/// A fill at most this, added to any score (under 1e22 in magnitude), is
/// still the fill in f32.
constexpr double kSwallowsScores = -1.0e30;

/// Whether `shape` is [1..., rows, cols] with rows and cols each `sq`/`sk`
/// or (with `broadcast`) 1.
bool spansScores(ArrayRef<int64_t> shape, int64_t sq, int64_t sk,
                 bool broadcast) {
  if (shape.size() < 2 ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  return (rows == sq || (broadcast && rows == 1)) &&
         (cols == sk || (broadcast && cols == 1));
}

/// A boolean sq x sk condition read one position at a time, without
/// materializing it: a boolean constant, or the comparison of two integer
/// constants that broadcast to sq x sk (a column index against a row index,
/// as exporters compute a causal mask from Range: the folding of constants
/// stops short of a 4096 x 4096 mask).
class Condition {
public:
  static std::optional<Condition> of(Value condition, int64_t sq,
                                     int64_t sk) {
    if (sq == ShapedType::kDynamic || sk == ShapedType::kDynamic)
      return std::nullopt;
    Condition c;
    if (auto compare = condition.getDefiningOp<CompareOp>()) {
      c.direction = compare.getDirection();
      if (!c.read(compare.getLhs(), sq, sk, c.lhs) ||
          !c.read(compare.getRhs(), sq, sk, c.rhs))
        return std::nullopt;
      return c;
    }
    c.direction = std::nullopt;
    if (!c.read(condition, sq, sk, c.lhs) || c.lhs.values.size() == 1)
      return std::nullopt;
    return c;
  }

  bool at(int64_t i, int64_t j) const {
    int64_t x = lhs.at(i, j);
    if (!direction)
      return x != 0;
    return compareValues(*direction, x, rhs.at(i, j));
  }

private:
  /// An integer constant broadcast to sq x sk.
  struct Operand {
    SmallVector<int64_t> values;
    int64_t rows = 1, cols = 1;
    int64_t at(int64_t i, int64_t j) const {
      return values[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
    }
  };

  static bool read(Value value, int64_t sq, int64_t sk, Operand &operand) {
    auto constant = value.getDefiningOp<ConstantOp>();
    auto dense = constant
                     ? dyn_cast<DenseIntElementsAttr>(constant.getValue())
                     : nullptr;
    if (!dense)
      return false;
    ArrayRef<int64_t> shape = dense.getType().getShape();
    bool isBool = dense.getElementType().isInteger(1);
    auto valueOf = [&](const APInt &v) {
      return isBool ? int64_t(v.getBoolValue()) : v.getSExtValue();
    };
    if (dense.isSplat()) {
      operand.values = {valueOf(dense.getSplatValue<APInt>())};
      return true;
    }
    if (!spansScores(shape, sq, sk, /*broadcast=*/true))
      return false;
    operand.rows = shape[shape.size() - 2];
    operand.cols = shape.back();
    for (const APInt &v : dense.getValues<APInt>())
      operand.values.push_back(valueOf(v));
    return true;
  }

  std::optional<CompareDirection> direction;
  Operand lhs, rhs;
};

/// Whether the sq x sk mask `value(i, j)` allows exactly the keys
/// `j <= i + (Sk - Sq)` (0 there, at most -1e4 elsewhere). With more
/// queries than keys the first rows see no key: a finite mask gives them a
/// uniform softmax, which the causal flag (-inf) would not, so the mask
/// must be -inf there.
template <typename ValueAt>
bool isCausal(int64_t sq, int64_t sk, ValueAt value) {
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j) {
      float v = value(i, j);
      bool allowed = j <= i + (sk - sq);
      if (allowed ? v != 0.0f : !(v <= kMaskedAtMost))
        return false;
      if (!allowed && sq > sk && !std::isinf(v))
        return false;
    }
  return true;
}

/// Whether `mask` is a constant [1..., Sq, Sk] that is causal (isCausal),
/// or a `where` of such a condition (Condition) between two scalars.
bool isCausalMask(Value mask, int64_t sq, int64_t sk) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (sq == ShapedType::kDynamic || sk == ShapedType::kDynamic ||
      !spansScores(type.getShape(), sq, sk, /*broadcast=*/false))
    return false;
  if (auto where = mask.getDefiningOp<WhereOp>()) {
    std::optional<double> onTrue = splatValue(where.getOnTrue());
    std::optional<double> onFalse = splatValue(where.getOnFalse());
    std::optional<Condition> condition =
        Condition::of(where.getCondition(), sq, sk);
    if (onTrue && onFalse && condition)
      return isCausal(sq, sk, [&](int64_t i, int64_t j) {
        return float(condition->at(i, j) ? *onTrue : *onFalse);
      });
  }
  std::optional<SmallVector<float>> values = floatElements(mask);
  return values && isCausal(sq, sk, [&](int64_t i, int64_t j) {
           return (*values)[i * sk + j];
         });
}

/// Whether `condition` (the scores are kept where it is `keepOn`) keeps
/// exactly the causal positions of sq x sk scores.
bool isCausalSelect(Value condition, bool keepOn, int64_t sq, int64_t sk) {
  std::optional<Condition> c = Condition::of(condition, sq, sk);
  if (!c)
    return false;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j)
      if ((c->at(i, j) == keepOn) != (j <= i + (sk - sq)))
        return false;
  return true;
}

/// The permutation that swaps the last two of `rank` dims.
SmallVector<int64_t> swapLastTwo(int64_t rank) {
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return permutation;
}

/// A boolean mask applied with a select: the scores where `condition` is
/// `keepOn`, `fill` (at most kMaskedAtMost) elsewhere.
struct SelectMask {
  Value condition;
  double fill;
  bool keepOn;
};

/// An additive mask; `viewedAs` is the shape the scores had when it was
/// added (scores reshaped for the add and back, as a shifted-window
/// transformer adds its [windows, 1, N, N] mask to [batch, windows,
/// heads, N, N]), or null when it was added to the scores as they are.
struct AddedMask {
  Value value;
  RankedTensorType viewedAs;
};

/// What `softmax(scale * q @ k^T + masks) @ v` matched; the masks that are
/// not the causal flag (additive ones and selects, which become additive)
/// are summed into the attention's one mask.
struct AttentionMatch {
  Value q, keys, v;
  SmallVector<AddedMask> masks;
  SmallVector<SelectMask> selects;
  MatmulOp qk;
  double scale = 1.0;
  bool causal = false;
};

/// Whether a mask added to the scores viewed as `view` is, in the scores'
/// own shape, the mask with the view's leading unit dims dropped (a view
/// that only puts unit dims in front), rather than the mask broadcast to
/// the view and viewed back.
bool viewOnlyAddsUnitDims(RankedTensorType view, RankedTensorType scores) {
  int64_t extra = view.getRank() - scores.getRank();
  return extra >= 0 && view.getShape().drop_front(extra) == scores.getShape() &&
         llvm::all_of(view.getShape().take_front(extra),
                      [](int64_t d) { return d == 1; });
}

/// The type of `added` as a mask of the scores (see maskForScores).
RankedTensorType maskTypeForScores(const AddedMask &added,
                                   RankedTensorType scoresType) {
  auto maskType = cast<RankedTensorType>(added.value.getType());
  if (!added.viewedAs)
    return maskType;
  if (viewOnlyAddsUnitDims(added.viewedAs, scoresType)) {
    int64_t drop = maskType.getRank() - scoresType.getRank();
    return drop <= 0 ? maskType
                     : RankedTensorType::get(maskType.getShape().drop_front(drop),
                                             maskType.getElementType());
  }
  return scoresType.clone(maskType.getElementType());
}

/// `added` as a mask of the scores (`scoresType`): as it is, or, when it
/// was added to the scores viewed in another shape, in the scores' own
/// shape. A view that only puts unit dims in front takes the mask with
/// those dims dropped (it still broadcasts); any other view, the mask
/// broadcast to the view's shape and reshaped, element for element.
Value maskForScores(PatternRewriter &rewriter, Location loc,
                    const AddedMask &added, RankedTensorType scoresType) {
  RankedTensorType type = maskTypeForScores(added, scoresType);
  if (type == added.value.getType())
    return added.value;
  if (viewOnlyAddsUnitDims(added.viewedAs, scoresType))
    return ReshapeOp::create(rewriter, loc, type, added.value, Value());
  auto maskType = cast<RankedTensorType>(added.value.getType());
  Value full = added.value;
  ArrayRef<int64_t> view = added.viewedAs.getShape();
  if (maskType.getShape() != view)
    full = ExpandOp::create(
        rewriter, loc, RankedTensorType::get(view, maskType.getElementType()),
        added.value);
  return ReshapeOp::create(rewriter, loc, type, full, Value());
}

/// Matches the attention ending at `pv`, or says which condition failed
/// (for a product of a softmax with another tensor, the fusion report
/// gives the reason attention was not formed).
std::variant<AttentionMatch, std::string> matchAttention(MatmulOp pv) {
  if (pv.getTransposeA() || pv.getTransposeB() ||
      !pv.getAlpha().isExactlyValue(1.0))
    return std::string("the product with v is transposed or scaled");
  Value probs = pv.getLhs(), v = pv.getRhs();
  auto softmax = probs.getDefiningOp<SoftmaxOp>();
  if (!softmax)
    return std::string("the lhs of the product with v is not a softmax");
  if (!hasOneUse(probs))
    return std::string("the softmax's result has other users");
  int64_t rank = cast<RankedTensorType>(probs.getType()).getRank();
  auto axis = static_cast<int64_t>(softmax.getAxis());
  if (rank < 2 || (axis != -1 && axis != rank - 1))
    return std::string("the softmax is not along the last axis");
  Value scores = softmax.getInput();
  if (!hasOneUse(scores))
    return std::string("the scores have other users");

  // scores = scaled (+ masks); scaled = qk (* s | / s).
  AttentionMatch match;
  match.v = v;
  Value qk;
  double scale = 1.0;
  auto scaledProduct = [&](Value value) -> Value {
    if (!hasOneUse(value))
      return {};
    if (value.getDefiningOp<MatmulOp>()) {
      scale = 1.0;
      return value;
    }
    if (auto div = value.getDefiningOp<DivOp>()) {
      std::optional<double> c = splatValue(div.getRhs());
      if (c && *c != 0 && div.getLhs().getDefiningOp<MatmulOp>() &&
          div.getResult().getType() == div.getLhs().getType()) {
        scale = 1.0 / *c;
        return div.getLhs();
      }
    }
    if (auto mul = value.getDefiningOp<MulOp>()) {
      for (auto [product, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                     std::pair(mul.getRhs(), mul.getLhs())}) {
        std::optional<double> c = splatValue(factor);
        if (c && product.getDefiningOp<MatmulOp>() &&
            mul.getResult().getType() == product.getType()) {
          scale = *c;
          return product;
        }
      }
    }
    return {};
  };
  // Masks may be stacked (a causal constant, then a padding mask), added
  // or applied with a select of a very negative fill (masked_fill): walk
  // them down to the scaled product.
  auto masking = [&](Value value) {
    return value.getDefiningOp<AddOp>() || value.getDefiningOp<WhereOp>() ||
           scaledProduct(value);
  };
  SmallVector<AddedMask> masks;
  SmallVector<SelectMask> selects;
  Value current = scores;
  while (!qk) {
    if (Value product = scaledProduct(current)) {
      qk = product;
      break;
    }
    if (current != scores && !hasOneUse(current))
      break;
    Value next;
    if (auto add = current.getDefiningOp<AddOp>()) {
      for (auto [body, other] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())}) {
        if (add.getResult().getType() == body.getType() && masking(body)) {
          next = body;
          masks.push_back({other, RankedTensorType()});
          break;
        }
      }
    } else if (auto outer = current.getDefiningOp<ReshapeOp>()) {
      // The scores reshaped, a mask added, and reshaped back (static
      // shapes).
      auto add = outer.getInput().getDefiningOp<AddOp>();
      auto viewed = cast<RankedTensorType>(outer.getInput().getType());
      if (add && hasOneUse(add.getResult()) && viewed.hasStaticShape() &&
          cast<RankedTensorType>(current.getType()).hasStaticShape())
        for (auto [body, other] : {std::pair(add.getLhs(), add.getRhs()),
                                   std::pair(add.getRhs(), add.getLhs())}) {
          auto inner = body.getDefiningOp<ReshapeOp>();
          if (inner && hasOneUse(body) && body.getType() == viewed &&
              cast<RankedTensorType>(other.getType()).hasStaticShape() &&
              inner.getInput().getType() == current.getType() &&
              masking(inner.getInput())) {
            next = inner.getInput();
            masks.push_back({other, viewed});
            break;
          }
        }
    } else if (auto where = current.getDefiningOp<WhereOp>()) {
      for (bool keepOn : {true, false}) {
        Value body = keepOn ? where.getOnTrue() : where.getOnFalse();
        std::optional<double> fill =
            splatValue(keepOn ? where.getOnFalse() : where.getOnTrue());
        if (where.getResult().getType() == body.getType() && fill &&
            *fill <= kMaskedAtMost && masking(body)) {
          next = body;
          selects.push_back({where.getCondition(), *fill, keepOn});
          break;
        }
      }
    }
    if (!next)
      break;
    current = next;
  }
  if (!qk) {
    if (current.getDefiningOp<WhereOp>())
      return std::string("the scores are masked with a select whose other "
                         "value is not a constant at most -1e4");
    return std::string("the scores are not q @ k^T, times a constant scale, "
                       "with additive or select masks");
  }
  if (!hasOneUse(qk))
    return std::string("q @ k^T has other users");
  auto qkOp = qk.getDefiningOp<MatmulOp>();
  if (qkOp.getTransposeA())
    return std::string("q @ k^T has a transposed q");
  match.scale = scale * qkOp.getAlpha().convertToDouble();
  match.qk = qkOp;
  match.q = qkOp.getLhs();
  match.keys = qkOp.getRhs();
  auto qType = cast<RankedTensorType>(match.q.getType());
  auto kType = cast<RankedTensorType>(match.keys.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  if (qType.getRank() != rank || kType.getRank() != rank ||
      vType.getRank() != rank || !isa<FloatType>(qType.getElementType()) ||
      qk.getType() != scores.getType())
    return std::string("q, k and v are not float tensors of the scores' rank "
                       "(a broadcast in q @ k^T)");
  // A causal constant becomes the flag; the other masks are summed into
  // one.
  auto scoresType = cast<RankedTensorType>(scores.getType());
  // A mask built at run time from a symbolic sequence length is followed
  // back to the dims it is read from (SymbolicCausal.cpp).
  bool symbolic = scoresType.isDynamicDim(rank - 2) ||
                  scoresType.isDynamicDim(rank - 1);
  for (const AddedMask &candidate : masks) {
    if (!match.causal && !candidate.viewedAs &&
        (isCausalMask(candidate.value, scoresType.getDimSize(rank - 2),
                      scoresType.getDimSize(rank - 1)) ||
         (symbolic && ::tessera::isSymbolicCausal(candidate.value, match.q,
                                                  std::nullopt,
                                                  kMaskedAtMost)))) {
      match.causal = true;
      continue;
    }
    if (cast<RankedTensorType>(candidate.value.getType()).getElementType() !=
        scoresType.getElementType())
      return std::string("a mask's element type is not the scores'");
    match.masks.push_back(candidate);
  }
  for (const SelectMask &select : selects) {
    // A finite fill with rows that see no key: see isCausalMask.
    bool rowsSeeKeys = scoresType.getDimSize(rank - 2) <=
                       scoresType.getDimSize(rank - 1);
    if (!match.causal && (rowsSeeKeys || std::isinf(select.fill)) &&
        (isCausalSelect(select.condition, select.keepOn,
                        scoresType.getDimSize(rank - 2),
                        scoresType.getDimSize(rank - 1)) ||
         (symbolic && ::tessera::isSymbolicCausal(select.condition, match.q,
                                                  select.keepOn, 0)))) {
      match.causal = true;
      continue;
    }
    // As an additive mask the select adds its fill to the scores: the same
    // values only when the fill swallows any score (-inf, or a float's
    // minimum); with a larger one a row masked everywhere would no longer
    // be uniform.
    if (!(select.fill <= kSwallowsScores))
      return std::string("the scores are masked with a select whose fill is "
                         "above -1e30 (a fully masked row would change)");
    match.selects.push_back(select);
  }
  if (match.masks.size() + match.selects.size() <= 1)
    return match;
  if (!scoresType.hasStaticShape())
    return std::string("more than one mask besides a causal constant, with "
                       "dynamic scores");
  // Summed with the other masks, a select's fill would have them added to
  // it: the same only for an infinite fill.
  if (llvm::any_of(match.selects,
                   [](const SelectMask &s) { return !std::isinf(s.fill); }))
    return std::string("a select with a finite fill and other masks");
  SmallVector<int64_t> shape;
  auto join = [&](ArrayRef<int64_t> other) {
    llvm::Expected<::tessera::Shape> joined =
        ::tessera::broadcastShapes(shape, other);
    if (!joined) {
      llvm::consumeError(joined.takeError());
      return false;
    }
    shape.assign(joined->begin(), joined->end());
    return true;
  };
  for (const AddedMask &added : match.masks)
    if (!join(maskTypeForScores(added, scoresType).getShape()))
      return std::string("masks that do not broadcast together");
  for (const SelectMask &select : match.selects)
    if (!join(cast<RankedTensorType>(select.condition.getType()).getShape()))
      return std::string("masks that do not broadcast together");
  return match;
}

struct RaiseAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    std::variant<AttentionMatch, std::string> matched = matchAttention(pv);
    if (auto *why = std::get_if<std::string>(&matched))
      return rewriter.notifyMatchFailure(pv, *why);
    AttentionMatch &m = std::get<AttentionMatch>(matched);
    int64_t rank = cast<RankedTensorType>(m.q.getType()).getRank();
    Location loc = pv.getLoc();
    Value k = m.keys;
    if (!m.qk.getTransposeB()) {
      SmallVector<int64_t> swap = swapLastTwo(rank);
      auto transpose = m.keys.getDefiningOp<TransposeOp>();
      if (transpose && transpose.getPermutation() == ArrayRef<int64_t>(swap))
        k = transpose.getInput();
      else
        k = TransposeOp::create(rewriter, loc, m.keys,
                                rewriter.getDenseI64ArrayAttr(swap));
    }
    auto scoresType =
        cast<RankedTensorType>(m.qk.getResult().getType());
    SmallVector<Value> masks;
    for (const AddedMask &added : m.masks)
      masks.push_back(maskForScores(rewriter, loc, added, scoresType));
    // A select mask becomes additive: 0 where the scores are kept, the
    // fill elsewhere.
    Type element = scoresType.getElementType();
    for (const SelectMask &select : m.selects) {
      auto scalar = [&](double value) -> Value {
        auto type = RankedTensorType::get({}, element);
        return ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(
                type, rewriter.getFloatAttr(element, value).getValue()));
      };
      Value zero = scalar(0.0), fill = scalar(select.fill);
      auto condition = cast<RankedTensorType>(select.condition.getType());
      masks.push_back(WhereOp::create(rewriter, loc, condition.clone(element),
                                      select.condition,
                                      select.keepOn ? zero : fill,
                                      select.keepOn ? fill : zero));
    }
    // Several masks (a relative position bias and a window mask): their
    // sum, in the broadcast of their shapes (the match holds that the
    // scores are static then).
    Value mask;
    for (Value next : masks) {
      if (!mask) {
        mask = next;
        continue;
      }
      auto a = cast<RankedTensorType>(mask.getType());
      auto b = cast<RankedTensorType>(next.getType());
      // matchAttention checked that they broadcast.
      llvm::Expected<::tessera::Shape> shape =
          ::tessera::broadcastShapes(a.getShape(), b.getShape());
      mask = AddOp::create(rewriter, loc, a.clone(llvm::cantFail(std::move(shape))),
                           mask, next);
    }
    rewriter.replaceOpWithNewOp<AttentionOp>(
        pv, pv.getType(), m.q, k, m.v, mask,
        rewriter.getF32FloatAttr(static_cast<float>(m.scale)),
        m.causal ? rewriter.getUnitAttr() : UnitAttr());
    return success();
  }
};

struct RaiseAttentionPass
    : ::tessera::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // A product of a softmax that stayed: why it is not attention, for the
    // fusion report.
    getOperation().walk([](MatmulOp pv) {
      if (!pv.getLhs().getDefiningOp<SoftmaxOp>())
        return;
      std::variant<AttentionMatch, std::string> matched = matchAttention(pv);
      if (auto *why = std::get_if<std::string>(&matched))
        pv->setAttr(::tessera::kAttentionNotRaisedAttr,
                    StringAttr::get(pv.getContext(), *why));
    });
  }
};

} // namespace
