//===- Contraction.cpp - matmul, conv2d and attention to linalg -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Utils.h"

#include "tessera/Support/Numerics.h"
#include "tessera/Transforms/Precision.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

namespace tessera::to_linalg {
namespace {

namespace ts = mlir::tessera;

/// tessera.matmul as one contraction generic: loops over the result's dims
/// plus the contracted one; batch dims broadcast through constant-0 map
/// entries, transposes swap the operands' last two map entries, rank-1
/// operands read only the contracted dim. Products accumulate in the
/// result's element type (operands are widened first), except that a
/// bf16, f16 or fp8 result accumulates in f32 and is rounded once at the end,
/// as frameworks and tensor cores do (summing hundreds of products in
/// 8 or 11 bits would lose most of them).
///
/// The constant fp8 `operand` decoded to a bf16 constant of `type` (exact:
/// every E4M3FN and E5M2 value is a bf16 value), so that a weight is
/// decoded once, when compiling, and the backend packs it as any bf16
/// weight; null when `operand` is not a constant.
Value decodedFp8Constant(OpBuilder &b, Location loc, Value operand,
                         RankedTensorType type) {
  ElementsAttr attr;
  if (!matchPattern(operand, m_Constant(&attr)))
    return {};
  ArrayRef<char> bytes;
  bool splat = false;
  std::string name = "fp8_bf16";
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    bytes = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      bytes = blob->getData();
    name = (resource.getRawHandle().getKey() + "_bf16").str();
  }
  int64_t elements = type.getNumElements();
  if (bytes.empty() || (!splat && int64_t(bytes.size()) != elements))
    return {};
  // Each of the 256 codes' bf16 bits (the numerics library's decoding).
  bool e4m3 = isa<Float8E4M3FNType>(getElementTypeOrSelf(operand.getType()));
  uint16_t decoded[256];
  for (unsigned code = 0; code < 256; ++code)
    decoded[code] = ::tessera::numerics::toBF16(
        e4m3 ? ::tessera::numerics::fromF8E4M3FN(code)
             : ::tessera::numerics::fromF8E5M2(code));
  std::vector<uint16_t> values(splat ? 1 : elements);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = decoded[static_cast<uint8_t>(bytes[i])];
  ArrayRef<char> raw(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(uint16_t));
  ElementsAttr result;
  if (splat || elements <= 4096)
    result = DenseElementsAttr::getFromRawBuffer(type, raw);
  else
    result = DenseResourceElementsAttr::get(
        type, name,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, alignof(uint16_t)));
  return arith::ConstantOp::create(b, loc, result);
}

/// fp8 operands are decoded to bf16 first (constants when compiling), or,
/// with `fp8Operands` (a backend whose tensor cores read fp8), stay fp8 and
/// are widened by arith.extf in the body.
struct MatmulLowering : OpRewritePattern<ts::MatmulOp> {
  MatmulLowering(MLIRContext *ctx, bool fp8Operands)
      : OpRewritePattern(ctx), fp8Operands(fp8Operands) {
    // A vector lhs becomes a matmul of one row, which this lowers too.
    setHasBoundedRewriteRecursion();
  }
  bool fp8Operands;

  LogicalResult matchAndRewrite(ts::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    // A vector lhs ([K] x [.., K, N] -> [.., N]) is one row: it becomes
    // [1, K] x [.., K, N] -> [.., 1, N] and is reshaped back, so that the
    // backends tile it as a GEMM of one row (a vector times a matrix as one
    // loop nest would add every product into the result in memory).
    auto vectorType = cast<RankedTensorType>(op.getLhs().getType());
    if (vectorType.getRank() == 1 &&
        cast<RankedTensorType>(op.getRhs().getType()).getRank() >= 2) {
      int64_t rank = resultType.getRank();
      Value row = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({1, vectorType.getDimSize(0)},
                                vectorType.getElementType()),
          op.getLhs(), ArrayRef<ReassociationIndices>{{0, 1}});
      SmallVector<int64_t> shape(resultType.getShape());
      shape.insert(shape.end() - 1, 1);
      auto product = cast<ts::MatmulOp>(rewriter.clone(*op));
      product.setTransposeA(false);
      product->setOperand(0, row);
      product.getResult().setType(resultType.clone(shape));
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i + 1 < rank; ++i)
        groups.push_back({i});
      groups.push_back({rank - 1, rank});
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
          op, resultType, product.getResult(), groups);
      return success();
    }
    // Transposed operands are transposed first (a linalg.transpose, which
    // the backend packs like any other operand: a transposed constant
    // weight is still packed at compile time), so that the contraction
    // always reads rows of the lhs and of the rhs contiguously.
    auto materialize = [&](Value operand, bool transposed) -> Value {
      auto type = cast<RankedTensorType>(operand.getType());
      // fp8 operands are decoded to bf16 first, exactly (every fp8 value
      // is a bf16 value): the GEMM then reads bf16.
      if (!fp8Operands &&
          isa<Float8E4M3FNType, Float8E5M2Type>(type.getElementType())) {
        type = type.clone(rewriter.getBF16Type());
        if (Value constant = decodedFp8Constant(rewriter, loc, operand, type))
          operand = constant;
        else
          operand = buildElementwise(
              rewriter, loc, type, {operand},
              [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
                return castScalar(b, nloc, args[0], b.getBF16Type());
              });
      }
      if (!transposed || type.getRank() < 2)
        return operand;
      int64_t rank = type.getRank();
      SmallVector<int64_t> permutation =
          llvm::to_vector(llvm::seq<int64_t>(0, rank));
      std::swap(permutation[rank - 2], permutation[rank - 1]);
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, operand);
      std::swap(sizes[rank - 2], sizes[rank - 1]);
      Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                           type.getElementType());
      return linalg::TransposeOp::create(rewriter, loc, operand, init,
                                         permutation)
          ->getResult(0);
    };
    Value lhs = materialize(op.getLhs(), op.getTransposeA());
    Value rhs = materialize(op.getRhs(), op.getTransposeB());
    bool transposeA = op.getTransposeA() &&
                      cast<RankedTensorType>(lhs.getType()).getRank() < 2;
    bool transposeB = op.getTransposeB() &&
                      cast<RankedTensorType>(rhs.getType()).getRank() < 2;
    RankedTensorType lhsType = cast<RankedTensorType>(lhs.getType());
    RankedTensorType rhsType = cast<RankedTensorType>(rhs.getType());
    int64_t rank = resultType.getRank();
    bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
    int64_t batch = rank - (lhsVector ? 0 : 1) - (rhsVector ? 0 : 1);
    AffineExpr k = getAffineDimExpr(rank, ctx);
    AffineExpr m = getAffineDimExpr(batch, ctx);
    AffineExpr n = getAffineDimExpr(rank - 1, ctx);

    // Dynamic result dims: batch dims from whichever operand has them,
    // rows from lhs, columns from rhs.
    SmallVector<Value> dynamicSizes;
    auto operandMap = [&](Value operand, RankedTensorType type, bool vector,
                          bool transposed, AffineExpr outer,
                          bool outerFirst) {
      if (vector)
        return AffineMap::get(rank + 1, 0, {k}, ctx);
      SmallVector<AffineExpr> exprs;
      int64_t operandBatch = type.getRank() - 2;
      for (int64_t j = 0; j < operandBatch; ++j) {
        int64_t resultDim = batch - operandBatch + j;
        bool stretched = type.getDimSize(j) == 1 &&
                         resultType.getDimSize(resultDim) != 1;
        exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                                  : getAffineDimExpr(resultDim, ctx));
      }
      bool outerAtFront = outerFirst != transposed;
      exprs.push_back(outerAtFront ? outer : k);
      exprs.push_back(outerAtFront ? k : outer);
      return AffineMap::get(rank + 1, 0, exprs, ctx);
    };
    AffineMap lhsMap = operandMap(lhs, lhsType, lhsVector, transposeA, m,
                                  /*outerFirst=*/true);
    AffineMap rhsMap = operandMap(rhs, rhsType, rhsVector, transposeB, n,
                                  /*outerFirst=*/false);
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < rank; ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    AffineMap outMap = AffineMap::get(rank + 1, 0, outExprs, ctx);

    for (int64_t i = 0; i < rank; ++i) {
      if (!resultType.isDynamicDim(i))
        continue;
      // Find an operand dim that the map sends to loop dim i.
      Value size;
      for (auto [operand, map] :
           {std::pair{lhs, lhsMap}, std::pair{rhs, rhsMap}}) {
        for (auto [j, expr] : llvm::enumerate(map.getResults())) {
          auto dim = dyn_cast<AffineDimExpr>(expr);
          if (!size && dim && dim.getPosition() == i)
            size = linalg::createOrFoldDimOp(rewriter, loc, operand, j);
        }
      }
      dynamicSizes.push_back(size);
    }

    Type accType = resultType.getElementType();
    if (isa<BFloat16Type, Float16Type, Float8E4M3FNType, Float8E5M2Type>(
            accType))
      accType = rewriter.getF32Type();
    RankedTensorType accTensorType = resultType.clone(accType);
    Value init = emptyTensor(rewriter, loc, accTensorType, dynamicSizes);
    Value zero = scalarConstant(rewriter, loc, accType, 0.0);
    Value filled = linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accTensorType, ValueRange{lhs, rhs}, filled,
        ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          auto widen = [&](Value v) -> Value {
            if (isa<Float8E4M3FNType, Float8E5M2Type>(v.getType()))
              return arith::ExtFOp::create(b, nloc, accType, v);
            return castScalar(b, nloc, v, accType);
          };
          Value a = widen(args[0]);
          Value c = widen(args[1]);
          linalg::YieldOp::create(
              b, nloc, addScalar(b, nloc, args[2], mulScalar(b, nloc, a, c)));
        });
    // Loop order [batch..., rows, k, columns]: the innermost loop then walks
    // rhs and the result contiguously (row-major), which vectorizes.
    if (!rhsVector && rank >= 1) {
      SmallVector<unsigned> order =
          llvm::to_vector(llvm::seq<unsigned>(0, rank + 1));
      std::swap(order[rank - 1], order[rank]);
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (succeeded(interchanged))
        generic = *interchanged;
    }
    Value product = generic.getResult(0);
    double alpha = op.getAlpha().convertToDouble();
    if (alpha != 1.0)
      product = buildElementwise(
          rewriter, loc, accTensorType, product,
          [&](OpBuilder &b, Location nloc, ValueRange args) {
            return mulScalar(b, nloc, args[0],
                             scalarConstant(b, nloc, accType, alpha));
          });
    if (accTensorType != resultType)
      product = buildElementwise(
          rewriter, loc, resultType, product,
          [&](OpBuilder &b, Location nloc, ValueRange args) {
            return castScalar(b, nloc, args[0], resultType.getElementType());
          });
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// A depthwise convolution (one input channel and one filter per group):
/// out[n, c, y, x] = sum over the window's taps (i, j) of
/// in[n, c, y * sh + i * dh, x * sw + j * dw] * w[c, 0, i, j], built as one
/// elementwise op over the output whose operands are, per tap, the input
/// shifted by the tap (a strided slice, a view) and the tap's weight per
/// channel. It vectorizes along the output's rows like any elementwise op,
/// with no loop over the window and each output written once. A stride
/// along the rows of at most `maxWindowStride` (what the target reads in
/// vector steps, every stride-th element) is read at the stride by each
/// tap. A wider one would make every tap's read a gather (one scalar load
/// per lane): the columns are computed at stride 1, with contiguous reads,
/// and every `stride`-th one taken afterwards (sw times the multiply-adds,
/// one strided read per output instead of one per tap).
Value depthwiseConvolution(OpBuilder &b, Location loc, Value input,
                           Value filter, RankedTensorType resultType,
                           ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations,
                           ArrayRef<OpFoldResult> outSizes,
                           int64_t maxWindowStride) {
  RankedTensorType finalType = resultType;
  bool subsample = strides[1] > maxWindowStride;
  // The output's sizes; when subsampling, the columns at stride 1:
  // (out - 1) * stride + 1.
  SmallVector<OpFoldResult> sizes(outSizes);
  if (subsample) {
    SmallVector<int64_t> shape(resultType.getShape());
    sizes[3] = strideOneColumns(b, loc, outSizes[3], strides[1]);
    if (!resultType.isDynamicDim(3))
      shape[3] = *getConstantIntValue(sizes[3]);
    resultType = resultType.clone(shape);
  }
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < 4; ++d)
    if (resultType.isDynamicDim(d))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc,
                                                             sizes[d]));
  auto filterType = cast<RankedTensorType>(filter.getType());
  Type elementType = resultType.getElementType();
  int64_t channels = filterType.getDimSize(0);
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  Value weights = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({channels, kh * kw}, elementType), filter,
      SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
  SmallVector<OpFoldResult> sliceStrides = {
      b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(strides[0]),
      b.getIndexAttr(subsample ? 1 : strides[1])};
  auto tapType = RankedTensorType::get({channels}, elementType);
  SmallVector<Value> shifted, taps;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      SmallVector<OpFoldResult> offsets = {
          b.getIndexAttr(0), b.getIndexAttr(0),
          b.getIndexAttr(i * dilations[0]), b.getIndexAttr(j * dilations[1])};
      shifted.push_back(tensor::ExtractSliceOp::create(b, loc, input, offsets,
                                                       sizes, sliceStrides));
      taps.push_back(tensor::ExtractSliceOp::create(
          b, loc, tapType, weights,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(i * kw + j)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(channels), b.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}));
    }
  MLIRContext *ctx = b.getContext();
  AffineMap identity = b.getMultiDimIdentityMap(4);
  AffineMap channel = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
  SmallVector<AffineMap> maps(shifted.size(), identity);
  maps.append(taps.size(), channel);
  maps.push_back(identity);
  SmallVector<Value> operands(shifted);
  operands.append(taps);
  int64_t count = shifted.size();
  Value init = emptyTensor(b, loc, resultType, dynamicSizes);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, operands, init, maps,
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // Float taps multiply-add with contraction allowed, so that each
        // is one fused multiply-add (as a GEMM's are), not a multiply and
        // an add.
        auto contract = arith::FastMathFlags::contract;
        auto multiplyAdd = [&](Value sum, Value x, Value w) -> Value {
          if (!isa<FloatType>(x.getType()))
            return sum ? addScalar(nb, nloc, sum, mulScalar(nb, nloc, x, w))
                       : mulScalar(nb, nloc, x, w);
          Value product = arith::MulFOp::create(nb, nloc, x, w, contract);
          return sum ? arith::AddFOp::create(nb, nloc, sum, product, contract)
                           .getResult()
                     : product;
        };
        Value sum;
        for (int64_t t = 0; t < count; ++t)
          sum = multiplyAdd(sum, args[t], args[count + t]);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  if (!subsample)
    return generic.getResult(0);
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> every = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1),
                                     b.getIndexAttr(strides[1])};
  sizes[3] = outSizes[3];
  return tensor::ExtractSliceOp::create(b, loc, finalType, generic.getResult(0),
                                        offsets, sizes, every);
}

/// conv2d: zero padding, linalg.conv_2d_nchw_fchw (depthwise: see
/// depthwiseConvolution; with other groups, linalg.conv_2d_ngchw_gfchw on
/// the channels split into groups), then the bias.
struct Conv2dLowering : OpRewritePattern<ts::Conv2dOp> {
  Conv2dLowering(MLIRContext *context, int64_t maxWindowStride)
      : OpRewritePattern(context), maxWindowStride(maxWindowStride) {}

  LogicalResult matchAndRewrite(ts::Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    int64_t group = op.getGroup();
    auto filterType = cast<RankedTensorType>(op.getFilter().getType());
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    if (group != 1 && (inType.isDynamicDim(1) || filterType.isDynamicDim(0)))
      return rewriter.notifyMatchFailure(
          op, "grouped convolution with a dynamic channel or filter count");
    if ((resultType.isDynamicDim(2) || resultType.isDynamicDim(3)) &&
        (filterType.isDynamicDim(2) || filterType.isDynamicDim(3)))
      return rewriter.notifyMatchFailure(
          op, "convolution with dynamic spatial dims and a dynamic window");
    Value input = op.getInput();
    ArrayRef<int64_t> pads = op.getPads();
    // The result's sizes: batch from the input, filters from the filter,
    // spatial dims from the input's at run time when they are dynamic.
    SmallVector<OpFoldResult> outSizes;
    for (int64_t d = 0; d < 4; ++d) {
      if (!resultType.isDynamicDim(d)) {
        outSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
      } else if (d < 2) {
        outSizes.push_back(linalg::createOrFoldDimOp(
            rewriter, loc, d == 0 ? input : op.getFilter(), 0));
      } else {
        int64_t i = d - 2;
        outSizes.push_back(windowOutputSize(
            rewriter, loc, linalg::createOrFoldDimOp(rewriter, loc, input, d),
            filterType.getDimSize(d), op.getStrides()[i], pads[i],
            pads[2 + i], op.getDilations()[i], /*ceilMode=*/false));
      }
    }
    // A bf16 or f16 convolution accumulates in f32 and rounds its result
    // once (as matmuls do): the products read the narrow input and filter.
    RankedTensorType narrowType = resultType;
    bool narrow = isa<BFloat16Type, Float16Type>(resultType.getElementType());
    if (narrow)
      resultType = resultType.clone(rewriter.getF32Type());
    Type elementType = resultType.getElementType();
    Type inElement = inType.getElementType();
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<int64_t> shape(inType.getShape());
      for (int i = 0; i < 2; ++i)
        if (!inType.isDynamicDim(2 + i))
          shape[2 + i] += pads[i] + pads[2 + i];
      auto paddedType = RankedTensorType::get(shape, inElement);
      SmallVector<OpFoldResult> low = {rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(pads[0]),
                                       rewriter.getIndexAttr(pads[1])};
      SmallVector<OpFoldResult> high = {rewriter.getIndexAttr(0),
                                        rewriter.getIndexAttr(0),
                                        rewriter.getIndexAttr(pads[2]),
                                        rewriter.getIndexAttr(pads[3])};
      Value zero = scalarConstant(rewriter, loc, inElement, 0.0);
      input = tensor::PadOp::create(rewriter, loc, paddedType, input, low,
                                    high, zero);
    }
    // The dynamic ones of the result's sizes, for each form's init below
    // (the grouped form's G x F/G split is static).
    auto dynamicOf = [&](RankedTensorType type) {
      SmallVector<Value> sizes;
      ArrayRef<int64_t> shape = type.getShape();
      for (int64_t d = 0, r = 0; d < type.getRank(); ++d) {
        if (type.isDynamicDim(d))
          sizes.push_back(
              getValueOrCreateConstantIndexOp(rewriter, loc, outSizes[r]));
        // The grouped type splits the result's dim 1 into two.
        r += !(shape.size() == 5 && d == 1);
      }
      return sizes;
    };
    auto strides = rewriter.getI64TensorAttr(op.getStrides());
    auto dilations = rewriter.getI64TensorAttr(op.getDilations());
    Value zero = scalarConstant(rewriter, loc, elementType, 0.0);
    Value conv;
    if (group == 1) {
      Value init = emptyTensor(rewriter, loc, resultType, dynamicOf(resultType));
      Value filled =
          linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
      conv = linalg::Conv2DNchwFchwOp::create(
                 rewriter, loc, TypeRange{resultType},
                 ValueRange{input, op.getFilter()}, ValueRange{filled},
                 strides, dilations)
                 .getResult(0);
    } else if (filterType.getDimSize(0) == group &&
               filterType.getDimSize(1) == 1 &&
               filterType.getDimSize(2) > 0 && filterType.getDimSize(3) > 0) {
      // Taps on one channel at a time are memory-bound: a narrow input and
      // filter are widened first.
      auto widened = [&](Value v) -> Value {
        auto type = cast<RankedTensorType>(v.getType());
        if (type.getElementType() == elementType)
          return v;
        return buildElementwise(
            rewriter, loc, type.clone(elementType), {v},
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              return castScalar(b, nloc, args[0], elementType);
            });
      };
      conv = depthwiseConvolution(
          rewriter, loc, widened(input), widened(op.getFilter()), resultType,
          op.getStrides(), op.getDilations(), outSizes, maxWindowStride);
    } else {
      // N x C x H x W -> N x G x C/G x H x W; F x C/G x KH x KW ->
      // G x F/G x C/G x KH x KW; the result's G x F/G fold back into F.
      auto inShape = cast<RankedTensorType>(input.getType()).getShape();
      ArrayRef<int64_t> filterShape = filterType.getShape();
      auto groupedInType = RankedTensorType::get(
          {inShape[0], group, inShape[1] / group, inShape[2], inShape[3]},
          inElement);
      auto groupedFilterType =
          RankedTensorType::get({group, filterShape[0] / group, filterShape[1],
                                 filterShape[2], filterShape[3]},
                                filterType.getElementType());
      ArrayRef<int64_t> out = resultType.getShape();
      auto groupedOutType = RankedTensorType::get(
          {out[0], group, filterShape[0] / group, out[2], out[3]},
          elementType);
      SmallVector<ReassociationIndices> splitDim1 = {{0}, {1, 2}, {3}, {4}};
      SmallVector<ReassociationIndices> splitDim0 = {{0, 1}, {2}, {3}, {4}};
      Value groupedIn = tensor::ExpandShapeOp::create(
          rewriter, loc, groupedInType, input, splitDim1);
      Value groupedFilter = tensor::ExpandShapeOp::create(
          rewriter, loc, groupedFilterType, op.getFilter(), splitDim0);
      Value init =
          emptyTensor(rewriter, loc, groupedOutType, dynamicOf(groupedOutType));
      Value filled =
          linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
      Value grouped = linalg::Conv2DNgchwGfchwOp::create(
                          rewriter, loc, TypeRange{groupedOutType},
                          ValueRange{groupedIn, groupedFilter},
                          ValueRange{filled}, strides, dilations)
                          .getResult(0);
      conv = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                             grouped, splitDim1);
    }
    if (Value bias = op.getBias()) {
      MLIRContext *ctx = rewriter.getContext();
      AffineMap biasMap = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
      conv = buildElementwise(
          rewriter, loc, resultType, ValueRange{conv, bias},
          [&](OpBuilder &b, Location nloc, ValueRange args) {
            return addScalar(b, nloc, args[0],
                             castScalar(b, nloc, args[1], elementType));
          },
          {rewriter.getMultiDimIdentityMap(4), biasMap});
    }
    if (narrow)
      conv = buildElementwise(
          rewriter, loc, narrowType, conv,
          [&](OpBuilder &b, Location nloc, ValueRange args) {
            return castScalar(b, nloc, args[0], narrowType.getElementType());
          });
    rewriter.replaceOp(op, conv);
    return success();
  }

  int64_t maxWindowStride;
};

/// attention as tessera ops (lowered in turn): scores = scale * q @ k^T
/// (+ mask), causal positions masked to -inf, softmax, @ v.
struct AttentionLowering : OpRewritePattern<ts::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ts::AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType qType = op.getQuery().getType();
    RankedTensorType kType = op.getKey().getType();
    int64_t rank = qType.getRank();
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(
                                             qType.getDimSize(rank - 1)));
    if (!op.getScale() && qType.isDynamicDim(rank - 1))
      return rewriter.notifyMatchFailure(op, "default scale of a dynamic "
                                             "head dim");
    auto scoreShape = ::tessera::inferMatmulShape(
        qType.getShape(), kType.getShape(), false, true);
    if (!scoreShape) {
      llvm::consumeError(scoreShape.takeError());
      return failure();
    }
    Type elementType = qType.getElementType();
    auto scoreType = RankedTensorType::get(*scoreShape, elementType);
    // The products in the type the precision policy chose for them (the
    // attention itself stays wider), accumulating in the scores' type.
    auto narrowed = [&](Value value) -> Value {
      auto products =
          op->getAttrOfType<TypeAttr>(::tessera::kNarrowProductsAttr);
      if (!products)
        return value;
      auto type = cast<RankedTensorType>(value.getType());
      return ts::CastOp::create(rewriter, loc,
                                type.clone(products.getValue()), value);
    };
    Value scores = ts::MatmulOp::create(
        rewriter, loc, scoreType, narrowed(op.getQuery()),
        narrowed(op.getKey()), false, true,
        APFloat(static_cast<float>(scale)));
    if (Value mask = op.getMask())
      scores = ts::AddOp::create(rewriter, loc, scoreType, scores, mask);
    if (op.getCausal()) {
      // Query i sees keys j <= i + (Sk - Sq).
      Value sq = linalg::createOrFoldDimOp(rewriter, loc, scores, rank - 2);
      Value sk = linalg::createOrFoldDimOp(rewriter, loc, scores, rank - 1);
      Value offset = arith::SubIOp::create(rewriter, loc, sk, sq);
      Value negInf = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getFloatAttr(
              elementType,
              APFloat::getInf(cast<FloatType>(elementType).getFloatSemantics(),
                              /*Negative=*/true)));
      scores = buildElementwise(
          rewriter, loc, scoreType, scores,
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            Value i = linalg::IndexOp::create(b, nloc, rank - 2);
            Value j = linalg::IndexOp::create(b, nloc, rank - 1);
            Value limit = arith::AddIOp::create(b, nloc, i, offset);
            Value hidden = arith::CmpIOp::create(
                b, nloc, arith::CmpIPredicate::sgt, j, limit);
            return arith::SelectOp::create(b, nloc, hidden, negInf, args[0]);
          });
    }
    Value probs = ts::SoftmaxOp::create(rewriter, loc, scores,
                                        rewriter.getI64IntegerAttr(-1));
    Value out = ts::MatmulOp::create(rewriter, loc, op.getType(),
                                     narrowed(probs), narrowed(op.getValue()),
                                     false, false, APFloat(1.0f));
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void populateContractionPatterns(RewritePatternSet &patterns, bool fp8Operands,
                                 int64_t maxWindowStride) {
  patterns.add<MatmulLowering>(patterns.getContext(), fp8Operands);
  patterns.add<Conv2dLowering>(patterns.getContext(), maxWindowStride);
  patterns.add<AttentionLowering>(patterns.getContext());
}

} // namespace tessera::to_linalg
