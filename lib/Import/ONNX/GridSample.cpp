//===- GridSample.cpp - ONNX GridSample as coordinate arithmetic and gathers ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// GridSample (2-D, as PyTorch's grid_sample defines it): each output
// position reads the input at the grid's normalized (x, y), unnormalized
// with or without align_corners, made to fit by the padding mode (zeros:
// taps outside weigh 0; border: clamped; reflection: mirrored), and
// interpolated from 1 (nearest), 4 (bilinear) or 16 (bicubic, A = -0.75)
// taps. The coordinates are elementwise tessera ops over [N, Ho, Wo]; each
// tap is a gather_nd (batch_dims 1) from the input viewed as [N, H, W, C].
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

namespace {
/// Elementwise helpers over [N, Ho, Wo] float tensors and scalars.
struct Ops {
  GraphImporter &im;
  Type ft;
  bool ok = true;

  Value check(Value v) {
    ok &= static_cast<bool>(v);
    return v;
  }
  Value c(double v) { return im.constantScalar(v, ft); }
  Value add(Value a, Value b) {
    return a && b ? check(im.inferred<ts::AddOp>(a, b)) : check({});
  }
  Value sub(Value a, Value b) {
    return a && b ? check(im.inferred<ts::SubOp>(a, b)) : check({});
  }
  Value mul(Value a, Value b) {
    return a && b ? check(im.inferred<ts::MulOp>(a, b)) : check({});
  }
  Value div(Value a, Value b) {
    return a && b ? check(im.inferred<ts::DivOp>(a, b)) : check({});
  }
  Value min(Value a, Value b) {
    return a && b ? check(im.inferred<ts::MinOp>(a, b)) : check({});
  }
  Value max(Value a, Value b) {
    return a && b ? check(im.inferred<ts::MaxOp>(a, b)) : check({});
  }
  Value floor(Value a) { return a ? im.create<ts::FloorOp>(a) : check({}); }
  Value round(Value a) { return a ? im.create<ts::RoundOp>(a) : check({}); }
  Value abs(Value a) { return a ? im.create<ts::AbsOp>(a) : check({}); }
  Value cmp(ts::CompareDirection d, Value a, Value b) {
    return a && b ? check(im.inferred<ts::CompareOp>(d, a, b)) : check({});
  }
  Value both(Value a, Value b) {
    return a && b ? check(im.inferred<ts::AndOp>(a, b)) : check({});
  }
  Value select(Value cond, Value a, Value b) {
    return cond && a && b ? check(im.inferred<ts::WhereOp>(cond, a, b))
                          : check({});
  }
  Value clamp(Value v, double low, double high) {
    return min(max(v, c(low)), c(high));
  }
};
} // namespace

/// PyTorch's reflect_coordinates: `v` mirrored into [low2 / 2, high2 / 2].
static Value reflect(Ops &o, Value v, double low2, double high2) {
  if (low2 == high2)
    return o.mul(v, o.c(0.0));
  double low = low2 / 2, span = (high2 - low2) / 2;
  Value in = o.abs(o.sub(v, o.c(low)));
  Value flips = o.floor(o.div(in, o.c(span)));
  Value extra = o.sub(in, o.mul(flips, o.c(span)));
  Value half = o.floor(o.div(flips, o.c(2.0)));
  Value even = o.cmp(ts::CompareDirection::eq, flips, o.mul(half, o.c(2.0)));
  return o.select(even, o.add(extra, o.c(low)),
                  o.add(o.sub(o.c(span), extra), o.c(low)));
}

/// A coordinate made to fit a dim of `size` by the padding mode.
static Value pad(Ops &o, Value v, StringRef mode, int64_t size,
                 bool alignCorners) {
  if (mode == "border")
    return o.clamp(v, 0, size - 1);
  if (mode == "reflection") {
    Value r = alignCorners ? reflect(o, v, 0, 2.0 * (size - 1))
                           : reflect(o, v, -1, 2.0 * size - 1);
    return o.clamp(r, 0, size - 1);
  }
  return v;
}

static LogicalResult convertGridSample(GraphImporter &im,
                                       const onnx::NodeProto &) {
  Value x = im.input(0), grid = im.input(1);
  if (!x || !grid)
    return failure();
  RankedTensorType type = tensorType(x), gridType = tensorType(grid);
  Type ft = type.getElementType();
  if (type.getRank() != 4 || gridType.getRank() != 4 ||
      gridType.getDimSize(3) != 2 || !type.hasStaticShape() ||
      !gridType.hasStaticShape() || !isa<FloatType>(ft) ||
      elementType(grid) != ft)
    return im.emitError() << "expects a static float input N x C x H x W and "
                             "a grid N x Ho x Wo x 2 of its type (2-D "
                             "sampling)";
  std::string mode = im.stringAttr("mode", "bilinear");
  std::string padding = im.stringAttr("padding_mode", "zeros");
  bool alignCorners = im.intAttr("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return im.emitError() << "mode '" << mode
                          << "' is not supported (bilinear, nearest and "
                             "bicubic are)";
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return im.emitError() << "padding_mode '" << padding
                          << "' is not supported (zeros, border and "
                             "reflection are)";
  int64_t n = type.getDimSize(0), ch = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  int64_t ho = gridType.getDimSize(1), wo = gridType.getDimSize(2);
  Ops o{im, ft};
  Builder b(&im.context());
  auto coordType = RankedTensorType::get({n, ho, wo}, ft);
  // grid[..., 0] is x (along W), grid[..., 1] is y (along H).
  auto component = [&](int64_t i) -> Value {
    Value s = im.inferred<ts::SliceOp>(
        grid, b.getDenseI64ArrayAttr({i}), b.getDenseI64ArrayAttr({i + 1}),
        b.getDenseI64ArrayAttr({3}), DenseI64ArrayAttr());
    return s ? im.create<ts::ReshapeOp>(coordType, s, Value()) : Value();
  };
  auto unnormalize = [&](Value g, int64_t size) {
    return alignCorners
               ? o.mul(o.add(g, o.c(1.0)), o.c((size - 1) / 2.0))
               : o.div(o.sub(o.mul(o.add(g, o.c(1.0)), o.c(size)), o.c(1.0)),
                       o.c(2.0));
  };
  Value gx = unnormalize(component(0), w), gy = unnormalize(component(1), h);
  if (!o.ok)
    return failure();

  // The input as [N, H, W, C] for gather_nd over (y, x) with batch dim N.
  Value table = im.inferred<ts::TransposeOp>(x, ArrayRef<int64_t>{0, 2, 3, 1});
  Type i64 = b.getI64Type();
  auto tapType = RankedTensorType::get({n, ho, wo, 1}, i64);
  // The value at integer coordinates (iy, ix) (float tensors), 0 outside
  // the input; as [N, Ho, Wo, C].
  auto tap = [&](Value iy, Value ix) -> Value {
    Value inside = o.both(
        o.both(o.cmp(ts::CompareDirection::ge, ix, o.c(0)),
               o.cmp(ts::CompareDirection::le, ix, o.c(w - 1))),
        o.both(o.cmp(ts::CompareDirection::ge, iy, o.c(0)),
               o.cmp(ts::CompareDirection::le, iy, o.c(h - 1))));
    Value cx = o.clamp(ix, 0, w - 1), cy = o.clamp(iy, 0, h - 1);
    if (!o.ok)
      return {};
    auto asIndex = [&](Value v) -> Value {
      Value i = im.create<ts::CastOp>(
          RankedTensorType::get({n, ho, wo}, i64), v);
      return im.create<ts::ReshapeOp>(tapType, i, Value());
    };
    Value idx = im.inferred<ts::ConcatOp>(ValueRange{asIndex(cy), asIndex(cx)},
                                          3);
    Value picked =
        idx ? im.inferred<ts::GatherNDOp>(table, idx, 1) : Value();
    Value mask = im.create<ts::CastOp>(coordType, inside);
    if (!picked)
      return o.check({});
    return o.mul(picked, im.create<ts::ReshapeOp>(
                             RankedTensorType::get({n, ho, wo, 1}, ft), mask,
                             Value()));
  };
  auto weighted = [&](Value value, Value weight) -> Value {
    if (!value || !weight)
      return o.check({});
    return o.mul(value, im.create<ts::ReshapeOp>(
                            RankedTensorType::get({n, ho, wo, 1}, ft), weight,
                            Value()));
  };

  Value sum;
  if (mode == "nearest") {
    Value px = pad(o, gx, padding, w, alignCorners);
    Value py = pad(o, gy, padding, h, alignCorners);
    sum = tap(o.round(py), o.round(px));
  } else if (mode == "bilinear") {
    Value px = pad(o, gx, padding, w, alignCorners);
    Value py = pad(o, gy, padding, h, alignCorners);
    Value x0 = o.floor(px), y0 = o.floor(py);
    Value tx = o.sub(px, x0), ty = o.sub(py, y0);
    Value x1 = o.add(x0, o.c(1.0)), y1 = o.add(y0, o.c(1.0));
    Value ux = o.sub(o.c(1.0), tx), uy = o.sub(o.c(1.0), ty);
    for (auto [yy, wy] : {std::pair{y0, uy}, std::pair{y1, ty}})
      for (auto [xx, wx] : {std::pair{x0, ux}, std::pair{x1, tx}}) {
        Value term = weighted(tap(yy, xx), o.mul(wy, wx));
        sum = sum ? o.add(sum, term) : term;
      }
  } else {
    // Bicubic: the padding applies to each tap's index.
    Value x0 = o.floor(gx), y0 = o.floor(gy);
    Value tx = o.sub(gx, x0), ty = o.sub(gy, y0);
    const double a = -0.75;
    auto weights = [&](Value t) {
      auto near = [&](Value s) { // (A + 2)s^3 - (A + 3)s^2 + 1
        return o.add(o.mul(o.mul(o.sub(o.mul(o.c(a + 2), s), o.c(a + 3)), s),
                           s),
                     o.c(1.0));
      };
      auto far = [&](Value s) { // A s^3 - 5A s^2 + 8A s - 4A
        return o.sub(
            o.mul(o.add(o.mul(o.sub(o.mul(o.c(a), s), o.c(5 * a)), s),
                        o.c(8 * a)),
                  s),
            o.c(4 * a));
      };
      Value rest = o.sub(o.c(1.0), t);
      return SmallVector<Value>{far(o.add(t, o.c(1.0))), near(t), near(rest),
                                far(o.add(rest, o.c(1.0)))};
    };
    SmallVector<Value> wxs = weights(tx), wys = weights(ty);
    for (int64_t i = 0; i < 4; ++i) {
      Value yy = pad(o, o.add(y0, o.c(i - 1.0)), padding, h, alignCorners);
      for (int64_t j = 0; j < 4; ++j) {
        Value xx = pad(o, o.add(x0, o.c(j - 1.0)), padding, w, alignCorners);
        Value term = weighted(tap(yy, xx), o.mul(wys[i], wxs[j]));
        sum = sum ? o.add(sum, term) : term;
      }
    }
  }
  if (!o.ok || !sum)
    return failure();
  (void)ch;
  return im.setOutput(
      0, im.inferred<ts::TransposeOp>(sum, ArrayRef<int64_t>{0, 3, 1, 2}));
}

void registerGridSampleConverters(ConverterRegistry &r) {
  r["GridSample"] = convertGridSample;
}

} // namespace tessera::onnx_import
