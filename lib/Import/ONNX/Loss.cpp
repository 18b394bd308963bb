//===- Loss.cpp - ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss ==//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Both losses are compositions, as ONNX's own function bodies define them:
// the log-probability of each target class picked with gather_elements
// along the class axis (dim 1), negated, weighted per class, with targets
// equal to ignore_index given weight 0, then reduced.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// -logp[n, target[n, ...], ...] * weight[target] with the reduction of
/// the current node; `logp` is [N, C, d1, ...], `target` [N, d1, ...].
static Value buildNLL(GraphImporter &im, Value logp, Value target,
                      Value weight) {
  RankedTensorType type = tensorType(logp);
  RankedTensorType targetType = tensorType(target);
  int64_t rank = type.getRank();
  if (rank < 2) {
    im.emitError() << "expects input of rank 2 or more (N x C x ...), got "
                   << rank;
    return {};
  }
  // ONNX: target has the input's shape without the class dim.
  SmallVector<int64_t> expected(type.getShape());
  expected.erase(expected.begin() + 1);
  if (targetType.getRank() != rank - 1 ||
      !llvm::all_of(llvm::zip(expected, targetType.getShape()), [](auto p) {
        return ::tessera::dimsCompatible(std::get<0>(p), std::get<1>(p));
      })) {
    im.emitError() << "target " << ::tessera::formatShape(targetType.getShape())
                   << " must have the input's shape without dim 1, "
                   << ::tessera::formatShape(expected);
    return {};
  }
  if (weight && (tensorType(weight).getRank() != 1 ||
                 elementType(weight) != type.getElementType())) {
    im.emitError() << "weight must be 1-D, one " << type.getElementType()
                   << " per class";
    return {};
  }
  std::string reduction = im.stringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    im.emitError() << "reduction '" << reduction
                   << "' is not supported (none, sum and mean are)";
    return {};
  }
  Type floatType = type.getElementType();
  Value ignored, safe = target;
  if (const onnx::AttributeProto *attr = im.attr("ignore_index")) {
    Value ignore = im.constantScalar(static_cast<double>(attr->i()),
                                     targetType.getElementType());
    ignored = im.inferred<ts::CompareOp>(ts::CompareDirection::eq, target,
                                         ignore);
    Value zero = im.constantScalar(0, targetType.getElementType());
    // Ignored targets may be out of range: gather class 0 instead.
    if (ignored)
      safe = im.inferred<ts::WhereOp>(ignored, zero, target);
    if (!ignored || !safe)
      return {};
  }
  SmallVector<int64_t> withClassDim(targetType.getShape());
  withClassDim.insert(withClassDim.begin() + 1, 1);
  Value index = im.create<ts::ReshapeOp>(
      RankedTensorType::get(withClassDim, targetType.getElementType()), safe,
      Value());
  Value picked = im.inferred<ts::GatherElementsOp>(logp, index, 1);
  if (!picked)
    return {};
  SmallVector<int64_t> lossShape(tensorType(picked).getShape());
  lossShape.erase(lossShape.begin() + 1);
  Value loss = im.create<ts::NegOp>(im.create<ts::ReshapeOp>(
      RankedTensorType::get(lossShape, floatType), picked, Value()));
  Value weights;
  if (weight)
    weights = im.inferred<ts::GatherOp>(weight, safe, 0);
  if (ignored) {
    Value zero = im.constantScalar(0, floatType);
    Value one = im.constantScalar(1, floatType);
    weights = im.inferred<ts::WhereOp>(ignored, zero, weights ? weights : one);
  }
  if ((weight || ignored) && !weights)
    return {};
  if (weights)
    loss = im.inferred<ts::MulOp>(loss, weights);
  if (!loss || reduction == "none")
    return loss;
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  if (reduction == "sum")
    return im.inferred<ts::ReduceSumOp>(loss, all, false);
  if (!weights)
    return im.inferred<ts::ReduceMeanOp>(loss, all, false);
  // Weighted mean: divided by the total weight of the targets.
  Value total = im.inferred<ts::ReduceSumOp>(loss, all, false);
  Value norm = im.inferred<ts::ReduceSumOp>(weights, all, false);
  if (!total || !norm)
    return {};
  return im.inferred<ts::DivOp>(total, norm);
}

static LogicalResult convertNLLLoss(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0), target = im.input(1);
  if (!x || !target)
    return failure();
  Value weight = im.optionalInput(2);
  if (!isa<FloatType>(elementType(x)))
    return im.emitError() << "expects a floating-point input";
  return im.setOutput(0, buildNLL(im, x, target, weight));
}

static LogicalResult convertSoftmaxCrossEntropy(GraphImporter &im,
                                                const onnx::NodeProto &) {
  Value scores = im.input(0), labels = im.input(1);
  if (!scores || !labels)
    return failure();
  Value weight = im.optionalInput(2);
  if (!isa<FloatType>(elementType(scores)))
    return im.emitError() << "expects floating-point scores";
  if (tensorType(scores).getRank() < 2)
    return im.emitError() << "expects scores of rank 2 or more (N x C x "
                             "...), got rank "
                          << tensorType(scores).getRank();
  Value logp = im.create<ts::LogSoftmaxOp>(
      scores, Builder(&im.context()).getI64IntegerAttr(1));
  if (failed(im.setOutput(0, buildNLL(im, logp, labels, weight))))
    return failure();
  return im.setOutput(1, logp);
}

void registerLossConverters(ConverterRegistry &r) {
  r["NegativeLogLikelihoodLoss"] = convertNLLLoss;
  r["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropy;
}

} // namespace tessera::onnx_import
