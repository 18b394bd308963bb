//===- RowTiles.cpp - the row tiles of a register-tiled contraction -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The rows of each column panel of tessera-cpu-tile-contractions: tiles of
// 8 rows (the last, partial tile of dynamic rows peeled and taken a row at
// a time), each a k loop over one vector contraction, starting from the
// accumulator's fill value in registers.
//
//===----------------------------------------------------------------------===//
#include "RowTiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

/// Loops [batch..., rows, k, columns] (the order Tessera's matmul lowering
/// produces): one reduction, two operands, one accumulator.
bool tessera::cpu::isContraction(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  return loops >= 3 && op.getNumReductionLoops() == 1 &&
         linalg::isReductionIterator(op.getIteratorTypesArray()[loops - 2]) &&
         op.getNumDpsInits() == 1 && op.getNumDpsInputs() == 2 &&
         op.hasPureTensorSemantics();
}

/// When the panel loop's accumulator starts as a linalg.fill used nowhere
/// else, fills each 8 x W tile instead, just before its k loop (as a
/// vector the tile's first read then folds to), so that the result is not
/// written with the fill value and read back; the other contractions of
/// the loop (the partial tile of dynamic rows) fill their accumulators
/// just before they run.
void tessera::cpu::fillTilesInRegisters(RewriterBase &rewriter,
                                        scf::ForallOp loop,
                                        linalg::GenericOp rows) {
  if (!loop || loop.getOutputs().size() != 1)
    return;
  OpOperand &shared = loop.getOutputsMutable()[0];
  auto fill = shared.get().getDefiningOp<linalg::FillOp>();
  if (!fill)
    return;
  // The sizes of dynamic rows read the fill's shape: its tensor's.
  for (OpOperand &use : llvm::make_early_inc_range(fill->getUses()))
    if (auto dim = dyn_cast<tensor::DimOp>(use.getOwner()))
      rewriter.modifyOpInPlace(
          dim, [&] { dim.getSourceMutable().set(fill.getOutputs()[0]); });
  if (!fill->hasOneUse())
    return;
  OpOperand &init = rows.getDpsInitsMutable()[0];
  Location loc = rows.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(rows);
  auto tileFill =
      linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], init.get());
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, tileFill);
  if (failed(vectorized)) {
    rewriter.eraseOp(tileFill);
    return;
  }
  Value filled = vectorized->replacements.front();
  rewriter.replaceOp(tileFill, vectorized->replacements);
  rewriter.modifyOpInPlace(rows, [&] { init.set(filled); });
  loop.getBody()->walk([&](linalg::GenericOp other) {
    if (other == rows || !isContraction(other))
      return;
    OpOperand &otherInit = other.getDpsInitsMutable()[0];
    rewriter.setInsertionPoint(other);
    Value refilled =
        linalg::FillOp::create(rewriter, other.getLoc(), fill.getInputs()[0],
                               otherInit.get())
            .getResult(0);
    rewriter.modifyOpInPlace(other, [&] { otherInit.set(refilled); });
  });
  rewriter.modifyOpInPlace(loop, [&] { shared.set(fill.getOutputs()[0]); });
  rewriter.eraseOp(fill);
}

/// For the 8-row tile `rows` of a contraction whose rows are dynamic (its
/// sizes min(8, M - i)): the row loop peeled (scf's
/// peelForLoopAndSimplifyBounds), so that its full iterations have tiles of
/// exactly 8 rows, given static types here, and the last, partial tile
/// runs after it as a loop of its own (see tilePartialRows). The full tile, or
/// null.
Operation *tessera::cpu::peelPartialRows(RewriterBase &rewriter,
                                         linalg::GenericOp rows) {
  auto loop = rows->getParentOfType<scf::ForOp>();
  if (!loop)
    return nullptr;
  scf::ForOp partial;
  if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial)))
    return nullptr;
  // The sizes are constants now; static slice types follow from them.
  MLIRContext *ctx = rewriter.getContext();
  RewritePatternSet patterns(ctx);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::InsertSliceOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::CastOp::getCanonicalizationPatterns(patterns, ctx);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
  ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
      patterns);
  GreedyRewriteConfig config;
  config.setScope(&loop.getRegion());
  if (failed(
          applyPatternsGreedily(loop.getRegion(), std::move(patterns), config)))
    return nullptr;
  linalg::GenericOp full;
  loop.getBody()->walk([&](linalg::GenericOp op) {
    if (!full && isContraction(op))
      full = op;
  });
  if (!full || llvm::any_of(full.getStaticLoopRanges(), ShapedType::isDynamic))
    return nullptr;
  return full;
}

/// `target` tiled by `tileSizes` (0: not tiled) in an scf.for nest, or
/// one scf.forall when `parallel`; the tiled op, or null.
Operation *tessera::cpu::tileOp(RewriterBase &rewriter, Operation *target,
                                ArrayRef<OpFoldResult> tileSizes,
                                bool parallel) {
  scf::SCFTilingOptions options;
  options.setTileSizes(tileSizes);
  if (parallel)
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  rewriter.setInsertionPoint(target);
  auto tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(target), options);
  if (failed(tiled))
    return nullptr;
  rewriter.replaceOp(target, tiled->replacements);
  return tiled->tiledOps.front();
}

namespace {

/// `op` tiled by 1 along its loop `dim` (an scf.for); the tiled op, or
/// null.
Operation *tileByOne(RewriterBase &rewriter, linalg::GenericOp op,
                     unsigned dim) {
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
  sizes[dim] = rewriter.getIndexAttr(1);
  return tessera::cpu::tileOp(rewriter, op, sizes, /*parallel=*/false);
}

} // namespace

/// Tiles the row tile `rows` by one k step and vectorizes that step (a
/// vector contraction the patterns below unroll and whose accumulator the
/// later hoisting keeps in registers across the k loop).
void tessera::cpu::vectorizeTile(RewriterBase &rewriter,
                                 linalg::GenericOp rows) {
  Operation *body = tileByOne(rewriter, rows, rows.getNumLoops() - 2);
  if (!body)
    return;
  rewriter.setInsertionPoint(body);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, body, {}, {}, false, false, false,
                        /*createNamedContraction=*/false);
  if (succeeded(vectorized))
    rewriter.replaceOp(body, vectorized->replacements);
}

/// The last, partial tile of dynamic rows (fewer than 8, peeled from the
/// row loop of `rows`, in `loop`): one row at a time, each a 1-row
/// register tile like the full ones. Left as a generic loop nest, it
/// multiplied and added into memory at every k step (the accumulator
/// stored and reloaded: 15% of a symbolic-batch ViT's FFN kernel for 5 of
/// its 197 rows).
void tessera::cpu::tilePartialRows(RewriterBase &rewriter, scf::ForallOp loop,
                                   linalg::GenericOp rows) {
  if (!loop)
    return;
  SmallVector<linalg::GenericOp> partial;
  loop.getBody()->walk([&](linalg::GenericOp op) {
    if (op != rows && isContraction(op))
      partial.push_back(op);
  });
  for (linalg::GenericOp op : partial) {
    auto row = dyn_cast_if_present<linalg::GenericOp>(
        tileByOne(rewriter, op, op.getNumLoops() - 3));
    if (row && !llvm::any_of(row.getStaticLoopRanges(), ShapedType::isDynamic))
      vectorizeTile(rewriter, row);
  }
}

void tessera::cpu::reshapeInsteadOfExpand(RewriterBase &rewriter, Value value) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers())) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!expand)
      continue;
    RankedTensorType type = expand.getResultType();
    bool twoDynamic = llvm::any_of(expand.getReassociationIndices(),
                                   [&](const ReassociationIndices &g) {
                                     return llvm::count_if(g, [&](int64_t d) {
                                              return type.isDynamicDim(d);
                                            }) > 1;
                                   });
    if (!twoDynamic)
      continue;
    rewriter.setInsertionPoint(expand);
    Location loc = expand.getLoc();
    SmallVector<Value> dims = getValueOrCreateConstantIndexOp(
        rewriter, loc, expand.getMixedOutputShape());
    Value shape = tensor::FromElementsOp::create(rewriter, loc, dims);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(expand, type,
                                                   expand.getSrc(), shape);
  }
}
