//===- SymbolicCausal.cpp - causal masks over a symbolic sequence ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A causal mask that a model builds on every call from its sequence length
// (torch.triu over a size read from the input's shape, or a tril buffer
// sliced to the sequence as minGPT and nanoGPT do) has no constant value to
// compare with the causal pattern. It is recognized here by following the
// sizes it is built from back to the dims they are read from, and by
// evaluating the mask as a function of its row and column index.
//
//===----------------------------------------------------------------------===//
#include "Matchers.h"

#include <functional>

using namespace mlir;
using namespace mlir::tessera;

namespace tessera {
namespace {

/// A size at run time: a constant, or dim `dim` of `tensor` (followed back
/// through the ops that carry it).
struct Size {
  std::optional<int64_t> constant;
  Value tensor;
  int64_t dim = -1;
  bool operator==(const Size &other) const {
    return constant ? other.constant == constant
                    : !other.constant && tensor == other.tensor &&
                          dim == other.dim;
  }
};

constexpr int kMaxDepth = 32;

std::optional<Size> scalarSize(Value value, int depth);
std::optional<Size> elementSize(Value vector, int64_t k, int depth);

/// The constant integer of a splat, or nothing.
std::optional<int64_t> splatInt(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat() || dense.getElementType().isInteger(1))
    return std::nullopt;
  return dense.getSplatValue<APInt>().getSExtValue();
}

/// The value of a float, integer or boolean splat, or nothing.
std::optional<double> splatNumber(Value value) {
  if (std::optional<double> f = splatValue(value))
    return f;
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return std::nullopt;
  APInt v = dense.getSplatValue<APInt>();
  return dense.getElementType().isInteger(1) ? double(v.getBoolValue())
                                             : double(v.getSExtValue());
}

/// Dim `d` of `value` as the size it is read from.
std::optional<Size> dimSize(Value value, int64_t d, int depth) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || d < 0 || d >= type.getRank() || depth > kMaxDepth)
    return std::nullopt;
  if (!type.isDynamicDim(d))
    return Size{type.getDimSize(d), Value(), -1};
  Operation *op = value.getDefiningOp();
  Size self{std::nullopt, value, d};
  if (!op)
    return self;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return dimSize(transpose.getInput(), transpose.getPermutation()[d],
                   depth + 1);
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    if (!reshape.getShape())
      return self;
    std::optional<Size> size = elementSize(reshape.getShape(), d, depth + 1);
    // 0 (copy the input's dim) and -1 (inferred) are not sizes.
    if (size && size->constant && *size->constant <= 0)
      return self;
    return size ? size : self;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    // The shape vector and the input are aligned to the result's last
    // dims: dim d is the vector's element d - (rank - length) where the
    // input has a 1 there (or no dim).
    auto in = cast<RankedTensorType>(expand.getInput().getType());
    auto shape = expand.getShape()
                     ? dyn_cast<RankedTensorType>(expand.getShape().getType())
                     : nullptr;
    if (!shape || shape.getRank() != 1 || shape.isDynamicDim(0))
      return self;
    int64_t at = d - (type.getRank() - in.getRank());
    int64_t element = d - (type.getRank() - shape.getDimSize(0));
    if (element >= 0 && (at < 0 || in.getDimSize(at) == 1))
      if (std::optional<Size> size =
              elementSize(expand.getShape(), element, depth + 1))
        return size;
    return self;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    std::optional<ArrayRef<int64_t>> axes = slice.getAxes();
    for (size_t i = 0; i < slice.getStarts().size(); ++i) {
      int64_t axis = axes ? (*axes)[i] : int64_t(i);
      if ((axis < 0 ? axis + type.getRank() : axis) == d)
        return self;
    }
    return dimSize(slice.getInput(), d, depth + 1);
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    int64_t axis = split.getAxis();
    if ((axis < 0 ? axis + type.getRank() : axis) == d)
      return self;
    return dimSize(split.getInput(), d, depth + 1);
  }
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    // The rows of the product are the lhs's.
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    if (d == type.getRank() - 2 && !matmul.getTransposeA() &&
        lhs.getRank() >= 2)
      return dimSize(matmul.getLhs(), lhs.getRank() - 2, depth + 1);
    return self;
  }
  // An elementwise op: the dim of the one operand that has it, when the
  // others broadcast a static 1 (or have fewer dims) there.
  if (op->getNumResults() == 1 && op->getNumOperands() >= 1 &&
      isa<AddOp, SubOp, MulOp, DivOp, CastOp, GeluOp, ReluOp, NegOp>(op)) {
    Value carrier;
    for (Value operand : op->getOperands()) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t at = d - (type.getRank() - t.getRank());
      if (at < 0 || t.getDimSize(at) == 1)
        continue;
      if (carrier)
        return self;
      carrier = operand;
    }
    if (carrier)
      return dimSize(carrier, d - (type.getRank() -
                                   cast<RankedTensorType>(carrier.getType())
                                       .getRank()),
                     depth + 1);
  }
  return self;
}

/// Element `k` of a 1-D shape vector.
std::optional<Size> elementSize(Value vector, int64_t k, int depth) {
  if (depth > kMaxDepth)
    return std::nullopt;
  if (auto shape = vector.getDefiningOp<ShapeOp>())
    return dimSize(shape.getInput(), k, depth + 1);
  if (auto concat = vector.getDefiningOp<ConcatOp>()) {
    for (Value part : concat.getInputs()) {
      auto t = cast<RankedTensorType>(part.getType());
      if (t.getRank() != 1 || t.isDynamicDim(0))
        return std::nullopt;
      if (k < t.getDimSize(0))
        return elementSize(part, k, depth + 1);
      k -= t.getDimSize(0);
    }
    return std::nullopt;
  }
  auto type = cast<RankedTensorType>(vector.getType());
  if (type.getNumElements() == 1 && k == 0)
    return scalarSize(vector, depth + 1);
  return std::nullopt;
}

/// A one-element integer tensor as the size it holds.
std::optional<Size> scalarSize(Value value, int depth) {
  if (depth > kMaxDepth)
    return std::nullopt;
  if (std::optional<int64_t> c = splatInt(value))
    return Size{*c, Value(), -1};
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return scalarSize(reshape.getInput(), depth + 1);
  if (auto gather = dyn_cast<GatherOp>(op)) {
    auto table = cast<RankedTensorType>(gather.getInput().getType());
    std::optional<int64_t> index = splatInt(gather.getIndices());
    if (!index || table.getRank() != 1 || gather.getAxis() != 0 ||
        table.isDynamicDim(0))
      return std::nullopt;
    int64_t k = *index < 0 ? *index + table.getDimSize(0) : *index;
    return elementSize(gather.getInput(), k, depth + 1);
  }
  // A slice's end normalized as exporters write it: where(n < 0, n + c,
  // n), max(n, 0), min(n, c). Sizes are not negative, so the first two
  // are n; min(n, c) is n wherever the mask fits the scores it is added
  // to (it has n rows there, or broadcasting fails).
  if (auto where = dyn_cast<WhereOp>(op)) {
    auto compare = where.getCondition().getDefiningOp<CompareOp>();
    if (compare && compare.getDirection() == CompareDirection::lt &&
        compare.getLhs() == where.getOnFalse() &&
        splatInt(compare.getRhs()) == 0)
      return scalarSize(where.getOnFalse(), depth + 1);
    return std::nullopt;
  }
  if (isa<MaxOp, MinOp>(op)) {
    std::optional<int64_t> bound = splatInt(op->getOperand(1));
    if (bound && (isa<MaxOp>(op) ? *bound <= 0 : *bound > 1))
      return scalarSize(op->getOperand(0), depth + 1);
  }
  return std::nullopt;
}

/// A mask (or condition) as a function of its row i and column j.
using IndexFn = std::function<double(int64_t, int64_t)>;

/// An index expression a * i + b * j + c.
struct Affine {
  double a = 0, b = 0, c = 0;
};

/// The largest constant a comparison of index expressions may hold: the
/// mask is checked on every row and column offset up to it.
constexpr double kLargestOffset = 2048;

/// Builds the function of a mask or condition of shape [1..., rows, cols]
/// and records the sizes of the ranges it indexes rows and columns with,
/// the largest offset its comparisons of indices hold, and the extent of
/// any constant table it reads (the mask is only defined within it).
/// Index expressions (ranges, their sums and differences, constants) may
/// only be compared, and only as a function of j - i with a unit
/// coefficient and an offset of at most kLargestOffset: such a comparison
/// changes value at one offset, so the mask is constant beyond the largest
/// one and checking every offset up to it decides it.
struct MaskBuilder {
  std::optional<Size> rows, cols;
  double largestOffset = 0;
  std::optional<int64_t> tableExtent;

  bool setSize(std::optional<Size> &slot, Value end) {
    std::optional<Size> size = scalarSize(end, 0);
    if (!size || (slot && !(*slot == *size)))
      return false;
    slot = size;
    return true;
  }

  /// range(0, n, 1) is the column index j as a 1-D range, the row index i
  /// as that range reshaped to [n, 1]; sums, differences and constants of
  /// them.
  std::optional<Affine> affine(Value value, int depth = 0) {
    if (depth > kMaxDepth)
      return std::nullopt;
    if (std::optional<double> c = splatNumber(value)) {
      if (!(std::fabs(*c) <= kLargestOffset))
        return std::nullopt;
      return Affine{0, 0, *c};
    }
    Operation *op = value.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto expand = dyn_cast<ExpandOp>(op))
      return splatNumber(expand.getInput()) ? affine(expand.getInput(), depth + 1)
                                            : std::nullopt;
    if (isa<AddOp, SubOp>(op)) {
      std::optional<Affine> x = affine(op->getOperand(0), depth + 1);
      std::optional<Affine> y = affine(op->getOperand(1), depth + 1);
      if (!x || !y)
        return std::nullopt;
      double sign = isa<AddOp>(op) ? 1 : -1;
      return Affine{x->a + sign * y->a, x->b + sign * y->b,
                    x->c + sign * y->c};
    }
    if (isa<NegOp>(op)) {
      std::optional<Affine> x = affine(op->getOperand(0), depth + 1);
      return x ? std::optional<Affine>(Affine{-x->a, -x->b, -x->c})
               : std::nullopt;
    }
    Value range = value;
    bool isRow = false;
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      auto t = cast<RankedTensorType>(reshape.getType());
      if (t.getRank() != 2 || t.getDimSize(1) != 1)
        return std::nullopt;
      range = reshape.getInput();
      isRow = true;
    }
    auto r = range.getDefiningOp<RangeOp>();
    if (!r || splatInt(r.getStart()) != 0 || splatInt(r.getDelta()) != 1 ||
        !setSize(isRow ? rows : cols, r.getLimit()))
      return std::nullopt;
    return isRow ? Affine{1, 0, 0} : Affine{0, 1, 0};
  }

  std::optional<IndexFn> build(Value value, int depth = 0) {
    if (depth > kMaxDepth)
      return std::nullopt;
    if (std::optional<double> c = splatNumber(value)) {
      double v = *c;
      return IndexFn([v](int64_t, int64_t) { return v; });
    }
    Operation *op = value.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto expand = dyn_cast<ExpandOp>(op))
      if (std::optional<double> c = splatNumber(expand.getInput())) {
        double v = *c;
        return IndexFn([v](int64_t, int64_t) { return v; });
      }
    if (auto gathered = table(value))
      return gathered;
    if (auto compare = dyn_cast<CompareOp>(op)) {
      std::optional<Affine> x = affine(compare.getLhs());
      std::optional<Affine> y = x ? affine(compare.getRhs()) : std::nullopt;
      if (x && y) {
        // x - y as (j - i) * b + c.
        Affine d{x->a - y->a, x->b - y->b, x->c - y->c};
        if (d.a != -d.b || std::fabs(d.b) > 1 ||
            !(std::fabs(d.c) <= kLargestOffset))
          return std::nullopt;
        largestOffset = std::max(largestOffset, std::fabs(d.c));
        return comparison(compare.getDirection(),
                          IndexFn([d](int64_t i, int64_t j) {
                            return d.b * double(j - i) + d.c;
                          }),
                          IndexFn([](int64_t, int64_t) { return 0.0; }));
      }
    }
    if (!isa<CompareOp, WhereOp, AndOp, OrOp, XorOp, NotOp>(op))
      return std::nullopt;
    SmallVector<IndexFn> x;
    for (Value operand : op->getOperands()) {
      std::optional<IndexFn> f = build(operand, depth + 1);
      if (!f)
        return std::nullopt;
      x.push_back(std::move(*f));
    }
    if (auto compare = dyn_cast<CompareOp>(op))
      return comparison(compare.getDirection(), x[0], x[1]);
    if (isa<WhereOp>(op))
      return IndexFn([x](int64_t i, int64_t j) {
        return x[0](i, j) != 0 ? x[1](i, j) : x[2](i, j);
      });
    if (isa<AndOp>(op))
      return IndexFn([x](int64_t i, int64_t j) {
        return double(x[0](i, j) != 0 && x[1](i, j) != 0);
      });
    if (isa<OrOp>(op))
      return IndexFn([x](int64_t i, int64_t j) {
        return double(x[0](i, j) != 0 || x[1](i, j) != 0);
      });
    if (isa<XorOp>(op))
      return IndexFn([x](int64_t i, int64_t j) {
        return double((x[0](i, j) != 0) != (x[1](i, j) != 0));
      });
    return IndexFn([x](int64_t i, int64_t j) { return double(x[0](i, j) == 0); });
  }

  static IndexFn comparison(CompareDirection direction, IndexFn lhs,
                            IndexFn rhs) {
    return IndexFn([lhs, rhs, direction](int64_t i, int64_t j) {
      return double(compareValues(direction, lhs(i, j), rhs(i, j)));
    });
  }

  /// A constant [1..., n, n] table gathered along its last two dims by the
  /// row and column ranges (a tril buffer sliced to the sequence).
  std::optional<IndexFn> table(Value value) {
    auto outer = value.getDefiningOp<GatherOp>();
    auto inner = outer ? outer.getInput().getDefiningOp<GatherOp>() : nullptr;
    if (!inner)
      return std::nullopt;
    auto t = cast<RankedTensorType>(inner.getInput().getType());
    int64_t r = t.getRank();
    auto axis = [&](GatherOp g) {
      return g.getAxis() < 0 ? g.getAxis() + r : g.getAxis();
    };
    auto rowRange = inner.getIndices().getDefiningOp<RangeOp>();
    auto colRange = outer.getIndices().getDefiningOp<RangeOp>();
    std::optional<SmallVector<float>> values =
        floatElements(inner.getInput());
    if (r < 2 || axis(inner) != r - 2 || axis(outer) != r - 1 || !rowRange ||
        !colRange || !t.hasStaticShape() ||
        t.getDimSize(r - 2) != t.getDimSize(r - 1) ||
        t.getNumElements() != t.getDimSize(r - 2) * t.getDimSize(r - 1) ||
        !values)
      return std::nullopt;
    for (RangeOp range : {rowRange, colRange})
      if (splatInt(range.getStart()) != 0 || splatInt(range.getDelta()) != 1)
        return std::nullopt;
    if (!setSize(rows, rowRange.getLimit()) ||
        !setSize(cols, colRange.getLimit()))
      return std::nullopt;
    int64_t n = t.getDimSize(r - 1);
    tableExtent = tableExtent ? std::min(*tableExtent, n) : n;
    auto shared = std::make_shared<SmallVector<float>>(std::move(*values));
    return IndexFn([shared, n](int64_t i, int64_t j) {
      return double((*shared)[i * n + j]);
    });
  }
};

} // namespace

bool isSymbolicCausal(Value mask, Value q, std::optional<bool> keepOn,
                      double maskedAtMost) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  auto qType = dyn_cast<RankedTensorType>(q.getType());
  if (!type || !qType || type.getRank() < 2 || qType.getRank() < 2 ||
      llvm::any_of(type.getShape().drop_back(2),
                   [](int64_t d) { return d != 1; }))
    return false;
  MaskBuilder builder;
  std::optional<IndexFn> f = builder.build(mask);
  std::optional<Size> queries = dimSize(q, qType.getRank() - 2, 0);
  // A [n, n] mask over n queries: on [Sq, Sk] scores it broadcasts only
  // when Sk is n too (or n is 1: one query, which the causal flag lets see
  // every key, as the mask's one allowed position does).
  if (!f || !builder.rows || !builder.cols || !queries ||
      !(*builder.rows == *queries) || !(*builder.cols == *queries))
    return false;
  auto allowed = [&](int64_t i, int64_t j) { return j <= i; };
  auto matches = [&](int64_t i, int64_t j) {
    double v = (*f)(i, j);
    if (keepOn)
      return (v != 0) == *keepOn ? allowed(i, j) : !allowed(i, j);
    return allowed(i, j) ? v == 0.0 : v <= maskedAtMost;
  };
  if (builder.tableExtent) {
    // Defined for sequences up to the table's extent: every position.
    int64_t n = *builder.tableExtent;
    if (n > 4096)
      return false;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (!matches(i, j))
          return false;
    return true;
  }
  // Built from the ranges alone: every comparison is a function of j - i
  // that changes value at one offset (MaskBuilder), so the mask is the
  // same beyond the largest; every offset up to it (and a margin) is
  // checked.
  auto bound = static_cast<int64_t>(builder.largestOffset) + 8;
  for (int64_t i = 0; i < bound; ++i)
    for (int64_t j = 0; j < bound; ++j)
      if (!matches(i, j))
        return false;
  return true;
}

} // namespace tessera
