//===- TileContractions.cpp - register tiles for matmul-like loops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "Convolutions.h"
#include "DotProducts.h"
#include "MatrixVector.h"
#include "PackConstants.h"
#include "RowTiles.h"
#include "SplitContractions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_TILECONTRACTIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;
using tessera::cpu::columnOffsets;
using tessera::cpu::DotProduct;
using tessera::cpu::dotProductFor;
using tessera::cpu::dropPackedArguments;
using tessera::cpu::emitGroupTile;
using tessera::cpu::fillAfterCollapse;
using tessera::cpu::fillTilesInRegisters;
using tessera::cpu::groupOf;
using tessera::cpu::groupRows;
using tessera::cpu::isContraction;
using tessera::cpu::packConstantLhs;
using tessera::cpu::packConstantRhs;
using tessera::cpu::PackedKey;
using tessera::cpu::peelPartialRows;
using tessera::cpu::reshapeInsteadOfExpand;
using tessera::cpu::tileOp;
using tessera::cpu::tilePartialRows;
using tessera::cpu::vectorizeTile;

namespace {

/// The register tile: `rows` x `columns` accumulators, in vectors of
/// `lanes` elements. AVX-512: 8 x 48 in 24 of the 32 zmm registers; AVX2:
/// 4 x 24 in 12 of the 16 ymm registers.
struct RegisterTile {
  int64_t rows, columns, lanes;
};
constexpr RegisterTile kTile512{8, 48, 16}, kTile256{4, 24, 8};
/// Rows of the lhs that one pass over the rhs panels reuses from L2.
constexpr int64_t kRowBlock = 256;
/// Up to this many row tiles read a panel of a computed rhs in place; more
/// read a copy of it (contiguous, so that each tile's reads stream).
constexpr int64_t kFewRowTiles = 8;

/// A contraction with static k and columns (rows and batch dims may be
/// dynamic): any number of rows and columns (rows and columns that the
/// register tile does not divide are split off and tiled by what is
/// left; dynamic rows are blocked by 256 on threads, tiled by 8 and the
/// last, partial tile peeled).
bool isTileableContraction(linalg::GenericOp op) {
  if (!isContraction(op))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  return llvm::all_of(ranges, [](int64_t size) { return size != 0; }) &&
         llvm::none_of(ArrayRef(ranges).take_back(2), ShapedType::isDynamic);
}

/// The widest register tile (8 x 48: three 8 x 16 accumulator blocks per
/// row, 24 of the 32 vector registers) and the panel width for `columns`:
/// 48 where it divides them, else 32 or 16, else (fewer than 16 columns)
/// all of them; 0 when the columns must be split first.
int64_t panelWidth(const RegisterTile &tile, int64_t columns) {
  for (int64_t width : {tile.columns, 2 * tile.lanes, tile.lanes})
    if (columns % width == 0)
      return width;
  return columns < tile.lanes ? columns : 0;
}

/// Where to split `columns` so that each part has a panel width: after
/// the widest multiple of 48 when there are more than 48 and 48 does not
/// divide them, else after the widest multiple of 16 when no width
/// divides them; 0 when no split is needed.
int64_t columnSplit(const RegisterTile &tile, int64_t columns) {
  if (columns > tile.columns && columns % tile.columns != 0)
    return columns / tile.columns * tile.columns;
  if (panelWidth(tile, columns) != 0)
    return 0;
  return columns / tile.lanes * tile.lanes;
}

/// Where to split `rows` so that the register tile divides the first part
/// (the second, fewer than 8 rows, is one tile of its own); 0 when it
/// divides them already or there are fewer than 8.
int64_t rowSplit(const RegisterTile &tile, int64_t rows) {
  return !ShapedType::isDynamic(rows) && rows > tile.rows && rows % tile.rows != 0
             ? rows / tile.rows * tile.rows
             : 0;
}

/// Parallel iterations (static batch indices times column panels) below
/// which a contraction's rows are blocked in the parallel loop too, when
/// it has at least kMinBlockedMultiplyAdds (smaller ones run on one
/// thread anyway: tessera-cpu-sequentialize-nested-parallel).
constexpr int64_t kMinParallelIterations = 8;
constexpr int64_t kMinBlockedMultiplyAdds = int64_t(1) << 21;

/// For a contraction with static rows and too few parallel iterations for
/// the threads (a convolution over a 7 x 7 image: 256 filters as rows, its
/// 49 pixels one panel of 48 and one of 1), the rows per parallel block:
/// the largest multiple of the register tile's rows, at most kRowBlock,
/// that divides them and makes kMinParallelIterations, or the fewest rows
/// that divide them (8);
/// 0 when the iterations suffice or the rows cannot be divided.
int64_t rowBlockForThreads(const RegisterTile &tile, linalg::GenericOp op,
                           int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned loops = ranges.size();
  int64_t m = ranges[loops - 3];
  int64_t iterations = llvm::divideCeil(ranges[loops - 1], width);
  for (unsigned d = 0; d + 3 < loops; ++d) {
    if (ShapedType::isDynamic(ranges[d]))
      return 0;
    iterations *= ranges[d];
  }
  if (ShapedType::isDynamic(m) || iterations >= kMinParallelIterations ||
      m < 2 * tile.rows || m % tile.rows != 0 ||
      ShapedType::isDynamic(ranges[loops - 2]) ||
      iterations * width * m * ranges[loops - 2] < kMinBlockedMultiplyAdds)
    return 0;
  int64_t wanted = llvm::divideCeil(kMinParallelIterations, iterations);
  for (int64_t block = std::min(m / 2, kRowBlock) / tile.rows * tile.rows;
       block > tile.rows; block -= tile.rows)
    if (m % block == 0 && m / block >= wanted)
      return block;
  return tile.rows;
}

/// For a contraction whose lhs is read as (batch..., rows, k), with the
/// batch dims in loop order: the lhs as [batch..., M/8, K, 8] (each
/// 8-row tile's columns contiguous, so that the 8 values a k step
/// broadcasts share a cache line), made by a transpose before the loops.
Value packLhs(RewriterBase &rewriter, const RegisterTile &tile,
              linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  AffineMap map = op.getIndexingMapsArray()[0];
  unsigned rank = map.getNumResults();
  if (rank < 2 ||
      map.getResult(rank - 2) != rewriter.getAffineDimExpr(loops - 3) ||
      map.getResult(rank - 1) != rewriter.getAffineDimExpr(loops - 2))
    return {};
  for (unsigned i = 0; i + 2 < rank; ++i) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (!dim || dim.getPosition() >= loops - 3)
      return {};
  }
  Value lhs = op.getDpsInputs()[0];
  auto type = dyn_cast<RankedTensorType>(lhs.getType());
  if (!type || !type.hasStaticShape())
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t m = shape[rank - 2], k = shape[rank - 1];
  if (m % tile.rows != 0)
    return {};
  SmallVector<int64_t> expanded(shape.drop_back(2));
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i + 2 < rank; ++i)
    groups.push_back({static_cast<int64_t>(i)});
  groups.push_back({rank - 2, rank - 1});
  groups.push_back({static_cast<int64_t>(rank)});
  expanded.append({m / tile.rows, tile.rows, k});
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  // Right after the lhs is defined (or at the start of the block whose
  // argument it is), so that every contraction that reads the lhs can
  // share it, and one inside a loop that the lhs is defined outside of
  // does not pack it at every iteration.
  if (Operation *definition = lhs.getDefiningOp())
    rewriter.setInsertionPointAfter(definition);
  else
    rewriter.setInsertionPointToStart(cast<BlockArgument>(lhs).getOwner());
  Value tiles = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(expanded, type.getElementType()),
      lhs, groups);
  SmallVector<int64_t> packedShape(shape.drop_back(2));
  packedShape.append({m / tile.rows, k, tile.rows});
  SmallVector<int64_t> permutation;
  for (unsigned i = 0; i + 2 < rank; ++i)
    permutation.push_back(i);
  permutation.append({rank - 2, rank, rank - 1});
  Value init = tensor::EmptyOp::create(rewriter, loc, packedShape,
                                       type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, tiles, init, permutation)
      ->getResult(0);
}

/// The offsets of `value` in `base` when `value` is a chain of unit-stride,
/// full-rank tensor.extract_slice ops of `base`.
std::optional<SmallVector<Value>>
offsetsIn(RewriterBase &rewriter, Location loc, Value value, Value base) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<Value> offsets(type.getRank());
  for (Value &offset : offsets)
    offset = arith::ConstantIndexOp::create(rewriter, loc, 0);
  while (value != base) {
    auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || !slice.hasUnitStride() ||
        slice.getSourceType().getRank() != type.getRank())
      return std::nullopt;
    for (auto [offset, add] : llvm::zip(offsets, slice.getMixedOffsets()))
      offset = arith::AddIOp::create(
          rewriter, loc, offset,
          getValueOrCreateConstantIndexOp(rewriter, loc, add));
    value = slice.getSource();
  }
  return offsets;
}

/// Makes the 8-row tile `rows` read its lhs from `packedLhs` (see packLhs):
/// the slice [batch..., row / 8, k0:k0+K, 0:8], indexed (batch..., k, rows).
bool readPackedLhs(RewriterBase &rewriter, const RegisterTile &tile,
                   linalg::GenericOp rows, Value lhs,
                   Value packedLhs) {
  Location loc = rows.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(rows);
  OpOperand &operand = rows->getOpOperand(0);
  std::optional<SmallVector<Value>> offsets =
      offsetsIn(rewriter, loc, operand.get(), lhs);
  if (!offsets)
    return false;
  auto tileType = cast<RankedTensorType>(operand.get().getType());
  unsigned rank = tileType.getRank();
  SmallVector<OpFoldResult> packedOffsets, packedSizes, strides;
  for (unsigned i = 0; i + 2 < rank; ++i) {
    packedOffsets.push_back((*offsets)[i]);
    packedSizes.push_back(rewriter.getIndexAttr(tileType.getDimSize(i)));
  }
  Value tileIndex = arith::DivUIOp::create(
      rewriter, loc, (*offsets)[rank - 2],
      arith::ConstantIndexOp::create(rewriter, loc, tile.rows));
  int64_t k = tileType.getDimSize(rank - 1);
  packedOffsets.append(
      {tileIndex, (*offsets)[rank - 1], rewriter.getIndexAttr(0)});
  packedSizes.append({rewriter.getIndexAttr(1), rewriter.getIndexAttr(k),
                      rewriter.getIndexAttr(tile.rows)});
  strides.assign(rank + 1, rewriter.getIndexAttr(1));
  SmallVector<int64_t> shape(tileType.getShape().drop_back(2));
  shape.append({k, tile.rows});
  Value slice = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get(shape, tileType.getElementType()),
      packedLhs, packedOffsets, packedSizes, strides);
  SmallVector<AffineMap> maps = rows.getIndexingMapsArray();
  SmallVector<AffineExpr> results(maps[0].getResults());
  std::swap(results[rank - 2], results[rank - 1]);
  maps[0] =
      AffineMap::get(maps[0].getNumDims(), 0, results, rewriter.getContext());
  rewriter.modifyOpInPlace(rows, [&] {
    operand.set(slice);
    rows.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  return true;
}

/// The elementwise op that is the only user of `op`'s result and reads it
/// element for element (a bias, an activation, a residual add fused by
/// the elementwise fusion pass; with them an 8-bit consumer's
/// quantization, whose result has a narrower element type), or null.
Operation *findEpilogue(linalg::GenericOp op) {
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return nullptr;
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || consumer.getNumDpsInits() != 1 ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      cast<ShapedType>(consumer->getResult(0).getType()).getShape() !=
          cast<ShapedType>(result.getType()).getShape() ||
      !consumer.hasPureTensorSemantics())
    return nullptr;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == result &&
        !consumer.getMatchingIndexingMap(input).isIdentity())
      return nullptr;
  // Memory holds i1 as bytes, vectors as bits: keep such epilogues apart.
  for (Value operand : consumer->getOperands())
    if (getElementTypeOrSelf(operand.getType()).isInteger(1))
      return nullptr;
  return consumer;
}

/// Collapses the iteration dims `groups` of `op` (see
/// linalg::collapseOpIterationDims); the collapsed op, or null when the
/// maps do not read the groups contiguously.
linalg::GenericOp collapseDims(RewriterBase &rewriter, linalg::GenericOp op,
                               ArrayRef<ReassociationIndices> groups) {
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), groups))
    return {};
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed = linalg::collapseOpIterationDims(
      cast<linalg::LinalgOp>(op.getOperation()), groups, rewriter);
  if (failed(collapsed))
    return {};
  rewriter.replaceOp(op, collapsed->results);
  return dyn_cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// Why a product of two operands summed over dims that is not in the
/// tiled kernel's form ([batch..., rows, k, columns]) stays a loop nest.
std::string nonTiledReason(linalg::GenericOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(cast<linalg::LinalgOp>(op.getOperation()));
  if (succeeded(dims) && dims->k.size() == 1 &&
      (dims->m.empty() != dims->n.empty()))
    return "one operand is a vector (a matrix times a vector that the "
           "GEMV kernel does not take: not f32, or the matrix not read "
           "along k)";
  return "its loops are not rows, a reduced dim and columns (a product "
         "summed over other dims)";
}

/// Why a contraction cannot take the register tiles (see
/// isTileableContraction).
std::string genericReason(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned loops = op.getNumLoops();
  if (ShapedType::isDynamic(ranges[loops - 1]))
    return "its columns are dynamic";
  if (ShapedType::isDynamic(ranges[loops - 2]))
    return "its reduced dim is dynamic";
  return "it is empty";
}

/// For a contraction whose rhs reads none of its batch dims (a weight
/// shared by every batch row: [S, B, K] x [K, N], the sequence-first
/// layout, or [B, S, K] x [K, N]) and whose lhs and result read the batch
/// and row dims contiguously: the batch dims folded into the rows, so
/// that one GEMM of all the rows runs instead of one per batch index (one
/// row each when the rows are a unit dim). Its epilogue (see findEpilogue)
/// folds the same dims, so that it still reads the product directly. The
/// folded contraction, or `op` unchanged.
linalg::GenericOp foldSharedBatchIntoRows(RewriterBase &rewriter,
                                          linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (loops < 4)
    return op;
  AffineMap rhsMap = op.getIndexingMapsArray()[1];
  for (unsigned d = 0; d + 2 < loops; ++d)
    if (rhsMap.isFunctionOfDim(d))
      return op;
  ReassociationIndices rows =
      llvm::to_vector(llvm::seq<int64_t>(0, loops - 2));
  SmallVector<ReassociationIndices> groups = {
      rows, {static_cast<int64_t>(loops - 2)},
      {static_cast<int64_t>(loops - 1)}};
  Operation *epilogue = findEpilogue(op);
  linalg::GenericOp folded = collapseDims(rewriter, op, groups);
  if (!folded)
    return op;
  fillAfterCollapse(rewriter, folded);
  linalg::GenericOp flat;
  if (auto generic = dyn_cast_if_present<linalg::GenericOp>(epilogue)) {
    unsigned epilogueLoops = loops - 1;
    flat = collapseDims(
        rewriter, generic,
        {llvm::to_vector(llvm::seq<int64_t>(0, epilogueLoops - 1)),
         {static_cast<int64_t>(epilogueLoops - 1)}});
  }
  Value product = folded->getResult(0);
  if (flat) {
    reshapeInsteadOfExpand(rewriter, flat->getResult(0));
    // The epilogue reads the folded product itself, not its folded
    // expansion.
    for (OpOperand &operand : flat->getOpOperands()) {
      auto collapse = operand.get().getDefiningOp<tensor::CollapseShapeOp>();
      auto expand =
          collapse ? collapse.getSrc().getDefiningOp<tensor::ExpandShapeOp>()
                   : tensor::ExpandShapeOp();
      if (expand && expand.getSrc() == product &&
          collapse.getType() == product.getType()) {
        rewriter.modifyOpInPlace(flat, [&] { operand.set(product); });
        if (collapse->use_empty())
          rewriter.eraseOp(collapse);
        if (expand->use_empty())
          rewriter.eraseOp(expand);
      }
    }
  }
  reshapeInsteadOfExpand(rewriter, product);
  return folded;
}

/// Fuses `consumer` into the panel loop around the 8-row tile `rows`, so
/// that it runs on each panel while the panel is still in cache; the tiled
/// consumer, or null.
Operation *fuseEpilogue(RewriterBase &rewriter, Operation *consumer,
                        Operation *rows) {
  auto panelLoop = rows->getParentOfType<scf::ForallOp>();
  if (!panelLoop)
    return nullptr;
  SmallVector<Operation *> inserts;
  for (Operation &op : panelLoop.getTerminator().getYieldingOps())
    inserts.push_back(&op);
  if (inserts.size() != 1)
    return nullptr;
  SmallVector<LoopLikeOpInterface> loops = {
      cast<LoopLikeOpInterface>(panelLoop.getOperation())};
  FailureOr<scf::SCFFuseConsumerOfSliceResult> fused =
      scf::tileAndFuseConsumerOfSlices(rewriter, inserts, loops);
  if (failed(fused) || fused->tiledOps.empty())
    return nullptr;
  return fused->tiledOps.front();
}

struct TileContractionsPass
    : tessera::cpu::impl::TileContractionsPassBase<TileContractionsPass> {
  using TileContractionsPassBase::TileContractionsPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    TileContractionsPassBase::getDependentDialects(registry);
    tessera::cpu::registerDotProductEffects(registry);
  }

  void runOnOperation() override {
    if (vectorBits != 512 && vectorBits != 256) {
      mlir::emitError(getOperation().getLoc(),
                      "tessera-cpu-tile-contractions: vector-bits must be "
                      "512 (AVX-512) or 256 (AVX2), got ")
          << static_cast<unsigned>(vectorBits);
      return signalPassFailure();
    }
    registers = vectorBits == 256 ? kTile256 : kTile512;
    for (auto func : llvm::make_early_inc_range(
             getOperation().getOps<func::FuncOp>()))
      if (failed(runOnFunction(func)))
        return signalPassFailure();
  }

private:
  RegisterTile registers = kTile512;

  /// An elementwise op that reads (as an input, by the identity) a static
  /// contraction's product through a tensor.expand_shape (a convolution's
  /// epilogue: its bias, activation or residual over [N, F, H, W], the
  /// GEMM's product [N, F, H*W]) runs on the product's dims instead, its
  /// other operands collapsed the same way, and its result is expanded:
  /// when nothing else reads the product, findEpilogue then finds it, so
  /// that it runs in the register tiles and is split with the product's
  /// columns (at 112 x 112 pixels, 261 panels of 48 and one of 16,
  /// MobileNetV2's bias and ReLU6 were a pass of their own over 4.8 MB). A
  /// dynamic product is left alone: the folded op would size its loops by
  /// tensor.dim of the expand_shape, a second reader of the product.
  LogicalResult epiloguesOnProducts(func::FuncOp func) {
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        patterns, [](OpOperand *operand) {
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
          auto product =
              expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>()
                     : linalg::GenericOp();
          return consumer && product && isContraction(product) &&
                 expand.getSrcType().hasStaticShape() &&
                 consumer.isDpsInput(operand) &&
                 consumer.getNumLoops() == consumer.getNumParallelLoops() &&
                 consumer.getNumDpsInits() == 1 &&
                 consumer.getMatchingIndexingMap(operand).isIdentity();
        });
    return applyPatternsGreedily(func, std::move(patterns));
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    tessera::cpu::convolutionsToGemms(rewriter, func, registers.columns,
                                      registers.lanes, reportGeneric);
    if (failed(epiloguesOnProducts(func)))
      return failure();
    SmallVector<linalg::GenericOp> targets, matrixVectors;
    func.walk([&](linalg::GenericOp op) {
      if (isContraction(op))
        targets.push_back(op);
      else if (tessera::cpu::isMatrixTimesVector(op))
        matrixVectors.push_back(op);
      else if (reportGeneric && op.hasPureTensorSemantics() &&
               linalg::isaContractionOpInterface(op))
        // A product of two operands summed over a dim, but not as rows
        // times columns nor as a matrix times a vector.
        op.emitRemark() << "contraction stays a generic loop nest (not the "
                           "register-tiled kernel): "
                        << nonTiledReason(op);
    });
    for (linalg::GenericOp op : matrixVectors)
      tessera::cpu::lowerMatrixTimesVector(rewriter, op, registers.rows,
                                           registers.lanes);
    // Rows and columns that the register tile does not divide: split off
    // (rows after the widest multiple of 8, columns after the widest
    // multiple of 48, then of 16) until each part is tiled by what
    // divides it.
    SmallVector<linalg::GenericOp> parts;
    SmallVector<linalg::GenericOp> worklist;
    for (linalg::GenericOp op : targets) {
      op = foldSharedBatchIntoRows(rewriter, op);
      if (isTileableContraction(op))
        worklist.push_back(op);
      else if (reportGeneric)
        op.emitRemark() << "contraction stays a generic loop nest (not the "
                           "register-tiled kernel): "
                        << genericReason(op);
    }
    while (!worklist.empty()) {
      linalg::GenericOp op = worklist.pop_back_val();
      unsigned loops = op.getNumLoops();
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      // Rows first, so that the column parts of the rows the tile divides
      // read one lhs (packed once).
      unsigned dim = loops - 3;
      int64_t point = rowSplit(registers, ranges[dim]);
      if (point == 0) {
        dim = loops - 1;
        point = columnSplit(registers, ranges[dim]);
      }
      if (point == 0) {
        parts.push_back(op);
        continue;
      }
      // The epilogue splits with it, so that each part keeps its own.
      auto [first, second] = tessera::cpu::splitContraction(
          rewriter, op, dim, point, findEpilogue(op));
      for (linalg::GenericOp generic : {first, second}) {
        if (!generic)
          continue;
        // Whole-tensor slices of the inputs read the tensors themselves.
        for (OpOperand *input : generic.getDpsInputOperands()) {
          auto slice = input->get().getDefiningOp<tensor::ExtractSliceOp>();
          if (slice && slice.getSourceType() == slice.getType() &&
              slice.hasZeroOffset() && slice.hasUnitStride())
            rewriter.modifyOpInPlace(generic,
                                     [&] { input->set(slice.getSource()); });
        }
        worklist.push_back(generic);
      }
    }
    llvm::DenseMap<PackedKey, Value> packedConstants;
    llvm::SetVector<BlockArgument> packedArguments;
    // Keyed by the lhs and how the contraction reads it: one lhs read
    // as it is by one contraction and transposed by another packs twice.
    llvm::DenseMap<std::pair<Value, AffineMap>, Value> packedLhsOf;
    for (linalg::GenericOp op : parts) {
      unsigned loops = op.getNumLoops();
      int64_t width = panelWidth(registers, op.getStaticLoopRanges().back());
      int64_t depth = op.getStaticLoopRanges()[loops - 2];
      auto sizes = [&](int64_t rows, int64_t k, int64_t columns,
                       int64_t batch) {
        SmallVector<OpFoldResult> tile(loops, rewriter.getIndexAttr(batch));
        tile[loops - 3] = rewriter.getIndexAttr(rows);
        tile[loops - 2] = rewriter.getIndexAttr(k);
        tile[loops - 1] = rewriter.getIndexAttr(columns);
        return tile;
      };
      // Column panels in parallel (scf.forall), tall matrices also in
      // blocks of rows; each packs its slice of the rhs into a contiguous
      // K x `width` buffer that all its row tiles reuse when more than
      // kFewRowTiles read it, else reads it in place (constant weights are
      // packed at compile time, once).
      Operation *epilogueConsumer = findEpilogue(op);
      // Products on a dot-product instruction (bf16 on vdpbf16ps, int8
      // on vpdpbusd) read the rhs in groups of rows and the lhs in place.
      DotProduct dot =
          dotProductFor(op, width, bf16DotProduct, int8DotProduct);
      bool grouped = dot != DotProduct::None;
      int64_t group = grouped ? groupOf(dot) : 1;
      Value prepacked = packConstantRhs(rewriter, op, width, group,
                                        packedConstants, packedArguments);
      // The lhs in 8-row tiles: a constant's at compile time (with the
      // rhs panels' cache), any other once, right after it is defined
      // (and once for the contractions that read the same lhs the same
      // way).
      Value lhs = op.getDpsInputs()[0];
      Value packedLhs = grouped
                            ? Value()
                            : packConstantLhs(rewriter, op, registers.rows,
                                              packedConstants, packedArguments);
      if (!packedLhs && !grouped) {
        // Packed right after the lhs, the packed lhs dominates every
        // reader of it.
        std::pair<Value, AffineMap> key = {lhs, op.getIndexingMapsArray()[0]};
        packedLhs = packedLhsOf.lookup(key);
        if (!packedLhs) {
          packedLhs = packLhs(rewriter, registers, op);
          if (packedLhs)
            packedLhsOf[key] = packedLhs;
        }
      }
      int64_t m = op.getStaticLoopRanges()[loops - 3];
      bool dynamicRows = ShapedType::isDynamic(m);
      // Dynamic rows in blocks too (the last one partial): a product with
      // few columns (a convolution over an image of symbolic size, its
      // pixels the rows, 24 filters the columns) was one panel, on one
      // thread.
      // Static rows: in blocks of 256 for tall matrices, finer where the
      // blocks would leave too few parallel iterations (512 filters times
      // 49 pixels).
      int64_t rowBlock = dynamicRows ? kRowBlock : 0;
      if (!dynamicRows) {
        rowBlock = rowBlockForThreads(registers, op, width);
        if (rowBlock == 0 && m > kRowBlock && m % kRowBlock == 0)
          rowBlock = kRowBlock;
      }
      Operation *panel =
          tileOp(rewriter, op, sizes(rowBlock, 0, width, 1), true);
      if (!panel)
        continue;
      OpOperand &rhs = panel->getOpOperand(1);
      auto rhsType = cast<RankedTensorType>(rhs.get().getType());
      rewriter.setInsertionPoint(panel);
      Value packed;
      auto slice = rhs.get().getDefiningOp<tensor::ExtractSliceOp>();
      SmallVector<Value> offsets;
      Location loc = panel->getLoc();
      if (prepacked && slice) {
        // The panel of the constant packed at compile time: panel j / W,
        // [K, W] (or [K/G, G * W] with its rows in groups of G).
        Value column = getValueOrCreateConstantIndexOp(
            rewriter, loc, slice.getMixedOffsets().back());
        Value index = arith::DivUIOp::create(
            rewriter, loc, column,
            arith::ConstantIndexOp::create(rewriter, loc, width));
        OpFoldResult zero = rewriter.getIndexAttr(0),
                     one = rewriter.getIndexAttr(1);
        packed = tensor::ExtractSliceOp::create(
            rewriter, loc,
            RankedTensorType::get({depth / group, group * width},
                                  rhsType.getElementType()),
            prepacked, ArrayRef<OpFoldResult>{index, zero, zero},
            ArrayRef<OpFoldResult>{one, rewriter.getIndexAttr(depth / group),
                                   rewriter.getIndexAttr(group * width)},
            ArrayRef<OpFoldResult>{one, one, one});
      } else if (grouped) {
        // The panel in groups of rows, read by the tiles below only: the
        // linalg ops (the partial tile of dynamic rows) go on reading the
        // rhs as it is.
        packed = groupRows(rewriter, loc, rhs.get(), group);
      } else if (!dynamicRows && (rowBlock == 0 ? m : rowBlock) <=
                                     kFewRowTiles * registers.rows) {
        // Few row tiles read the panel (attention's 64-query blocks, a
        // convolution's 24 filters): they read the rhs where it is. A copy
        // pays for itself only over many row tiles (measured here: skipping
        // it made attention at sequence 512 6% faster, PaddleOCR det 3%,
        // and a 2048 x 64 x 2048 product, 32 row tiles per panel, 8%
        // slower).
        packed = rhs.get();
      } else {
        // A copy into a new buffer, as a linalg.copy that the loop
        // vectorizer turns into row-wide vector moves.
        Value buffer = tensor::EmptyOp::create(rewriter, panel->getLoc(),
                                               rhsType.getShape(),
                                               rhsType.getElementType());
        packed =
            linalg::CopyOp::create(rewriter, panel->getLoc(), rhs.get(), buffer)
                .getResult(0);
      }
      if (dot == DotProduct::Int8)
        offsets = columnOffsets(rewriter, loc, packed, width);
      if (!grouped)
        rewriter.modifyOpInPlace(panel, [&] { rhs.set(packed); });
      // Rows by 8, then k one step at a time, innermost.
      int64_t rowTile = dynamicRows ? registers.rows : std::min(registers.rows, m);
      Operation *rows = tileOp(rewriter, panel, sizes(rowTile, 0, 0, 0), false);
      if (rows && dynamicRows)
        rows = peelPartialRows(rewriter, cast<linalg::GenericOp>(rows));
      if (rows && packedLhs)
        readPackedLhs(rewriter, registers, cast<linalg::GenericOp>(rows), lhs,
                      packedLhs);
      if (rows)
        fillTilesInRegisters(rewriter, rows->getParentOfType<scf::ForallOp>(),
                             cast<linalg::GenericOp>(rows));
      if (rows && dynamicRows)
        tilePartialRows(rewriter, rows->getParentOfType<scf::ForallOp>(),
                        cast<linalg::GenericOp>(rows));
      // The epilogue (an elementwise op reading only this result) runs on
      // each panel right after its row tiles, while the panel is in cache
      // (the loop vectorizer vectorizes it there).
      if (rows && epilogueConsumer)
        fuseEpilogue(rewriter, epilogueConsumer, rows);
      if (rows && grouped &&
          emitGroupTile(rewriter, cast<linalg::GenericOp>(rows), dot, packed,
                        offsets))
        continue;
      if (rows)
        vectorizeTile(rewriter, cast<linalg::GenericOp>(rows));
    }
    // Vectorized reductions over k become contractions.
    RewritePatternSet patterns(ctx);
    // Broadcasting reads become reads plus broadcasts, which then fold into
    // the contraction's maps: a (rows x k) by (k x columns) product.
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateFoldArithExtensionPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    // Each 8 x 48 tile's product as three 8 x 16 products that share the
    // lhs broadcasts.
    vector::UnrollVectorOptions unroll;
    unroll.setNativeShapeFn([lanes = registers.lanes](Operation *op)
                                -> std::optional<SmallVector<int64_t>> {
      auto contract = dyn_cast<vector::ContractionOp>(op);
      if (!contract) {
        // The accumulator's and the rhs's reads and writes, by 16
        // columns.
        VectorType type;
        if (auto read = dyn_cast<vector::TransferReadOp>(op))
          type = read.getVectorType();
        else if (auto write = dyn_cast<vector::TransferWriteOp>(op))
          type = write.getVectorType();
        if (!type || type.getRank() < 2 || type.getShape().back() <= lanes ||
            type.getShape().back() % lanes != 0)
          return std::nullopt;
        SmallVector<int64_t> shape(type.getShape());
        shape.back() = lanes;
        return shape;
      }
      SmallVector<int64_t> shape = *contract.getShapeForUnroll();
      AffineMap lhs = contract.getIndexingMapsArray()[0];
      bool changed = false;
      for (unsigned d = 0; d < shape.size(); ++d) {
        if (!lhs.isFunctionOfDim(d) && shape[d] > lanes &&
            shape[d] % lanes == 0) {
          shape[d] = lanes;
          changed = true;
        } else if (lhs.isFunctionOfDim(d) &&
                   vector::isParallelIterator(contract.getIteratorTypes()[d])) {
          shape[d] = 1;
        }
      }
      if (!changed)
        return std::nullopt;
      return shape;
    });
    vector::populateVectorUnrollPatterns(patterns, unroll);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return failure();
    widenNarrowOperands(rewriter, func);
    dropPackedArguments(rewriter, func, packedArguments.getArrayRef());
    return success();
  }

  /// Products of bf16 or f16 operands into an f32 accumulator, or of i8
  /// operands into an i32 one (matmuls the precision passes made narrow):
  /// the operands are extended next to the product, which the
  /// outer-product lowering needs, so memory holds (and the packing
  /// copies) the narrow values.
  void widenNarrowOperands(IRRewriter &rewriter, func::FuncOp func) {
    func.walk([&](vector::ContractionOp contract) {
      Type accumulator = getElementTypeOrSelf(contract.getAccType());
      bool isFloat = isa<FloatType>(accumulator);
      if (!isFloat && !isa<IntegerType>(accumulator))
        return;
      rewriter.setInsertionPoint(contract);
      for (OpOperand *operand :
           {&contract.getLhsMutable(), &contract.getRhsMutable()}) {
        auto type = dyn_cast<VectorType>(operand->get().getType());
        if (!type || type.getElementType() == accumulator ||
            isFloat != isa<FloatType>(type.getElementType()))
          continue;
        Value wide =
            isFloat ? arith::ExtFOp::create(rewriter, contract.getLoc(),
                                            type.clone(accumulator),
                                            operand->get())
                          .getResult()
                    : arith::ExtSIOp::create(rewriter, contract.getLoc(),
                                             type.clone(accumulator),
                                             operand->get())
                          .getResult();
        rewriter.modifyOpInPlace(contract, [&] { operand->set(wide); });
      }
    });
  }
};

} // namespace

/// When `op`'s accumulator is the collapse of a linalg.fill used nowhere
/// else, fills the collapsed shape instead, so that each tile can start
/// from the fill value (see fillTilesInRegisters).
void tessera::cpu::fillAfterCollapse(RewriterBase &rewriter,
                                     linalg::GenericOp op) {
  OpOperand &init = op.getDpsInitsMutable()[0];
  auto reshape = init.get().getDefiningOp<tensor::CollapseShapeOp>();
  auto fill = reshape ? reshape.getSrc().getDefiningOp<linalg::FillOp>()
                      : linalg::FillOp();
  if (!fill || !fill->hasOneUse() || !reshape->hasOneUse())
    return;
  rewriter.setInsertionPoint(op);
  Value empty = tensor::CollapseShapeOp::create(
      rewriter, fill.getLoc(), fill.getOutputs()[0],
      reshape.getReassociationIndices());
  Value refill =
      linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs()[0],
                             empty)
          .getResult(0);
  rewriter.modifyOpInPlace(op, [&] { init.set(refill); });
  rewriter.eraseOp(reshape);
  rewriter.eraseOp(fill);
}
