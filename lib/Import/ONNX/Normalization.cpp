//===- Normalization.cpp - ONNX reductions, softmax and normalizations ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

/// The axes a reduction node reduces: from the attribute or (from opset
/// `movedAt`) the input; none given means all, or none at all with
/// noop_with_empty_axes (an empty list: the node passes its input through).
static FailureOr<SmallVector<int64_t>>
reductionAxes(GraphImporter &im, Value x, int64_t movedAt) {
  auto axes = im.intsAttrOrInput("axes", 1, movedAt);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> list = axes->value_or(SmallVector<int64_t>());
  if (list.empty() && im.intAttr("noop_with_empty_axes", 0) == 0)
    list = llvm::to_vector(llvm::seq<int64_t>(0, tensorType(x).getRank()));
  return list;
}

/// ReduceSum took its axes as an input from opset 13, the other reductions
/// from opset 18; with no axes they reduce everything, or nothing when
/// noop_with_empty_axes is set.
template <typename OpTy, int64_t AxesMovedAt>
static LogicalResult convertReduce(GraphImporter &im,
                                   const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  auto axes = reductionAxes(im, x, AxesMovedAt);
  if (failed(axes))
    return failure();
  if (axes->empty()) // noop_with_empty_axes, or a 0-D input
    return im.setOutput(0, x);
  SmallVector<int64_t> list = std::move(*axes);
  return im.setOutput(0, im.inferred<OpTy>(x, list,
                                           im.intAttr("keepdims", 1) != 0));
}

/// The reductions ONNX defines over a transformed input: ReduceL1 =
/// sum(|x|), ReduceL2 = sqrt(sum(x^2)), ReduceSumSquare = sum(x^2),
/// ReduceLogSum = log(sum(x)), ReduceLogSumExp = log(sum(exp(x - max))) +
/// max. Axes come from the attribute (or the input from opset 18).
enum class Composite { L1, L2, SumSquare, LogSum, LogSumExp };

template <Composite Kind>
static LogicalResult convertCompositeReduce(GraphImporter &im,
                                            const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  auto axes = reductionAxes(im, x, 18);
  if (failed(axes))
    return failure();
  if (axes->empty()) // noop_with_empty_axes, or a 0-D input
    return im.setOutput(0, x);
  SmallVector<int64_t> list = std::move(*axes);
  bool keep = im.intAttr("keepdims", 1) != 0;
  Value input = x, max;
  if (Kind == Composite::L1)
    input = im.create<ts::AbsOp>(x);
  if (Kind == Composite::L2 || Kind == Composite::SumSquare)
    input = im.inferred<ts::MulOp>(x, x);
  if (Kind == Composite::LogSumExp) {
    // Subtract the max for stability; it is added back after the log.
    max = im.inferred<ts::ReduceMaxOp>(x, list, true);
    Value shifted = max ? im.inferred<ts::SubOp>(x, max) : Value();
    input = shifted ? im.create<ts::ExpOp>(shifted) : Value();
  }
  Value sum = input ? im.inferred<ts::ReduceSumOp>(input, list, keep)
                    : Value();
  if (!sum)
    return failure();
  switch (Kind) {
  case Composite::L2:
    return im.setOutput(0, im.create<ts::SqrtOp>(sum));
  case Composite::LogSum:
    return im.setOutput(0, im.create<ts::LogOp>(sum));
  case Composite::LogSumExp: {
    Value log = im.create<ts::LogOp>(sum);
    if (!keep)
      max = im.inferred<ts::ReduceMaxOp>(x, list, false);
    return im.setOutput(0, max ? im.inferred<ts::AddOp>(log, max) : Value());
  }
  default:
    return im.setOutput(0, sum);
  }
}

template <typename OpTy>
static LogicalResult convertArgReduce(GraphImporter &im,
                                      const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  Builder b(&im.context());
  return im.setOutput(
      0, im.inferred<OpTy>(x, b.getI64IntegerAttr(im.intAttr("axis", 0)),
                           b.getBoolAttr(im.intAttr("keepdims", 1) != 0),
                           im.intAttr("select_last_index", 0) != 0
                               ? b.getUnitAttr()
                               : UnitAttr()));
}

/// Softmax and LogSoftmax. Before opset 13 they flattened the input to 2-D
/// at `axis` (default 1) and normalized each row; that equals a softmax over
/// the trailing dimensions, done here through a reshape when `axis` is not
/// already the last one.
template <typename OpTy>
static LogicalResult convertSoftmax(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  bool coerced = im.opset() < 13;
  int64_t axis = im.intAttr("axis", coerced ? 1 : -1);
  std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, rank);
  if (!dim)
    return im.emitError() << "axis " << axis << " is out of range for rank "
                          << rank;
  Builder b(&im.context());
  if (!coerced || *dim == rank - 1)
    return im.setOutput(0, im.create<OpTy>(x, b.getI64IntegerAttr(*dim)));
  std::optional<int64_t> rows =
      ::tessera::staticElementCount(type.getShape().take_front(*dim));
  std::optional<int64_t> cols =
      ::tessera::staticElementCount(type.getShape().drop_front(*dim));
  if (!rows || !cols)
    return im.emitError() << "opset " << im.opset()
                          << " softmax over axis " << axis
                          << " needs static dimensions";
  Value flat = im.create<ts::ReshapeOp>(
      RankedTensorType::get({*rows, *cols}, type.getElementType()), x,
      Value());
  Value normalized = im.create<OpTy>(flat, b.getI64IntegerAttr(1));
  return im.setOutput(0, im.create<ts::ReshapeOp>(type, normalized, Value()));
}

static LogicalResult convertLayerNorm(GraphImporter &im,
                                      const onnx::NodeProto &node) {
  Value x = im.input(0), scale = im.input(1);
  if (!x || !scale)
    return failure();
  Value bias = im.optionalInput(2);
  if (im.intAttr("stash_type", 1) != 1)
    return im.emitError() << "only stash_type = 1 (float) is supported";
  int64_t rank = tensorType(x).getRank();
  int64_t axis = im.intAttr("axis", -1);
  float epsilon = im.floatAttr("epsilon", 1e-5f);
  std::optional<int64_t> start = ::tessera::normalizeAxis(axis, rank);
  if (!start)
    return im.emitError() << "axis " << axis << " is out of range for rank "
                          << rank;
  Builder b(&im.context());
  Value y = im.create<ts::LayerNormOp>(x.getType(), x, scale, bias,
                                       b.getI64IntegerAttr(axis),
                                       b.getF32FloatAttr(epsilon));
  if (failed(im.setOutput(0, y)))
    return failure();
  bool wantsStats = (node.output_size() > 1 && !node.output(1).empty()) ||
                    (node.output_size() > 2 && !node.output(2).empty());
  if (!wantsStats)
    return success();
  // The optional Mean and InvStdDev outputs, over the normalized dims.
  auto axes = llvm::to_vector(llvm::seq<int64_t>(*start, rank));
  Value mean = im.inferred<ts::ReduceMeanOp>(x, axes, true);
  Value centered = mean ? im.inferred<ts::SubOp>(x, mean) : Value();
  Value squares = centered ? im.inferred<ts::MulOp>(centered, centered)
                           : Value();
  Value var = squares ? im.inferred<ts::ReduceMeanOp>(squares, axes, true)
                      : Value();
  if (!var)
    return failure();
  Value eps = im.constantScalar(epsilon, elementType(x));
  Value stddev = im.create<ts::SqrtOp>(im.inferred<ts::AddOp>(var, eps));
  if (failed(im.setOutput(1, mean)))
    return failure();
  return im.setOutput(2, im.create<ts::ReciprocalOp>(stddev));
}

/// BatchNormalization after a convolution that only it reads, with
/// constant f32 filter, bias and statistics: the convolution with its
/// filter scaled per output channel by s = scale / sqrt(var + eps) and its
/// bias (b - mean) * s + B, as inference frameworks fold it. Null when it
/// does not apply.
static Value foldIntoConv(GraphImporter &im, const onnx::NodeProto &node,
                          Value x, Value scale, Value bias, Value mean,
                          Value var) {
  auto conv = x.getDefiningOp<ts::Conv2dOp>();
  if (!conv || im.useCount(node.input(0)) != 1)
    return {};
  std::optional<SmallVector<float>> filter = im.constantF32s(conv.getFilter());
  std::optional<SmallVector<float>> gamma = im.constantF32s(scale),
                                    beta = im.constantF32s(bias),
                                    mu = im.constantF32s(mean),
                                    sigma2 = im.constantF32s(var);
  RankedTensorType filterType = conv.getFilter().getType();
  int64_t channels = filterType.getDimSize(0);
  std::optional<SmallVector<float>> convBias =
      conv.getBias() ? im.constantF32s(conv.getBias())
                     : SmallVector<float>(channels, 0.0f);
  auto perChannel = [&](const std::optional<SmallVector<float>> &v) {
    return v && static_cast<int64_t>(v->size()) == channels;
  };
  if (!filter || !perChannel(gamma) || !perChannel(beta) || !perChannel(mu) ||
      !perChannel(sigma2) || !perChannel(convBias))
    return {};
  double eps = im.floatAttr("epsilon", 1e-5f);
  int64_t perFilter = static_cast<int64_t>(filter->size()) / channels;
  SmallVector<float> newBias(channels);
  for (int64_t f = 0; f < channels; ++f) {
    double s = (*gamma)[f] / std::sqrt(static_cast<double>((*sigma2)[f]) + eps);
    for (int64_t i = 0; i < perFilter; ++i)
      (*filter)[f * perFilter + i] =
          static_cast<float>((*filter)[f * perFilter + i] * s);
    newBias[f] = static_cast<float>(((*convBias)[f] - (*mu)[f]) * s +
                                    (*beta)[f]);
  }
  std::string name = node.name().empty() ? node.output(0) : node.name();
  Value newFilter =
      im.constantF32(*filter, filterType.getShape(), name + ".folded_filter");
  Value newBiasValue =
      im.constantF32(newBias, {channels}, name + ".folded_bias");
  Value folded = im.inferred<ts::Conv2dOp>(
      conv.getInput(), newFilter, newBiasValue, conv.getStridesAttr(),
      conv.getPadsAttr(), conv.getDilationsAttr(), conv.getGroupAttr());
  if (folded && conv->use_empty())
    conv->erase();
  return folded;
}

/// BatchNormalization of a 2-D [N, C] product x @ W (+ c) that only it
/// reads, with constant f32 W, c and statistics: the product with W's
/// columns scaled by s = scale / sqrt(var + eps), plus (c - mean) * s + B.
/// Null when it does not apply.
static Value foldIntoMatmul(GraphImporter &im, const onnx::NodeProto &node,
                            Value x, Value scale, Value bias, Value mean,
                            Value var) {
  if (im.useCount(node.input(0)) != 1 || tensorType(x).getRank() != 2)
    return {};
  Value offset;
  auto matmul = x.getDefiningOp<ts::MatmulOp>();
  if (auto add = x.getDefiningOp<ts::AddOp>(); add && !matmul) {
    // Gemm's bias: the product must have no other reader.
    matmul = add.getLhs().getDefiningOp<ts::MatmulOp>();
    offset = add.getRhs();
    if (!matmul || !matmul->hasOneUse())
      return {};
  }
  if (!matmul || matmul.getTransposeA() ||
      matmul.getRhs().getType().getRank() != 2)
    return {};
  RankedTensorType rhsType = matmul.getRhs().getType();
  bool transposed = matmul.getTransposeB();
  int64_t channels = rhsType.getDimSize(transposed ? 0 : 1);
  int64_t inner = rhsType.getDimSize(transposed ? 1 : 0);
  std::optional<SmallVector<float>> weights = im.constantF32s(matmul.getRhs());
  std::optional<SmallVector<float>> gamma = im.constantF32s(scale),
                                    beta = im.constantF32s(bias),
                                    mu = im.constantF32s(mean),
                                    sigma2 = im.constantF32s(var);
  std::optional<SmallVector<float>> shift =
      offset ? im.constantF32s(offset) : SmallVector<float>(channels, 0.0f);
  auto perChannel = [&](const std::optional<SmallVector<float>> &v) {
    return v && static_cast<int64_t>(v->size()) == channels;
  };
  // A bias of one value broadcasts to every channel.
  if (shift && shift->size() == 1 && offset &&
      tensorType(offset).getNumElements() == 1)
    shift = SmallVector<float>(channels, (*shift)[0]);
  if (!weights || !perChannel(gamma) || !perChannel(beta) || !perChannel(mu) ||
      !perChannel(sigma2) || !perChannel(shift) ||
      (offset && tensorType(offset).getRank() > 1 &&
       tensorType(offset).getDimSize(0) != 1))
    return {};
  double eps = im.floatAttr("epsilon", 1e-5f);
  SmallVector<float> newBias(channels);
  for (int64_t c = 0; c < channels; ++c) {
    double s = (*gamma)[c] / std::sqrt(static_cast<double>((*sigma2)[c]) + eps);
    for (int64_t k = 0; k < inner; ++k) {
      float &w = transposed ? (*weights)[c * inner + k]
                            : (*weights)[k * channels + c];
      w = static_cast<float>(w * s);
    }
    newBias[c] =
        static_cast<float>(((*shift)[c] - (*mu)[c]) * s + (*beta)[c]);
  }
  std::string name = node.name().empty() ? node.output(0) : node.name();
  Value newWeights =
      im.constantF32(*weights, rhsType.getShape(), name + ".folded_weights");
  Value product = im.create<ts::MatmulOp>(
      matmul.getType(), matmul.getLhs(), newWeights, matmul.getTransposeA(),
      transposed, matmul.getAlpha());
  Value folded = im.inferred<ts::AddOp>(
      product, im.constantF32(newBias, {channels}, name + ".folded_bias"));
  // The unfolded product (and Gemm's bias add) has no other reader.
  if (folded) {
    if (Operation *add = x.getDefiningOp(); add != matmul && add->use_empty())
      add->erase();
    if (matmul->use_empty())
      matmul->erase();
  }
  return folded;
}

/// BatchNormalization with training_mode (opset 14 on): normalized with
/// the batch's own mean and (population) variance over every dim but 1;
/// outputs 1 and 2 are the running statistics moved by `momentum`:
/// running * momentum + batch * (1 - momentum).
static LogicalResult convertBatchNormTraining(GraphImporter &im, Value x,
                                              Value scale, Value bias,
                                              Value mean, Value var) {
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  SmallVector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  SmallVector<int64_t> channelShape(rank - 1, 1);
  channelShape[0] = type.getDimSize(1);
  auto perChannel = [&](Value v) -> Value {
    return im.create<ts::ReshapeOp>(
        RankedTensorType::get(channelShape, elementType(v)), v, Value());
  };
  Value batchMean = im.inferred<ts::ReduceMeanOp>(x, axes, true);
  Value centered = batchMean ? im.inferred<ts::SubOp>(x, batchMean) : Value();
  Value squared =
      centered ? im.inferred<ts::MulOp>(centered, centered) : Value();
  Value batchVar =
      squared ? im.inferred<ts::ReduceMeanOp>(squared, axes, true) : Value();
  if (!batchVar)
    return failure();
  Value eps = im.constantScalar(im.floatAttr("epsilon", 1e-5f), et);
  Value stddev = im.create<ts::SqrtOp>(im.inferred<ts::AddOp>(batchVar, eps));
  Value y = im.inferred<ts::DivOp>(centered, stddev);
  if (y)
    y = im.inferred<ts::MulOp>(y, perChannel(scale));
  if (y)
    y = im.inferred<ts::AddOp>(y, perChannel(bias));
  if (failed(im.setOutput(0, y)))
    return failure();
  double momentum = im.floatAttr("momentum", 0.9f);
  auto running = [&](Value old, Value batch) -> Value {
    auto flat = RankedTensorType::get({type.getDimSize(1)}, et);
    Value current = im.create<ts::ReshapeOp>(flat, batch, Value());
    Value kept = im.inferred<ts::MulOp>(old, im.constantScalar(momentum, et));
    Value moved =
        im.inferred<ts::MulOp>(current, im.constantScalar(1 - momentum, et));
    return kept && moved ? im.inferred<ts::AddOp>(kept, moved) : Value();
  };
  const onnx::NodeProto &node = im.node();
  if (node.output_size() > 1 && !node.output(1).empty() &&
      failed(im.setOutput(1, running(mean, batchMean))))
    return failure();
  if (node.output_size() > 2 && !node.output(2).empty() &&
      failed(im.setOutput(2, running(var, batchVar))))
    return failure();
  return success();
}

/// BatchNormalization at inference: (x - mean) / sqrt(var + eps) * scale + B,
/// with the per-channel parameters broadcast along dimension 1.
static LogicalResult convertBatchNorm(GraphImporter &im,
                                      const onnx::NodeProto &node) {
  Value x = im.input(0), scale = im.input(1), bias = im.input(2),
        mean = im.input(3), var = im.input(4);
  if (!x || !scale || !bias || !mean || !var)
    return failure();
  RankedTensorType type = tensorType(x);
  if (type.getRank() < 2)
    return im.emitError() << "expects an input of rank >= 2";
  bool training = im.opset() >= 14 && im.intAttr("training_mode", 0) != 0;
  if (!training && node.output_size() > 1 && !node.output(1).empty())
    return im.emitError() << "the running statistics outputs exist in "
                             "training mode only (opset 14 on)";
  if (training)
    return convertBatchNormTraining(im, x, scale, bias, mean, var);
  if (Value folded = foldIntoConv(im, node, x, scale, bias, mean, var))
    return im.setOutput(0, folded);
  if (Value folded = foldIntoMatmul(im, node, x, scale, bias, mean, var))
    return im.setOutput(0, folded);
  SmallVector<int64_t> channelShape(type.getRank() - 1, 1);
  channelShape[0] = type.getDimSize(1);
  auto perChannel = [&](Value v) -> Value {
    auto shape = RankedTensorType::get(channelShape, elementType(v));
    return im.create<ts::ReshapeOp>(shape, v, Value());
  };
  Value eps = im.constantScalar(im.floatAttr("epsilon", 1e-5f),
                                type.getElementType());
  Value variance = im.inferred<ts::AddOp>(var, eps);
  if (!variance)
    return failure();
  Value stddev = im.create<ts::SqrtOp>(variance);
  Value result = im.inferred<ts::SubOp>(x, perChannel(mean));
  if (result)
    result = im.inferred<ts::DivOp>(result, perChannel(stddev));
  if (result)
    result = im.inferred<ts::MulOp>(result, perChannel(scale));
  if (result)
    result = im.inferred<ts::AddOp>(result, perChannel(bias));
  return im.setOutput(0, result);
}

/// Hardmax: 1 at the first maximum along `axis`, 0 elsewhere (an argmax
/// compared with the positions along the axis). Before opset 13 the input
/// was flattened to 2-D at `axis`, as for Softmax.
static LogicalResult convertHardmax(GraphImporter &im,
                                    const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  bool coerced = im.opset() < 13;
  int64_t axis = im.intAttr("axis", coerced ? 1 : -1);
  std::optional<int64_t> dim = ::tessera::normalizeAxis(axis, rank);
  if (!dim)
    return im.emitError() << "axis " << axis << " is out of range for rank "
                          << rank;
  Value input = x;
  if (coerced && *dim != rank - 1) {
    std::optional<int64_t> rows =
        ::tessera::staticElementCount(type.getShape().take_front(*dim));
    std::optional<int64_t> cols =
        ::tessera::staticElementCount(type.getShape().drop_front(*dim));
    if (!rows || !cols)
      return im.emitError() << "opset " << im.opset()
                            << " hardmax over axis " << axis
                            << " needs static dimensions";
    input = im.create<ts::ReshapeOp>(
        RankedTensorType::get({*rows, *cols}, type.getElementType()), x,
        Value());
    dim = 1;
  }
  RankedTensorType inType = tensorType(input);
  int64_t size = inType.getDimSize(*dim);
  if (ShapedType::isDynamic(size))
    return im.emitError() << "hardmax needs a static size along axis "
                          << axis;
  Value first = im.inferred<ts::ArgMaxOp>(input, *dim, true, false);
  if (!first)
    return failure();
  SmallVector<int64_t> positions = llvm::to_vector(llvm::seq<int64_t>(0, size));
  SmallVector<int64_t> shape(inType.getRank(), 1);
  shape[*dim] = size;
  Value iota = im.constantI64(positions, shape);
  Value hit = im.inferred<ts::CompareOp>(ts::CompareDirection::eq, first, iota);
  if (!hit)
    return failure();
  Value result = im.create<ts::CastOp>(
      RankedTensorType::get(inType.getShape(), inType.getElementType()), hit);
  if (input != x)
    result = im.create<ts::ReshapeOp>(type, result, Value());
  return im.setOutput(0, result);
}

/// InstanceNormalization: each (sample, channel) normalized over its
/// spatial dims, then scaled and shifted per channel.
static LogicalResult convertInstanceNorm(GraphImporter &im,
                                         const onnx::NodeProto &) {
  Value x = im.input(0), scale = im.input(1), bias = im.input(2);
  if (!x || !scale || !bias)
    return failure();
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  if (rank < 3)
    return im.emitError() << "expects an input of rank 3 or more (N x C x "
                             "spatial dims), got rank "
                          << rank;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  SmallVector<int64_t> channelShape(rank - 1, 1);
  channelShape[0] = type.getDimSize(1);
  auto perChannel = [&](Value v) -> Value {
    return im.create<ts::ReshapeOp>(
        RankedTensorType::get(channelShape, elementType(v)), v, Value());
  };
  Value mean = im.inferred<ts::ReduceMeanOp>(x, axes, true);
  Value centered = mean ? im.inferred<ts::SubOp>(x, mean) : Value();
  Value squared =
      centered ? im.inferred<ts::MulOp>(centered, centered) : Value();
  Value variance =
      squared ? im.inferred<ts::ReduceMeanOp>(squared, axes, true) : Value();
  if (!variance)
    return failure();
  Value eps = im.constantScalar(im.floatAttr("epsilon", 1e-5f),
                                type.getElementType());
  Value stddev = im.create<ts::SqrtOp>(im.inferred<ts::AddOp>(variance, eps));
  Value result = im.inferred<ts::DivOp>(centered, stddev);
  if (result)
    result = im.inferred<ts::MulOp>(result, perChannel(scale));
  if (result)
    result = im.inferred<ts::AddOp>(result, perChannel(bias));
  return im.setOutput(0, result);
}

/// LRN: x / (bias + alpha / size * sum of x^2 over a window of `size`
/// channels)^beta. The window sum is an average pool over the channels
/// (counting the zero padding, so average * size is the sum) on the input
/// viewed as [N, 1, C, spatial].
static LogicalResult convertLRN(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  if (type.getRank() < 3 || !type.hasStaticShape())
    return im.emitError() << "expects a static input of rank 3 or more (N x "
                             "C x spatial dims)";
  int64_t size = im.intAttr("size", 0);
  if (size < 1)
    return im.emitError() << "size must be positive, got " << size;
  double alpha = im.floatAttr("alpha", 1e-4f), beta = im.floatAttr("beta", 0.75f),
         bias = im.floatAttr("bias", 1.0f);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t spatial = *::tessera::staticElementCount(shape.drop_front(2));
  Type et = type.getElementType();
  Value squared = im.inferred<ts::MulOp>(x, x);
  if (!squared)
    return failure();
  Value view = im.create<ts::ReshapeOp>(
      RankedTensorType::get({shape[0], 1, shape[1], spatial}, et), squared,
      Value());
  Builder b(&im.context());
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value mean = im.inferred<ts::AvgPoolOp>(
      view, b.getDenseI64ArrayAttr({size, 1}), b.getDenseI64ArrayAttr({1, 1}),
      b.getDenseI64ArrayAttr({before, 0, after, 0}),
      b.getDenseI64ArrayAttr({1, 1}), UnitAttr(), b.getUnitAttr());
  if (!mean)
    return failure();
  mean = im.create<ts::ReshapeOp>(type, mean, Value());
  Value scaled = im.inferred<ts::MulOp>(mean, im.constantScalar(alpha, et));
  Value base =
      scaled ? im.inferred<ts::AddOp>(scaled, im.constantScalar(bias, et))
             : Value();
  Value denominator =
      base ? im.inferred<ts::PowOp>(base, im.constantScalar(beta, et))
           : Value();
  return im.setOutput(
      0, denominator ? im.inferred<ts::DivOp>(x, denominator) : Value());
}

/// MeanVarianceNormalization, as ONNX's function body writes it:
/// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`.
static LogicalResult convertMVN(GraphImporter &im, const onnx::NodeProto &) {
  Value x = im.input(0);
  if (!x)
    return failure();
  RankedTensorType type = tensorType(x);
  SmallVector<int64_t> axes =
      im.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  Type et = type.getElementType();
  Value mean = im.inferred<ts::ReduceMeanOp>(x, axes, true);
  Value squared = im.inferred<ts::MulOp>(x, x);
  Value meanSquare =
      squared ? im.inferred<ts::ReduceMeanOp>(squared, axes, true) : Value();
  if (!mean || !meanSquare)
    return failure();
  Value variance =
      im.inferred<ts::SubOp>(meanSquare, im.inferred<ts::MulOp>(mean, mean));
  Value stddev = im.create<ts::SqrtOp>(variance);
  Value denominator =
      im.inferred<ts::AddOp>(stddev, im.constantScalar(1e-9, et));
  Value centered = im.inferred<ts::SubOp>(x, mean);
  return im.setOutput(0, denominator && centered
                             ? im.inferred<ts::DivOp>(centered, denominator)
                             : Value());
}

void registerNormalizationConverters(
    ConverterRegistry &r) {
  r["ReduceSum"] = convertReduce<ts::ReduceSumOp, 13>;
  r["ReduceMean"] = convertReduce<ts::ReduceMeanOp, 18>;
  r["ReduceMax"] = convertReduce<ts::ReduceMaxOp, 18>;
  r["ReduceMin"] = convertReduce<ts::ReduceMinOp, 18>;
  r["ReduceL1"] = convertCompositeReduce<Composite::L1>;
  r["ReduceL2"] = convertCompositeReduce<Composite::L2>;
  r["ReduceSumSquare"] = convertCompositeReduce<Composite::SumSquare>;
  r["ReduceLogSum"] = convertCompositeReduce<Composite::LogSum>;
  r["ReduceLogSumExp"] = convertCompositeReduce<Composite::LogSumExp>;
  r["ArgMax"] = convertArgReduce<ts::ArgMaxOp>;
  r["ArgMin"] = convertArgReduce<ts::ArgMinOp>;
  r["Softmax"] = convertSoftmax<ts::SoftmaxOp>;
  r["LogSoftmax"] = convertSoftmax<ts::LogSoftmaxOp>;
  r["LayerNormalization"] = convertLayerNorm;
  r["BatchNormalization"] = convertBatchNorm;
  r["InstanceNormalization"] = convertInstanceNorm;
  r["Hardmax"] = convertHardmax;
  r["LRN"] = convertLRN;
  r["MeanVarianceNormalization"] = convertMVN;
  r["ReduceProd"] = convertReduce<ts::ReduceProdOp, 18>;
}

} // namespace tessera::onnx_import
