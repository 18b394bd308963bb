//===- Contraction.cpp - ONNX MatMul, Gemm and Conv -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// A tessera.matmul with its result type from the shared shape rule.
Value buildMatmul(GraphImporter &im, Value lhs, Value rhs, bool transA,
                         bool transB, float alpha) {
  auto shape = ::tessera::inferMatmulShape(tensorType(lhs).getShape(),
                                           tensorType(rhs).getShape(), transA,
                                           transB);
  if (!shape) {
    im.emitError() << llvm::toString(shape.takeError());
    return {};
  }
  auto type = RankedTensorType::get(*shape, elementType(lhs));
  return im.create<ts::MatmulOp>(type, lhs, rhs, transA, transB,
                                 APFloat(alpha));
}

static LogicalResult convertMatMul(GraphImporter &im, const onnx::NodeProto &) {
  Value a = im.input(0), b = im.input(1);
  if (!a || !b)
    return failure();
  return im.setOutput(0, buildMatmul(im, a, b, false, false, 1.0f));
}

/// Gemm: alpha * op(A) @ op(B) + beta * C.
static LogicalResult convertGemm(GraphImporter &im, const onnx::NodeProto &) {
  Value a = im.input(0), b = im.input(1);
  if (!a || !b)
    return failure();
  if (tensorType(a).getRank() != 2 || tensorType(b).getRank() != 2)
    return im.emitError() << "A and B must be 2-D";
  Value result = buildMatmul(im, a, b, im.intAttr("transA", 0) != 0,
                             im.intAttr("transB", 0) != 0,
                             im.floatAttr("alpha", 1.0f));
  Value c = im.optionalInput(2);
  if (!result || !c)
    return im.setOutput(0, result);
  float beta = im.floatAttr("beta", 1.0f);
  if (beta != 1.0f)
    c = im.inferred<ts::MulOp>(c, im.constantScalar(beta, elementType(c)));
  return im.setOutput(0, c ? im.inferred<ts::AddOp>(result, c) : Value());
}

/// `value` with a unit dim inserted before dim 2 (a 1-D convolution's
/// length becomes a 2-D one's width under a unit height), or dim 2 dropped
/// again.
static Value unitHeight(GraphImporter &im, Value value, bool insert) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> shape(type.getShape());
  if (insert)
    shape.insert(shape.begin() + 2, 1);
  else
    shape.erase(shape.begin() + 2);
  return im.create<ts::ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), value, Value());
}

/// Conv, 2-D, or 1-D as a 2-D convolution of unit height.
static LogicalResult convertConv(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), w = im.input(1);
  if (!x || !w)
    return failure();
  Value bias = im.optionalInput(2);
  int64_t rank = tensorType(x).getRank();
  if (rank != 3 && rank != 4)
    return im.emitError() << "only 1-D and 2-D convolutions (3-D and 4-D "
                             "inputs) are supported, got a rank-"
                          << rank << " input";
  if (tensorType(w).getRank() != rank)
    return im.emitError() << "the weight has rank " << tensorType(w).getRank()
                          << ", the input " << rank;
  size_t spatial = rank - 2;
  SmallVector<int64_t> strides = im.intsAttr("strides").value_or(
      SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations = im.intsAttr("dilations").value_or(
      SmallVector<int64_t>(spatial, 1));
  if (strides.size() != spatial || dilations.size() != spatial)
    return im.emitError() << "strides and dilations need " << spatial
                          << (spatial == 1 ? " value" : " values");
  SmallVector<int64_t> pads;
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> explicitPads = im.intsAttr("pads");
  if (explicitPads && autoPad == "NOTSET")
    pads = *explicitPads;
  else if (failed(autoPads(im, autoPad, tensorType(x).getShape().drop_front(2),
                           tensorType(w).getShape().drop_front(2), strides,
                           dilations, pads)))
    return failure();
  if (pads.size() != 2 * spatial)
    return im.emitError() << "pads need " << 2 * spatial << " values, got "
                          << pads.size();
  if (spatial == 1) {
    x = unitHeight(im, x, /*insert=*/true);
    w = unitHeight(im, w, /*insert=*/true);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  // The channels of an input whose channel dim is only known at run time
  // (a channel shuffle's reshape to [N, -1, H, W] with a symbolic H and W)
  // are the weight's times the groups: a reshape to that count, with the
  // input's own runtime shape, says so to the lowering, which needs it for
  // grouped and depthwise convolutions.
  RankedTensorType xType = tensorType(x), wType = tensorType(w);
  int64_t group = im.intAttr("group", 1);
  if (xType.isDynamicDim(1) && !wType.isDynamicDim(1) && group > 0) {
    SmallVector<int64_t> refined(xType.getShape());
    refined[1] = wType.getDimSize(1) * group;
    Value shape = im.create<ts::ShapeOp>(
        RankedTensorType::get({xType.getRank()},
                              IntegerType::get(&im.context(), 64)),
        x);
    x = im.create<ts::ReshapeOp>(
        RankedTensorType::get(refined, xType.getElementType()), x, shape);
  }
  Builder b(&im.context());
  Value result = im.inferred<ts::Conv2dOp>(
      x, w, bias, b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
      b.getDenseI64ArrayAttr(dilations), b.getI64IntegerAttr(group));
  if (result && spatial == 1)
    result = unitHeight(im, result, /*insert=*/false);
  return im.setOutput(0, result);
}

void registerContractionConverters(
    ConverterRegistry &r) {
  r["MatMul"] = convertMatMul;
  r["Gemm"] = convertGemm;
  r["Conv"] = convertConv;
}

} // namespace tessera::onnx_import
