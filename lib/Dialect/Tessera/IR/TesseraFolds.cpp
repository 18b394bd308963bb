//===- TesseraFolds.cpp - folders of the tessera ops ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Folds never change a value's type: an identity folds only when the
// surviving operand already has the result's type (no implicit broadcast).
// Constant folding stays small so that weights are never expanded in the
// compiler's memory.
//
//===----------------------------------------------------------------------===//
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Support/Numerics.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tessera;

/// Constants with more elements than this are not folded elementwise.
static constexpr int64_t kMaxFoldedElements = 1 << 16;

static bool isSmallConstant(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  return elements && (elements.isSplat() ||
                      elements.getNumElements() <= kMaxFoldedElements);
}

/// Folds `op(lhs, rhs)` over constant operands of the result's type with
/// `floatFn` or `intFn` (either may be null to skip that element kind).
template <typename FloatFn, typename IntFn>
static OpFoldResult foldConstants(ArrayRef<Attribute> operands,
                                  Type resultType, FloatFn floatFn,
                                  IntFn intFn) {
  if (operands.size() != 2 || !isSmallConstant(operands[0]) ||
      !isSmallConstant(operands[1]))
    return {};
  if (cast<ElementsAttr>(operands[0]).getType() != resultType ||
      cast<ElementsAttr>(operands[1]).getType() != resultType)
    return {};
  Type elementType = cast<ShapedType>(resultType).getElementType();
  if constexpr (!std::is_same_v<FloatFn, std::nullptr_t>)
    if (isa<FloatType>(elementType))
      return constFoldBinaryOp<FloatAttr, APFloat, void>(operands, resultType,
                                                         floatFn);
  if constexpr (!std::is_same_v<IntFn, std::nullptr_t>)
    if (isa<IntegerType>(elementType))
      return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
          operands, resultType, intFn);
  return {};
}

/// Returns `value` when it already has `type`, so that an identity fold does
/// not silently drop a broadcast.
static OpFoldResult sameTypeOrNull(Value value, Type type) {
  return value.getType() == type ? OpFoldResult(value) : OpFoldResult();
}

static bool isZero(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

static bool isOne(Value value) {
  return matchPattern(value, m_OneFloat()) || matchPattern(value, m_One());
}

static std::optional<APInt> wrap(APInt value) { return value; }

//===----------------------------------------------------------------------===//
// Binary arithmetic
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isZero(getRhs()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return wrap(a + b); });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isZero(getRhs()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return wrap(a - b); });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isOne(getRhs()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return wrap(a * b); });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isOne(getRhs()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  // Integer division by zero or INT_MIN / -1 is left to run time.
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a / b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero() || (a.isMinSignedValue() && b.isAllOnes()))
          return std::nullopt;
        return a.sdiv(b);
      });
}

OpFoldResult PowOp::fold(FoldAdaptor) {
  if (isOne(getRhs()))
    return sameTypeOrNull(getLhs(), getType());
  return {};
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return sameTypeOrNull(getLhs(), getType());
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return llvm::maximum(a, b); },
      [](const APInt &a, const APInt &b) { return wrap(llvm::APIntOps::smax(a, b)); });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return sameTypeOrNull(getLhs(), getType());
  return foldConstants(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return llvm::minimum(a, b); },
      [](const APInt &a, const APInt &b) { return wrap(llvm::APIntOps::smin(a, b)); });
}

//===----------------------------------------------------------------------===//
// Logic
//===----------------------------------------------------------------------===//

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() || matchPattern(getRhs(), m_One()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(adaptor.getOperands(), getType(), nullptr,
                       [](const APInt &a, const APInt &b) { return wrap(a & b); });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() || matchPattern(getRhs(), m_Zero()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(adaptor.getOperands(), getType(), nullptr,
                       [](const APInt &a, const APInt &b) { return wrap(a | b); });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getRhs(), m_Zero()))
    if (OpFoldResult same = sameTypeOrNull(getLhs(), getType()))
      return same;
  return foldConstants(adaptor.getOperands(), getType(), nullptr,
                       [](const APInt &a, const APInt &b) { return wrap(a ^ b); });
}

OpFoldResult NotOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return {};
}

OpFoldResult WhereOp::fold(FoldAdaptor) {
  if (getOnTrue() == getOnFalse())
    return sameTypeOrNull(getOnTrue(), getType());
  if (matchPattern(getCondition(), m_One()))
    return sameTypeOrNull(getOnTrue(), getType());
  if (matchPattern(getCondition(), m_Zero()))
    return sameTypeOrNull(getOnFalse(), getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

/// `bits` of each f32 element of `values` converted by `convert` to a
/// 16-bit float format.
static SmallVector<uint16_t>
narrowF32s(ArrayRef<char> values, uint16_t (*convert)(float,
                                                      ::tessera::numerics::Overflow)) {
  SmallVector<uint16_t> bits(values.size() / 4);
  for (size_t i = 0; i < bits.size(); ++i) {
    float value;
    std::memcpy(&value, values.data() + 4 * i, 4);
    bits[i] = convert(value, ::tessera::numerics::Overflow::Ieee);
  }
  return bits;
}

/// An f32 constant converted to bf16 or f16 at compile time (weights cast
/// by the precision passes): the result is half the size, so any size
/// folds. Weights kept as resource blobs stay blobs.
static OpFoldResult foldNarrowingCast(Attribute input, RankedTensorType type) {
  auto elements = dyn_cast_or_null<ElementsAttr>(input);
  Type target = type.getElementType();
  if (!elements || !elements.getElementType().isF32() ||
      !(target.isBF16() || target.isF16()))
    return {};
  auto convert = target.isBF16() ? ::tessera::numerics::toBF16
                                 : ::tessera::numerics::toF16;
  ArrayRef<char> data;
  if (auto dense = dyn_cast<DenseElementsAttr>(elements))
    data = dense.getRawData();
  else if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements);
           resource && resource.getRawHandle().getBlob())
    data = resource.getRawHandle().getBlob()->getData();
  else
    return {};
  int64_t count = elements.isSplat() ? 1 : elements.getNumElements();
  if (static_cast<int64_t>(data.size()) != 4 * count)
    return {};
  SmallVector<uint16_t> bits = narrowF32s(data, convert);
  ArrayRef<char> bytes(reinterpret_cast<const char *>(bits.data()),
                       bits.size() * sizeof(uint16_t));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements))
    return DenseResourceElementsAttr::get(
        type, resource.getRawHandle().getKey(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes,
                                                      alignof(uint16_t)));
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = sameTypeOrNull(getInput(), getType()))
    return same;
  // x widened exactly and narrowed back is x (bf16 -> f32 -> bf16).
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    auto original = dyn_cast<FloatType>(getType().getElementType());
    auto middle = dyn_cast<FloatType>(getInput().getType().getElementType());
    if (original && middle && inner.getInput().getType() == getType() &&
        APFloat::isRepresentableBy(original.getFloatSemantics(),
                                   middle.getFloatSemantics()))
      return inner.getInput();
  }
  return foldNarrowingCast(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // Equal types mean equal shapes only when at most one dim is unknown (it
  // then follows from the element count); ?x? -> ?x? may transpose 2x3 to
  // 3x2.
  if (getInput().getType() == getType() && getType().getNumDynamicDims() <= 1)
    return getInput();
  // reshape(reshape(x)) is one reshape of x when the outer shape does not
  // depend on the inner result (a shape operand may copy its dims with 0):
  // at most one dim unknown (the element count gives it), or both only
  // moving unit dims (without shape operands; their composition does too).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>();
      inner && !getShape() &&
      (getType().getNumDynamicDims() <= 1 || !inner.getShape())) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, inner), outer) == transpose(x, inner o outer).
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t dim : perm)
      composed.push_back(innerPerm[dim]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

/// Whether `value` is a matmul's result, or that plus a bias.
static bool isProduct(Value value) {
  if (auto add = value.getDefiningOp<AddOp>())
    return add.getLhs().getDefiningOp<MatmulOp>() ||
           add.getRhs().getDefiningOp<MatmulOp>();
  return value.getDefiningOp<MatmulOp>();
}

/// add(reshape(x), y), where x is a product (plus a bias), the reshape
/// only inserts or drops unit dims and both operands have the result's
/// shape (no broadcast), is reshape(add(x, reshape(y))): the residual add
/// then follows its matmul directly and fuses into its epilogue
/// (sequence-first exports reshape [S, E] to [S, 1, E] and transpose to
/// [1, S, E] between the two). When y is a product too, the add stays (it
/// would go back and forth between the two).
LogicalResult AddOp::canonicalize(AddOp op, PatternRewriter &rewriter) {
  for (auto [reshaped, other] : {std::pair(op.getLhs(), op.getRhs()),
                                 std::pair(op.getRhs(), op.getLhs())}) {
    auto reshape = reshaped.getDefiningOp<ReshapeOp>();
    if (!reshape || reshape.getShape() || other.getType() != op.getType() ||
        reshape.getType() != op.getType() || !isProduct(reshape.getInput()) ||
        isProduct(other))
      continue;
    RankedTensorType inner = reshape.getInput().getType();
    if (!onlyUnitDimsChange(inner.getShape(), op.getType().getShape()))
      continue;
    Location loc = op.getLoc();
    Value otherInner = ReshapeOp::create(rewriter, loc, inner, other, Value());
    Value sum = AddOp::create(rewriter, loc, reshape.getInput(), otherInner);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), sum, Value());
    return success();
  }
  return failure();
}

/// A transpose that moves only unit dims, the others keeping their order
/// ([S, 1, E] -> [1, S, E], which sequence-first exports write around
/// every layer), is a reshape: no element moves.
LogicalResult TransposeOp::canonicalize(TransposeOp op,
                                        PatternRewriter &rewriter) {
  ArrayRef<int64_t> shape = op.getInput().getType().getShape();
  int64_t last = -1;
  for (int64_t dim : op.getPermutation()) {
    if (shape[dim] == 1)
      continue;
    if (dim < last)
      return failure();
    last = dim;
  }
  rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput(),
                                         Value());
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  // With a dynamic dim, ?x4 -> ?x4 may still stretch a 1 at run time.
  if (!getType().hasStaticShape())
    return {};
  return sameTypeOrNull(getInput(), getType());
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return sameTypeOrNull(getInputs().front(), getType());
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // A unit-stride slice with the input's static shape takes everything.
  std::optional<ArrayRef<int64_t>> steps = getSteps();
  bool unitSteps = !steps || llvm::all_of(*steps, [](int64_t s) {
    return s == 1;
  });
  if (unitSteps && getInput().getType().hasStaticShape())
    return sameTypeOrNull(getInput(), getType());
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  // No padding (a shifted-window transformer pads to whole windows, by 0
  // when the image already is whole windows).
  if (llvm::all_of(getPads(), [](int64_t p) { return p == 0; }))
    return sameTypeOrNull(getInput(), getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  RankedTensorType inputType = getInput().getType();
  if (!inputType.hasStaticShape() || !getType().hasStaticShape())
    return {};
  return DenseElementsAttr::get(getType(), inputType.getShape());
}
