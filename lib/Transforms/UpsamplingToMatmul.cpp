//===- UpsamplingToMatmul.cpp - stride-sized transposed convs as one GEMM -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The importer writes ONNX's ConvTranspose as a convolution over the input
// spread with zeros. When the kernel equals the stride (a learned 2 x 2
// upsampling at stride 2, as text detectors and U-Nets write it) the
// windows do not overlap and 3 of every 4 products that convolution
// computes are of inserted zeros; its im2col copies the spread input too.
// Here it becomes one matmul of the input's pixels by the filter, whose
// columns a transpose interleaves into the output's blocks:
//
//   pixels = transpose(x, [0, 2, 3, 1])                  [N, H, W, C]
//   filter = reshape(transpose(w, [0, 3, 2, 1]), [C, sw * sh * F])
//                                                        (w: [C, F, sh, sw])
//   blocks = reshape(pixels @ filter, [N, H, W*sw, sh, F])
//   y      = reshape(transpose(blocks, [0, 4, 1, 3, 2]), [N, F, H*sh, W*sw])
//            + bias as [1, F, 1, 1]
//
// The columns in the order (b, a, f) make the output's rows, W*sw values
// of one filter, a row of the blocks: the transpose moves single elements
// (at symbolic sizes, in the CPU's 16 x 16 block transposes), not runs of
// sw of them (the order (f, a, b) left every output row a gather of
// sw-element runs: 4.7% of PaddleOCR's detector).
// (w is recovered from the convolution's transposed, flipped filter by the
// inverse transpose and flip, which fold for a constant filter).
//
//===----------------------------------------------------------------------===//
#include "tessera/Transforms/Passes.h"
#include "tessera/Transforms/Upsampling.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tessera {
#define GEN_PASS_DEF_UPSAMPLINGTOMATMULPASS
#include "tessera/Transforms/Passes.h.inc"
} // namespace tessera

using namespace mlir;
using namespace mlir::tessera;

namespace {

/// The entries of an integer constant, or nothing.
std::optional<SmallVector<int64_t>> constantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return llvm::to_vector(llvm::map_range(
      attr.getValues<APInt>(), [](const APInt &v) { return v.getSExtValue(); }));
}

/// Whether `shape` is the importer's run-time shape of the spread input:
/// shape(x) * [1, 1, sh, sw].
bool isSpreadShape(Value shape, Value x, int64_t sh, int64_t sw) {
  auto mul = shape.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto of = a.getDefiningOp<ShapeOp>();
    std::optional<SmallVector<int64_t>> factors = constantInts(b);
    if (of && of.getInput() == x && factors &&
        *factors == SmallVector<int64_t>{1, 1, sh, sw})
      return true;
  }
  return false;
}

/// `size` * `by`, dynamic when `size` is.
int64_t times(int64_t size, int64_t by) {
  return ShapedType::isDynamic(size) ? size : size * by;
}

void rewrite(OpBuilder &b, Conv2dOp conv,
             const ::tessera::UpsamplingConvolution &match) {
  Location loc = conv.getLoc();
  Value x = match.input;
  auto xType = cast<RankedTensorType>(x.getType());
  Type et = xType.getElementType();
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1),
          h = xType.getDimSize(2), w = xType.getDimSize(3);
  int64_t sh = match.sh, sw = match.sw;
  auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t f = filterType.getDimSize(0), columns = f * sh * sw;
  auto tensor = [&](ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  };
  auto i64 = b.getI64Type();
  auto ints = [&](ArrayRef<int64_t> values) -> Value {
    auto type = tensor({static_cast<int64_t>(values.size())}, i64);
    return ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, values));
  };

  // The filter back in ConvTranspose's layout, [C, F, sh, sw] (the
  // importer's transpose when the flip is its own, else unflipped and
  // transposed back), then [C, F*sh*sw].
  SmallVector<int64_t> flipStarts = {-1, -1}, flipEnds = {-sh - 1, -sw - 1},
                       flipAxes = {2, 3}, flipSteps = {-1, -1},
                       swap = {1, 0, 2, 3};
  Value channelsFirst;
  auto flip = conv.getFilter().getDefiningOp<SliceOp>();
  auto transposed = flip ? flip.getInput().getDefiningOp<TransposeOp>()
                         : TransposeOp();
  if (transposed && flip.getStarts() == ArrayRef<int64_t>(flipStarts) &&
      flip.getEnds() == ArrayRef<int64_t>(flipEnds) && flip.getAxes() &&
      *flip.getAxes() == ArrayRef<int64_t>(flipAxes) && flip.getSteps() &&
      *flip.getSteps() == ArrayRef<int64_t>(flipSteps) &&
      transposed.getPermutation() == ArrayRef<int64_t>(swap)) {
    channelsFirst = transposed.getInput();
  } else {
    Value unflipped = SliceOp::create(
        b, loc, filterType, conv.getFilter(),
        b.getDenseI64ArrayAttr(flipStarts), b.getDenseI64ArrayAttr(flipEnds),
        b.getDenseI64ArrayAttr(flipAxes), b.getDenseI64ArrayAttr(flipSteps));
    channelsFirst = TransposeOp::create(b, loc, tensor({c, f, sh, sw}, et),
                                        unflipped,
                                        b.getDenseI64ArrayAttr(swap));
  }
  Value columnsLast =
      TransposeOp::create(b, loc, tensor({c, sw, sh, f}, et), channelsFirst,
                          b.getDenseI64ArrayAttr({0, 3, 2, 1}));
  Value filter =
      ReshapeOp::create(b, loc, tensor({c, columns}, et), columnsLast, Value());
  Value pixels = TransposeOp::create(b, loc, tensor({n, h, w, c}, et), x,
                                     b.getDenseI64ArrayAttr({0, 2, 3, 1}));
  Value product =
      MatmulOp::create(b, loc, tensor({n, h, w, columns}, et), pixels, filter,
                       false, false, APFloat(1.0f));
  // [N, H, W*sw, sh, F]: ONNX's 0 keeps the product's (dynamic) dims,
  // -1 infers W*sw.
  bool dynamic = !xType.hasStaticShape();
  Value blocks =
      ReshapeOp::create(b, loc, tensor({n, h, times(w, sw), sh, f}, et),
                        product, dynamic ? ints({0, 0, -1, sh, f}) : Value());
  Value moved =
      TransposeOp::create(b, loc, tensor({n, f, h, sh, times(w, sw)}, et),
                          blocks, b.getDenseI64ArrayAttr({0, 4, 1, 3, 2}));
  // [N, F, H*sh, W*sw]: shape(x) * [1, 0, sh, sw] + [0, F, 0, 0].
  Value outShape;
  if (dynamic) {
    auto shapeType = tensor({4}, i64);
    Value shape = ShapeOp::create(b, loc, shapeType, x);
    outShape = AddOp::create(
        b, loc, shapeType,
        MulOp::create(b, loc, shapeType, shape, ints({1, 0, sh, sw})),
        ints({0, f, 0, 0}));
  }
  Value y = ReshapeOp::create(
      b, loc, tensor({n, f, times(h, sh), times(w, sw)}, et), moved, outShape);
  if (Value bias = conv.getBias()) {
    Value perFilter =
        ReshapeOp::create(b, loc, tensor({1, f, 1, 1}, et), bias, Value());
    y = AddOp::create(b, loc, y.getType(), y, perFilter);
  }
  // The convolution, and what computed only its input and filter.
  llvm::SetVector<Operation *> dead;
  dead.insert(conv);
  conv.getResult().replaceAllUsesWith(y);
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        dead.insert(producer);
    op->erase();
  }
}

struct UpsamplingToMatmulPass
    : ::tessera::impl::UpsamplingToMatmulPassBase<UpsamplingToMatmulPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Conv2dOp, ::tessera::UpsamplingConvolution>> found;
    getOperation().walk([&](Conv2dOp conv) {
      // (Not through a cast: the matmul would drop it.)
      if (!conv.getInput().getDefiningOp<ReshapeOp>())
        return;
      if (auto match = ::tessera::matchUpsamplingConvolution(conv))
        found.emplace_back(conv, *match);
    });
    OpBuilder b(&getContext());
    for (auto &[conv, match] : found) {
      b.setInsertionPoint(conv);
      rewrite(b, conv, match);
    }
  }
};

} // namespace

namespace tessera {
std::optional<UpsamplingConvolution>
matchUpsamplingConvolution(Conv2dOp conv) {
  if (conv.getGroup() != 1 || conv.getStrides() != ArrayRef<int64_t>{1, 1} ||
      conv.getDilations() != ArrayRef<int64_t>{1, 1})
    return std::nullopt;
  // (A cast to a narrower type may stand between the spread input and
  // the convolution.)
  Value input = conv.getInput();
  if (auto cast = input.getDefiningOp<CastOp>())
    input = cast.getInput();
  auto spread = input.getDefiningOp<ReshapeOp>();
  auto pad = spread ? spread.getInput().getDefiningOp<PadOp>() : nullptr;
  auto unit = pad ? pad.getInput().getDefiningOp<ReshapeOp>() : nullptr;
  if (!unit || unit.getShape() || pad.getMode() != PadMode::constant ||
      pad.getValue().convertToDouble() != 0.0)
    return std::nullopt;
  Value x = unit.getInput();
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  auto padded = cast<RankedTensorType>(pad.getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
  auto type = cast<RankedTensorType>(conv.getType());
  if (!xType || xType.getRank() != 4 || padded.getRank() != 6 ||
      xType.isDynamicDim(1) || !filterType || !filterType.hasStaticShape() ||
      filterType.getRank() != 4)
    return std::nullopt;
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1),
          h = xType.getDimSize(2), w = xType.getDimSize(3);
  int64_t sh = padded.getDimSize(3), sw = padded.getDimSize(5);
  if (ShapedType::isDynamic(sh) || ShapedType::isDynamic(sw) ||
      (sh == 1 && sw == 1))
    return std::nullopt;
  SmallVector<int64_t> pads(12, 0);
  pads[6 + 3] = sh - 1;
  pads[6 + 5] = sw - 1;
  int64_t f = filterType.getDimSize(0);
  SmallVector<int64_t> spreadShape = {n, c, times(h, sh), times(w, sw)};
  if (unit.getType().getShape() != ArrayRef<int64_t>{n, c, h, 1, w, 1} ||
      pad.getPads() != ArrayRef<int64_t>(pads) ||
      spread.getType().getShape() != ArrayRef<int64_t>(spreadShape) ||
      filterType.getShape() != ArrayRef<int64_t>{f, c, sh, sw} ||
      conv.getPads() != ArrayRef<int64_t>{sh - 1, sw - 1, 0, 0} ||
      type.getShape() != ArrayRef<int64_t>{n, f, spreadShape[2],
                                           spreadShape[3]})
    return std::nullopt;
  // With dynamic dims the spread's run-time shape must be the input's
  // times the strides (else it could regroup the elements).
  if (Value shape = spread.getShape()) {
    if (!isSpreadShape(shape, x, sh, sw))
      return std::nullopt;
  } else if (!spread.getType().hasStaticShape()) {
    return std::nullopt;
  }
  if (Value bias = conv.getBias()) {
    auto biasType = dyn_cast<RankedTensorType>(bias.getType());
    if (!biasType || biasType.getShape() != ArrayRef<int64_t>{f})
      return std::nullopt;
  }
  return UpsamplingConvolution{x, sh, sw, {unit, pad, spread}};
}
} // namespace tessera
