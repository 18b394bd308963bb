//===- ContractionKernel.cpp - what the tensor-core GEMMs share -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The host guard and sizes, and the kernels' accumulator start values,
// stores and fused epilogues, for the mma.sync and wgmma GEMM kernels.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreMatmul.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace tessera::cuda::tensor_cores;

Value ContractionKernel::loopSize(unsigned dim) {
  for (OpOperand &operand : c.op->getOpOperands()) {
    AffineMap map = c.op.getMatchingIndexingMap(&operand);
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      if (map.getDimPosition(i) == dim)
        return memref::DimOp::create(b, loc, operand.get(), i);
  }
  llvm_unreachable("every loop dim of a contraction indexes an operand");
}

Value ContractionKernel::guard(int64_t blockM) {
  Value zero = cst(0);
  auto positive = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, v, zero);
  };
  Value ok = both(positive(sizeK), both(positive(sizeM), positive(sizeN)));
  // The grid's y and z dims hold at most 65535 blocks.
  Value maxBlocks = cst(65535);
  ok = both(ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, sizeM,
                                      cst(65535 * blockM)));
  // The batch dims' product, saturated at 65536 (no overflow: each factor
  // is at most 65536 before it multiplies).
  Value batch = cst(1), cap = cst(65536);
  for (Value size : batchSizes) {
    ok = both(ok, positive(size));
    batch = arith::MinUIOp::create(
        b, loc, mul(batch, arith::MinUIOp::create(b, loc, size, cap)), cap);
  }
  return both(ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                        batch, maxBlocks));
}

Value ContractionKernel::aligned() {
  auto isAligned = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 rem(v, c.chunk), cst(0));
  };
  Value ok = isAligned(sizeK);
  return c.bKMajor ? ok : both(ok, isAligned(sizeN));
}

Value ContractionKernel::gridBlocks(int64_t blockM, int64_t blockN) {
  auto ceilDiv = [&](Value x, Value y) {
    return arith::CeilDivUIOp::create(b, loc, x, y);
  };
  auto min = [&](Value x, Value y) {
    return arith::MinUIOp::create(b, loc, x, y);
  };
  // Saturated at the target so that the product cannot overflow.
  Value target = cst(kTargetBlocks);
  Value blocks = min(
      mul(ceilDiv(sizeM, cst(blockM)), ceilDiv(sizeN, cst(blockN))), target);
  for (Value size : batchSizes)
    blocks = min(mul(blocks, min(size, target)), target);
  return blocks;
}

Value ContractionKernel::fillsWave(int64_t blockM, int64_t blockN) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                               gridBlocks(blockM, blockN), cst(kTargetBlocks));
}

std::optional<bool> ContractionKernel::staticallyFillsWave(int64_t blockM,
                                                           int64_t blockN) {
  SmallVector<int64_t> ranges = c.op.getStaticLoopRanges();
  int64_t blocks = 1;
  auto times = [&](int64_t count) {
    blocks = std::min(blocks * std::min(count, kTargetBlocks), kTargetBlocks);
  };
  int64_t m = 1;
  for (unsigned d : c.mDims) {
    if (ShapedType::isDynamic(ranges[d]))
      return std::nullopt;
    m *= ranges[d];
  }
  if (ShapedType::isDynamic(ranges[c.n]) ||
      llvm::any_of(c.batch, [&](unsigned d) {
        return ShapedType::isDynamic(ranges[d]);
      }))
    return std::nullopt;
  times(llvm::divideCeil(m, blockM));
  times(llvm::divideCeil(ranges[c.n], blockN));
  for (unsigned d : c.batch)
    times(ranges[d]);
  return blocks >= kTargetBlocks;
}

Value ContractionKernel::splitCount(int64_t blockM, int64_t blockN,
                                    int64_t minK) {
  auto min = [&](Value x, Value y) {
    return arith::MinUIOp::create(b, loc, x, y);
  };
  // The grid's blocks: at least 1 by the guard.
  Value wanted = arith::CeilDivUIOp::create(b, loc, cst(kTargetBlocks),
                                            gridBlocks(blockM, blockN));
  Value deep = arith::DivUIOp::create(b, loc, sizeK, cst(minK));
  return arith::MaxUIOp::create(b, loc, min(min(wanted, deep), cst(kMaxSplits)),
                                cst(1));
}

Value ContractionKernel::readBatchAndSplit(Value z, Value splits) {
  readBatchIndex(arith::DivUIOp::create(b, loc, z, splits));
  return arith::RemUIOp::create(b, loc, z, splits);
}

std::pair<Value, Value> ContractionKernel::kTiles(Value z, Value splits,
                                                  Value numK) {
  if (!splits) {
    readBatchIndex(z);
    return {cst(0), numK};
  }
  Value part = readBatchAndSplit(z, splits);
  Value perPart = arith::CeilDivUIOp::create(b, loc, numK, splits);
  Value first = arith::MinUIOp::create(b, loc, mul(part, perPart), numK);
  Value count =
      sub(arith::MinUIOp::create(b, loc, add(first, perPart), numK), first);
  return {first, count};
}

void ContractionKernel::readSizes() {
  for (unsigned d : c.mDims)
    mSizes.push_back(loopSize(d));
  sizeM = mSizes.front();
  for (Value size : ArrayRef<Value>(mSizes).drop_front())
    sizeM = mul(sizeM, size);
  sizeN = loopSize(c.n);
  sizeK = loopSize(c.k);
  for (unsigned d : c.batch)
    batchSizes.push_back(loopSize(d));
}

SmallVector<Value>
ContractionKernel::indicesOf(unsigned index,
                             const llvm::DenseMap<unsigned, Value> &at) {
  SmallVector<Value> indices;
  for (unsigned dim : c.roles[index])
    indices.push_back(at.lookup(dim));
  return indices;
}

void ContractionKernel::readBatchIndex(Value linear) {
  for (unsigned i = c.batch.size(); i-- > 0;) {
    batchIndex[c.batch[i]] =
        arith::RemUIOp::create(b, loc, linear, batchSizes[i]);
    linear = arith::DivUIOp::create(b, loc, linear, batchSizes[i]);
  }
}

std::pair<llvm::DenseMap<unsigned, Value>, Value>
ContractionKernel::accumulatorAt(int64_t index) {
  auto [rowInBlock, colInBlock] = fragmentPosition(index);
  Value row = add(m0, rowInBlock), col = add(n0, colInBlock);
  Value inside = both(lt(row, sizeM), lt(col, sizeN));
  llvm::DenseMap<unsigned, Value> at = batchIndex;
  at[c.m] = row;
  at[c.n] = col;
  return {at, inside};
}

SmallVector<Value> ContractionKernel::startAccumulators(int64_t count) {
  Value out = c.operands[2];
  Type accumulator = cast<MemRefType>(out.getType()).getElementType();
  Value zeroF = arith::ConstantOp::create(b, loc, b.getZeroAttr(accumulator));
  SmallVector<Value> acc;
  for (int64_t i = 0; i < count; ++i) {
    if (c.zeroStart) {
      acc.push_back(zeroF);
      continue;
    }
    auto [at, inside] = accumulatorAt(i);
    at[c.m] = select(inside, at[c.m], cst(0));
    at[c.n] = select(inside, at[c.n], cst(0));
    Value v = memref::LoadOp::create(b, loc, out, indicesOf(2, at));
    acc.push_back(select(inside, v, zeroF));
  }
  return acc;
}

void ContractionKernel::storeAccumulators(ValueRange acc, bool atomicAdd) {
  // A split K stores partial sums: its launch is built without the amax
  // (rewrite reduces the summed result).
  assert(!(c.amax && atomicAdd) && "an amax over partial sums");
  bool amax = bool(c.amax);
  // With the amax: this thread's largest element value so far (-inf for
  // none: its bits are below those of every non-negative float).
  Value running, negativeInfinity;
  if (amax)
    running = negativeInfinity =
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-INFINITY));
  for (auto [i, value] : llvm::enumerate(acc)) {
    auto [at, inside] = accumulatorAt(i);
    if (amax) {
      // Each element's value is computed whether or not it lies inside
      // the result (at row and column 0 when it does not, which the guard
      // keeps in bounds), so that the maximum takes a select, not a
      // branch: a maximum carried through the stores' branches made ptxas
      // spill on sm_90a.
      at[c.m] = select(inside, at[c.m], cst(0));
      at[c.n] = select(inside, at[c.n], cst(0));
      Stored stored = c.epilogue
                          ? epilogueAt(value, at)
                          : Stored{value, c.operands[2], indicesOf(2, at)};
      running = arith::MaximumFOp::create(
          b, loc, running,
          select(inside, amaxElement(stored.value), negativeInfinity));
      auto ifInside = scf::IfOp::create(b, loc, inside, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifInside.thenBlock());
      memref::StoreOp::create(b, loc, stored.value, stored.buffer,
                              stored.indices);
      continue;
    }
    auto ifInside = scf::IfOp::create(b, loc, inside, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifInside.thenBlock());
    if (atomicAdd) {
      memref::AtomicRMWOp::create(b, loc,
                                  isa<IntegerType>(value.getType())
                                      ? arith::AtomicRMWKind::addi
                                      : arith::AtomicRMWKind::addf,
                                  value, c.operands[2], indicesOf(2, at));
    } else if (c.epilogue) {
      Stored stored = epilogueAt(value, at);
      memref::StoreOp::create(b, loc, stored.value, stored.buffer,
                              stored.indices);
    } else {
      memref::StoreOp::create(b, loc, value, c.operands[2], indicesOf(2, at));
    }
  }
  if (amax)
    foldWarpAmax(running);
}

Value ContractionKernel::amaxElement(Value value) {
  Block *body = c.amax.getBlock();
  IRMapping mapping;
  mapping.map(body->getArgument(0), value);
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  for (Operation &inner : body->without_terminator()) {
    if (&inner == combiner)
      break;
    b.clone(inner, mapping);
  }
  BlockArgument accumulator = body->getArguments().back();
  return mapping.lookupOrDefault(
      combiner->getOperand(combiner->getOperand(0) == accumulator));
}

void ContractionKernel::foldWarpAmax(Value value) {
  // Every lane of the warp reaches this point (the stores above branch
  // per accumulator, not around it), so the shuffles see all 32.
  for (int32_t offset : {16, 8, 4, 2, 1})
    value = arith::MaximumFOp::create(
        b, loc, value,
        gpu::ShuffleOp::create(b, loc, value, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult());
  // The lane register itself, read here: a lane computed from the thread
  // index joins the index arithmetic at the kernel's start and stays live
  // through it (a spill on sm_90a).
  ifLaneZero(gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr), [&] {
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::maxs, bits,
                                c.amaxBits, ValueRange{});
  });
}

/// The fused elementwise op on accumulator `value` at loop dims `at`: its
/// other inputs are loaded where its maps say, its body cloned.
ContractionKernel::Stored
ContractionKernel::epilogueAt(Value value, llvm::DenseMap<unsigned, Value> at) {
  // The M dims one by one (row-major) from the collapsed row.
  if (c.mDims.size() > 1) {
    Value row = at[c.m];
    for (unsigned j = c.mDims.size(); j-- > 0;) {
      at[c.mDims[j]] = j ? arith::RemUIOp::create(b, loc, row, mSizes[j]) : row;
      if (j)
        row = arith::DivUIOp::create(b, loc, row, mSizes[j]);
    }
  }
  // The epilogue's loop dims are the result's dims, in order.
  AffineMap resultMap = c.op.getIndexingMapsArray()[2];
  SmallVector<Value> loops;
  for (unsigned i = 0; i < resultMap.getNumResults(); ++i)
    loops.push_back(at.lookup(resultMap.getDimPosition(i)));
  linalg::GenericOp e = c.epilogue;
  auto indices = [&](OpOperand &operand) {
    AffineMap map = e.getMatchingIndexingMap(&operand);
    SmallVector<Value> result;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      result.push_back(loops[map.getDimPosition(i)]);
    return result;
  };
  IRMapping mapping;
  Block *body = e.getBlock();
  Value result = c.op.getDpsInits()[0];
  for (OpOperand &operand : e->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (arg.use_empty())
      continue;
    // The product's buffer holds the product when the epilogue runs,
    // whether the epilogue reads it as an input or (in place) as its
    // output.
    if (operand.get() == result)
      mapping.map(arg, value);
    else
      mapping.map(
          arg, memref::LoadOp::create(b, loc, operand.get(), indices(operand)));
  }
  for (Operation &inner : body->without_terminator())
    b.clone(inner, mapping);
  Value computed =
      mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
  OpOperand *init = e.getDpsInitOperand(0);
  return {computed, init->get(), indices(*init)};
}
