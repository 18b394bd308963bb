//===- DataMovement.cpp - ONNX reshapes, transposes, slices and gathers ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// These ops also carry shape arithmetic (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape): when their inputs are known integers they fold to
// constants here, and partial knowledge (some dims dynamic) is recorded so
// that reshapes still get the most static result type.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;
using ::tessera::kDynamicDim;

static LogicalResult convertTranspose(GraphImporter &im,
                                      const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm = im.intsAttr("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  auto build = [&] { return im.inferred<ts::TransposeOp>(x, perm); };
  // Transposing a known integer value (pads computed from shapes, as
  // torch.nn.functional.pad exports them) stays known.
  std::optional<ArrayRef<int64_t>> known = knownIntElements(im, x);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (!known || sorted != llvm::to_vector(llvm::seq<int64_t>(0, rank)))
    return im.setOutput(0, build());
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  SmallVector<int64_t> resultShape = applyPermutation(shape, perm), moved;
  SmallVector<int64_t> strides = computeStrides(shape),
                       resultStrides = computeStrides(resultShape);
  for (int64_t i = 0, e = known->size(); i < e; ++i) {
    // Element i of the result is x's element at the permuted coordinates.
    SmallVector<int64_t> at = delinearize(i, resultStrides), source(rank);
    for (auto [d, p] : llvm::enumerate(perm))
      source[p] = at[d];
    moved.push_back((*known)[linearize(source, strides)]);
  }
  return im.setIntsOutput(moved, resultShape, build, elementType(x));
}

/// A reshape to `dims` (ONNX conventions: 0 copies, -1 infers, unknown
/// entries kDynamicDim); `shape` is the runtime shape value when the result
/// is not static.
static Value buildReshape(GraphImporter &im, Value x, ArrayRef<int64_t> dims,
                          Value shape, bool allowZero) {
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> result;
  int inferIndex = -1;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d == kDynamicDim) {
      result.push_back(kDynamicDim); // known only at run time
    } else if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank()) {
        im.emitError() << "shape entry " << i
                       << " is 0 (copy) but the input has rank "
                       << type.getRank();
        return {};
      }
      result.push_back(type.getDimSize(i));
    } else if (d == -1) {
      if (inferIndex >= 0) {
        im.emitError() << "shape has more than one -1 entry";
        return {};
      }
      inferIndex = i;
      result.push_back(kDynamicDim);
    } else if (d < -1) {
      im.emitError() << "shape entry " << i << " is " << d
                     << "; entries must be >= -1";
      return {};
    } else {
      result.push_back(d);
    }
  }
  if (inferIndex >= 0) {
    auto total = ::tessera::staticElementCount(type.getShape());
    SmallVector<int64_t> others(result);
    others.erase(others.begin() + inferIndex);
    auto known = ::tessera::staticElementCount(others);
    if (total && known && *known != 0) {
      if (*total % *known != 0) {
        im.emitError() << "cannot reshape "
                       << ::tessera::formatShape(type.getShape()) << " to "
                       << ::tessera::formatShape(dims);
        return {};
      }
      result[inferIndex] = *total / *known;
    }
  }
  auto resultType = RankedTensorType::get(result, type.getElementType());
  if (resultType == type)
    return x;
  // One unknown dimension follows from the element count at run time.
  bool needsShape = resultType.getNumDynamicDims() > 1;
  return im.create<ts::ReshapeOp>(resultType, x,
                                  needsShape ? shape : Value());
}

static LogicalResult convertReshape(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0), shape = im.input(1);
  if (!x || !shape)
    return failure();
  std::optional<ArrayRef<int64_t>> dims = im.knownInts(shape);
  bool allowZero = im.intAttr("allowzero", 0) != 0;
  // A runtime shape operand follows ONNX's default (0 copies a dim).
  if (allowZero && (!dims || llvm::is_contained(*dims, kDynamicDim)))
    return im.emitError() << "allowzero = 1 needs a constant shape";
  if (!dims) {
    if (tensorType(shape).getRank() != 1 ||
        tensorType(shape).isDynamicDim(0))
      return im.emitError() << "the shape input must be 1-D with a static "
                               "length";
    SmallVector<int64_t> unknown(tensorType(shape).getDimSize(0), kDynamicDim);
    return im.setOutput(0, buildReshape(im, x, unknown, shape, false));
  }
  Value result = buildReshape(im, x, *dims, shape, allowZero);
  // Reshaping a known integer value keeps it known.
  if (result && result != x && im.knownInts(x))
    im.setKnownInts(result, *im.knownInts(x));
  return im.setOutput(0, result);
}

/// Flatten: [d0 .. d(axis-1)] and [d(axis) ..] each become one dimension.
static LogicalResult convertFlatten(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t axis = im.intAttr("axis", 1);
  if (axis < 0)
    axis += type.getRank();
  if (axis < 0 || axis > type.getRank())
    return im.emitError() << "axis " << im.intAttr("axis", 1)
                          << " is out of range for rank " << type.getRank();
  auto outer = ::tessera::staticElementCount(type.getShape().take_front(axis));
  auto inner = ::tessera::staticElementCount(type.getShape().drop_front(axis));
  if (!outer && !inner)
    return im.emitError() << "needs static dimensions on one side of axis "
                          << axis;
  auto resultType = RankedTensorType::get(
      {outer.value_or(kDynamicDim), inner.value_or(kDynamicDim)},
      type.getElementType());
  if (resultType == type)
    return im.setOutput(0, x);
  return im.setOutput(0, im.create<ts::ReshapeOp>(resultType, x, Value()));
}

/// Whether input `index`, an input since opset `movedAt`, is given as a
/// value known only at run time.
static bool isRuntimeInput(GraphImporter &im, int index, int64_t movedAt) {
  if (im.opset() < movedAt)
    return false;
  Value v = im.optionalInput(index);
  return v && !im.constantInts(v);
}

/// The static shape the model declares for output `index` of the node.
static std::optional<SmallVector<int64_t>>
declaredStaticShape(GraphImporter &im, const onnx::NodeProto &node, int index) {
  if (index >= node.output_size())
    return std::nullopt;
  std::optional<ArrayRef<int64_t>> shape = im.declaredShape(node.output(index));
  if (!shape || llvm::is_contained(*shape, kDynamicDim))
    return std::nullopt;
  return SmallVector<int64_t>(*shape);
}

/// Squeeze (axes from input since opset 13; none means every unit dim) and
/// Unsqueeze (axes from input since opset 13, refer to the output's rank).
/// Axes known only at run time: the reshape to the output's declared
/// shape, when that only adds or drops unit dims.
static LogicalResult convertSqueeze(GraphImporter &im,
                                    const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  if (isRuntimeInput(im, 1, 13)) {
    RankedTensorType type = tensorType(x);
    std::optional<SmallVector<int64_t>> declared =
        declaredStaticShape(im, node, 0);
    auto nonUnit = [](ArrayRef<int64_t> shape) {
      return llvm::to_vector(
          llvm::make_filter_range(shape, [](int64_t d) { return d != 1; }));
    };
    if (!declared || !type.hasStaticShape() ||
        nonUnit(*declared) != nonUnit(type.getShape()))
      return im.emitError() << "input 1 (axes) must be a constant, or the "
                               "output's shape declared in the model";
    return im.setOutput(0, im.create<ts::ReshapeOp>(
                               RankedTensorType::get(*declared,
                                                     type.getElementType()),
                               x, Value()));
  }
  auto axes = im.intsAttrOrInput("axes", 1, 13);
  if (failed(axes))
    return failure();
  RankedTensorType type = tensorType(x);
  bool unsqueeze = node.op_type() == "Unsqueeze";
  int64_t outRank = type.getRank() + (unsqueeze && *axes ? (*axes)->size() : 0);
  SmallVector<bool> selected(std::max<int64_t>(outRank, type.getRank()));
  if (*axes) {
    int64_t rank = unsqueeze ? outRank : type.getRank();
    for (int64_t axis : **axes) {
      std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, rank);
      if (!dim || selected[*dim])
        return im.emitError() << "axis " << axis
                              << " is out of range or repeated for rank "
                              << rank;
      selected[*dim] = true;
    }
  } else if (unsqueeze) {
    return im.emitError() << "needs axes";
  } else {
    for (int64_t i = 0; i < type.getRank(); ++i)
      selected[i] = type.getDimSize(i) == 1;
  }
  SmallVector<int64_t> shape;
  if (unsqueeze) {
    auto in = type.getShape().begin();
    for (int64_t i = 0; i < outRank; ++i)
      shape.push_back(selected[i] ? 1 : *in++);
  } else {
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (!selected[i]) {
        shape.push_back(type.getDimSize(i));
      } else if (type.getDimSize(i) != 1 && !type.isDynamicDim(i)) {
        return im.emitError() << "cannot squeeze dimension " << i
                              << " of size " << type.getDimSize(i);
      }
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (resultType == type)
    return im.setOutput(0, x);
  if (auto ints = im.knownInts(x);
      ints && !llvm::is_contained(*ints, kDynamicDim) &&
      type.getElementType().isInteger(64) && shape.size() <= 1)
    return im.setOutput(0, im.constantI64(*ints, ArrayRef<int64_t>(shape)));
  Value result = im.create<ts::ReshapeOp>(resultType, x, Value());
  if (auto ints = im.knownInts(x))
    im.setKnownInts(result, *ints);
  return im.setOutput(0, result);
}

static LogicalResult convertConcat(GraphImporter &im,
                                   const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  SmallVector<int64_t> ints;
  bool allKnown = true;
  for (int i = 0; i < node.input_size(); ++i) {
    Value v = im.input(i);
    if (!v)
      return failure();
    inputs.push_back(v);
    std::optional<ArrayRef<int64_t>> known = im.knownInts(v);
    allKnown &= known && tensorType(v).getRank() == 1;
    if (known)
      ints.append(known->begin(), known->end());
  }
  if (inputs.empty())
    return im.emitError() << "needs at least one input";
  auto build = [&] {
    return im.inferred<ts::ConcatOp>(inputs, im.intAttr("axis", 0));
  };
  if (!allKnown)
    return im.setOutput(0, build());
  // A shape built from pieces: fold, or record what is known.
  return im.setIntsOutput(ints, {static_cast<int64_t>(ints.size())}, build);
}

/// Split: sizes from the `split` attribute, from input 1 (opset 13), or
/// num_outputs (opset 18) / the number of outputs for equal pieces.
static LogicalResult convertSplit(GraphImporter &im,
                                  const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t axis = im.intAttr("axis", 0);
  std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, type.getRank());
  if (!dim)
    return im.emitError() << "axis " << axis << " is out of range for rank "
                          << type.getRank();
  // Sizes known only at run time: the outputs' declared sizes along axis.
  FailureOr<std::optional<SmallVector<int64_t>>> sizes =
      std::optional<SmallVector<int64_t>>();
  if (isRuntimeInput(im, 1, 13)) {
    SmallVector<int64_t> declared;
    for (int i = 0; i < node.output_size(); ++i) {
      std::optional<SmallVector<int64_t>> shape =
          declaredStaticShape(im, node, i);
      if (!shape || static_cast<int64_t>(shape->size()) != type.getRank())
        return im.emitError() << "input 1 (split) must be a constant, or the "
                                 "outputs' shapes declared in the model";
      declared.push_back((*shape)[*dim]);
    }
    sizes = std::optional<SmallVector<int64_t>>(declared);
  } else {
    sizes = im.intsAttrOrInput("split", 1, 13);
    if (failed(sizes))
      return failure();
  }
  int64_t count = node.output_size();
  SmallVector<int64_t> pieces;
  if (*sizes) {
    pieces = **sizes;
  } else {
    int64_t size = type.getDimSize(*dim);
    if (ShapedType::isDynamic(size)) {
      pieces.assign(count, kDynamicDim);
    } else {
      // Opset 18: the last piece may be smaller.
      int64_t piece = (size + count - 1) / std::max<int64_t>(count, 1);
      for (int64_t i = 0; i < count; ++i)
        pieces.push_back(std::max<int64_t>(
            0, std::min(piece, size - i * piece)));
    }
  }
  if (static_cast<int64_t>(pieces.size()) != count)
    return im.emitError() << "has " << pieces.size() << " split sizes for "
                          << count << " outputs";
  SmallVector<Type> types;
  for (int64_t piece : pieces) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*dim] = piece;
    types.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  bool equal = !*sizes && llvm::all_equal(pieces);
  auto op = im.create<ts::SplitOp>(
      types, x, *dim,
      equal ? DenseI64ArrayAttr() : DenseI64ArrayAttr::get(&im.context(), pieces));
  for (int64_t i = 0; i < count; ++i)
    if (failed(im.setOutput(i, op.getResult(i))))
      return failure();
  return success();
}

static LogicalResult convertGather(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), indices = im.input(1);
  if (!x || !indices)
    return failure();
  int64_t axis = im.intAttr("axis", 0);
  // Gathering from a known shape with constant indices: fold or record.
  std::optional<ArrayRef<int64_t>> known = im.knownInts(x);
  std::optional<SmallVector<int64_t>> idx = im.constantInts(indices);
  if (known && idx && tensorType(x).getRank() == 1 &&
      tensorType(indices).getRank() <= 1) {
    SmallVector<int64_t> picked;
    int64_t n = known->size();
    for (int64_t i : *idx) {
      if (i < -n || i >= n)
        return im.emitError() << "index " << i << " is out of range for "
                              << n << " entries";
      picked.push_back((*known)[i < 0 ? i + n : i]);
    }
    return im.setIntsOutput(picked, tensorType(indices).getShape(), [&] {
      return im.inferred<ts::GatherOp>(x, indices, axis);
    });
  }
  return im.setOutput(0, im.inferred<ts::GatherOp>(x, indices, axis));
}

/// Expand broadcasts the input with `shape` (ONNX semantics: the result is
/// the broadcast of both shapes).
static LogicalResult convertExpand(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), shape = im.input(1);
  if (!x || !shape)
    return failure();
  std::optional<ArrayRef<int64_t>> dims = im.knownInts(shape);
  SmallVector<int64_t> target;
  if (dims)
    target.assign(dims->begin(), dims->end());
  else if (tensorType(shape).getRank() == 1 && !tensorType(shape).isDynamicDim(0))
    target.assign(tensorType(shape).getDimSize(0), kDynamicDim);
  else
    return im.emitError() << "the shape input must be 1-D with a static "
                             "length";
  // An unknown target entry against a static input dim > 1 must equal it.
  ArrayRef<int64_t> in = tensorType(x).getShape();
  size_t rank = std::max(in.size(), target.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < in.size() ? in[in.size() - 1 - i] : 1;
    int64_t t = i < target.size() ? target[target.size() - 1 - i] : 1;
    int64_t r;
    if (t == kDynamicDim)
      r = (a != 1 && a != kDynamicDim) ? a : kDynamicDim;
    else if (t == 1 || t == a)
      r = a;
    else if (a == 1 || a == kDynamicDim)
      r = t;
    else
      return im.emitError() << "input shape " << ::tessera::formatShape(in)
                            << " does not broadcast with "
                            << ::tessera::formatShape(target);
    result[rank - 1 - i] = r;
  }
  auto type = RankedTensorType::get(result, elementType(x));
  if (type == x.getType())
    return im.setOutput(0, x);
  return im.setOutput(0, im.create<ts::ExpandOp>(
                             type, x, type.hasStaticShape() ? Value() : shape));
}

/// Trilu keeps the upper (or lower) triangle of the last two dimensions,
/// shifted by k: a select against j - i >= k (upper) or j - i <= k (lower).
/// With a constant k and static sizes the mask is a constant; a runtime k
/// compares the constant j - i matrix against it; dynamic sizes build j - i
/// from ranges at run time.
static LogicalResult convertTrilu(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  if (type.getRank() < 2)
    return im.emitError() << "expects an input of rank >= 2";
  int64_t rank = type.getRank();
  int64_t rows = type.getDimSize(rank - 2);
  int64_t cols = type.getDimSize(rank - 1);
  bool upper = im.intAttr("upper", 1) != 0;
  Value kValue = im.optionalInput(1);
  std::optional<int64_t> k = 0;
  if (kValue) {
    std::optional<SmallVector<int64_t>> ks = im.constantInts(kValue);
    k = ks && ks->size() == 1 ? std::optional<int64_t>((*ks)[0])
                              : std::nullopt;
    if (tensorType(kValue).getNumElements() != 1)
      return im.emitError() << "k must be a scalar";
  }
  Value zero = im.constantScalar(0.0, type.getElementType());
  auto maskType = RankedTensorType::get({rows, cols}, im.builder().getI1Type());
  auto i64 = im.builder().getI64Type();
  Value mask;
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols)) {
    // Sizes known at run time (a causal mask over a symbolic sequence):
    // j - i from two ranges, [cols] - [rows, 1], compared with k.
    Value rowIndices = positionsAlong(im, x, rank - 2),
          colIndices = positionsAlong(im, x, rank - 1);
    if (!rowIndices || !colIndices)
      return failure();
    rowIndices = im.create<ts::ReshapeOp>(RankedTensorType::get({rows, 1}, i64),
                                          rowIndices, Value());
    Value diagonal = im.inferred<ts::SubOp>(colIndices, rowIndices);
    Value shift = k ? im.constantI64({*k}, ArrayRef<int64_t>{}) : kValue;
    if (!elementType(shift).isInteger(64))
      shift = im.create<ts::CastOp>(
          RankedTensorType::get(tensorType(shift).getShape(), i64), shift);
    mask = diagonal ? im.inferred<ts::CompareOp>(
                          upper ? ts::CompareDirection::ge
                                : ts::CompareDirection::le,
                          diagonal, shift)
                    : Value();
  } else if (k) {
    SmallVector<bool> bits;
    bits.reserve(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        bits.push_back(upper ? j - i >= *k : j - i <= *k);
    mask = im.create<ts::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(maskType, bits)));
  } else {
    SmallVector<int64_t> offsets;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        offsets.push_back(j - i);
    Value diagonal = im.constantI64(offsets, ArrayRef<int64_t>{rows, cols});
    Value shift = kValue;
    if (!elementType(shift).isInteger(64))
      shift = im.create<ts::CastOp>(
          RankedTensorType::get(tensorType(shift).getShape(),
                                im.builder().getI64Type()),
          shift);
    mask = im.inferred<ts::CompareOp>(
        upper ? ts::CompareDirection::ge : ts::CompareDirection::le, diagonal,
        shift);
  }
  return im.setOutput(0, mask ? im.inferred<ts::WhereOp>(mask, x, zero)
                              : Value());
}

/// Pad: pads (and axes, opset 18) must be constants; the constant value a
/// constant scalar.
static LogicalResult convertPad(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  int64_t rank = tensorType(x).getRank();
  std::string modeName = im.stringAttr("mode", "constant");
  std::optional<ts::PadMode> mode = ts::symbolizePadMode(modeName);
  if (!mode)
    return im.emitError() << "mode '" << modeName
                          << "' is not supported (constant, reflect and edge "
                             "are)";
  auto given = im.intsAttrOrInput("pads", 1, 11);
  if (failed(given))
    return failure();
  if (!*given)
    return im.emitError() << "pads are required";
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (Value axesInput = im.numInputs() > 3 ? im.optionalInput(3) : Value()) {
    std::optional<SmallVector<int64_t>> known = im.constantInts(axesInput);
    if (!known)
      return im.emitError() << "input 3 (axes) must be a constant";
    axes.clear();
    for (int64_t a : *known) {
      if (a < -rank || a >= rank)
        return im.emitError()
               << "axis " << a << " is outside the input's rank " << rank;
      axes.push_back(a < 0 ? a + rank : a);
    }
  }
  size_t n = axes.size();
  if ((*given)->size() != 2 * n)
    return im.emitError() << "pads has " << (*given)->size()
                          << " values; expected " << 2 * n
                          << " (a begin and an end per axis)";
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    pads[axis] = (**given)[i];
    pads[rank + axis] = (**given)[n + i];
  }
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return im.emitError() << "negative pads (cropping) are not supported";
  double value = im.floatAttr("value", 0.0f);
  if (im.opset() >= 11)
    value = 0.0;
  if (Value constant = im.opset() >= 11 ? im.optionalInput(2) : Value()) {
    std::optional<double> known = im.constantFloat(constant);
    if (!known)
      return im.emitError() << "input 2 (constant_value) must be a constant "
                               "scalar";
    value = *known;
  }
  Builder b(&im.context());
  return im.setOutput(
      0, im.inferred<ts::PadOp>(x, b.getDenseI64ArrayAttr(pads),
                                ts::PadModeAttr::get(&im.context(), *mode),
                                b.getF64FloatAttr(value)));
}

/// One term of a shape computed at run time from an input's: entry `dim`
/// of its shape, divided by `divide`, times `times`, plus `plus` (`dim` -1:
/// the constant `plus` alone).
struct ShapeTerm {
  int64_t dim, divide, times, plus;
};

/// The 1-D i64 shape whose entries are `terms` of `x`'s runtime shape (a
/// gather, a division, a product and a sum, on the entries all at once).
static Value runtimeShape(GraphImporter &im, Value x,
                          ArrayRef<ShapeTerm> terms) {
  auto i64 = im.builder().getI64Type();
  int64_t rank = tensorType(x).getRank();
  auto n = static_cast<int64_t>(terms.size());
  SmallVector<int64_t> dims, divide, times, plus;
  for (const ShapeTerm &term : terms) {
    dims.push_back(term.dim < 0 ? 0 : term.dim);
    divide.push_back(term.dim < 0 ? 1 : term.divide);
    times.push_back(term.dim < 0 ? 0 : term.times);
    plus.push_back(term.plus);
  }
  Value shape = im.create<ts::ShapeOp>(RankedTensorType::get({rank}, i64), x);
  Value entries = im.inferred<ts::GatherOp>(
      shape, im.constantI64(dims, ArrayRef<int64_t>{n}), int64_t(0));
  if (!entries)
    return {};
  Value divided = im.inferred<ts::DivOp>(
      entries, im.constantI64(divide, ArrayRef<int64_t>{n}));
  Value scaled = divided
                     ? im.inferred<ts::MulOp>(
                           divided, im.constantI64(times, ArrayRef<int64_t>{n}))
                     : Value();
  return scaled ? im.inferred<ts::AddOp>(
                      scaled, im.constantI64(plus, ArrayRef<int64_t>{n}))
                : Value();
}

/// DepthToSpace and SpaceToDepth: a reshape that splits the block out of
/// one dim, a transpose that moves it, and a reshape that merges it into
/// the other (ONNX's own definition). A symbolic batch, height or width
/// (a super-resolution model's PixelShuffle over any image size) makes
/// the reshapes' shapes runtime values computed from the input's.
static LogicalResult convertDepthSpace(GraphImporter &im,
                                       const onnx::NodeProto &node) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  if (type.getRank() != 4)
    return im.emitError() << "expects a 4-D input (N x C x H x W), got rank "
                          << type.getRank();
  int64_t b = im.intAttr("blocksize", 0);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (b < 1)
    return im.emitError() << "blocksize must be positive, got " << b;
  if (ShapedType::isDynamic(c))
    return im.emitError() << "needs a static channel count";
  bool toSpace = node.op_type() == "DepthToSpace";
  auto times = [](int64_t size, int64_t by) {
    return ShapedType::isDynamic(size) ? size : size * by;
  };
  auto over = [](int64_t size, int64_t by) {
    return ShapedType::isDynamic(size) ? size : size / by;
  };
  SmallVector<int64_t> split, perm, merged;
  // The same shapes as terms of the input's runtime one [N, C, H, W].
  SmallVector<ShapeTerm> splitTerms, mergedTerms;
  ShapeTerm batch{0, 1, 1, 0};
  if (toSpace) {
    if (c % (b * b))
      return im.emitError() << "channels (" << c
                            << ") must be a multiple of blocksize^2 ("
                            << b * b << ")";
    std::string mode = im.stringAttr("mode", "DCR");
    ShapeTerm block{-1, 1, 0, b}, depth{-1, 1, 0, c / (b * b)},
        height{2, 1, 1, 0}, width{3, 1, 1, 0};
    if (mode == "DCR") {
      split = {n, b, b, c / (b * b), h, w};
      splitTerms = {batch, block, block, depth, height, width};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, c / (b * b), b, b, h, w};
      splitTerms = {batch, depth, block, block, height, width};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return im.emitError() << "mode '" << mode
                            << "' is not supported (DCR and CRD are)";
    }
    merged = {n, c / (b * b), times(h, b), times(w, b)};
    mergedTerms = {batch, depth, {2, 1, b, 0}, {3, 1, b, 0}};
  } else {
    if ((!ShapedType::isDynamic(h) && h % b) ||
        (!ShapedType::isDynamic(w) && w % b))
      return im.emitError() << "spatial dims (" << h << ", " << w
                            << ") must be multiples of blocksize " << b;
    ShapeTerm block{-1, 1, 0, b};
    split = {n, c, over(h, b), b, over(w, b), b};
    splitTerms = {batch, {-1, 1, 0, c}, {2, b, 1, 0},
                  block, {3, b, 1, 0},  block};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {n, c * b * b, over(h, b), over(w, b)};
    mergedTerms = {batch, {-1, 1, 0, c * b * b}, {2, b, 1, 0}, {3, b, 1, 0}};
  }
  Type et = type.getElementType();
  auto reshape = [&](Value value, ArrayRef<int64_t> shape,
                     ArrayRef<ShapeTerm> terms) -> Value {
    auto resultType = RankedTensorType::get(shape, et);
    Value runtime;
    if (resultType.getNumDynamicDims() > 1 &&
        !(runtime = runtimeShape(im, x, terms)))
      return {};
    return im.create<ts::ReshapeOp>(resultType, value, runtime);
  };
  Value blocks = reshape(x, split, splitTerms);
  Value moved = blocks ? im.inferred<ts::TransposeOp>(blocks, perm) : Value();
  if (!moved)
    return failure();
  return im.setOutput(0, reshape(moved, merged, mergedTerms));
}

void registerDataMovementConverters(
    ConverterRegistry &r) {
  r["Transpose"] = convertTranspose;
  r["DepthToSpace"] = convertDepthSpace;
  r["SpaceToDepth"] = convertDepthSpace;
  r["Reshape"] = convertReshape;
  r["Flatten"] = convertFlatten;
  r["Squeeze"] = convertSqueeze;
  r["Unsqueeze"] = convertSqueeze;
  r["Concat"] = convertConcat;
  r["Split"] = convertSplit;
  r["Gather"] = convertGather;
  r["Expand"] = convertExpand;
  r["Trilu"] = convertTrilu;
  r["Pad"] = convertPad;
}

} // namespace tessera::onnx_import
