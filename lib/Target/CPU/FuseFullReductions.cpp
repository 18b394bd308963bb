//===- FuseFullReductions.cpp - a tensor's maximum as it is written -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// fp8 current scaling divides each activation by its own largest |x|. That
// maximum is a reduction of the whole tensor to one value, which as a
// linalg.generic of reduction loops only is a scalar loop over every
// element, a second pass over the tensor after the loop that wrote it.
// Here each iteration of the writing loop reduces its own tile while the
// tile is in cache, and the reduction reads the partial results.
#include "tessera/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_FUSEFULLREDUCTIONSPASS
#include "tessera/Target/CPU/Passes.h.inc"
} // namespace tessera::cpu

using namespace mlir;

namespace {

/// A body whose value does not depend on the element's position.
bool readsNoPosition(linalg::GenericOp op) {
  return !op.getBody()
              ->walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// Whether `op` reads `operand` as a single value (a rank-0 tensor).
bool isSingleValue(linalg::GenericOp op, OpOperand &operand) {
  auto type = dyn_cast<RankedTensorType>(operand.get().getType());
  return type && type.getRank() == 0 &&
         op.getMatchingIndexingMap(&operand).getNumResults() == 0;
}

/// How many of its loops' innermost dims `op` reads `operand` by, when it
/// reads it by those alone, in order (a bias along the columns: 1); 0
/// otherwise.
unsigned trailingDims(linalg::GenericOp op, OpOperand &operand) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  unsigned loops = map.getNumDims(), read = map.getNumResults();
  if (read == 0 || read >= loops || map.getNumSymbols() != 0)
    return 0;
  for (unsigned i = 0; i < read; ++i)
    if (map.getResult(i) != getAffineDimExpr(loops - read + i, op.getContext()))
      return 0;
  return read;
}

/// The input of `op` that is a whole tensor, when every other input is a
/// single value (or, with `broadcasts`, read by innermost dims alone); null
/// otherwise.
OpOperand *tensorInput(linalg::GenericOp op, bool broadcasts = false) {
  OpOperand *tensor = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (isSingleValue(op, *input) ||
        (broadcasts && trailingDims(op, *input) != 0))
      continue;
    if (tensor)
      return nullptr;
    tensor = input;
  }
  return tensor;
}

/// A linalg.generic reducing one tensor to one value by a maximum or a
/// minimum, which any order of the elements gives exactly.
struct FullReduction {
  linalg::GenericOp op;
  /// The input reduced.
  OpOperand *data;
  /// The op that combines an element's value with the result so far.
  Operation *combiner;
  /// What the result starts from.
  Value initial;
};

std::optional<FullReduction> matchFullReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 ||
      cast<RankedTensorType>(op->getResult(0).getType()).getRank() != 0 ||
      op.getNumLoops() == 0 || op.getNumReductionLoops() != op.getNumLoops() ||
      !readsNoPosition(op))
    return std::nullopt;
  OpOperand *data = tensorInput(op);
  if (!data || !op.getMatchingIndexingMap(data).isPermutation())
    return std::nullopt;
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill)
    return std::nullopt;
  Block *body = op.getBody();
  BlockArgument accumulator = body->getArguments().back();
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || !accumulator.hasOneUse() ||
      *accumulator.getUsers().begin() != combiner ||
      !isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
           arith::MinNumFOp, arith::MaxSIOp, arith::MaxUIOp, arith::MinSIOp,
           arith::MinUIOp>(combiner))
    return std::nullopt;
  return FullReduction{op, data, combiner, fill.getInputs()[0]};
}

/// An elementwise linalg.generic of one tensor, single values and
/// tensors read by innermost dims (an epilogue's scale and bias, an
/// absolute value): its tensor input, or null.
OpOperand *elementwiseInput(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || !readsNoPosition(op) ||
      !op.getIndexingMapsArray().back().isIdentity() ||
      !op.getBody()->getArguments().back().use_empty())
    return nullptr;
  OpOperand *tensor = tensorInput(op, /*broadcasts=*/true);
  if (!tensor || !op.getMatchingIndexingMap(tensor).isIdentity())
    return nullptr;
  return tensor;
}

/// How many innermost dims of `op`'s inputs the elementwise `op` reads
/// other inputs by (see trailingDims).
unsigned broadcastDims(linalg::GenericOp op) {
  unsigned dims = 0;
  for (OpOperand *input : op.getDpsInputOperands())
    dims = std::max(dims, trailingDims(op, *input));
  return dims;
}

/// How many innermost dims a reshape of `from` into `to` keeps as they are
/// (equal static sizes from the end).
unsigned keptInnerDims(Type from, Type to) {
  ArrayRef<int64_t> a = cast<RankedTensorType>(from).getShape(),
                    b = cast<RankedTensorType>(to).getShape();
  unsigned kept = 0;
  while (kept < a.size() && kept < b.size() &&
         !ShapedType::isDynamic(a[a.size() - 1 - kept]) &&
         a[a.size() - 1 - kept] == b[b.size() - 1 - kept])
    ++kept;
  return kept;
}

/// At most how many ops piecesOf visits for one tensor.
constexpr unsigned kMaxTreeOps = 256;

/// A loop's result that fills a box of a tensor: at `offsets`, of the
/// result's (static) sizes, or at offsets 0 when they are empty.
struct Piece {
  OpResult result;
  SmallVector<int64_t> offsets;
};

/// Whether the box at `offsets` of `sizes` meets the box at `at` of `of`
/// (`within`: lies inside it).
bool boxesMeet(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
               ArrayRef<int64_t> at, ArrayRef<int64_t> of) {
  for (auto [o, s, a, n] : llvm::zip_equal(offsets, sizes, at, of))
    if (o + s <= a || a + n <= o)
      return false;
  return true;
}
bool boxWithin(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
               ArrayRef<int64_t> at, ArrayRef<int64_t> of) {
  for (auto [o, s, a, n] : llvm::zip_equal(offsets, sizes, at, of))
    if (o < a || a + n < o + s)
      return false;
  return true;
}

/// The static offsets and sizes of a unit-stride slice that keeps every
/// dim, or nullopt.
template <typename SliceOp>
std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
staticBox(SliceOp slice) {
  if (!slice.hasUnitStride() ||
      slice.getSourceType().getRank() != slice.getResultType().getRank())
    return std::nullopt;
  std::optional<SmallVector<int64_t>> offsets =
      getConstantIntValues(slice.getMixedOffsets());
  std::optional<SmallVector<int64_t>> sizes =
      getConstantIntValues(slice.getMixedSizes());
  if (!offsets || !sizes)
    return std::nullopt;
  return std::make_pair(*offsets, *sizes);
}

/// The loop results whose values the static tensor `value` holds, each
/// in a box of its own, when `value` is built from them by
/// tensor.insert_slice ops (a product split into row blocks and column
/// panels of different widths), slices of such and tensor.empty: its other
/// elements are unspecified. A result inserted over another's box, or a
/// slice that cuts one, is refused (nullopt), as is any other op.
std::optional<SmallVector<Piece>> piecesOf(Value value, unsigned &budget) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  // A tiled product's tree has a few dozen ops; shared subtrees are walked
  // again, so the walk is bounded.
  if (!type || !type.hasStaticShape() || !def || budget-- == 0)
    return std::nullopt;
  auto sizesOf = [](const Piece &piece) {
    return cast<RankedTensorType>(piece.result.getType()).getShape();
  };
  if (isa<scf::ForallOp>(def))
    return SmallVector<Piece>{
        {cast<OpResult>(value), SmallVector<int64_t>(type.getRank(), 0)}};
  if (isa<tensor::EmptyOp>(def))
    return SmallVector<Piece>{};
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    auto box = staticBox(insert);
    if (!box)
      return std::nullopt;
    auto inner = piecesOf(insert.getSource(), budget);
    auto outer = piecesOf(insert.getDest(), budget);
    if (!inner || !outer)
      return std::nullopt;
    for (const Piece &piece : *outer)
      if (boxesMeet(piece.offsets, sizesOf(piece), box->first, box->second))
        return std::nullopt;
    for (Piece &piece : *inner) {
      for (auto [offset, shift] : llvm::zip_equal(piece.offsets, box->first))
        offset += shift;
      outer->push_back(std::move(piece));
    }
    return outer;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    auto box = staticBox(slice);
    auto source = box ? piecesOf(slice.getSource(), budget) : std::nullopt;
    if (!source)
      return std::nullopt;
    SmallVector<Piece> kept;
    for (Piece &piece : *source) {
      if (!boxesMeet(piece.offsets, sizesOf(piece), box->first, box->second))
        continue;
      if (!boxWithin(piece.offsets, sizesOf(piece), box->first, box->second))
        return std::nullopt;
      for (auto [offset, shift] : llvm::zip_equal(piece.offsets, box->first))
        offset -= shift;
      kept.push_back(std::move(piece));
    }
    return kept;
  }
  return std::nullopt;
}

/// The results of scf.foralls whose values `value` holds: one that it is,
/// or holds the same values as, through the elementwise ops of `chain`
/// (appended, the last one applied first) and ops that only rearrange
/// values, or several that tensor.insert_slice ops put together (see
/// piecesOf). An elementwise op that reads a tensor by innermost dims (a
/// bias) needs those dims to be the loop result's own: reshapes below it
/// must keep them, and no transpose may come between. A slice of the
/// result from its first element (the tiled attention's output without
/// the padding rows of its last query block) sets `bounds` to its sizes:
/// only what lies inside them counts.
std::optional<SmallVector<Piece>>
loopPieces(Value value, SmallVectorImpl<linalg::GenericOp> &chain,
           SmallVectorImpl<OpFoldResult> &bounds) {
  unsigned needed = 0;
  auto rearranged = [&](Value source, unsigned kept) {
    value = source;
    return kept >= needed;
  };
  while (Operation *def = value.getDefiningOp()) {
    if (isa<scf::ForallOp>(def))
      return SmallVector<Piece>{{cast<OpResult>(value), {}}};
    if (isa<tensor::InsertSliceOp>(def)) {
      unsigned budget = kMaxTreeOps;
      std::optional<SmallVector<Piece>> pieces = piecesOf(value, budget);
      if (!pieces || pieces->empty())
        return std::nullopt;
      llvm::SmallPtrSet<Operation *, 8> loops;
      for (const Piece &piece : *pieces) {
        // Each loop is rewritten once.
        auto loop = cast<scf::ForallOp>(piece.result.getOwner());
        if (!loops.insert(loop).second)
          return std::nullopt;
        // What the loop starts its result from holds no defined values
        // (the tiles it inserts are all the result holds).
        budget = kMaxTreeOps;
        std::optional<SmallVector<Piece>> initial =
            piecesOf(loop.getOutputs()[piece.result.getResultNumber()], budget);
        if (!initial || !initial->empty())
          return std::nullopt;
      }
      return pieces;
    }
    bool ok;
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      ok = rearranged(collapse.getSrc(),
                      keptInnerDims(collapse.getSrcType(), collapse.getType()));
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
      ok = rearranged(expand.getSrc(),
                      keptInnerDims(expand.getSrcType(), expand.getType()));
    else if (auto reshape = dyn_cast<tensor::ReshapeOp>(def))
      ok = rearranged(
          reshape.getSource(),
          keptInnerDims(reshape.getSource().getType(), reshape.getType()));
    else if (auto transpose = dyn_cast<linalg::TransposeOp>(def))
      ok = rearranged(transpose.getInput(), 0);
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      ok = slice.getSource().getDefiningOp<scf::ForallOp>() &&
           slice.getSourceType().getRank() == slice.getType().getRank() &&
           slice.hasUnitStride() && slice.hasZeroOffset();
      if (ok) {
        bounds.assign(slice.getMixedSizes());
        value = slice.getSource();
      }
    } else if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      OpOperand *input = elementwiseInput(generic);
      ok = input != nullptr;
      if (ok) {
        chain.push_back(generic);
        needed = std::max(needed, broadcastDims(generic));
        value = input->get();
      }
    } else {
      ok = false;
    }
    if (!ok)
      return std::nullopt;
  }
  return std::nullopt;
}

/// A tensor of `sizes` filled with `reduction`'s initial value.
Value filledLike(OpBuilder &b, Location loc, FullReduction reduction,
                 ArrayRef<OpFoldResult> sizes) {
  Type element = cast<RankedTensorType>(reduction.op->getResult(0).getType())
                     .getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, sizes, element);
  return linalg::FillOp::create(b, loc, reduction.initial, empty).getResult(0);
}

/// `values` (partial results) reduced to one value by `reduction`'s
/// combining op alone, starting from `init` (a rank-0 tensor; by default
/// the reduction's initial value).
Value combine(OpBuilder &b, Location loc, Value values, FullReduction reduction,
              Value init = nullptr) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = cast<RankedTensorType>(values.getType()).getRank();
  if (!init)
    init = filledLike(b, loc, reduction, {});
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  Value accumulator = reduction.op.getBody()->getArguments().back();
  return linalg::GenericOp::create(
             b, loc, init.getType(), values, init, maps, iterators,
             [&](OpBuilder &nested, Location, ValueRange args) {
               IRMapping mapping;
               for (Value operand : reduction.combiner->getOperands())
                 mapping.map(operand,
                             operand == accumulator ? args[1] : args[0]);
               Operation *combined = nested.clone(*reduction.combiner, mapping);
               linalg::YieldOp::create(nested, loc, combined->getResult(0));
             })
      .getResult(0);
}

/// Builds linalg.generics reducing `tile` to one value: each element
/// through `chain` (the last op first), then `reduction`'s body; rows
/// first when the tile has more than one dim (the innermost dim reduced,
/// which the loop vectorizer runs in vector steps), then their values.
/// The tile is at `offsets` of the tensor the chain reads (used by the
/// inputs that the chain reads by innermost dims).
Value reduceTile(OpBuilder &b, Location loc, Value tile,
                 ArrayRef<OpFoldResult> offsets,
                 ArrayRef<linalg::GenericOp> chain, FullReduction reduction) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = cast<RankedTensorType>(tile.getType()).getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tile);
  // The other values the chain and the reduction read, each once: single
  // values as they are, tensors read by innermost dims as the tile's slice.
  SmallVector<std::pair<Value, unsigned>> extras;
  SmallVector<Value> inputs = {tile};
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps = {identity};
  auto addExtras = [&](linalg::GenericOp op) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      unsigned dims = trailingDims(op, *input);
      if (!isSingleValue(op, *input) && dims == 0)
        continue;
      std::pair<Value, unsigned> key = {input->get(), dims};
      if (llvm::is_contained(extras, key))
        continue;
      extras.push_back(key);
      Value value = input->get();
      if (dims != 0) {
        SmallVector<OpFoldResult> ones(dims, b.getIndexAttr(1));
        value = tensor::ExtractSliceOp::create(
            b, loc, value, ArrayRef(offsets).take_back(dims),
            ArrayRef(sizes).take_back(dims), ones);
      }
      inputs.push_back(value);
      maps.push_back(dims == 0 ? AffineMap::get(rank, 0, ctx)
                               : identity.getMinorSubMap(dims));
    }
  };
  llvm::for_each(llvm::reverse(chain), addExtras);
  addExtras(reduction.op);

  unsigned kept = rank - 1;
  Value init = filledLike(b, loc, reduction, ArrayRef(sizes).take_front(kept));
  maps.push_back(kept == 0 ? AffineMap::get(rank, 0, ctx)
                           : identity.getMajorSubMap(kept));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  auto rows = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nested, Location, ValueRange args) {
        IRMapping mapping;
        // Clones `op`'s body with its tensor input's element `value`; the
        // value it yields.
        auto cloneBody = [&](linalg::GenericOp op, OpOperand *tensor,
                             Value value) {
          for (OpOperand *input : op.getDpsInputOperands()) {
            std::pair<Value, unsigned> key = {input->get(),
                                              trailingDims(op, *input)};
            const auto *extra = llvm::find(extras, key);
            if (input != tensor && extra != extras.end())
              mapping.map(op.getMatchingBlockArgument(input),
                          args[1 + (extra - extras.begin())]);
          }
          mapping.map(op.getMatchingBlockArgument(tensor), value);
          for (Operation &inner : op.getBody()->without_terminator())
            nested.clone(inner, mapping);
          return mapping.lookupOrDefault(
              op.getBody()->getTerminator()->getOperand(0));
        };
        Value current = args.front();
        for (linalg::GenericOp op : llvm::reverse(chain))
          current = cloneBody(op, elementwiseInput(op), current);
        mapping.map(reduction.op.getBody()->getArguments().back(), args.back());
        current = cloneBody(reduction.op, reduction.data, current);
        linalg::YieldOp::create(nested, loc, current);
      });
  if (rank == 1)
    return rows.getResult(0);
  return combine(b, loc, rows.getResult(0), reduction);
}

/// The part of the tile that `insert` inserts that lies inside `bounds`
/// (sizes from the result's first element): in each dim of the result,
/// min(size, max(bound - offset, 0)) elements, none when a dim the insert
/// drops (a unit dim) lies beyond its bound.
Value partInside(OpBuilder &b, Location loc,
                 tensor::ParallelInsertSliceOp insert,
                 ArrayRef<OpFoldResult> bounds) {
  Value tile = insert.getSource();
  SmallVector<OpFoldResult> tileSizes = tensor::getMixedSizes(b, loc, tile);
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  ArrayRef<int64_t> full = insert.getDestType().getShape();
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value within;
  SmallVector<OpFoldResult> inside;
  unsigned next = 0;
  for (auto [dim, bound, offset] :
       llvm::enumerate(bounds, insert.getMixedOffsets())) {
    // A dim the slice keeps whole.
    std::optional<int64_t> limit = getConstantIntValue(bound);
    bool whole = limit && *limit == full[dim];
    if (dropped.test(dim)) {
      if (whole)
        continue;
      Value before = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           value(offset), value(bound));
      within = within ? arith::AndIOp::create(b, loc, within, before) : before;
      continue;
    }
    OpFoldResult size = tileSizes[next++];
    if (whole) {
      inside.push_back(size);
      continue;
    }
    Value left = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, value(bound), value(offset)),
        zero);
    inside.push_back(
        arith::MinSIOp::create(b, loc, value(size), left).getResult());
  }
  if (within && !inside.empty())
    inside.front() =
        arith::SelectOp::create(b, loc, within, value(inside.front()), zero)
            .getResult();
  SmallVector<OpFoldResult> zeros(inside.size(), b.getIndexAttr(0)),
      ones(inside.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, tile, zeros, inside, ones);
}

/// The insert of `result`'s tiles in the loop that computes it, when each
/// iteration of that loop can reduce its tile (through `chain`) for
/// `reduction`: one unit-stride insert into the result, constant steps,
/// and the values the chain, the reduction and `bounds` read defined
/// before the loop. Null otherwise.
tensor::ParallelInsertSliceOp fusibleInsert(FullReduction reduction,
                                            OpResult result,
                                            ArrayRef<linalg::GenericOp> chain,
                                            ArrayRef<OpFoldResult> bounds,
                                            DominanceInfo &dominance) {
  auto loop = cast<scf::ForallOp>(result.getOwner());
  // The values the reduction reads besides the tensor must be there before
  // the loop.
  auto availableBefore = [&](linalg::GenericOp op) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op.getRegion(), captured);
    for (OpOperand *input : op.getDpsInputOperands())
      if (isSingleValue(op, *input) || trailingDims(op, *input) != 0)
        captured.insert(input->get());
    return llvm::all_of(captured, [&](Value value) {
      return dominance.properlyDominates(value, loop);
    });
  };
  if (!llvm::all_of(chain, availableBefore) || !availableBefore(reduction.op) ||
      !dominance.properlyDominates(reduction.initial, loop))
    return nullptr;
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(loop.getMixedStep());
  if (!steps || llvm::any_of(*steps, [](int64_t step) { return step <= 0; }))
    return nullptr;
  BlockArgument shared = loop.getRegionIterArgs()[result.getResultNumber()];
  tensor::ParallelInsertSliceOp insert;
  for (Operation &op : loop.getTerminator().getYieldingOps()) {
    auto slice = dyn_cast<tensor::ParallelInsertSliceOp>(op);
    if (!slice || slice.getDest() != shared)
      continue;
    if (insert)
      return nullptr;
    insert = slice;
  }
  // Tiles inserted with unit strides (the slices of a bias and the part
  // inside `bounds` are taken from the insert's offsets).
  if (!insert || !insert.hasUnitStride())
    return nullptr;
  // Innermost dims that the chain reads other tensors by must be the
  // tile's own (no unit dims dropped by the insert).
  int64_t tileRank =
      cast<RankedTensorType>(insert.getSource().getType()).getRank();
  unsigned needed = 0;
  for (linalg::GenericOp op : chain)
    needed = std::max(needed, broadcastDims(op));
  if (tileRank == 0 ||
      (needed != 0 && tileRank != insert.getDestType().getRank()))
    return nullptr;
  for (OpFoldResult bound : bounds)
    if (auto value = dyn_cast<Value>(bound);
        value && !dominance.properlyDominates(value, loop))
      return nullptr;
  return insert;
}

/// Each iteration of the loop computing `piece` reduces the tile `insert`
/// inserts (through `chain`) into its own element of a new shared output
/// of partials, which this returns.
Value fuseIntoLoop(RewriterBase &rewriter, FullReduction reduction,
                   const Piece &piece, tensor::ParallelInsertSliceOp insert,
                   ArrayRef<linalg::GenericOp> chain,
                   ArrayRef<OpFoldResult> bounds) {
  auto loop = cast<scf::ForallOp>(piece.result.getOwner());
  SmallVector<int64_t> steps = *getConstantIntValues(loop.getMixedStep());
  // One partial per iteration: ceil((upper - lower) / step) in each dim.
  Location loc = reduction.op.getLoc();
  rewriter.setInsertionPoint(loop);
  AffineExpr upper, lower;
  bindSymbols(rewriter.getContext(), upper, lower);
  SmallVector<OpFoldResult> counts;
  for (auto [lb, ub, step] : llvm::zip_equal(loop.getMixedLowerBound(),
                                             loop.getMixedUpperBound(), steps))
    counts.push_back(affine::makeComposedFoldedAffineMax(
        rewriter, loc,
        AffineMap::get(0, 2,
                       {(upper - lower).ceilDiv(step),
                        getAffineConstantExpr(0, rewriter.getContext())},
                       rewriter.getContext()),
        {ub, lb}));
  Type element = cast<RankedTensorType>(reduction.op->getResult(0).getType())
                     .getElementType();
  Value partials = tensor::EmptyOp::create(rewriter, loc, counts, element);

  SmallVector<Value> outputs(loop.getOutputs());
  outputs.push_back(partials);
  auto fused =
      scf::ForallOp::create(rewriter, loop.getLoc(), loop.getMixedLowerBound(),
                            loop.getMixedUpperBound(), loop.getMixedStep(),
                            outputs, loop.getMapping());
  rewriter.eraseOp(fused.getTerminator());
  Block *body = fused.getBody();
  rewriter.mergeBlocks(loop.getBody(), body, body->getArguments().drop_back());
  scf::InParallelOp terminator = fused.getTerminator();

  // The tile's value (of its part inside `bounds`), and its place among
  // the partials. The tile lies at the insert's offsets in the loop's
  // result, which lies at the piece's offsets in the tensor the chain
  // reads.
  rewriter.setInsertionPoint(terminator);
  Value tile = insert.getSource();
  SmallVector<OpFoldResult> tileOffsets = insert.getMixedOffsets();
  for (auto [offset, shift] : llvm::zip(tileOffsets, piece.offsets))
    if (shift != 0)
      offset = affine::makeComposedFoldedAffineApply(rewriter, loc,
                                                     upper + shift, {offset});
  if (!bounds.empty())
    tile = partInside(rewriter, loc, insert, bounds);
  Value tileValue =
      reduceTile(rewriter, loc, tile, tileOffsets, chain, reduction);
  SmallVector<OpFoldResult> offsets, ones;
  for (auto [iv, lb, step] : llvm::zip_equal(
           fused.getInductionVars(), fused.getMixedLowerBound(), steps)) {
    offsets.push_back(affine::makeComposedFoldedAffineApply(
        rewriter, loc, (upper - lower).floorDiv(step), {iv, lb}));
    ones.push_back(rewriter.getIndexAttr(1));
  }
  rewriter.setInsertionPointToEnd(terminator.getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, tileValue,
                                        body->getArguments().back(), offsets,
                                        ones, ones);
  rewriter.replaceOp(loop, fused.getResults().drop_back());
  return fused.getResults().back();
}

/// Replaces `reduction` by the reduction of partial results that the loops
/// computing `pieces` produce as they write them (see fuseIntoLoop); false,
/// changing nothing, when one of those loops cannot.
bool fuseIntoLoops(RewriterBase &rewriter, FullReduction reduction,
                   ArrayRef<Piece> pieces, ArrayRef<linalg::GenericOp> chain,
                   ArrayRef<OpFoldResult> bounds, DominanceInfo &dominance) {
  SmallVector<tensor::ParallelInsertSliceOp> inserts;
  for (const Piece &piece : pieces) {
    inserts.push_back(
        fusibleInsert(reduction, piece.result, chain, bounds, dominance));
    if (!inserts.back())
      return false;
  }
  SmallVector<Value> partials;
  for (auto [piece, insert] : llvm::zip_equal(pieces, inserts))
    partials.push_back(
        fuseIntoLoop(rewriter, reduction, piece, insert, chain, bounds));
  rewriter.setInsertionPoint(reduction.op);
  Value result;
  for (Value values : partials)
    result =
        combine(rewriter, reduction.op.getLoc(), values, reduction, result);
  rewriter.replaceOp(reduction.op, result);
  return true;
}

struct FuseFullReductionsPass
    : tessera::cpu::impl::FuseFullReductionsPassBase<FuseFullReductionsPass> {
  void runOnOperation() override {
    SmallVector<FullReduction> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<FullReduction> reduction = matchFullReduction(op))
        reductions.push_back(*reduction);
    });
    IRRewriter rewriter(&getContext());
    for (FullReduction &reduction : reductions) {
      SmallVector<linalg::GenericOp> chain;
      SmallVector<OpFoldResult> bounds;
      std::optional<SmallVector<Piece>> pieces =
          loopPieces(reduction.data->get(), chain, bounds);
      DominanceInfo dominance;
      if (pieces && fuseIntoLoops(rewriter, reduction, *pieces, chain, bounds,
                                  dominance)) {
        // The elementwise ops only the reduction read.
        for (linalg::GenericOp op : chain)
          if (op->use_empty())
            rewriter.eraseOp(op);
        continue;
      }
      if (cast<RankedTensorType>(reduction.data->get().getType()).getRank() < 2)
        continue;
      rewriter.setInsertionPoint(reduction.op);
      rewriter.replaceOp(reduction.op,
                         reduceTile(rewriter, reduction.op.getLoc(),
                                    reduction.data->get(), {}, {}, reduction));
    }
  }
};

} // namespace
