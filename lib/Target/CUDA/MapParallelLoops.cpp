//===- MapParallelLoops.cpp - parallel loop nests as grids of blocks ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/BufferPlacement.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_CHECKHOSTCODEPASS
#define GEN_PASS_DEF_MAPPARALLELLOOPSPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;

namespace {

gpu::ParallelLoopDimMappingAttr mapping(MLIRContext *ctx,
                                        gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity,
                                              identity);
}

void mapAll(scf::ParallelOp loop, gpu::Processor processor) {
  SmallVector<gpu::ParallelLoopDimMappingAttr> dims(
      loop.getNumLoops(), mapping(loop.getContext(), processor));
  (void)gpu::setMappingAttr(loop, dims);
}

/// Whether `op` (or an op inside it) reads or writes a buffer in device
/// memory: host code must leave that to kernels. Allocation, views and
/// shape queries only handle descriptors; buffers in host memory
/// (tessera-cuda-place-buffers) are the host's.
bool touchesBuffers(Operation *op) {
  WalkResult result = op->walk([](Operation *inner) {
    if (isa<scf::ParallelOp, gpu::LaunchOp>(inner))
      return WalkResult::skip();
    if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
            memref::GetGlobalOp, memref::DimOp>(inner))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (auto &effect : instances)
      if (isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect()) &&
          effect.getValue() && isa<MemRefType>(effect.getValue().getType()) &&
          !tessera::cuda::isHostBuffer(effect.getValue()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

struct MapParallelLoopsPass
    : tessera::cuda::impl::MapParallelLoopsPassBase<MapParallelLoopsPass> {
  using MapParallelLoopsPassBase::MapParallelLoopsPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (failed(wrapHostWork(function.getBody())))
      return signalPassFailure();
    SmallVector<scf::ParallelOp> outermost;
    function.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      outermost.push_back(loop);
      return WalkResult::skip();
    });
    for (scf::ParallelOp loop : outermost)
      mapNest(loop);
  }

  /// Wraps each run of host ops that touch buffers in a one-iteration
  /// parallel loop, recursing into host loops and branches that contain
  /// parallel loops of their own.
  LogicalResult wrapHostWork(Region &region) {
    for (Block &block : region) {
      // Each run, with the pure ops among it that do not compute on it.
      SmallVector<std::pair<SmallVector<Operation *>, SmallVector<Operation *>>>
          runs;
      SmallVector<Operation *> run, aside;
      auto close = [&] {
        if (llvm::any_of(run, touchesBuffers))
          runs.emplace_back(run, aside);
        run.clear();
        aside.clear();
      };
      for (Operation &op : block) {
        if (isa<scf::ParallelOp, gpu::LaunchOp>(op) ||
            op.hasTrait<OpTrait::IsTerminator>()) {
          close();
          continue;
        }
        bool hasKernels = false;
        op.walk([&](Operation *inner) {
          if (isa<scf::ParallelOp, gpu::LaunchOp>(inner))
            hasKernels = true;
        });
        if (hasKernels) {
          close();
          for (Region &inner : op.getRegions())
            if (failed(wrapHostWork(inner)))
              return failure();
          continue;
        }
        // A pure op joins the run when it computes on the run's values; one
        // that does not (a shape query the host uses later, an index the
        // run reads) stays on the host, moved before the run's kernel.
        auto computesOnRun = [&](Operation *candidate) {
          return llvm::any_of(candidate->getOperands(), [&](Value v) {
            return llvm::is_contained(run, v.getDefiningOp());
          });
        };
        if (touchesBuffers(&op) ||
            (!run.empty() && isPure(&op) && computesOnRun(&op)))
          run.push_back(&op);
        else if (!run.empty() && isPure(&op))
          aside.push_back(&op);
        else
          close();
      }
      close();
      for (auto &[ops, before] : runs)
        if (failed(wrapRun(ops, before)))
          return failure();
    }
    return success();
  }

  LogicalResult wrapRun(ArrayRef<Operation *> ops,
                        ArrayRef<Operation *> before) {
    // The pure ops among the run that do not read it go first, in order
    // (their operands are defined before them and outside the run).
    for (Operation *op : before)
      op->moveBefore(ops.front());
    llvm::SmallPtrSet<Operation *, 8> inRun(ops.begin(), ops.end());
    for (Operation *op : ops)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers()) {
          Operation *owner = ops.front()->getBlock()->findAncestorOpInBlock(
              *user);
          if (!owner || !inRun.contains(owner))
            return op->emitError()
                   << "'" << op->getName()
                   << "' reads GPU memory on the host and the host uses "
                      "its result; the CUDA target cannot run this yet";
        }
    OpBuilder b(ops.front());
    Location loc = ops.front()->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto single = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
    Operation *terminator = single.getBody()->getTerminator();
    for (Operation *op : ops)
      op->moveBefore(terminator);
    return success();
  }

  /// One outermost nest: all its dims collapsed into one, tiled by the
  /// block size; nested parallel loops run sequentially in each thread.
  void mapNest(scf::ParallelOp loop) {
    IRRewriter rewriter(loop.getContext());
    if (loop.getNumLoops() > 1) {
      std::vector<unsigned> all(loop.getNumLoops());
      for (unsigned i = 0; i < all.size(); ++i)
        all[i] = i;
      Block *block = loop->getBlock();
      Operation *next = loop->getNextNode();
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
      // The collapsed loop is the last parallel loop before `next`.
      scf::ParallelOp collapsed;
      for (Operation &op : *block) {
        if (&op == next)
          break;
        if (auto p = dyn_cast<scf::ParallelOp>(op))
          collapsed = p;
      }
      loop = collapsed;
    }
    auto [outer, inner] =
        scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
    mapAll(outer, gpu::Processor::BlockX);
    mapAll(inner, gpu::Processor::ThreadX);
    inner.getBody()->walk([&](scf::ParallelOp nested) {
      mapAll(nested, gpu::Processor::Sequential);
    });
  }
};

} // namespace

namespace {

struct CheckHostCodePass
    : tessera::cuda::impl::CheckHostCodePassBase<CheckHostCodePass> {
  void runOnOperation() override {
    bool failed = false;
    for (auto function : getOperation().getOps<func::FuncOp>())
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<scf::ParallelOp>(op)) {
          op->emitError("a parallel loop nest was left on the host (it could "
                        "not be mapped to a grid of GPU blocks)");
          failed = true;
          return WalkResult::skip();
        }
        if (op->getNumRegions() == 0 && touchesBuffers(op)) {
          op->emitError() << "'" << op->getName()
                          << "' reads or writes GPU memory from host code";
          failed = true;
        }
        return WalkResult::advance();
      });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
