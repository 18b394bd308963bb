//===- Resize.cpp - tessera.resize as strided copies and vector sums ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// With constant scales, every output coordinate of a dim maps to input
// coordinates known at compile time (computed in f64 exactly as the CPU
// lowering does, lib/Conversion/TesseraToLinalg/Resize.cpp). Nearest
// resizing is then a copy: each dim's index map is split into segments of
// equal runs (an integer upsampling is one segment: n input elements,
// each repeated r times, a source stride of 0), and each product of
// segments is one strided copy, so an x2 upsampling of NCHW is one copy.
// Linear and cubic resizing resample the dims in turn, from the last, as
// the CPU does: per tap a copy of the neighbours the tap reads, then the
// vector unit sums them times the taps' weights (constants per column or
// per row).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include <cmath>

using namespace mlir;

namespace tessera::systolic {

namespace {

using CoordinateMode = ts::ResizeCoordinateMode;

/// One dim's resampling: per tap, the input index each output coordinate
/// reads (-1: outside the input, the extrapolation value) and its weight.
struct DimMap {
  bool identity = false;
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
};

/// The Keys cubic weights of the four neighbours at fraction `t`.
std::vector<double> cubicWeights(double t, double a) {
  auto far = [&](double s) {
    return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  };
  auto near = [&](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };
  double rest = 1 - t;
  return {far(t + 1), near(t), near(rest), far(rest + 1)};
}

/// The CPU's input coordinate of output coordinate `x` (f64).
double inputCoordinate(CoordinateMode mode, double x, double scale, double in,
                       double out, double outSize, double roiStart,
                       double roiEnd) {
  double halfPixel = (x + 0.5) / scale - 0.5;
  switch (mode) {
  case CoordinateMode::half_pixel:
    return halfPixel;
  case CoordinateMode::half_pixel_symmetric:
    return in / 2.0 * (1.0 - outSize / out) + halfPixel;
  case CoordinateMode::pytorch_half_pixel:
    return out > 1.0 ? halfPixel : 0.0;
  case CoordinateMode::align_corners:
    return out == 1.0 ? 0.0 : x * (in - 1.0) / (out - 1.0);
  case CoordinateMode::asymmetric:
    return x / scale;
  case CoordinateMode::tf_half_pixel_for_nn:
    return (x + 0.5) / scale;
  case CoordinateMode::tf_crop_and_resize:
    return out > 1.0 ? roiStart * (in - 1.0) +
                           x * (roiEnd - roiStart) * (in - 1.0) / (out - 1.0)
                     : 0.5 * (roiStart + roiEnd) * (in - 1.0);
  }
  return 0.0;
}

/// Dim `d`'s map from `in` to `outSize` elements.
DimMap dimMap(ts::ResizeOp op, double scale, int64_t in, int64_t outSize,
              double roiStart, double roiEnd) {
  DimMap map;
  CoordinateMode mode = op.getCoordinateMode();
  bool crop = mode == CoordinateMode::tf_crop_and_resize;
  if (scale == 1.0 && in == outSize && !crop &&
      mode != CoordinateMode::tf_half_pixel_for_nn) {
    map.identity = true;
    map.index.assign(1, std::vector<int64_t>(outSize));
    for (int64_t o = 0; o < outSize; ++o)
      map.index[0][o] = o;
    map.weight.assign(1, std::vector<double>(outSize, 1.0));
    return map;
  }
  // The output length as scale * in, an integer when within f32 rounding
  // of one (as the CPU lowering does).
  double inF = double(in), out = scale * inF;
  double nearest = std::round(out);
  if (std::abs(out - nearest) <= 1e-6 * std::max(nearest, 1.0))
    out = nearest;
  size_t taps = op.getMode() == ts::ResizeMode::nearest  ? 1
                : op.getMode() == ts::ResizeMode::linear ? 2
                                                         : 4;
  map.index.assign(taps, std::vector<int64_t>(outSize));
  map.weight.assign(taps, std::vector<double>(outSize));
  auto clamp = [&](double p) {
    return std::min<int64_t>(std::max<int64_t>(int64_t(p), 0), in - 1);
  };
  for (int64_t o = 0; o < outSize; ++o) {
    double x = inputCoordinate(mode, double(o), scale, inF, out,
                               double(outSize), roiStart, roiEnd);
    bool outside = crop && (x < 0.0 || x > inF - 1.0);
    double low = std::floor(x), t = x - low;
    if (taps == 1) {
      double picked = low;
      switch (op.getNearestMode()) {
      case ts::ResizeNearestMode::round_prefer_floor:
        picked = t > 0.5 ? low + 1 : low;
        break;
      case ts::ResizeNearestMode::round_prefer_ceil:
        picked = t >= 0.5 ? low + 1 : low;
        break;
      case ts::ResizeNearestMode::floor:
        break;
      case ts::ResizeNearestMode::ceil:
        picked = std::ceil(x);
        break;
      }
      map.index[0][o] = outside ? -1 : clamp(picked);
      map.weight[0][o] = 1.0;
      continue;
    }
    std::vector<double> w =
        taps == 2 ? std::vector<double>{1.0 - t, t}
                  : cubicWeights(t, op.getCubicCoeffA().convertToDouble());
    int64_t first = taps == 2 ? 0 : -1;
    if (op.getExcludeOutside()) {
      double total = 0;
      for (size_t k = 0; k < taps; ++k) {
        double p = low + double(first + int64_t(k));
        if (p < 0.0 || p > inF - 1.0)
          w[k] = 0.0;
        total += w[k];
      }
      for (double &v : w)
        v /= total;
    }
    for (size_t k = 0; k < taps; ++k) {
      map.index[k][o] = outside ? -1 : clamp(low + double(first + int64_t(k)));
      map.weight[k][o] = outside ? 0.0 : w[k];
    }
  }
  return map;
}

/// A run of a dim's index map: outputs [start, start + n * r) read input
/// src + (j / r) * step at output start + j (or the fill value).
struct Segment {
  int64_t start, n, r, src, step;
  bool fill;
};

/// `index` as segments, as few as a greedy split gives: an integer
/// upsampling (or the identity) is one.
std::vector<Segment> segments(ArrayRef<int64_t> index) {
  std::vector<Segment> result;
  int64_t size = int64_t(index.size());
  for (int64_t a = 0; a < size;) {
    int64_t q = index[a], r = 1;
    while (a + r < size && index[a + r] == q)
      ++r;
    Segment s{a, 1, r, q, 0, q < 0};
    if (q >= 0 && a + r < size && index[a + r] >= 0) {
      s.step = index[a + r] - q;
      auto blockHolds = [&](int64_t j) {
        if (a + (j + 1) * r > size)
          return false;
        for (int64_t i = 0; i < r; ++i)
          if (index[a + j * r + i] != q + j * s.step)
            return false;
        return true;
      };
      while (blockHolds(s.n))
        ++s.n;
    }
    result.push_back(s);
    a += s.n * s.r;
  }
  return result;
}

} // namespace

/// Copies `src` (fp32, `inShape`) resampled by one-tap index `maps` (one
/// per dim) into `to` (`outShape`): a strided copy per product of the
/// maps' segments, from `fill` where a map says outside.
LogicalResult Lowering::resampleCopy(Operation *op, uint64_t src,
                                     ArrayRef<int64_t> inShape,
                                     ArrayRef<std::vector<int64_t>> maps,
                                     std::optional<uint64_t> fill, size_t to,
                                     ArrayRef<int64_t> outShape) {
  size_t rank = inShape.size();
  SmallVector<int64_t> inStrides = rowMajor(inShape),
                       outStrides = rowMajor(outShape);
  std::vector<std::vector<Segment>> perDim;
  size_t copies = 1;
  for (size_t d = 0; d < rank; ++d) {
    perDim.push_back(segments(maps[d]));
    copies *= perDim.back().size();
  }
  if (copies > 4096)
    return op->emitError()
           << "'" << op->getName() << "' resamples in a pattern of " << copies
           << " strided copies, more than the systolic lowering emits (4096)";
  SmallVector<size_t> at(rank, 0);
  for (size_t c = 0; c < copies; ++c) {
    // The c-th product of segments.
    size_t rest = c;
    for (size_t d = rank; d-- > 0;) {
      at[d] = rest % perDim[d].size();
      rest /= perDim[d].size();
    }
    bool fromFill = false;
    int64_t srcOffset = 0, dstOffset = 0;
    SmallVector<int64_t> shape, srcStrides, dstStrides;
    for (size_t d = 0; d < rank; ++d) {
      const Segment &s = perDim[d][at[d]];
      fromFill |= s.fill;
      srcOffset += s.src * inStrides[d];
      dstOffset += s.start * outStrides[d];
      shape.append({s.n, s.r});
      srcStrides.append({s.step * inStrides[d], 0});
      dstStrides.append({s.r * outStrides[d], outStrides[d]});
    }
    if (fromFill)
      for (int64_t &stride : srcStrides)
        stride = 0;
    // Unit dims dropped, neighbours that step as one merged.
    SmallVector<int64_t> dims, ss, ds;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 1)
        continue;
      if (!dims.empty() && ss.back() == srcStrides[i] * shape[i] &&
          ds.back() == dstStrides[i] * shape[i]) {
        dims.back() *= shape[i];
        ss.back() = srcStrides[i];
        ds.back() = dstStrides[i];
        continue;
      }
      dims.push_back(shape[i]);
      ss.push_back(srcStrides[i]);
      ds.push_back(dstStrides[i]);
    }
    if (dims.empty()) {
      dims.push_back(1);
      ss.push_back(0);
      ds.push_back(1);
    }
    // The innermost dim contiguous on one side at least: a dim read with
    // stride 1 (else one written with stride 1) moved last.
    auto contiguous = llvm::find(ss, 1);
    size_t i = contiguous != ss.end() ? size_t(contiguous - ss.begin())
                                      : size_t(llvm::find(ds, 1) - ds.begin());
    if (i < dims.size())
      for (SmallVector<int64_t> *v : {&dims, &ss, &ds}) {
        int64_t moved = (*v)[i];
        v->erase(v->begin() + i);
        v->push_back(moved);
      }
    uint64_t from = fromFill ? *fill : src + uint64_t(srcOffset) * 4;
    if (failed(copy(op, from, dims, ss, to,
                    uint64_t(dstOffset) *
                        uint64_t(sim::formatBytes(tensors[to].format)),
                    ds)))
      return failure();
  }
  return success();
}

/// tessera.resize with constant scales (and roi): nearest as copies;
/// linear and cubic as copies of each tap's neighbours and a weighted sum
/// on the vector unit, dim by dim.
LogicalResult Lowering::lowerResize(ts::ResizeOp op) {
  auto error = [&](const Twine &why) {
    op.emitError() << "'" << op->getName() << "' " << why;
    return failure();
  };
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  if (!in.hasStaticShape() || !type.hasStaticShape() ||
      !in.getElementType().isF32() || in.getRank() < 1)
    return error("runs on the systolic target over static f32 tensors only");
  int64_t rank = in.getRank();
  std::optional<std::vector<float>> scales = constantValues(op.getScales());
  if (!scales || int64_t(scales->size()) != rank)
    return error("needs constant scales, one per dim, on the systolic target");
  bool crop = op.getCoordinateMode() == CoordinateMode::tf_crop_and_resize;
  std::optional<std::vector<float>> roi;
  if (crop) {
    if (op.getRoi())
      roi = constantValues(op.getRoi());
    if (!roi || int64_t(roi->size()) != 2 * rank)
      return error("with tf_crop_and_resize needs a constant roi of two "
                   "values per dim on the systolic target");
  }
  std::vector<DimMap> maps;
  bool outside = false;
  for (int64_t d = 0; d < rank; ++d) {
    maps.push_back(dimMap(op, double((*scales)[d]), in.getDimSize(d),
                          type.getDimSize(d), roi ? (*roi)[d] : 0.0,
                          roi ? (*roi)[rank + d] : 0.0));
    outside |= llvm::is_contained(maps.back().index.front(), -1);
  }
  std::optional<uint64_t> src = fp32Source(op.getInput());
  if (!src)
    return error("reads a value the accelerator does not hold");
  std::string base = ts::onnxNodeName(op.getLoc());
  if (base.empty())
    base = "resize_" + std::to_string(tensors.size());
  float extrapolation = float(op.getExtrapolationValue().convertToDouble());
  auto f32 = Float32Type::get(op.getContext());

  if (op.getMode() == ts::ResizeMode::nearest) {
    std::optional<uint64_t> fill;
    if (outside)
      fill = tensors[place(base + "/extrapolation", Role::Constant,
                           sim::NumberFormat::F32, {1},
                           DenseElementsAttr::get(
                               RankedTensorType::get({1}, f32), extrapolation))]
                 .offset;
    std::vector<std::vector<int64_t>> index;
    size_t copies = 1, resized = 0;
    for (DimMap &map : maps) {
      index.push_back(map.index.front());
      copies *= segments(index.back()).size();
      resized += !map.identity;
    }
    if (copies <= 64 || resized < 2) {
      size_t to = placeResult(op, op.getResult());
      return resampleCopy(op, *src, in.getShape(), index, fill, to,
                          type.getShape());
    }
    // Irregular maps in several dims (align_corners, fractional scales):
    // a copy pass per resized dim from the last, through fp32 scratch, so
    // that the copies add up over the dims instead of multiplying.
    SmallVector<int64_t> shape(in.getShape());
    uint64_t current = *src;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (maps[d].identity)
        continue;
      --resized;
      SmallVector<int64_t> next(shape);
      next[d] = type.getDimSize(d);
      std::vector<std::vector<int64_t>> pass;
      for (int64_t j = 0; j < rank; ++j) {
        std::vector<int64_t> identity(static_cast<size_t>(shape[j]));
        for (int64_t o = 0; o < shape[j]; ++o)
          identity[o] = o;
        pass.push_back(j == d ? index[d] : identity);
      }
      size_t to = resized == 0 ? placeResult(op, op.getResult())
                               : place(base + "/partial", Role::Scratch,
                                       sim::NumberFormat::F32, next);
      if (failed(resampleCopy(op, current, shape, pass, fill, to, next)))
        return failure();
      current = tensors[to].offset;
      shape = next;
    }
    return success();
  }

  // Linear and cubic: outside the roi the taps weigh 0, which is the
  // extrapolation value only when that is 0.
  if (outside && extrapolation != 0.0f)
    return error("extrapolates with a non-zero value outside the roi, which "
                 "the systolic target does only for nearest resizing");
  using Shape = sim::VectorStep::Shape;
  SmallVector<int64_t> shape(in.getShape());
  uint64_t current = *src;
  SmallVector<int64_t> order;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!maps[d].identity)
      order.push_back(d);
  if (order.empty()) {
    // Every dim maps onto itself: a copy.
    size_t to = placeResult(op, op.getResult());
    SmallVector<int64_t> strides = rowMajor(shape);
    return copy(op, current, shape, strides, to, 0, strides);
  }
  for (auto [i, d] : llvm::enumerate(order)) {
    bool lastPass = i + 1 == order.size();
    const DimMap &map = maps[d];
    SmallVector<int64_t> next(shape);
    next[d] = type.getDimSize(d);
    // Per tap, the neighbours it reads along d.
    sim::VectorStep step;
    int64_t outer = 1, inner = 1;
    for (int64_t j = 0; j < rank; ++j)
      (j <= d ? outer : inner) *= next[j];
    bool alongColumns = d == rank - 1;
    step.rows = alongColumns ? outer / next[d] : outer;
    step.cols = alongColumns ? next[d] : inner;
    for (size_t k = 0; k < map.index.size(); ++k) {
      size_t tap =
          place(base + "/tap", Role::Scratch, sim::NumberFormat::F32, next);
      std::vector<std::vector<int64_t>> index;
      for (int64_t j = 0; j < rank; ++j) {
        std::vector<int64_t> identity(static_cast<size_t>(shape[j]));
        for (int64_t o = 0; o < shape[j]; ++o)
          identity[o] = o;
        index.push_back(j == d ? map.index[k] : identity);
      }
      // Outside the roi a tap reads any element (its weight is 0).
      for (int64_t &v : index[d])
        v = std::max<int64_t>(v, 0);
      if (failed(
              resampleCopy(op, current, shape, index, std::nullopt, tap, next)))
        return failure();
      // Its weights: a row of the columns, or one per row (repeated over
      // the dims before d).
      std::vector<float> weights;
      int64_t count = alongColumns ? step.cols : step.rows;
      for (int64_t r = 0; r < count; ++r)
        weights.push_back(float(map.weight[k][r % next[d]]));
      size_t w = place(
          base + "/weights", Role::Constant, sim::NumberFormat::F32, {count},
          DenseElementsAttr::get(RankedTensorType::get({count}, f32),
                                 ArrayRef<float>(weights)));
      int tapSlot = int(step.slots.size());
      step.slots.push_back({Shape::Full, tensors[tap].offset});
      step.slots.push_back(
          {alongColumns ? Shape::Row : Shape::Column, tensors[w].offset});
      if (k == 0) {
        // The sum's slot: the first tap times its weights.
        step.slots.push_back({Shape::Full, std::nullopt});
        step.ops.push_back(
            {sim::VectorFn::Mul, tapSlot + 2, tapSlot, tapSlot + 1, {}});
        step.output = tapSlot + 2;
      } else {
        step.ops.push_back(
            {sim::VectorFn::Mul, tapSlot, tapSlot, tapSlot + 1, {}});
        step.ops.push_back(
            {sim::VectorFn::Add, step.output, step.output, tapSlot, {}});
      }
    }
    if (lastPass)
      return finishVectorStep(op, step, step.output);
    size_t partial =
        place(base + "/partial", Role::Scratch, sim::NumberFormat::F32, next);
    step.out = tensors[partial].offset;
    if (auto why = sim::appendVectorStep(config, step, instructions))
      return error(*why);
    current = tensors[partial].offset;
    shape = next;
  }
  return success();
}

} // namespace tessera::systolic
