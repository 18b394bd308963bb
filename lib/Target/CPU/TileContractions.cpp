//===- TileContractions.cpp - register tiles for matmul-like loops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
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

constexpr int64_t kRows = 8, kColumns = 32;
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
  return ranges[loops - 3] % kRows == 0 && ranges[loops - 1] % kColumns == 0;
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

/// For a contraction whose rhs is a constant K x N matrix read as (k,
/// columns), shared by all batch iterations: the same matrix as N/32
/// contiguous K x 32 panels, packed once here instead of at every call
/// (and once per constant: `packed` holds the constants already packed).
Value packConstantRhs(RewriterBase &rewriter, linalg::GenericOp op,
                      llvm::DenseMap<Operation *, Value> &packed) {
  unsigned loops = op.getNumLoops();
  MLIRContext *ctx = op.getContext();
  AffineMap expected = AffineMap::get(
      loops, 0,
      {getAffineDimExpr(loops - 2, ctx), getAffineDimExpr(loops - 1, ctx)},
      ctx);
  if (op.getIndexingMapsArray()[1] != expected)
    return {};
  auto constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  if (Value known = packed.lookup(constant))
    return known;
  std::optional<ArrayRef<char>> bytes = constantBytes(constant.getValue());
  if (!bytes)
    return {};
  auto type = cast<RankedTensorType>(constant.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  int64_t width = type.getElementTypeBitWidth() / 8;
  if (static_cast<int64_t>(bytes->size()) != k * n * width)
    return {};
  // Written straight into the blob the new constant owns.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(bytes->size(), 64);
  MutableArrayRef<char> panels = blob.getMutableData();
  int64_t row = kColumns * width;
  for (int64_t panel = 0; panel < n / kColumns; ++panel)
    for (int64_t i = 0; i < k; ++i)
      std::memcpy(&panels[(panel * k + i) * row],
                  bytes->data() + (i * n + panel * kColumns) * width, row);
  auto packedType =
      RankedTensorType::get({n / kColumns, k, kColumns}, type.getElementType());
  auto attr = DenseResourceElementsAttr::get(packedType, "tessera_packed_rhs",
                                             std::move(blob));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(constant);
  Value result = arith::ConstantOp::create(rewriter, constant.getLoc(), attr);
  packed[constant] = result;
  return result;
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
    llvm::DenseMap<Operation *, Value> packedConstants;
    for (linalg::GenericOp op : targets) {
      unsigned loops = op.getNumLoops();
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
      // K x 32 buffer that all its row tiles reuse (constant weights are
      // packed here, once).
      Value prepacked = packConstantRhs(rewriter, op, packedConstants);
      int64_t m = op.getStaticLoopRanges()[loops - 3];
      int64_t rowBlock = m > kRowBlock && m % kRowBlock == 0 ? kRowBlock : 0;
      Operation *panel = tile(op, sizes(rowBlock, 0, kColumns, 1), true);
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
            arith::ConstantIndexOp::create(rewriter, loc, kColumns));
        OpFoldResult zero = rewriter.getIndexAttr(0),
                     one = rewriter.getIndexAttr(1);
        packed = tensor::ExtractSliceOp::create(
            rewriter, loc, rhsType, prepacked,
            ArrayRef<OpFoldResult>{index, zero, zero},
            ArrayRef<OpFoldResult>{one,
                                   rewriter.getIndexAttr(rhsType.getDimSize(0)),
                                   rewriter.getIndexAttr(kColumns)},
            ArrayRef<OpFoldResult>{one, one, one});
      } else {
        packed = bufferization::AllocTensorOp::create(
            rewriter, panel->getLoc(), rhsType, ValueRange{}, rhs.get());
      }
      rewriter.modifyOpInPlace(panel, [&] { rhs.set(packed); });
      // Rows by 8, then k one step at a time, innermost.
      Operation *rows = tile(panel, sizes(kRows, 0, 0, 0), false);
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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
