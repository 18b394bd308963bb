//===- ContractionOps.cpp - verifiers and shapes of matmul, conv2d, attention //
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpUtils.h"
#include "tessera/Dialect/Tessera/IR/TesseraOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tessera;

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lhsType = getLhs().getType(), rhsType = getRhs().getType();
  RankedTensorType resultType = getResult().getType();
  Type elementType = lhsType.getElementType();
  if (elementType != rhsType.getElementType())
    return emitOpError("operand element types differ: ")
           << elementType << " vs " << rhsType.getElementType();
  // The result type may widen the operands' to name the accumulator.
  Type resultElement = resultType.getElementType();
  if (isa<FloatType>(elementType) && !isa<FloatType>(resultElement))
    return emitOpError("a float product must produce floats, not ")
           << resultElement;
  if (isa<IntegerType>(elementType) && resultElement != elementType &&
      !resultElement.isInteger(32))
    return emitOpError("an integer product must produce ")
           << elementType << " or i32, not " << resultElement;
  auto shape = ::tessera::inferMatmulShape(lhsType.getShape(),
                                           rhsType.getShape(),
                                           getTransposeA(), getTransposeB());
  if (!shape)
    return emitOpError(llvm::toString(shape.takeError()));
  if (failed(verifyCompatibleShape(*shape, resultType.getShape())))
    return emitOpError("result shape ")
           << ::tessera::formatShape(resultType.getShape())
           << " does not match the product's shape "
           << ::tessera::formatShape(*shape);
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2dOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  StringRef name = getOperationName();
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  auto filterType = cast<RankedTensorType>(adaptor.getFilter().getType());
  if (inputType.getRank() != 4 || filterType.getRank() != 4)
    return emitInferError(loc, name,
                          "expects 4-D input (NCHW) and filter (FCHW), got "
                          "ranks " + Twine(inputType.getRank()) + " and " +
                              Twine(filterType.getRank()));
  if (inputType.getElementType() != filterType.getElementType())
    return emitInferError(loc, name, "input and filter element types differ");
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> pads = adaptor.getPads();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  int64_t group = adaptor.getGroup();
  if (strides.size() != 2 || llvm::any_of(strides, [](int64_t s) {
        return s < 1;
      }))
    return emitInferError(loc, name, "strides must be 2 positive values");
  if (dilations.size() != 2 || llvm::any_of(dilations, [](int64_t d) {
        return d < 1;
      }))
    return emitInferError(loc, name, "dilations must be 2 positive values");
  if (pads.size() != 4 ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitInferError(loc, name,
                          "pads must be 4 non-negative values [top, left, "
                          "bottom, right]");
  if (group < 1)
    return emitInferError(loc, name, "group must be positive");
  ArrayRef<int64_t> in = inputType.getShape(), filter = filterType.getShape();
  if (in[1] != ShapedType::kDynamic && in[1] % group != 0)
    return emitInferError(loc, name,
                          Twine(in[1]) + " input channels do not divide into " +
                              Twine(group) + " groups");
  if (filter[0] != ShapedType::kDynamic && filter[0] % group != 0)
    return emitInferError(loc, name,
                          Twine(filter[0]) + " filters do not divide into " +
                              Twine(group) + " groups");
  if (in[1] != ShapedType::kDynamic &&
      !::tessera::dimsCompatible(in[1] / group, filter[1]))
    return emitInferError(loc, name,
                          "filter has " + Twine(filter[1]) +
                              " channels per group, input has " +
                              Twine(in[1] / group));
  if (Value bias = adaptor.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 ||
        !::tessera::dimsCompatible(biasType.getDimSize(0), filter[0]))
      return emitInferError(loc, name,
                            "bias must be 1-D with one value per filter (" +
                                ::tessera::formatShape(filter.take_front()) +
                                "), got " +
                                ::tessera::formatShape(biasType.getShape()));
  }
  SmallVector<int64_t, 4> shape = {in[0], filter[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t size = ::tessera::convOutputSize(in[2 + i], filter[2 + i],
                                             strides[i], pads[i], pads[2 + i],
                                             dilations[i]);
    if (size != ShapedType::kDynamic && size < 1)
      return emitInferError(loc, name,
                            "the kernel window does not fit in spatial "
                            "dimension " + Twine(2 + i) + " of the input");
    shape.push_back(size);
  }
  inferred.push_back(RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  StringRef name = getOperationName();
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() < 2 || q.getRank() != k.getRank() ||
      q.getRank() != v.getRank())
    return emitInferError(loc, name,
                          "query, key and value must have the same rank >= 2, "
                          "got " + Twine(q.getRank()) + ", " +
                              Twine(k.getRank()) + " and " +
                              Twine(v.getRank()));
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitInferError(loc, name,
                          "query, key and value element types differ");
  int64_t rank = q.getRank();
  if (!::tessera::dimsCompatible(q.getDimSize(rank - 1),
                                 k.getDimSize(rank - 1)))
    return emitInferError(loc, name,
                          "query head dim " + Twine(q.getDimSize(rank - 1)) +
                              " differs from key head dim " +
                              Twine(k.getDimSize(rank - 1)));
  if (!::tessera::dimsCompatible(k.getDimSize(rank - 2),
                                 v.getDimSize(rank - 2)))
    return emitInferError(loc, name,
                          "key length " + Twine(k.getDimSize(rank - 2)) +
                              " differs from value length " +
                              Twine(v.getDimSize(rank - 2)));
  auto batch = ::tessera::broadcastShapes(q.getShape().drop_back(2),
                                          k.getShape().drop_back(2));
  if (batch)
    batch = ::tessera::broadcastShapes(*batch, v.getShape().drop_back(2));
  if (!batch)
    return emitInferError(loc, name, "batch dimensions: " +
                                         llvm::toString(batch.takeError()));
  ::tessera::Shape scores = *batch;
  scores.append({q.getDimSize(rank - 2), k.getDimSize(rank - 2)});
  if (Value mask = adaptor.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (!::tessera::isBroadcastableTo(maskType.getShape(), scores))
      return emitInferError(loc, name,
                            "mask " + ::tessera::formatShape(maskType.getShape()) +
                                " does not broadcast to the scores " +
                                ::tessera::formatShape(scores));
  }
  if (FloatAttr scale = adaptor.getScaleAttr())
    if (!(scale.getValueAsDouble() > 0.0))
      return emitInferError(loc, name, "scale must be positive");
  ::tessera::Shape shape = std::move(*batch);
  shape.append({q.getDimSize(rank - 2), v.getDimSize(rank - 1)});
  inferred.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}
