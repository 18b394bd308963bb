//===- Contraction.cpp - ONNX MatMul, Gemm, Einsum and Conv ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// A tessera.matmul with its result type from the shared shape rule.
static Value buildMatmul(GraphImporter &im, Value lhs, Value rhs, bool transA,
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

/// Einsum equations that are a (batched) matrix product, with one letter
/// each for the rows, columns and contracted dimension and any number of
/// batch letters: "bij,bjk->bik", "bhqd,bhkd->bhqk", "ij,kj->ik", ...
static LogicalResult convertEinsum(GraphImporter &im,
                                   const onnx::NodeProto &node) {
  std::string equation = im.stringAttr("equation", "");
  llvm::erase(equation, ' ');
  auto unsupported = [&]() {
    return im.emitError() << "equation '" << equation
                          << "' is not a matrix product (supported: two "
                             "operands, explicit output, one row, column and "
                             "contracted letter, shared batch letters)";
  };
  StringRef eq(equation);
  auto [inputs, output] = eq.split("->");
  auto [lhsSpec, rhsSpec] = inputs.split(',');
  if (node.input_size() != 2 || output.empty() || rhsSpec.empty() ||
      eq.contains("..."))
    return unsupported();
  Value lhs = im.input(0), rhs = im.input(1);
  if (!lhs || !rhs)
    return failure();
  if (static_cast<int64_t>(lhsSpec.size()) != tensorType(lhs).getRank() ||
      static_cast<int64_t>(rhsSpec.size()) != tensorType(rhs).getRank())
    return im.emitError() << "equation '" << equation
                          << "' does not match the operands' ranks";
  // Batch letters appear everywhere, the contracted one in both operands
  // only, rows in lhs and output, columns in rhs and output.
  std::string batch, m, n, k;
  for (char c : lhsSpec) {
    bool inRhs = rhsSpec.contains(c), inOut = output.contains(c);
    if (!inRhs && !inOut)
      return unsupported();
    (inRhs ? (inOut ? batch : k) : m) += c;
  }
  for (char c : rhsSpec) {
    if (lhsSpec.contains(c))
      continue;
    if (!output.contains(c))
      return unsupported();
    n += c;
  }
  if (m.size() != 1 || n.size() != 1 || k.size() != 1 ||
      output.size() != batch.size() + 2)
    return unsupported();

  // Transpose both operands to [batch..., rows, k] and [batch..., k, cols].
  auto permuteTo = [&](Value v, StringRef spec, StringRef order) -> Value {
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(spec.find(c));
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return v;
    return im.inferred<ts::TransposeOp>(v, perm);
  };
  Value a = permuteTo(lhs, lhsSpec, batch + m + k);
  Value b = permuteTo(rhs, rhsSpec, batch + k + n);
  if (!a || !b)
    return failure();
  Value product = buildMatmul(im, a, b, false, false, 1.0f);
  if (!product)
    return failure();
  return im.setOutput(0, permuteTo(product, batch + m + n, output));
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
  r["Einsum"] = convertEinsum;
  r["Conv"] = convertConv;
}

} // namespace tessera::onnx_import
