//===- GroupedConvolutions.cpp - grouped convolutions as GEMMs -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Convolutions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {

/// Below this many groups, a grouped convolution whose groups' GEMMs are
/// large (kLargeGroupGemm multiply-adds per image or more) keeps a
/// sequential loop over them, each GEMM on all threads: a parallel loop
/// over 2 groups would leave the other cores of a larger machine idle.
constexpr int64_t kParallelGroups = 8;
constexpr int64_t kLargeGroupGemm = int64_t(1) << 20;

/// Group `g`'s convolution of a grouped `conv` whose result so far is
/// `result`: its input, filters and result slices with the group dim
/// dropped, an ungrouped convolution of them, and where its result goes in
/// `result` (offsets, sizes; unit strides).
struct GroupConvolution {
  linalg::Conv2DNchwFchwOp conv;
  SmallVector<OpFoldResult> offsets, sizes;
};
GroupConvolution groupConvolution(OpBuilder &b, Location l,
                                  linalg::Conv2DNgchwGfchwOp conv, Value g,
                                  Value result) {
  // Offsets [0, .., g, .., 0] (g at `groupDim`), sizes those of `source`
  // with 1 at `groupDim`.
  auto place = [&](Value source, int64_t groupDim) {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[groupDim] = g;
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(
          d == groupDim ? b.getIndexAttr(1)
          : type.isDynamicDim(d)
              ? OpFoldResult(tensor::DimOp::create(b, l, source, d).getResult())
              : b.getIndexAttr(type.getDimSize(d)));
    return std::make_pair(offsets, sizes);
  };
  auto slice = [&](Value source, int64_t groupDim) -> Value {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + groupDim);
    auto [offsets, sizes] = place(source, groupDim);
    return tensor::ExtractSliceOp::create(
        b, l, RankedTensorType::get(shape, type.getElementType()), source,
        offsets, sizes,
        SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
  };
  Value in = slice(conv.getInputs()[0], 1);
  Value w = slice(conv.getInputs()[1], 0);
  Value out = slice(result, 1);
  auto inner = linalg::Conv2DNchwFchwOp::create(
      b, l, TypeRange{out.getType()}, ValueRange{in, w}, ValueRange{out},
      conv.getStrides(), conv.getDilations());
  auto [offsets, sizes] = place(result, 1);
  return {inner, offsets, sizes};
}

/// A grouped convolution (channels and filters split into G groups, not
/// dilated, dims other than the batch static) as a loop over the groups,
/// each an ungrouped convolution of its group's channels and filters, which
/// then becomes im2col and a GEMM. The loop is parallel (scf.forall, each
/// group's GEMM on one thread) unless the groups are few and their GEMMs
/// large: small GEMMs (RegNetX's 16 channels and 16 filters per group at
/// 4 x 4 pixels) in a sequential loop forked once each or, below the
/// fork's threshold, left the other threads idle (RegNetX-400MF ran no
/// faster on two threads than on one). False when `conv` stays as it is.
} // namespace

bool tessera::cpu::groupsAsConvolutions(RewriterBase &rewriter,
                                        linalg::Conv2DNgchwGfchwOp conv) {
  if (!conv.hasPureTensorSemantics() ||
      !llvm::all_of(conv.getDilations(),
                    [](const APInt &d) { return d.isOne(); }))
    return false;
  Value init = conv.getOutputs()[0];
  auto inType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto initType = cast<RankedTensorType>(init.getType());
  auto staticButBatch = [](RankedTensorType type) {
    return llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
  };
  if (!staticButBatch(inType) || !filterType.hasStaticShape() ||
      !staticButBatch(initType))
    return false;
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  int64_t groups = filterType.getDimSize(0);
  // Filters per group times the depth and pixels of each: the filters
  // [G, F/G, C/G, KH, KW], the result [N, G, F/G, OH, OW].
  ArrayRef<int64_t> group = filterType.getShape().drop_front();
  int64_t groupGemm = group[0] * group[1] * group[2] * group[3] *
                      initType.getDimSize(3) * initType.getDimSize(4);
  SmallVector<OpFoldResult> unit(initType.getRank(), rewriter.getIndexAttr(1));
  if (groups < kParallelGroups && groupGemm >= kLargeGroupGemm) {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, groups);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, count, one, ValueRange{init},
        [&](OpBuilder &b, Location l, Value g, ValueRange args) {
          GroupConvolution part = groupConvolution(b, l, conv, g, args[0]);
          scf::YieldOp::create(b, l,
                               tensor::InsertSliceOp::create(
                                   b, l, part.conv.getResult(0), args[0],
                                   part.offsets, part.sizes, unit)
                                   .getResult());
        });
    rewriter.replaceOp(conv, loop.getResults());
    return true;
  }
  auto loop = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(groups)},
      ValueRange{init}, std::nullopt,
      [&](OpBuilder &b, Location l, ValueRange arguments) {
        GroupConvolution part =
            groupConvolution(b, l, conv, arguments[0], arguments[1]);
        auto terminator = scf::InParallelOp::create(b, l);
        b.setInsertionPointToStart(terminator.getBody());
        tensor::ParallelInsertSliceOp::create(b, l, part.conv.getResult(0),
                                              arguments[1], part.offsets,
                                              part.sizes, unit);
      });
  rewriter.replaceOp(conv, loop.getResults());
  return true;
}

