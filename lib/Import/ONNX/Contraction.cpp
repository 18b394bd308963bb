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

/// A 3-D convolution (video and volumetric models) as one 2-D convolution
/// per kernel depth kd, whose batch is the output depths: the input
/// (depth-padded) sliced at kd * dilation with the depth stride, the depth
/// moved next to the batch and merged with it, times the filter's slice
/// kd; the products summed, the bias added once, then back to
/// [N, F, D', H', W']. The depth, height and width must be static (the
/// batch may be symbolic).
static Value convolution3d(GraphImporter &im, Value x, Value w, Value bias,
                           ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                           int64_t group) {
  RankedTensorType xType = tensorType(x), wType = tensorType(w);
  Type element = xType.getElementType();
  ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape();
  if (llvm::any_of(xs.drop_front(), ShapedType::isDynamic) ||
      !wType.hasStaticShape()) {
    im.emitError() << "a 3-D convolution needs static channels, depth, "
                      "height and width and a static weight";
    return {};
  }
  Builder b(&im.context());
  int64_t n = xs[0], c = xs[1], kernelDepth = ws[2];
  int64_t padded = xs[2] + pads[0] + pads[3];
  int64_t span = dilations[0] * (kernelDepth - 1) + 1;
  if (padded < span) {
    im.emitError() << "the kernel's depth (" << span
                   << " with dilation) exceeds the padded input's (" << padded
                   << ")";
    return {};
  }
  int64_t depth = (padded - span) / strides[0] + 1;
  if (pads[0] || pads[3]) {
    SmallVector<int64_t> depthPads(10, 0);
    depthPads[2] = pads[0];
    depthPads[5 + 2] = pads[3];
    x = im.inferred<ts::PadOp>(
        x, b.getDenseI64ArrayAttr(depthPads),
        ts::PadModeAttr::get(&im.context(), ts::PadMode::constant),
        b.getF64FloatAttr(0.0));
    if (!x)
      return {};
  }
  auto merged = [&](int64_t dim) {
    return ShapedType::isDynamic(n) ? ShapedType::kDynamic : n * dim;
  };
  Value sum;
  for (int64_t kd = 0; kd < kernelDepth; ++kd) {
    int64_t start = kd * dilations[0];
    Value slab = im.inferred<ts::SliceOp>(
        x, b.getDenseI64ArrayAttr({start}),
        b.getDenseI64ArrayAttr({start + (depth - 1) * strides[0] + 1}),
        b.getDenseI64ArrayAttr({2}), b.getDenseI64ArrayAttr({strides[0]}));
    Value moved = slab ? im.inferred<ts::TransposeOp>(
                             slab, ArrayRef<int64_t>{0, 2, 1, 3, 4})
                       : Value();
    if (!moved)
      return {};
    Value images = im.create<ts::ReshapeOp>(
        RankedTensorType::get({merged(depth), c, xs[3], xs[4]}, element), moved,
        Value());
    Value filter = im.inferred<ts::SliceOp>(
        w, b.getDenseI64ArrayAttr({kd}), b.getDenseI64ArrayAttr({kd + 1}),
        b.getDenseI64ArrayAttr({2}), DenseI64ArrayAttr());
    if (!filter)
      return {};
    filter = im.create<ts::ReshapeOp>(
        RankedTensorType::get({ws[0], ws[1], ws[3], ws[4]}, element), filter,
        Value());
    Value product = im.inferred<ts::Conv2dOp>(
        images, filter, kd == 0 ? bias : Value(),
        b.getDenseI64ArrayAttr({strides[1], strides[2]}),
        b.getDenseI64ArrayAttr({pads[1], pads[2], pads[4], pads[5]}),
        b.getDenseI64ArrayAttr({dilations[1], dilations[2]}),
        b.getI64IntegerAttr(group));
    if (!product)
      return {};
    sum = sum ? im.inferred<ts::AddOp>(sum, product) : product;
    if (!sum)
      return {};
  }
  RankedTensorType planes = tensorType(sum);
  Value split = im.create<ts::ReshapeOp>(
      RankedTensorType::get({n, depth, planes.getDimSize(1),
                             planes.getDimSize(2), planes.getDimSize(3)},
                            element),
      sum, Value());
  return im.inferred<ts::TransposeOp>(split, ArrayRef<int64_t>{0, 2, 1, 3, 4});
}

/// Conv, 2-D, or 1-D as a 2-D convolution of unit height, or 3-D as 2-D
/// convolutions per kernel depth.
static LogicalResult convertConv(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0), w = im.input(1);
  if (!x || !w)
    return failure();
  Value bias = im.optionalInput(2);
  int64_t rank = tensorType(x).getRank();
  if (rank < 3 || rank > 5)
    return im.emitError() << "only 1-D, 2-D and 3-D convolutions (3-D to "
                             "5-D inputs) are supported, got a rank-"
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
  auto positive = [](int64_t v) { return v >= 1; };
  if (!llvm::all_of(strides, positive) || !llvm::all_of(dilations, positive))
    return im.emitError() << "strides and dilations must be positive";
  if (llvm::any_of(tensorType(w).getShape().drop_front(2),
                   [](int64_t d) { return d == 0; }))
    return im.emitError() << "the kernel must not be empty";
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
  if (spatial == 3) {
    Value result = convolution3d(im, x, w, bias, strides, dilations, pads,
                                 im.intAttr("group", 1));
    return result ? im.setOutput(0, result) : failure();
  }
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
