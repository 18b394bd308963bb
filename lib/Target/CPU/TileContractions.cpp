//===- TileContractions.cpp - register tiles for matmul-like loops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace tessera::cpu {
#define GEN_PASS_DEF_TILECONTRACTIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

constexpr int64_t kRows = 8, kColumns = 48, kLanes = 16;
/// Rows of the lhs that one pass over the rhs panels reuses from L2.
constexpr int64_t kRowBlock = 256;

/// Loops [batch..., rows, k, columns] (the order Tessera's matmul lowering
/// produces), static, with the register tile dividing rows and columns.
bool isTileableContraction(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (loops < 3 || op.getNumReductionLoops() != 1 ||
      !linalg::isReductionIterator(op.getIteratorTypesArray()[loops - 2]) ||
      op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 2)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  return ranges[loops - 3] % kRows == 0 && ranges[loops - 1] % kLanes == 0;
}

/// The bytes of a constant's elements in row-major order, or nothing for
/// splats and sub-byte element types.
std::optional<ArrayRef<char>> constantBytes(Attribute value) {
  auto type = cast<ShapedType>(cast<TypedAttr>(value).getType());
  if (type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(value);
      dense && !dense.isSplat())
    return dense.getRawData();
  return std::nullopt;
}

/// The widest register tile (8 x 48: three 8 x 16 accumulator blocks per
/// row, 24 of the 32 vector registers) and the panel width for `columns`:
/// 48 where it divides them, else 32 or 16.
int64_t panelWidth(int64_t columns) {
  return columns % kColumns == 0       ? kColumns
         : columns % (2 * kLanes) == 0 ? 2 * kLanes
                                       : kLanes;
}

/// For a contraction whose rhs is a constant K x N matrix (or the
/// transpose of a constant N x K one, or a column slice of either) read as
/// (k, columns), shared by all batch iterations: the same columns as
/// N/`width` contiguous K x `width` panels, packed once here instead of at
/// every call (and once per constant and columns: `packed` holds those
/// already packed).
using PackedKey = std::tuple<Operation *, int64_t, int64_t>;
Value packConstantRhs(RewriterBase &rewriter, linalg::GenericOp op,
                      int64_t width, llvm::DenseMap<PackedKey, Value> &packed) {
  unsigned loops = op.getNumLoops();
  MLIRContext *ctx = op.getContext();
  AffineMap expected = AffineMap::get(
      loops, 0,
      {getAffineDimExpr(loops - 2, ctx), getAffineDimExpr(loops - 1, ctx)},
      ctx);
  if (op.getIndexingMapsArray()[1] != expected)
    return {};
  // A slice of whole columns (the part of a split contraction).
  Value rhs = op.getDpsInputs()[1];
  int64_t first = 0;
  if (auto slice = rhs.getDefiningOp<tensor::ExtractSliceOp>()) {
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    if (!slice.hasUnitStride() || slice.getSourceType().getRank() != 2 ||
        offsets[0] != 0 || ShapedType::isDynamic(offsets[1]) ||
        slice.getSourceType().getDimSize(0) != slice.getType().getDimSize(0))
      return {};
    first = offsets[1];
    rhs = slice.getSource();
  }
  // The constant itself, or a constant N x K matrix transposed (a matmul
  // with transpose_b): the panels are read from it column-wise.
  Value whole = rhs;
  bool transposed = false;
  if (auto transpose = rhs.getDefiningOp<linalg::TransposeOp>();
      transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    rhs = transpose.getInput();
    transposed = true;
  }
  auto constant = rhs.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  int64_t n =
      cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getDimSize(1);
  PackedKey key{whole.getDefiningOp(), first, width};
  if (Value known = packed.lookup(key))
    return known;
  std::optional<ArrayRef<char>> bytes = constantBytes(constant.getValue());
  if (!bytes)
    return {};
  auto type = cast<RankedTensorType>(constant.getType());
  int64_t k = type.getDimSize(transposed ? 1 : 0);
  int64_t total = type.getDimSize(transposed ? 0 : 1);
  int64_t size = type.getElementTypeBitWidth() / 8;
  if (static_cast<int64_t>(bytes->size()) != k * total * size ||
      first + n > total)
    return {};
  // Written straight into the blob the new constant owns.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(k * n * size, 64);
  MutableArrayRef<char> panels = blob.getMutableData();
  int64_t row = width * size;
  for (int64_t panel = 0; panel < n / width; ++panel)
    for (int64_t i = 0; i < k; ++i) {
      char *to = &panels[(panel * k + i) * row];
      int64_t column = first + panel * width;
      if (!transposed) {
        std::memcpy(to, bytes->data() + (i * total + column) * size, row);
        continue;
      }
      for (int64_t c = 0; c < width; ++c)
        std::memcpy(to + c * size,
                    bytes->data() + ((column + c) * k + i) * size, size);
    }
  auto packedType =
      RankedTensorType::get({n / width, k, width}, type.getElementType());
  auto attr = DenseResourceElementsAttr::get(packedType, "tessera_packed_rhs",
                                             std::move(blob));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(constant);
  Value result = arith::ConstantOp::create(rewriter, constant.getLoc(), attr);
  packed[key] = result;
  return result;
}

/// For a contraction whose lhs is read as (batch..., rows, k), with the
/// batch dims in loop order: the lhs as [batch..., M/8, K, 8] (each
/// 8-row tile's columns contiguous, so that the 8 values a k step
/// broadcasts share a cache line), made by a transpose before the loops.
Value packLhs(RewriterBase &rewriter, linalg::GenericOp op) {
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
  SmallVector<int64_t> expanded(shape.drop_back(2));
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i + 2 < rank; ++i)
    groups.push_back({static_cast<int64_t>(i)});
  groups.push_back({rank - 2, rank - 1});
  groups.push_back({static_cast<int64_t>(rank)});
  expanded.append({m / kRows, kRows, k});
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value tiles = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(expanded, type.getElementType()),
      lhs, groups);
  SmallVector<int64_t> packedShape(shape.drop_back(2));
  packedShape.append({m / kRows, k, kRows});
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
bool readPackedLhs(RewriterBase &rewriter, linalg::GenericOp rows, Value lhs,
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
      arith::ConstantIndexOp::create(rewriter, loc, kRows));
  int64_t k = tileType.getDimSize(rank - 1);
  packedOffsets.append(
      {tileIndex, (*offsets)[rank - 1], rewriter.getIndexAttr(0)});
  packedSizes.append({rewriter.getIndexAttr(1), rewriter.getIndexAttr(k),
                      rewriter.getIndexAttr(kRows)});
  strides.assign(rank + 1, rewriter.getIndexAttr(1));
  SmallVector<int64_t> shape(tileType.getShape().drop_back(2));
  shape.append({k, kRows});
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

/// When the panel loop's accumulator starts as a linalg.fill used nowhere
/// else, fills each 8 x 32 tile instead, just before its k loop (as a
/// vector the tile's first read then folds to), so that the result is not
/// written with the fill value and read back.
void fillTilesInRegisters(RewriterBase &rewriter, scf::ForallOp loop,
                          linalg::GenericOp rows) {
  if (!loop || loop.getOutputs().size() != 1)
    return;
  OpOperand &shared = loop.getOutputsMutable()[0];
  auto fill = shared.get().getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse())
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
  rewriter.modifyOpInPlace(loop, [&] { shared.set(fill.getOutputs()[0]); });
  rewriter.eraseOp(fill);
}

/// The elementwise op that is the only user of `op`'s result and reads it
/// element for element (a bias, an activation, a residual add fused by
/// the elementwise fusion pass), or null.
Operation *findEpilogue(linalg::GenericOp op) {
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return nullptr;
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || consumer.getNumDpsInits() != 1 ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      consumer->getResult(0).getType() != result.getType() ||
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
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::GenericOp> targets;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isTileableContraction(op))
        targets.push_back(op);
    });
    IRRewriter rewriter(ctx);
    // Columns that the widest tile does not divide: the widest multiple
    // of it first, the rest (16 or 32 columns) as a second contraction.
    SmallVector<linalg::GenericOp> parts;
    for (linalg::GenericOp op : targets) {
      int64_t columns = op.getStaticLoopRanges().back();
      if (columns < kColumns || columns % kColumns == 0) {
        parts.push_back(op);
        continue;
      }
      rewriter.setInsertionPoint(op);
      auto [first, second] =
          linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()),
                          op.getNumLoops() - 1,
                          rewriter.getIndexAttr(columns / kColumns * kColumns));
      for (TilingInterface part : {first, second}) {
        auto generic = dyn_cast_if_present<linalg::GenericOp>(
            part ? part.getOperation() : nullptr);
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
        parts.push_back(generic);
      }
    }
    llvm::DenseMap<PackedKey, Value> packedConstants;
    llvm::DenseMap<Value, Value> packedLhsOf;
    for (linalg::GenericOp op : parts) {
      unsigned loops = op.getNumLoops();
      int64_t width = panelWidth(op.getStaticLoopRanges().back());
      auto sizes = [&](int64_t rows, int64_t k, int64_t columns,
                       int64_t batch) {
        SmallVector<OpFoldResult> tile(loops, rewriter.getIndexAttr(batch));
        tile[loops - 3] = rewriter.getIndexAttr(rows);
        tile[loops - 2] = rewriter.getIndexAttr(k);
        tile[loops - 1] = rewriter.getIndexAttr(columns);
        return tile;
      };
      auto tile = [&](Operation *target, ArrayRef<OpFoldResult> tileSizes,
                      bool parallel) -> Operation * {
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
      };
      // Column panels in parallel (scf.forall), tall matrices also in
      // blocks of rows; each packs its slice of the rhs into a contiguous
      // K x `width` buffer that all its row tiles reuse (constant weights
      // are packed here, once).
      Operation *epilogueConsumer = findEpilogue(op);
      Value prepacked = packConstantRhs(rewriter, op, width, packedConstants);
      // The lhs in 8-row tiles, once, before the loops (and once for the
      // contractions that read the same lhs in one block).
      Value lhs = op.getDpsInputs()[0];
      Value packedLhs = packedLhsOf.lookup(lhs);
      if (!packedLhs || packedLhs.getParentBlock() != op->getBlock()) {
        packedLhs = packLhs(rewriter, op);
        if (packedLhs)
          packedLhsOf[lhs] = packedLhs;
      }
      int64_t m = op.getStaticLoopRanges()[loops - 3];
      int64_t rowBlock = m > kRowBlock && m % kRowBlock == 0 ? kRowBlock : 0;
      Operation *panel = tile(op, sizes(rowBlock, 0, width, 1), true);
      if (!panel)
        continue;
      OpOperand &rhs = panel->getOpOperand(1);
      auto rhsType = cast<RankedTensorType>(rhs.get().getType());
      rewriter.setInsertionPoint(panel);
      Value packed;
      auto slice = rhs.get().getDefiningOp<tensor::ExtractSliceOp>();
      if (prepacked && slice) {
        // The panel of the constant packed at compile time: panel j / 32.
        Location loc = panel->getLoc();
        Value column = getValueOrCreateConstantIndexOp(
            rewriter, loc, slice.getMixedOffsets()[1]);
        Value index = arith::DivUIOp::create(
            rewriter, loc, column,
            arith::ConstantIndexOp::create(rewriter, loc, width));
        OpFoldResult zero = rewriter.getIndexAttr(0),
                     one = rewriter.getIndexAttr(1);
        packed = tensor::ExtractSliceOp::create(
            rewriter, loc, rhsType, prepacked,
            ArrayRef<OpFoldResult>{index, zero, zero},
            ArrayRef<OpFoldResult>{one,
                                   rewriter.getIndexAttr(rhsType.getDimSize(0)),
                                   rewriter.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{one, one, one});
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
      rewriter.modifyOpInPlace(panel, [&] { rhs.set(packed); });
      // Rows by 8, then k one step at a time, innermost.
      Operation *rows = tile(panel, sizes(kRows, 0, 0, 0), false);
      if (rows && packedLhs)
        readPackedLhs(rewriter, cast<linalg::GenericOp>(rows), lhs, packedLhs);
      if (rows)
        fillTilesInRegisters(rewriter, rows->getParentOfType<scf::ForallOp>(),
                             cast<linalg::GenericOp>(rows));
      // The epilogue (an elementwise op reading only this result) runs on
      // each panel right after its row tiles, while the panel is in cache
      // (the loop vectorizer vectorizes it there).
      if (rows && epilogueConsumer)
        fuseEpilogue(rewriter, epilogueConsumer, rows);
      Operation *body = rows ? tile(rows, sizes(0, 1, 0, 0), false) : nullptr;
      if (!body)
        continue;
      rewriter.setInsertionPoint(body);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, body, {}, {}, false, false, false,
                            /*createNamedContraction=*/false);
      if (succeeded(vectorized))
        rewriter.replaceOp(body, vectorized->replacements);
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
    unroll.setNativeShapeFn([](Operation *op)
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
        if (!type || type.getRank() < 2 || type.getShape().back() <= kLanes ||
            type.getShape().back() % kLanes != 0)
          return std::nullopt;
        SmallVector<int64_t> shape(type.getShape());
        shape.back() = kLanes;
        return shape;
      }
      SmallVector<int64_t> shape = *contract.getShapeForUnroll();
      AffineMap lhs = contract.getIndexingMapsArray()[0];
      bool changed = false;
      for (unsigned d = 0; d < shape.size(); ++d) {
        if (!lhs.isFunctionOfDim(d) && shape[d] > kLanes &&
            shape[d] % kLanes == 0) {
          shape[d] = kLanes;
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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
