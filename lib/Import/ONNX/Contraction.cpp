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

static LogicalResult convertConv(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), w = im.input(1);
  if (!x || !w)
    return failure();
  Value bias = im.optionalInput(2);
  if (tensorType(x).getRank() != 4)
    return im.emitError() << "only 2-D convolution (4-D input) is supported, "
                             "got a rank-"
                          << tensorType(x).getRank() << " input";
  SmallVector<int64_t> strides = im.intsAttr("strides").value_or(
      SmallVector<int64_t>{1, 1});
  SmallVector<int64_t> dilations = im.intsAttr("dilations").value_or(
      SmallVector<int64_t>{1, 1});
  if (strides.size() != 2 || dilations.size() != 2)
    return im.emitError() << "strides and dilations need 2 values";
  SmallVector<int64_t> pads;
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> explicitPads = im.intsAttr("pads");
  if (explicitPads && autoPad == "NOTSET")
    pads = *explicitPads;
  else if (failed(autoPads(im, autoPad, tensorType(x).getShape().drop_front(2),
                           tensorType(w).getShape().drop_front(2), strides,
                           dilations, pads)))
    return failure();
  Builder b(&im.context());
  return im.setOutput(
      0, im.inferred<ts::Conv2dOp>(x, w, bias, b.getDenseI64ArrayAttr(strides),
                                   b.getDenseI64ArrayAttr(pads),
                                   b.getDenseI64ArrayAttr(dilations),
                                   b.getI64IntegerAttr(im.intAttr("group", 1))));
}

void registerContractionConverters(
    ConverterRegistry &r) {
  r["MatMul"] = convertMatMul;
  r["Gemm"] = convertGemm;
  r["Conv"] = convertConv;
}

} // namespace tessera::onnx_import
