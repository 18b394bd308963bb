//===- VectorizeElementwise.cpp - 16-byte loads in elementwise kernels ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// An elementwise linalg.generic on buffers (every loop parallel, a body of
// elementwise arith/math ops) whose innermost loop is contiguous in the
// operands that it indexes becomes a parallel loop nest in which each
// iteration computes V adjacent elements: V = 16 bytes over the widest
// such operand's element (4 f32, 8 bf16), so that the widest loads and
// stores are 128 bits. The operands that the innermost loop indexes are
// read and written as vectors (vector.load/store with their alignment,
// ld/st.global.v4 in PTX); the others (a bias along another dim, a scale)
// are read once and broadcast. The body is computed on vectors.
//
// Every iteration first checks that each vector's address is a multiple
// of its size (views, offsets and a framework's device pointers need not
// be): where one is not, the same V elements are computed one at a time.
// The innermost size must be a static multiple of V (or of V/2, with
// 8-byte accesses at most); other dims may be symbolic.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_VECTORIZEELEMENTWISEPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

constexpr int64_t kVectorBytes = 16;

/// Element types whose vectors every lowering down to PTX takes.
bool vectorizableElement(Type type) {
  if (auto f = dyn_cast<FloatType>(type))
    return f.isF32() || f.isF16() || f.isBF16() || f.isF64();
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth() == 8 || i.getWidth() == 16 || i.getWidth() == 32 ||
           i.getWidth() == 64;
  return false;
}

/// Whether every op of the body computes element by element on scalars
/// (or is a constant).
bool elementwiseBody(linalg::GenericOp op) {
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (inner.getNumRegions() != 0 ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return false;
    if (!inner.hasTrait<OpTrait::Elementwise>() &&
        !isa<arith::ConstantOp>(inner))
      return false;
    for (Type type : llvm::concat<const Type>(inner.getOperandTypes(),
                                              inner.getResultTypes()))
      if (!type.isIntOrFloat() || (!vectorizableElement(type) &&
                                   !type.isInteger(1)))
        return false;
  }
  return true;
}

/// How an elementwise op is computed V elements at a time.
struct Plan {
  int64_t width;
  /// Per operand: whether the innermost loop indexes it (last, contiguous).
  SmallVector<bool> vectorized;
};

std::optional<Plan> plan(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumReductionLoops() != 0 || op.getNumDpsInits() == 0 ||
      op.hasIndexSemantics() || !elementwiseBody(op))
    return std::nullopt;
  unsigned inner = op.getNumLoops() - 1;
  int64_t size = op.getStaticLoopRanges()[inner];
  if (ShapedType::isDynamic(size))
    return std::nullopt;
  Plan p;
  int64_t widest = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !vectorizableElement(type.getElementType()) ||
        !llvm::all_of(map.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return std::nullopt;
    bool indexed = map.isFunctionOfDim(inner);
    if (indexed) {
      // The innermost loop must be the operand's contiguous dim, and only
      // that (not a diagonal).
      if (!map.getResults().back().isFunctionOfDim(inner) ||
          llvm::count_if(map.getResults(), [&](AffineExpr e) {
            return e.isFunctionOfDim(inner);
          }) != 1)
        return std::nullopt;
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return std::nullopt;
      widest = std::max<int64_t>(
          widest, type.getElementType().getIntOrFloatBitWidth() / 8);
    } else if (op.isDpsInit(&operand)) {
      return std::nullopt; // a result written V times over
    }
    p.vectorized.push_back(indexed);
  }
  if (widest == 0)
    return std::nullopt;
  for (int64_t width = kVectorBytes / widest; width >= 2; width /= 2)
    if (size % width == 0 && width * widest >= kVectorBytes / 2) {
      p.width = width;
      return p;
    }
  return std::nullopt;
}

class Vectorizer {
public:
  Vectorizer(linalg::GenericOp op, Plan p)
      : op(op), p(std::move(p)), b(op), loc(op.getLoc()) {}

  void rewrite() {
    SmallVector<Value> lower, upper, steps;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    for (Range range : linalgOp.createLoopRanges(b, loc)) {
      lower.push_back(zero);
      upper.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
      steps.push_back(one);
    }
    upper.back() = arith::DivUIOp::create(
        b, loc, upper.back(), arith::ConstantIndexOp::create(b, loc, p.width));
    auto loop = scf::ParallelOp::create(b, loc, lower, upper, steps);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs(loop.getInductionVars());
    ivs.back() = arith::MulIOp::create(
        b, loc, ivs.back(), arith::ConstantIndexOp::create(b, loc, p.width));
    auto branch = scf::IfOp::create(b, loc, aligned(ivs),
                                    /*withElseRegion=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    computeVectors(ivs);
    b.setInsertionPointToStart(branch.elseBlock());
    auto each = scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, p.width), one);
    b.setInsertionPointToStart(each.getBody());
    SmallVector<Value> at = ivs;
    at.back() = arith::AddIOp::create(b, loc, ivs.back(),
                                      each.getInductionVar());
    computeScalars(at);
    op->erase();
  }

private:
  /// The indices of operand `operand` at loop indices `ivs` (its map's
  /// results are loop dims or constants).
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        indices.push_back(ivs[dim.getPosition()]);
      else // a broadcast dim of size 1
        indices.push_back(arith::ConstantIndexOp::create(
            b, loc, cast<AffineConstantExpr>(e).getValue()));
    return indices;
  }

  int64_t vectorBytes(OpOperand &operand) {
    Type element = cast<MemRefType>(operand.get().getType()).getElementType();
    return p.width * element.getIntOrFloatBitWidth() / 8;
  }

  /// Whether every vector access at `ivs` is aligned to its size.
  Value aligned(ArrayRef<Value> ivs) {
    Value ok;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!p.vectorized[operand.getOperandNumber()])
        continue;
      Value buffer = operand.get();
      Type element = cast<MemRefType>(buffer.getType()).getElementType();
      auto metadata =
          memref::ExtractStridedMetadataOp::create(b, loc, buffer);
      Value linear = metadata.getOffset();
      SmallVector<Value> indices = indicesOf(operand, ivs);
      for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
        linear = arith::AddIOp::create(
            b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      Value address = arith::AddIOp::create(
          b, loc, base,
          arith::MulIOp::create(
              b, loc, linear,
              arith::ConstantIndexOp::create(
                  b, loc, element.getIntOrFloatBitWidth() / 8)));
      Value rem = arith::RemUIOp::create(
          b, loc, address,
          arith::ConstantIndexOp::create(b, loc, vectorBytes(operand)));
      Value isZero = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, rem,
          arith::ConstantIndexOp::create(b, loc, 0));
      ok = ok ? arith::AndIOp::create(b, loc, ok, isZero) : isZero;
    }
    return ok;
  }

  /// `value` as a vector of the plan's width (scalars broadcast).
  Value asVector(Value value) {
    if (isa<VectorType>(value.getType()))
      return value;
    auto type = VectorType::get({p.width}, value.getType());
    return vector::BroadcastOp::create(b, loc, type, value);
  }

  void computeVectors(ArrayRef<Value> ivs) {
    IRMapping mapping;
    Block *body = op.getBody();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body->getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      SmallVector<Value> indices = indicesOf(operand, ivs);
      if (p.vectorized[operand.getOperandNumber()]) {
        auto type = VectorType::get({p.width}, arg.getType());
        mapping.map(arg, vector::LoadOp::create(
                             b, loc, type, operand.get(), indices,
                             /*nontemporal=*/false,
                             llvm::MaybeAlign(vectorBytes(operand))));
      } else {
        mapping.map(arg,
                    memref::LoadOp::create(b, loc, operand.get(), indices));
      }
    }
    for (Operation &inner : body->without_terminator()) {
      if (isa<arith::ConstantOp>(inner)) {
        b.clone(inner, mapping);
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : inner.getOperands())
        operands.push_back(asVector(mapping.lookupOrDefault(v)));
      SmallVector<Type> types;
      for (Type t : inner.getResultTypes())
        types.push_back(VectorType::get({p.width}, t));
      OperationState state(loc, inner.getName(), operands, types,
                           inner.getAttrs());
      Operation *vectorOp = b.create(state);
      mapping.map(inner.getResults(), vectorOp->getResults());
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable())
      vector::StoreOp::create(
          b, loc,
          asVector(mapping.lookupOrDefault(yield.getOperand(
              init.getOperandNumber() - op.getNumDpsInputs()))),
          init.get(), indicesOf(init, ivs), /*nontemporal=*/false,
          llvm::MaybeAlign(vectorBytes(init)));
  }

  void computeScalars(ArrayRef<Value> ivs) {
    IRMapping mapping;
    Block *body = op.getBody();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body->getArgument(operand.getOperandNumber());
      if (!arg.use_empty())
        mapping.map(arg, memref::LoadOp::create(b, loc, operand.get(),
                                                indicesOf(operand, ivs)));
    }
    for (Operation &inner : body->without_terminator())
      b.clone(inner, mapping);
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable())
      memref::StoreOp::create(
          b, loc,
          mapping.lookupOrDefault(yield.getOperand(init.getOperandNumber() -
                                                   op.getNumDpsInputs())),
          init.get(), indicesOf(init, ivs));
  }

  linalg::GenericOp op;
  Plan p;
  OpBuilder b;
  Location loc;
};

struct VectorizeElementwisePass
    : tessera::cuda::impl::VectorizeElementwisePassBase<
          VectorizeElementwisePass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Plan>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<scf::ParallelOp>())
        return;
      if (std::optional<Plan> p = plan(op))
        found.emplace_back(op, std::move(*p));
    });
    for (auto &[op, p] : found)
      Vectorizer(op, std::move(p)).rewrite();
  }
};

} // namespace
