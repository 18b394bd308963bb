//===- TensorCoreMatch.cpp - contractions the tensor-core kernel takes ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Which contractions tessera-cuda-tensor-core-matmul rewrites, with their
// layouts, and what may be fused into the kernel around them: a zero fill
// of the result before, and the elementwise op after.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreMatmul.h"

#include "tessera/Target/CUDA/BufferPlacement.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace tessera::cuda::tensor_cores;

namespace {

bool isIdentityMemRef(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getLayout().isIdentity() &&
         !type.getMemorySpace();
}

/// Whether the map's results are batch dims followed by `inner` (in
/// order), and if so the loop dim of each result.
bool hasLayout(AffineMap map, ArrayRef<unsigned> batch,
               ArrayRef<unsigned> inner, SmallVector<unsigned> *roles = nullptr) {
  unsigned rank = map.getNumResults();
  if (rank < inner.size() || !map.isProjectedPermutation())
    return false;
  unsigned outer = rank - inner.size();
  for (unsigned i = 0; i < outer; ++i)
    if (!llvm::is_contained(batch, map.getDimPosition(i)))
      return false;
  for (unsigned i = 0; i < inner.size(); ++i)
    if (map.getDimPosition(outer + i) != inner[i])
      return false;
  if (roles)
    for (unsigned i = 0; i < rank; ++i)
      roles->push_back(map.getDimPosition(i));
  return true;
}

/// The body is `out + ext(a) * ext(b)` (or `out + a * b`): the product of
/// the two inputs, each widened at most once, added to the result (in
/// either order), in floats, or in integers widened with sign (`Int`:
/// arith.addi, muli, extsi). A product rounded before it is widened is not.
template <typename Add, typename Mul, typename Ext>
bool isExtMulAddOf(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto sum = yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<Add>()
                 : Add();
  if (!sum || body->getOperations().size() > 5)
    return false;
  auto input = [&](Value v, unsigned index) {
    if (auto ext = v.getDefiningOp<Ext>())
      v = ext.getIn();
    return v == body->getArgument(index);
  };
  for (auto [acc, other] : {std::pair{sum.getLhs(), sum.getRhs()},
                            std::pair{sum.getRhs(), sum.getLhs()}}) {
    auto mul = other.template getDefiningOp<Mul>();
    if (acc == body->getArgument(2) && mul &&
        ((input(mul.getLhs(), 0) && input(mul.getRhs(), 1)) ||
         (input(mul.getLhs(), 1) && input(mul.getRhs(), 0))))
      return true;
  }
  return false;
}

bool isExtMulAdd(linalg::LinalgOp op) {
  return isExtMulAddOf<arith::AddFOp, arith::MulFOp, arith::ExtFOp>(op) ||
         isExtMulAddOf<arith::AddIOp, arith::MulIOp, arith::ExtSIOp>(op);
}

/// Whether `fill` writes +0.0 (or integer 0) into all of `buffer`.
bool isZeroFillOf(linalg::FillOp fill, Value buffer) {
  if (!fill.hasPureBufferSemantics() || fill.getDpsInits()[0] != buffer)
    return false;
  auto zero = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
  if (auto integer =
          zero ? dyn_cast<IntegerAttr>(zero.getValue()) : IntegerAttr())
    return integer.getValue().isZero();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
  return value && value.getValue().isPosZero();
}

/// Whether `buffer`, read by `reader`, holds zeros then: an allocation
/// that, before `reader` (in its block), only a zero fill writes, and that
/// is otherwise only copied from. What happens after `reader` does not
/// matter.
bool onlyZeros(Value buffer, Operation *reader) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return false;
  bool filled = false;
  for (Operation *user : buffer.getUsers()) {
    if (user == reader)
      continue;
    if (user->getBlock() == reader->getBlock() &&
        reader->isBeforeInBlock(user))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      if (!isZeroFillOf(fill, buffer) ||
          fill->getBlock() != reader->getBlock() ||
          !fill->isBeforeInBlock(reader))
        return false;
      filled = true;
      continue;
    }
    if (auto copy = dyn_cast<linalg::CopyOp>(user);
        copy && copy.getDpsInputs()[0] == buffer &&
        copy.getDpsInits()[0] != buffer)
      continue;
    if (isa<memref::DeallocOp>(user))
      continue;
    return false;
  }
  return filled;
}

/// Finds the epilogue of `c`: the next op, an elementwise linalg.generic
/// over the result's shape that reads the result (identity map) and
/// writes a row-major buffer, with a body of pure ops; the result buffer
/// must have no other use than the ops fused here and its deallocation.
void matchEpilogue(Contraction &c) {
  Operation *next = c.op->getNextNode();
  SmallVector<Operation *> between;
  while (next && isa<memref::AllocOp, arith::ConstantOp, memref::DimOp>(next)) {
    between.push_back(next);
    next = next->getNextNode();
  }
  auto consumer = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!consumer || !consumer.hasPureBufferSemantics() ||
      consumer.getNumDpsInits() != 1 ||
      consumer.getNumParallelLoops() != consumer.getNumLoops())
    return;
  Value out = c.op.getDpsInits()[0];
  if (consumer.getNumLoops() != cast<MemRefType>(out.getType()).getRank())
    return;
  bool readsResult = false;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (input->get() == out) {
      if (!map.isIdentity())
        return;
      readsResult = true;
    } else if (!map.isProjectedPermutation() ||
               !isa<MemRefType>(input->get().getType()) ||
               input->get().getDefiningOp<ViewLikeOpInterface>()) {
      return;
    }
  }
  OpOperand *init = consumer.getDpsInitOperand(0);
  // An input read where another thread writes (the output buffer read
  // through a broadcast) would race.
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == init->get() &&
        !consumer.getMatchingIndexingMap(input).isIdentity())
      return;
  if (!readsResult || !consumer.getMatchingIndexingMap(init).isIdentity() ||
      !isIdentityMemRef(init->get()) ||
      init->get().getDefiningOp<ViewLikeOpInterface>())
    return;
  // The epilogue's stores must not land in what other blocks still read.
  using tessera::cuda::rootOf;
  Value written = rootOf(init->get());
  if (written == rootOf(c.op.getDpsInputs()[0]) ||
      written == rootOf(c.op.getDpsInputs()[1]))
    return;
  // Its body is cloned into the kernel: pure ops of one element each
  // (no linalg.index, which only a linalg op can hold).
  for (Operation &inner : consumer.getBlock()->without_terminator())
    if (!isPure(&inner) || inner.getNumRegions() ||
        isa<linalg::IndexOp>(inner))
      return;
  // Nothing else may read the contraction's result: earlier users do
  // not see it, and when the epilogue writes in place, later ones read
  // the epilogue's values, which it stores.
  Block *block = c.op->getBlock();
  bool inPlace = init->get() == out;
  // A buffer from elsewhere (an argument) may be read after the function.
  if (!inPlace && !out.getDefiningOp<memref::AllocOp>())
    return;
  for (Operation *user : out.getUsers()) {
    if (user == c.zeroFill || user == c.op.getOperation() ||
        user == consumer.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    if (user->getBlock() != block)
      return;
    // After an epilogue that writes in place, a view (the result expanded
    // back to a convolution's shape) reads only the epilogue's values.
    if (inPlace && consumer->isBeforeInBlock(user))
      continue;
    if (isa<ViewLikeOpInterface>(user))
      return;
    if (user->isBeforeInBlock(c.op))
      continue;
    return;
  }
  c.epilogue = consumer;
  c.hoisted = between;
}

/// Whether `op` may write `buffer` (or a view of it): any write whose
/// target it cannot name counts.
bool mayWrite(Operation *op, Value buffer) {
  return tessera::cuda::mayAffect(op, buffer, [](MemoryEffects::Effect *e) {
    return isa<MemoryEffects::Write>(e);
  });
}

/// Finds the reduction of what `c`'s kernel stores to its largest |value|
/// (fp8 current scaling's amax), which the kernel then computes as it
/// stores: a linalg.generic later in the block whose loops all reduce
/// the stored buffer (its only input, read by a permutation) into one f32
/// by a maximum (arith.maximumf, which keeps a NaN as the kernel's integer
/// maximum of the bits does), of values that a math.absf makes non-negative (so
/// that their bits order as i32s do) and computed from the element alone;
/// nothing between the kernel and it may write that buffer. Kernels that
/// split K store partial sums: where the host launches one (16-bit and
/// int8 products of few output tiles), the reduction runs after the
/// split product and its epilogue, as where no kernel runs.
void matchAmax(Contraction &c) {
  Operation *last =
      c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
  Value stored =
      c.epilogue ? c.epilogue.getDpsInits()[0] : c.op.getDpsInits()[0];
  for (Operation *op = last->getNextNode(); op; op = op->getNextNode()) {
    auto reduction = dyn_cast<linalg::GenericOp>(op);
    if (!reduction || reduction.getNumDpsInputs() != 1 ||
        reduction.getDpsInputs()[0] != stored) {
      if (mayWrite(op, stored))
        return;
      continue;
    }
    if (!reduction.hasPureBufferSemantics() ||
        reduction.getNumDpsInits() != 1 ||
        reduction.getNumReductionLoops() != reduction.getNumLoops() ||
        !reduction.getMatchingIndexingMap(reduction.getDpsInputOperand(0))
             .isPermutation())
      return;
    auto result = dyn_cast<MemRefType>(reduction.getDpsInits()[0].getType());
    Block *body = reduction.getBlock();
    BlockArgument accumulator = body->getArguments().back();
    Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
    if (!result || result.getRank() != 0 || !result.getElementType().isF32() ||
        !combiner || !isa<arith::MaximumFOp>(combiner) ||
        !accumulator.hasOneUse() ||
        accumulator.use_begin()->getOwner() != combiner)
      return;
    Value element =
        combiner->getOperand(combiner->getOperand(0) == accumulator);
    if (!element.getDefiningOp<math::AbsFOp>())
      return;
    for (Operation &inner : body->without_terminator())
      if (&inner != combiner && (!isPure(&inner) || inner.getNumRegions() ||
                                 isa<linalg::IndexOp>(inner)))
        return;
    // The body is cloned into the kernel, before the reduction: what it
    // reads from outside must be there before the contraction.
    Operation *first = c.zeroFill ? c.zeroFill : c.op.getOperation();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(reduction.getRegion(), captured);
    for (Value value : captured)
      if (Operation *def = value.getDefiningOp();
          def && def->getBlock() == first->getBlock() &&
          !def->isBeforeInBlock(first))
        return;
    c.amax = reduction;
    return;
  }
}

} // namespace

std::optional<Contraction>
tessera::cuda::tensor_cores::match(linalg::LinalgOp op, bool allowTF32) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op) ||
      !isExtMulAdd(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.size() != 1)
    return std::nullopt;
  Contraction c;
  c.op = op;
  c.mDims.assign(dims->m.begin(), dims->m.end());
  c.m = c.mDims.front();
  c.k = dims->k[0];
  c.batch.assign(dims->batch.begin(), dims->batch.end());
  // Of several N dims (in B and the result, not in A), the result's
  // innermost is N; the others are batch dims along which A is read again
  // (a convolution's im2col GEMM: the filter, A, is every image's). The
  // layout checks below hold them outside M and N.
  AffineMap resultMap = op.getIndexingMapsArray()[2];
  if (resultMap.getNumResults() == 0 || !resultMap.isProjectedPermutation())
    return std::nullopt;
  c.n = resultMap.getDimPosition(resultMap.getNumResults() - 1);
  if (!llvm::is_contained(dims->n, c.n))
    return std::nullopt;
  for (unsigned d : dims->n)
    if (d != c.n)
      c.batch.push_back(d);
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
        out = op.getDpsInits()[0];
  if (!isIdentityMemRef(a) || !isIdentityMemRef(b) || !isIdentityMemRef(out))
    return std::nullopt;
  c.element = cast<MemRefType>(a.getType()).getElementType();
  if (c.element.isF32() && allowTF32) {
    c.blockK = 16;
    c.chunk = 4;
  } else if (c.element.isInteger(8)) {
    // s8 into s32: m16n8k32, 16 elements per 16-byte copy, 64 a stage.
    c.blockK = 64;
    c.chunk = 16;
  } else if (!isa<Float16Type, BFloat16Type, Float8E4M3FNType, Float8E5M2Type>(
                 c.element)) {
    return std::nullopt;
  }
  Type accumulator = c.element.isInteger(8)
                         ? Type(IntegerType::get(op.getContext(), 32))
                         : Type(Float32Type::get(op.getContext()));
  if (cast<MemRefType>(b.getType()).getElementType() != c.element ||
      cast<MemRefType>(out.getType()).getElementType() != accumulator)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<unsigned> mk(c.mDims), mn(c.mDims);
  mk.push_back(c.k);
  mn.push_back(c.n);
  if (!hasLayout(maps[0], c.batch, mk, &c.roles[0]) ||
      !hasLayout(maps[2], c.batch, mn, &c.roles[2]) ||
      maps[2].getNumResults() != c.batch.size() + mn.size())
    return std::nullopt;
  if (hasLayout(maps[1], c.batch, {c.n, c.k}, &c.roles[1]))
    c.bKMajor = true;
  else if (!hasLayout(maps[1], c.batch, {c.k, c.n}, &c.roles[1]))
    return std::nullopt;
  // ldmatrix transposes 16-bit elements only: 8-bit integer B is read
  // along K.
  if (c.element.isInteger(8) && !c.bKMajor)
    return std::nullopt;
  // The M dims collapse into one (the first).
  for (unsigned i : {0u, 2u})
    c.roles[i].erase(c.roles[i].end() - c.mDims.size(),
                     c.roles[i].end() - 1);
  c.operands = {a, b, out};
  // Zeros written into the result right before it.
  Operation *prev = op->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
      fill && isZeroFillOf(fill, out))
    c.zeroFill = fill;
  if (auto copy = dyn_cast_or_null<linalg::CopyOp>(prev);
      copy && copy.hasPureBufferSemantics() &&
      copy.getDpsInits()[0] == out && onlyZeros(copy.getDpsInputs()[0], copy))
    c.zeroFill = copy;
  c.zeroStart = c.zeroFill || onlyZeros(out, op);
  matchEpilogue(c);
  matchAmax(c);
  return c;
}
