//===- SplitContractions.cpp - ragged contractions in parts ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A contraction whose rows or columns the register tile does not divide
// (ViT's 197 tokens) is split into parts that it does divide. linalg's
// splitOp chains the parts through inserts into the whole result, so a
// part's accumulator is a slice of that chain, and an epilogue after the
// split reads the chained whole: the tiles could start neither from the
// fill in registers nor run the epilogue on each panel. Here the epilogue
// splits with the contraction and the slices are looked up through the
// chain, so that each part reads what it reads alone.
//
//===----------------------------------------------------------------------===//
#include "SplitContractions.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace {

/// Whether two unit-stride slices of one tensor are known to share no
/// element: in some dim, their static ranges do not meet.
bool disjoint(OffsetSizeAndStrideOpInterface a,
              OffsetSizeAndStrideOpInterface b) {
  if (!a.hasUnitStride() || !b.hasUnitStride())
    return false;
  ArrayRef<int64_t> aOffsets = a.getStaticOffsets(),
                    aSizes = a.getStaticSizes(),
                    bOffsets = b.getStaticOffsets(),
                    bSizes = b.getStaticSizes();
  if (aOffsets.size() != bOffsets.size())
    return false;
  for (size_t d = 0; d < aOffsets.size(); ++d) {
    if (llvm::any_of(
            ArrayRef<int64_t>{aOffsets[d], aSizes[d], bOffsets[d], bSizes[d]},
            ShapedType::isDynamic))
      continue;
    if (aOffsets[d] + aSizes[d] <= bOffsets[d] ||
        bOffsets[d] + bSizes[d] <= aOffsets[d])
      return true;
  }
  return false;
}

/// When the input `operand` is a slice of a chain of inserts
/// (linalg::splitOp's): reads the inserted value when an insert wrote
/// exactly that slice, else the tensor below the inserts of slices it does
/// not meet. For an accumulator (`init`), only a slice of a linalg.fill
/// changes, into a fill of its own; any other stays a slice of the chain,
/// so that it bufferizes in place (a slice of the tensor below the inserts
/// would be read after they wrote it, and copied). `chained`: the parts'
/// results go on into the chain (the op had no epilogue to split).
void readThroughInserts(RewriterBase &rewriter, OpOperand &operand, bool init,
                        bool chained) {
  auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return;
  Value source = slice.getSource();
  while (auto insert = source.getDefiningOp<tensor::InsertSliceOp>()) {
    if (insert.getDestType() != slice.getSourceType())
      break;
    auto same = [](OpFoldResult a, OpFoldResult b) {
      return isEqualConstantIntOrValue(a, b);
    };
    if (cast<OffsetSizeAndStrideOpInterface>(insert.getOperation())
            .isSameAs(slice, same)) {
      if (init || insert.getSourceType() != slice.getType())
        break;
      rewriter.modifyOpInPlace(operand.getOwner(),
                               [&] { operand.set(insert.getSource()); });
      return;
    }
    if (!disjoint(insert, slice))
      break;
    source = insert.getDest();
  }
  auto filled = source.getDefiningOp<linalg::FillOp>();
  if (init ? !filled : source == slice.getSource())
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(operand.getOwner());
  Location loc = slice.getLoc();
  auto sliceOf = [&](Value tensor) -> Value {
    return tensor::ExtractSliceOp::create(
        rewriter, loc, slice.getType(), tensor, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  };
  Value value;
  if (init) {
    // When the parts' results go on into the chain, the slice itself (so
    // that it bufferizes in place), filled; when each goes to its own
    // epilogue part, the chain is left unread, and a slice of the fill's
    // tensor is filled.
    value = linalg::FillOp::create(rewriter, loc, filled.getInputs()[0],
                                   chained ? slice.getResult()
                                           : sliceOf(filled.getOutputs()[0]))
                .getResult(0);
  } else {
    value = sliceOf(source);
  }
  rewriter.modifyOpInPlace(operand.getOwner(), [&] { operand.set(value); });
}

/// Erases `value`'s defining slice, insert, fill and empty ops (but
/// `keep`) once nothing reads them, following their operands down.
void eraseUnread(RewriterBase &rewriter, Value value, Operation *keep) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op == keep || !op->use_empty() ||
        !isa<tensor::ExtractSliceOp, tensor::InsertSliceOp, linalg::FillOp,
             tensor::EmptyOp>(op))
      continue;
    SmallVector<Value> operands(op->getOperands());
    rewriter.eraseOp(op);
    llvm::append_range(worklist, operands);
  }
}

} // namespace

std::pair<linalg::GenericOp, linalg::GenericOp>
tessera::cpu::splitContraction(RewriterBase &rewriter, linalg::GenericOp op,
                               unsigned dim, int64_t point,
                               Operation *epilogue) {
  unsigned loops = op.getNumLoops();
  auto whole = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  // With dynamic dims, the epilogue's slice sizes are other values than
  // the contraction's (their own tensor.dim), so that its parts could not
  // be seen to read the product's parts: it stays whole, after the chain.
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    epilogue = nullptr;
  rewriter.setInsertionPoint(op);
  auto [first, second] =
      linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), dim,
                      rewriter.getIndexAttr(point));
  auto firstPart = dyn_cast_if_present<linalg::GenericOp>(
      first ? first.getOperation() : nullptr);
  auto secondPart = dyn_cast_if_present<linalg::GenericOp>(
      second ? second.getOperation() : nullptr);
  if (!firstPart || !secondPart)
    return {firstPart, secondPart};
  // The epilogue's loops are the product's dims: [batch..., rows,
  // columns] (findEpilogue reads it element for element).
  SmallVector<Operation *> readers = {firstPart, secondPart};
  if (epilogue) {
    unsigned epilogueDim = dim == loops - 1 ? loops - 2 : dim;
    rewriter.setInsertionPoint(epilogue);
    auto [a, b] = linalg::splitOp(rewriter, cast<TilingInterface>(epilogue),
                                  epilogueDim, rewriter.getIndexAttr(point));
    for (TilingInterface part : {a, b})
      if (part)
        readers.push_back(part);
  }
  SmallVector<Value> unread;
  for (Operation *reader : readers) {
    bool isPart = reader == firstPart || reader == secondPart;
    auto dps = cast<DestinationStyleOpInterface>(reader);
    for (OpOperand &operand : reader->getOpOperands()) {
      Value before = operand.get();
      bool init = dps.isDpsInit(&operand);
      // The epilogue's results stay in the chain.
      if (init && !isPart)
        continue;
      readThroughInserts(rewriter, operand, init, !epilogue);
      if (operand.get() != before)
        unread.push_back(before);
    }
  }
  for (Value value : unread)
    eraseUnread(rewriter, value, whole);
  // Each part fills its own accumulator now (both are checked: the
  // second reads the fill only through the first's insert): the inserts
  // of the parts, which cover the whole result, go into the fill's tensor
  // unfilled.
  auto filled = [](linalg::GenericOp part) {
    return part.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  };
  if (!whole || !filled(firstPart) || !filled(secondPart))
    return {firstPart, secondPart};
  bool unfilled = llvm::all_of(whole->getUsers(), [&](Operation *user) {
    if (isa<tensor::DimOp>(user))
      return true;
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
      return insert.getSource() == firstPart->getResult(0);
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    return slice && llvm::all_of(slice->getUsers(), [](Operation *reader) {
             return isa<linalg::FillOp>(reader);
           });
  });
  if (unfilled)
    rewriter.replaceOp(whole, whole.getOutputs()[0]);
  return {firstPart, secondPart};
}
