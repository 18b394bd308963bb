//===- ConstantValues.cpp - values the lowering reads at compile time -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Lowering.h"

#include <algorithm>
#include <cstring>

#include "tessera/Target/Systolic/Emitter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace tessera::systolic {

int64_t leadingRows(RankedTensorType type) {
  int64_t rows = 1;
  for (int64_t d : type.getShape().drop_back())
    rows *= d;
  return rows;
}

std::optional<sim::NumberFormat> castFormat(Value value) {
  auto cast = value.getDefiningOp<ts::CastOp>();
  // A constant the precision passes narrowed (its cast folded into it).
  if (!cast && !value.getDefiningOp<ts::ConstantOp>())
    return std::nullopt;
  if (cast && !cast.getInput().getType().getElementType().isF32())
    return std::nullopt;
  // The array's conversions saturate; a non-saturating cast is not one.
  if (cast && !cast.getSaturate())
    return std::nullopt;
  std::optional<sim::NumberFormat> format = mlir::systolic::getNumberFormat(
      mlir::cast<ShapedType>(value.getType()).getElementType());
  if (!format || !isFloat(*format) || *format == sim::NumberFormat::F32)
    return std::nullopt;
  return format;
}

Value castSource(Value value) {
  if (auto cast = value.getDefiningOp<ts::CastOp>(); cast && castFormat(value))
    return cast.getInput();
  return value;
}

/// The format every use of `value` (through reshapes) casts it to for a
/// matmul operand (not the rhs of a transpose_b, which goes through a
/// transposing copy): such a value is kept in that format, others in fp32
/// for the vector unit.
std::optional<sim::NumberFormat> matmulOnlyFormat(Value value) {
  std::optional<sim::NumberFormat> format;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    std::optional<sim::NumberFormat> used;
    if (auto reshape = dyn_cast<ts::ReshapeOp>(user)) {
      used = matmulOnlyFormat(reshape.getResult());
    } else if (user->getNumResults() == 1 &&
               (used = castFormat(user->getResult(0)))) {
      for (OpOperand &castUse : user->getResult(0).getUses()) {
        auto matmul = dyn_cast<ts::MatmulOp>(castUse.getOwner());
        if (!matmul ||
            (castUse.getOperandNumber() == 0 && matmul.getTransposeA()) ||
            (castUse.getOperandNumber() == 1 && matmul.getTransposeB()))
          return std::nullopt;
      }
    }
    if (!used || (format && *format != *used))
      return std::nullopt;
    format = used;
  }
  return format;
}

SmallVector<int64_t> rowMajor(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

bool heldAsF32(RankedTensorType type) {
  return type.getElementType().isF32() || type.getElementType().isInteger(1);
}

sim::VectorFn compareFn(ts::CompareDirection direction) {
  using F = sim::VectorFn;
  switch (direction) {
  case ts::CompareDirection::eq:
    return F::Equal;
  case ts::CompareDirection::ne:
    return F::NotEqual;
  case ts::CompareDirection::lt:
    return F::Less;
  case ts::CompareDirection::le:
    return F::LessEqual;
  case ts::CompareDirection::gt:
    return F::Greater;
  case ts::CompareDirection::ge:
    return F::GreaterEqual;
  }
  llvm_unreachable("unknown comparison");
}

static std::optional<std::vector<float>> elementwiseConstant(Value value);

/// The values of a constant, of a reshape of such values, or of a where
/// whose operands are all constants (a causal mask), evaluated with numpy
/// broadcasting.
std::optional<std::vector<float>>
constantValues(Value value) {
  if (auto constant = value.getDefiningOp<ts::ConstantOp>()) {
    // Booleans are 0.0 and 1.0, as the accelerator holds them.
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.getElementType().isInteger(1))
      return std::vector<float>(dense.getValues<bool>().begin(),
                                dense.getValues<bool>().end());
    return ::tessera::floatValues(constant.getValue());
  }
  // A reshape keeps the values in their order (a mask unsqueezed for the
  // heads).
  if (auto reshape = value.getDefiningOp<ts::ReshapeOp>();
      reshape && reshape.getType().hasStaticShape())
    return constantValues(reshape.getInput());
  // Transposes and slices (negative steps too) of constant values: a
  // transposed convolution's flipped filter.
  if (isa_and_nonnull<ts::TransposeOp, ts::SliceOp>(value.getDefiningOp())) {
    Operation *op = value.getDefiningOp();
    auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!in || !type || !in.hasStaticShape() || !type.hasStaticShape())
      return std::nullopt;
    std::optional<std::vector<float>> values =
        constantValues(op->getOperand(0));
    if (!values)
      return std::nullopt;
    int64_t rank = type.getRank();
    // Per result dim: the input dim it reads, its first index and step.
    SmallVector<int64_t> dim(rank), first(rank, 0), step(rank, 1);
    for (int64_t d = 0; d < rank; ++d)
      dim[d] = d;
    if (auto transpose = dyn_cast<ts::TransposeOp>(op)) {
      for (int64_t d = 0; d < rank; ++d)
        dim[d] = transpose.getPermutation()[d];
    } else {
      auto slice = cast<ts::SliceOp>(op);
      ArrayRef<int64_t> starts = slice.getStarts();
      for (size_t i = 0; i < starts.size(); ++i) {
        int64_t axis = slice.getAxes() ? (*slice.getAxes())[i] : int64_t(i);
        if (axis < 0)
          axis += rank;
        int64_t size = in.getDimSize(axis), start = starts[i];
        step[axis] = slice.getSteps() ? (*slice.getSteps())[i] : 1;
        if (start < 0)
          start += size;
        first[axis] =
            std::clamp<int64_t>(start, 0, step[axis] > 0 ? size : size - 1);
      }
    }
    SmallVector<int64_t> inStrides = rowMajor(in.getShape());
    std::vector<float> out(static_cast<size_t>(type.getNumElements()));
    for (int64_t n = 0; n < type.getNumElements(); ++n) {
      int64_t rest = n, at = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t o = rest % type.getDimSize(d);
        rest /= type.getDimSize(d);
        at += (first[d] + o * step[d]) * inStrides[dim[d]];
      }
      out[n] = (*values)[at];
    }
    return out;
  }
  return elementwiseConstant(value);
}

/// Where the element at `flat` of a result of `shape` reads `operand`
/// under numpy broadcasting.
static int64_t broadcastIndex(Value operand, ArrayRef<int64_t> shape,
                              int64_t flat) {
  auto t = cast<RankedTensorType>(operand.getType());
  int64_t index = 0, stride = 1, outStride = 1;
  for (int64_t d = t.getRank() - 1, o = int64_t(shape.size()) - 1; d >= 0;
       --d, --o) {
    int64_t i = (flat / outStride) % shape[o];
    if (t.getDimSize(d) != 1)
      index += i * stride;
    stride *= t.getDimSize(d);
    outStride *= shape[o];
  }
  return index;
}

/// A where, comparison, logical op or cast between booleans and fp32 whose
/// operands are all constant (a causal mask, a mask compared with zero),
/// with booleans as 0.0 and 1.0.
static std::optional<std::vector<float>> elementwiseConstant(Value value) {
  Operation *op = value.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!isa_and_nonnull<ts::WhereOp, ts::CompareOp, ts::AndOp, ts::OrOp,
                       ts::XorOp, ts::NotOp, ts::CastOp>(op) ||
      !type || !type.hasStaticShape() || !heldAsF32(type))
    return std::nullopt;
  if (isa<ts::CastOp>(op) &&
      !heldAsF32(cast<RankedTensorType>(op->getOperand(0).getType())))
    return std::nullopt;
  SmallVector<std::vector<float>> in;
  for (Value operand : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.getType());
    std::optional<std::vector<float>> values = constantValues(operand);
    if (!t || !t.hasStaticShape() || !values)
      return std::nullopt;
    in.push_back(std::move(*values));
  }
  ArrayRef<int64_t> shape = type.getShape();
  bool boolean = type.getElementType().isInteger(1);
  std::vector<float> out(type.getNumElements());
  SmallVector<float, 3> x(op->getNumOperands());
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    for (auto [k, operand] : llvm::enumerate(op->getOperands()))
      x[k] = in[k][in[k].size() == 1 ? 0 : broadcastIndex(operand, shape, n)];
    float r;
    if (isa<ts::WhereOp>(op))
      r = x[0] != 0 ? x[1] : x[2];
    else if (auto compare = dyn_cast<ts::CompareOp>(op))
      r = ts::compareValues(compare.getDirection(), x[0], x[1]);
    else if (isa<ts::AndOp>(op))
      r = x[0] != 0 && x[1] != 0;
    else if (isa<ts::OrOp>(op))
      r = x[0] != 0 || x[1] != 0;
    else if (isa<ts::XorOp>(op))
      r = (x[0] != 0) != (x[1] != 0);
    else if (isa<ts::NotOp>(op))
      r = x[0] == 0;
    else // a cast
      r = boolean ? float(x[0] != 0) : x[0];
    out[n] = r;
  }
  return out;
}

/// The values of an i8, fp8, bf16 or f16 constant as floats (exact).
std::optional<std::vector<float>> narrowValues(Value value) {
  auto constant = value.getDefiningOp<ts::ConstantOp>();
  if (!constant)
    return std::nullopt;
  ElementsAttr attr = constant.getValue();
  Type element = cast<ShapedType>(attr.getType()).getElementType();
  int64_t count = cast<ShapedType>(attr.getType()).getNumElements();
  std::vector<float> out;
  out.reserve(count);
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (element.isInteger(8)) {
      for (APInt v : dense.getValues<APInt>())
        out.push_back(static_cast<float>(v.getSExtValue()));
      return out;
    }
    if (isa<Float8E4M3FNType, Float8E5M2Type, BFloat16Type, Float16Type>(
            element)) {
      for (APFloat v : dense.getValues<APFloat>())
        out.push_back(v.convertToFloat());
      return out;
    }
    return std::nullopt;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    if (isa<BFloat16Type, Float16Type>(element)) {
      if (int64_t(data.size()) != 2 * count)
        return std::nullopt;
      for (int64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, data.data() + 2 * i, 2);
        out.push_back(isa<BFloat16Type>(element) ? sim::fromBF16(bits)
                                                 : sim::fromF16(bits));
      }
      return out;
    }
    if (int64_t(data.size()) != count)
      return std::nullopt;
    for (char byte : data) {
      auto bits = static_cast<uint8_t>(byte);
      if (element.isInteger(8))
        out.push_back(static_cast<float>(static_cast<int8_t>(bits)));
      else if (isa<Float8E4M3FNType>(element))
        out.push_back(sim::fromF8E4M3FN(bits));
      else if (isa<Float8E5M2Type>(element))
        out.push_back(sim::fromF8E5M2(bits));
      else
        return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

/// The constant scales of a symmetric (de)quantization (no zero point, or
/// zero points of 0): one value, or `count` values.
std::optional<std::vector<float>>
symmetricScales(Value scale, Value zeroPoint, size_t count) {
  std::optional<std::vector<float>> s = constantValues(scale);
  if (!s || (s->size() != 1 && s->size() != count))
    return std::nullopt;
  if (zeroPoint) {
    std::optional<std::vector<float>> z = narrowValues(zeroPoint);
    if (!z || llvm::any_of(*z, [](float v) { return v != 0; }))
      return std::nullopt;
  }
  return s;
}

} // namespace tessera::systolic
