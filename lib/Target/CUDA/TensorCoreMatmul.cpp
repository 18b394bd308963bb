//===- TensorCoreMatmul.cpp - bf16/f16/fp8 contractions on tensor cores ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A contraction whose operands are bf16 or f16 and whose result is f32 (what
// the bf16 and fp16 precision policies produce, and what a model exported
// in bf16/f16 lowers to) becomes a kernel of mma.sync m16n8k16 instructions;
// with allow-tf32, an f32 one becomes m16n8k8 on tf32:
//
//   - a block of 8 warps computes a 128x128 tile of the result, each warp
//     64x32 of it as 4x4 m16n8 accumulator tiles held in registers, when
//     the grid of such tiles has a wave of blocks (128); otherwise 4 warps
//     compute a 64x64 tile, each warp a 32x32 quarter (2x4 tiles);
//   - K advances by 32 (16 for tf32): the next tiles of A and B are copied
//     into shared memory with cp.async (16 bytes per copy, zero-filled past
//     the edges) while the current ones are multiplied, three stages in
//     flight;
//   - fragments come out of shared memory with ldmatrix (.trans for a B
//     stored [k][n]; tf32 fragments are loaded element by element), from
//     rows whose 16-byte chunks are XOR-swizzled so that the rows one
//     fragment load reads hit distinct bank groups;
//   - the accumulators are stored with bounds checks, so any M and N work,
//     or the elementwise op that follows the product (bias, activation,
//     cast) is computed on them and stored instead.
//
// Every dim is a runtime value: one kernel serves every size. The 16-byte
// copies need the contiguous dims to be multiples of 8 (4 for tf32); when
// that is not known statically, the host checks it (and the grid's limits)
// and runs the original contraction (a SIMT loop nest) otherwise.
//
// mma.sync has no fp8: fp8 operands are staged decoded to bf16, element by
// element (exact: every fp8 value is a bf16 value). On sm_90a, wgmma reads
// them as they are (HopperMatmul.cpp). i8 operands (B stored [n][k]) run
// m16n8k32 s8 into i32 accumulators: a row of a stage is 64 bytes either
// way, and each mma reads 32 bytes of K, so tiles, swizzle and ldmatrix are
// the 16-bit kernel's counted in bytes.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreMatmul.h"
#include "KernelBuilding.h"

#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_TENSORCOREMATMULPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;
using namespace tessera::cuda::tensor_cores;

namespace {

constexpr int64_t kStages = 3;
/// Split-k parts are at least this deep (8 K tiles of 32).
constexpr int64_t kSplitDepth = 256;

/// A block's tile of the result and how its warps share it: each warp
/// computes (blockM / warpsM) x (blockN / warpsN) as m16n8 accumulator
/// tiles.
struct Tile {
  int64_t blockM, blockN, warpsM, warpsN;
  int64_t threads() const { return warpsM * warpsN * 32; }
  int64_t warpRows() const { return blockM / warpsM; }
  int64_t warpCols() const { return blockN / warpsN; }
  /// m16 and n8 accumulator tiles per warp.
  int64_t mTiles() const { return warpRows() / 16; }
  int64_t nTiles() const { return warpCols() / 8; }
  int64_t accumulators() const { return mTiles() * nTiles() * 4; }
};
/// 4 warps of 32x32: the tile of split-k, of small grids and of tiles
/// copied element by element.
constexpr Tile kSmallTile{64, 64, 2, 2};
/// 8 warps of 64x32 (twice the mma per fragment loaded from shared
/// memory): when the grid of these tiles still has a wave of blocks.
constexpr Tile kLargeTile{128, 128, 2, 4};

/// Builds the mma.sync kernel and its launch for one contraction.
class KernelBuilder : public ContractionKernel {
public:
  using ContractionKernel::ContractionKernel;

  /// Emits the launch at the builder's insertion point; with `parts`
  /// (split-k), each block multiplies one of that many parts of K and adds
  /// its tile to the result atomically.
  /// Without `alignedCopies` (K, or N of a [k][n] B, not a multiple of
  /// 16 bytes), tiles are copied element by element instead of by 16-byte
  /// cp.async.
  /// `shape` is the block's tile.
  void buildLaunch(Value parts = {}, bool alignedCopies = true,
                   Tile shape = kSmallTile) {
    splits = parts;
    this->alignedCopies = alignedCopies;
    tiling = shape;
    Value gridX = arith::CeilDivUIOp::create(b, loc, sizeN, cst(tiling.blockN));
    Value gridY = arith::CeilDivUIOp::create(b, loc, sizeM, cst(tiling.blockM));
    Value gridZ = splits ? splits : cst(1);
    for (Value size : batchSizes)
      gridZ = mul(gridZ, size);
    MLIRContext *ctx = b.getContext();
    auto workgroup = gpu::AddressSpaceAttr::get(
        ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
    staged = isFp8(c) ? b.getBF16Type() : c.element;
    auto tileA = MemRefType::get({kStages, tiling.blockM, c.blockK}, staged,
                                 MemRefLayoutAttrInterface(), workgroup);
    auto tileB =
        c.bKMajor ? MemRefType::get({kStages, tiling.blockN, c.blockK}, staged,
                                    MemRefLayoutAttrInterface(), workgroup)
                  : MemRefType::get({kStages, c.blockK, tiling.blockN}, staged,
                                    MemRefLayoutAttrInterface(), workgroup);
    Value one = cst(1);
    auto launch = gpu::LaunchOp::create(
        b, loc, gridX, gridY, gridZ, cst(tiling.threads()), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, TypeRange{tileA, tileB});
    std::string name = splits ? "mma_sync_gemm_split_k" : "mma_sync_gemm";
    if (!alignedCopies)
      name += "_unaligned";
    if (tiling.blockM != kSmallTile.blockM)
      name += "_" + std::to_string(tiling.blockM) + "x" +
              std::to_string(tiling.blockN);
    launch->setAttr("tessera.cuda.kernel", b.getStringAttr(name));
    Block &body = launch.getBody().front();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&body);
    smA = launch.getWorkgroupAttributions()[0];
    smB = launch.getWorkgroupAttributions()[1];
    buildKernel(launch);
    gpu::TerminatorOp::create(b, loc);
  }

private:
  /// The 16-byte chunk `chunk` of shared row `row` after the swizzle: rows
  /// of 4 chunks (64 bytes) pair up; longer rows take eight distinct
  /// positions in each group of eight chunks, or for f32 (a tf32 B stored
  /// [k][n], whose fragment reads rows k..k+3) four even ones.
  Value swizzled(Value row, Value chunk, int64_t chunksPerRow) {
    Value key;
    if (chunksPerRow == 4)
      key = rem(div(row, 2), 4);
    else if (!c.element.isF32())
      key = rem(row, 8);
    else
      key = mul(rem(row, 4), cst(2));
    return mul(arith::XOrIOp::create(b, loc, chunk, key), cst(c.chunk));
  }

  /// One side of a shared tile: a loop dim, its size, and where the tile
  /// starts along it.
  struct TileDim {
    unsigned dim;
    Value size, base;
  };

  /// Copies a `rows` x `cols` tile of operand `operand` (rows along `row`,
  /// the contiguous columns along `col`) into stage `stage` of `tile`:
  /// cp.async of 16 bytes per thread and step, zero-filled outside the
  /// matrix (the source index then clamped to 0); element by element when
  /// the rows are not whole 16-byte chunks.
  void copyTile(unsigned operand, Value tile, Value stage, TileDim row,
                TileDim col, int64_t rows, int64_t cols) {
    int64_t chunksPerRow = cols / c.chunk;
    Value zero = cst(0), chunkElements = cst(c.chunk);
    int64_t threads = tiling.threads();
    for (int64_t i = 0; i < rows * chunksPerRow / threads; ++i) {
      Value id = add(tid, cst(i * threads));
      Value r = div(id, chunksPerRow), chunk = rem(id, chunksPerRow);
      Value globalRow = add(row.base, r);
      Value globalCol = add(col.base, mul(chunk, chunkElements));
      if (!alignedCopies) {
        copyElements(operand, tile,
                     {stage, r, swizzled(r, chunk, chunksPerRow)}, row, col,
                     globalRow, globalCol);
        continue;
      }
      Value valid = both(lt(globalRow, row.size), lt(globalCol, col.size));
      llvm::DenseMap<unsigned, Value> at = batchIndex;
      at[row.dim] = select(valid, globalRow, zero);
      at[col.dim] = select(valid, globalCol, zero);
      copy16(tile, {stage, r, swizzled(r, chunk, chunksPerRow)},
             c.operands[operand], indicesOf(operand, at), c.chunk, valid);
    }
  }

  /// The `c.chunk` elements from (globalRow, globalCol) on, each loaded
  /// (zero outside the matrix; fp8 decoded to bf16) and stored at `dst` on
  /// in shared `tile`.
  void copyElements(unsigned operand, Value tile, SmallVector<Value> dst,
                    TileDim row, TileDim col, Value globalRow,
                    Value globalCol) {
    Value zero = cst(0);
    Value rowInside = lt(globalRow, row.size);
    Value zeroElement =
        arith::ConstantOp::create(b, loc, staged, b.getZeroAttr(staged));
    Value first = dst.back();
    for (int64_t e = 0; e < c.chunk; ++e) {
      Value at_ = add(globalCol, cst(e));
      Value valid = both(rowInside, lt(at_, col.size));
      llvm::DenseMap<unsigned, Value> at = batchIndex;
      at[row.dim] = select(valid, globalRow, zero);
      at[col.dim] = select(valid, at_, zero);
      Value v = memref::LoadOp::create(b, loc, c.operands[operand],
                                       indicesOf(operand, at));
      if (v.getType() != staged) // fp8 (tessera-cuda-decode-fp8 expands)
        v = arith::TruncFOp::create(
            b, loc, staged, arith::ExtFOp::create(b, loc, b.getF32Type(), v));
      dst.back() = add(first, cst(e));
      memref::StoreOp::create(b, loc, select(valid, v, zeroElement), tile, dst);
    }
  }

  /// Copies K tile `kTile` of A and B into stage `stage`.
  void loadTile(Value kTile, Value stage) {
    TileDim k{c.k, sizeK, mul(kTile, cst(c.blockK))};
    TileDim m{c.m, sizeM, m0}, n{c.n, sizeN, n0};
    copyTile(0, smA, stage, m, k, tiling.blockM, c.blockK);
    if (c.bKMajor)
      copyTile(1, smB, stage, n, k, tiling.blockN, c.blockK);
    else
      copyTile(1, smB, stage, k, n, c.blockK, tiling.blockN);
  }

  /// One tf32 operand register: the f32 element at (row, col) of a
  /// shared tile with 4-float chunks, rounded to tf32 (cvt.rna).
  Value tf32At(Value tile, Value stage, Value row, Value col,
               int64_t chunksPerRow) {
    Value physical =
        add(swizzled(row, div(col, c.chunk), chunksPerRow), rem(col, c.chunk));
    Value value =
        memref::LoadOp::create(b, loc, tile, ValueRange{stage, row, physical});
    return NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), value,
                                              NVVM::FPRoundingMode::RNA);
  }

  /// The products of one K tile of f32 operands in shared stage `stage`,
  /// as mma.sync m16n8k8 on tf32. Fragments (g = lane/4, t = lane%4): A
  /// rows g and g+8, columns t and t+4; B rows (k) t and t+4, column g.
  SmallVector<Value> multiplyStageTF32(Value stage, SmallVector<Value> acc) {
    Value g = div(lane, 4), t = rem(lane, 4);
    int64_t rowChunks = c.blockK / c.chunk;
    for (int64_t kk = 0; kk < c.blockK / 8; ++kk) {
      Value k0 = add(cst(kk * 8), t), k1 = add(k0, cst(4));
      SmallVector<SmallVector<Value>> fragA;
      for (int64_t mi = 0; mi < tiling.mTiles(); ++mi) {
        Value r0 =
            add(add(mul(warpM, cst(tiling.warpRows())), cst(mi * 16)), g);
        Value r1 = add(r0, cst(8));
        fragA.push_back({tf32At(smA, stage, r0, k0, rowChunks),
                         tf32At(smA, stage, r1, k0, rowChunks),
                         tf32At(smA, stage, r0, k1, rowChunks),
                         tf32At(smA, stage, r1, k1, rowChunks)});
      }
      SmallVector<SmallVector<Value>> fragB;
      for (int64_t nj = 0; nj < tiling.nTiles(); ++nj) {
        Value n = add(add(mul(warpN, cst(tiling.warpCols())), cst(nj * 8)), g);
        if (c.bKMajor)
          fragB.push_back({tf32At(smB, stage, n, k0, rowChunks),
                           tf32At(smB, stage, n, k1, rowChunks)});
        else
          fragB.push_back({tf32At(smB, stage, k0, n, tiling.blockN / c.chunk),
                           tf32At(smB, stage, k1, n, tiling.blockN / c.chunk)});
      }
      for (int64_t mi = 0; mi < tiling.mTiles(); ++mi)
        for (int64_t nj = 0; nj < tiling.nTiles(); ++nj)
          mma(acc, mi * tiling.nTiles() + nj, fragA[mi], fragB[nj], {16, 8, 8},
              NVVM::MMATypes::tf32);
    }
    return acc;
  }

  /// The products of one K tile in shared stage `stage`.
  SmallVector<Value> multiplyStage(Value stage, SmallVector<Value> acc) {
    if (c.element.isF32())
      return multiplyStageTF32(stage, std::move(acc));
    Value lane16 = rem(lane, 16), half = div(lane, 16);
    bool int8 = staged.isInteger(8);
    NVVM::MMATypes type = int8 ? NVVM::MMATypes::s8 : mmaType(staged);
    // K per mma: 32 bytes (two 16-byte chunks of each row).
    int64_t depth = int8 ? 32 : 16;
    for (int64_t kk = 0; kk < c.blockK / depth; ++kk) {
      // A: rows of the warp's first + mi*16 + lane%16, chunk 2*kk + lane/16.
      SmallVector<Value> fragA;
      for (int64_t mi = 0; mi < tiling.mTiles(); ++mi) {
        Value row =
            add(add(mul(warpM, cst(tiling.warpRows())), cst(mi * 16)), lane16);
        Value col = swizzled(row, add(cst(2 * kk), half), c.blockK / c.chunk);
        fragA.push_back(ldmatrix4(smA, {stage, row, col}, staged,
                                  /*transpose=*/false));
      }
      // B: two n8 tiles per ldmatrix.x4.
      SmallVector<Value> fragB;
      for (int64_t np = 0; np < tiling.nTiles() / 2; ++np) {
        Value nBase = add(mul(warpN, cst(tiling.warpCols())), cst(np * 16));
        if (c.bKMajor) {
          // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, ...).
          Value group = div(lane, 8);
          Value row = add(nBase, add(rem(lane, 8), mul(div(group, 2), cst(8))));
          Value col = swizzled(row, add(cst(2 * kk), rem(group, 2)),
                               c.blockK / c.chunk);
          fragB.push_back(ldmatrix4(smB, {stage, row, col}, staged, false));
        } else {
          // Matrices: (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), ...
          Value row = add(cst(kk * 16), lane16);
          Value col = swizzled(row, add(div(nBase, c.chunk), half),
                               tiling.blockN / c.chunk);
          fragB.push_back(ldmatrix4(smB, {stage, row, col}, staged, true));
        }
      }
      for (int64_t mi = 0; mi < tiling.mTiles(); ++mi)
        for (int64_t nj = 0; nj < tiling.nTiles(); ++nj) {
          SmallVector<Value> opA, opB;
          for (int64_t r = 0; r < 4; ++r)
            opA.push_back(operandRegister(fragA[mi], r, staged));
          for (int64_t r = 0; r < 2; ++r)
            opB.push_back(
                operandRegister(fragB[nj / 2], (nj % 2) * 2 + r, staged));
          mma(acc, mi * tiling.nTiles() + nj, opA, opB, {16, 8, depth}, type);
        }
    }
    return acc;
  }

  /// Tile (mi, nj) of a warp's part of the block: c0, c1 at row lane/4,
  /// columns 2*(lane%4) + {0, 1}; c2, c3 eight rows below.
  std::pair<Value, Value> fragmentPosition(int64_t index) override {
    int64_t at = index / 4, r = index % 4, mi = at / tiling.nTiles(),
            nj = at % tiling.nTiles();
    Value row = add(mul(warpM, cst(tiling.warpRows())),
                    add(cst(mi * 16 + (r / 2) * 8), div(lane, 4)));
    Value col = add(mul(warpN, cst(tiling.warpCols())),
                    add(cst(nj * 8 + r % 2), mul(rem(lane, 4), cst(2))));
    return {row, col};
  }

  void buildKernel(gpu::LaunchOp launch) {
    tid = launch.getThreadIds().x;
    lane = rem(tid, 32);
    Value warp = div(tid, 32);
    warpM = div(warp, tiling.warpsN);
    warpN = rem(warp, tiling.warpsN);
    m0 = mul(launch.getBlockIds().y, cst(tiling.blockM));
    n0 = mul(launch.getBlockIds().x, cst(tiling.blockN));
    // K tiles [first, first + count): all of them, or one part's.
    Value numK = arith::CeilDivUIOp::create(b, loc, sizeK, cst(c.blockK));
    auto [first, count] = kTiles(launch.getBlockIds().z, splits, numK);
    SmallVector<Value> acc;
    if (splits) {
      Type accumulator =
          cast<MemRefType>(c.operands[2].getType()).getElementType();
      acc.assign(tiling.accumulators(),
                 arith::ConstantOp::create(b, loc, b.getZeroAttr(accumulator)));
    } else {
      acc = startAccumulators(tiling.accumulators());
    }

    // Prologue: stages 0 .. kStages-2 in flight, a group each.
    for (int64_t s = 0; s + 1 < kStages; ++s) {
      loadTile(add(first, cst(s)), cst(s));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
    auto loop = scf::ForOp::create(b, loc, cst(0), count, cst(1), acc);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      // Step kt works on stage kt % kStages, which holds tile first + kt.
      Value kt = loop.getInductionVar();
      // Tile kt has landed (this thread's copies), and after the barrier
      // every thread's; every warp is also done with stage (kt-1).
      NVVM::CpAsyncWaitGroupOp::create(b, loc, kStages - 2);
      gpu::BarrierOp::create(b, loc);
      Value ahead = add(kt, cst(kStages - 1));
      loadTile(add(first, ahead), rem(ahead, kStages));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
      SmallVector<Value> next = multiplyStage(
          rem(kt, kStages), SmallVector<Value>(loop.getRegionIterArgs()));
      scf::YieldOp::create(b, loc, next);
    }
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);

    storeAccumulators(loop.getResults(), /*atomicAdd=*/bool(splits));
  }

  Value smA, smB, tid, lane, warpM, warpN, splits;
  Tile tiling = kSmallTile;
  /// The element type of the shared tiles (bf16 for fp8 operands).
  Type staged;
  bool alignedCopies = true;
};

struct TensorCoreMatmulPass
    : tessera::cuda::impl::TensorCoreMatmulPassBase<TensorCoreMatmulPass> {
  using TensorCoreMatmulPassBase::TensorCoreMatmulPassBase;
  void runOnOperation() override {
    std::vector<Contraction> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<Contraction> c = match(op, allowTF32))
        found.push_back(*c);
    });
    for (Contraction &c : found)
      rewrite(c);
  }

  void rewrite(Contraction &c) {
    // Rows that are not whole 16-byte chunks (a static K, or N of a
    // [k][n] B, that is not a multiple of 8; 4 for tf32) are copied element
    // by element; when that is only known at run time, the host chooses.
    SmallVector<int64_t> ranges = c.op.getStaticLoopRanges();
    auto misaligned = [&](unsigned dim) {
      return !ShapedType::isDynamic(ranges[dim]) && ranges[dim] % c.chunk != 0;
    };
    auto knownAligned = [&](unsigned dim) {
      return !ShapedType::isDynamic(ranges[dim]) && ranges[dim] % c.chunk == 0;
    };
    bool staticallyMisaligned =
        misaligned(c.k) || (!c.bKMajor && misaligned(c.n));
    bool staticallyAligned =
        knownAligned(c.k) && (c.bKMajor || knownAligned(c.n));
    Operation *first = c.zeroFill ? c.zeroFill : c.op.getOperation();
    for (Operation *op : c.hoisted)
      op->moveBefore(first);
    OpBuilder b(first);
    if (c.amax) {
      // The kernel's atomic maxima start from -inf's bits.
      Location loc = c.amax.getLoc();
      c.amaxBits =
          memref::AllocOp::create(b, loc, MemRefType::get({}, b.getI32Type()));
      singleThread(b, loc, "amax_start", [&](OpBuilder &inner) {
        Value negativeInfinity = arith::ConstantOp::create(
            inner, loc,
            inner.getI32IntegerAttr(llvm::bit_cast<int32_t>(-INFINITY)));
        memref::StoreOp::create(inner, loc, negativeInfinity, c.amaxBits);
      });
      c.fallbackAmax =
          memref::AllocOp::create(b, loc, MemRefType::get({}, b.getF32Type()));
    }
    KernelBuilder kernel(c, b);
    kernel.readSizes();
    // A and the result viewed with their M dims as one (row-major buffers
    // are contiguous).
    if (c.mDims.size() > 1)
      for (unsigned i : {0u, 2u}) {
        auto type = cast<MemRefType>(c.operands[i].getType());
        unsigned rank = type.getRank(), first = rank - c.mDims.size() - 1;
        SmallVector<ReassociationIndices> groups;
        for (unsigned d = 0; d < first; ++d)
          groups.push_back({int64_t(d)});
        ReassociationIndices rows;
        for (unsigned d = first; d + 1 < rank; ++d)
          rows.push_back(d);
        groups.push_back(rows);
        groups.push_back({int64_t(rank - 1)});
        c.operands[i] = memref::CollapseShapeOp::create(b, c.op.getLoc(),
                                                        c.operands[i], groups);
      }
    Value guard = kernel.guard(kSmallTile.blockM);
    auto branch = scf::IfOp::create(b, c.op.getLoc(), guard,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPointToStart(branch.thenBlock());
      if (isFp8(c) || staticallyMisaligned) {
        buildLaunches(c, b, kernel, /*alignedCopies=*/false);
      } else {
        if (!staticallyAligned) {
          auto alignedBranch =
              scf::IfOp::create(b, c.op.getLoc(), kernel.aligned(),
                                /*withElseRegion=*/true);
          b.setInsertionPointToStart(alignedBranch.elseBlock());
          kernel.buildLaunch({}, /*alignedCopies=*/false);
          b.setInsertionPointToStart(alignedBranch.thenBlock());
        }
        buildLaunches(c, b, kernel, /*alignedCopies=*/true);
      }
      // The original ops run where the kernel cannot.
      b.setInsertionPointToStart(branch.elseBlock());
      if (c.zeroFill)
        b.clone(*c.zeroFill);
      b.clone(*c.op);
      if (c.epilogue)
        b.clone(*c.epilogue);
      if (c.amax)
        reduceFallbackAmax(c, b);
    }
    if (c.epilogue)
      c.epilogue->erase();
    if (c.zeroFill)
      c.zeroFill->erase();
    c.op->erase();
    if (c.amax)
      foldAmax(c);
  }

  /// Where the kernel cannot run or splits K: the amax reduction over the
  /// stored buffer into fallbackAmax, from -inf (warps over chunks of it,
  /// tessera-cuda-warp-reductions), then its bits into amaxBits, as the
  /// kernel's atomics would have left them (the reduction's own result may
  /// be filled only after the product).
  void reduceFallbackAmax(Contraction &c, OpBuilder &b) {
    Location loc = c.amax.getLoc();
    Value negativeInfinity =
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-INFINITY));
    linalg::FillOp::create(b, loc, negativeInfinity, c.fallbackAmax);
    Operation *reduction = b.clone(*c.amax);
    reduction->setOperand(reduction->getNumOperands() - 1, c.fallbackAmax);
    singleThread(b, loc, "amax_bits", [&](OpBuilder &inner) {
      Value amax = memref::LoadOp::create(inner, loc, c.fallbackAmax);
      Value bits =
          arith::BitcastOp::create(inner, loc, inner.getI32Type(), amax);
      memref::StoreOp::create(inner, loc, bits, c.amaxBits);
    });
  }

  /// A kernel of one thread, `body` its work.
  static void singleThread(OpBuilder &b, Location loc, StringRef name,
                           llvm::function_ref<void(OpBuilder &)> body) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    launch->setAttr("tessera.cuda.kernel", b.getStringAttr(name));
    OpBuilder inner = OpBuilder::atBlockBegin(&launch.getBody().front());
    body(inner);
    gpu::TerminatorOp::create(inner, loc);
  }

  /// In place of the amax reduction: its result folded with the maximum in
  /// amaxBits (by the reduction's own combiner), in a kernel of one
  /// thread.
  void foldAmax(Contraction &c) {
    linalg::GenericOp r = c.amax;
    OpBuilder b(r);
    Location loc = r.getLoc();
    singleThread(b, loc, "amax_fold", [&](OpBuilder &inner) {
      Block *body = r.getBlock();
      Operation *combiner =
          body->getTerminator()->getOperand(0).getDefiningOp();
      BlockArgument accumulator = body->getArguments().back();
      Value result = r.getDpsInits()[0];
      Value running = memref::LoadOp::create(inner, loc, result);
      Value bits = memref::LoadOp::create(inner, loc, c.amaxBits);
      Value amax =
          arith::BitcastOp::create(inner, loc, inner.getF32Type(), bits);
      IRMapping mapping;
      for (Value operand : combiner->getOperands())
        mapping.map(operand, operand == accumulator ? running : amax);
      memref::StoreOp::create(
          inner, loc, inner.clone(*combiner, mapping)->getResult(0), result);
    });
    memref::DeallocOp::create(b, loc, c.amaxBits);
    memref::DeallocOp::create(b, loc, c.fallbackAmax);
    r->erase();
  }

  /// The launches: split-k or not, on the sm_90a kernel or the mma.sync
  /// kernel, as the sizes and the device say. Without `alignedCopies`
  /// (rows that are not whole 16-byte chunks, or fp8 operands, which the
  /// mma.sync kernel decodes to bf16), the mma.sync kernels copy their
  /// tiles element by element; the wgmma kernel takes fp8 then (its host
  /// check refuses rows that are not whole 16-byte chunks).
  void buildLaunches(Contraction &c, OpBuilder &b, KernelBuilder &kernel,
                     bool alignedCopies) {
    bool wgmma = hopper && hopperTakes(c) && (alignedCopies || isFp8(c));
    withSplitK(c, b, kernel, alignedCopies, wgmma, [&] {
      auto mma = [&] {
        if (alignedCopies)
          buildTiledLaunch(c, b, kernel);
        else
          kernel.buildLaunch({}, /*alignedCopies=*/false);
      };
      // On an sm_90a GPU, the wgmma kernel (its guard checks the grid
      // for the same 64-row blocks); the mma.sync kernel elsewhere.
      if (wgmma)
        buildHopperLaunch(c, b, getOperation(), mma);
      else
        mma();
    });
  }

  /// A grid too small for the GPU (a few rows, as in batch-1 decoding)
  /// splits K: each part's tile is added to the result atomically, into
  /// zeros when the product started from zeros, and the elementwise op
  /// that would have been fused runs after; on the wgmma kernel with
  /// `wgmma` (on an sm_90a GPU), else on the mma.sync kernel. Otherwise
  /// (and always when K is statically too shallow for two parts) what
  /// `otherwise` builds.
  void withSplitK(Contraction &c, OpBuilder &b, KernelBuilder &kernel,
                  bool alignedCopies, bool wgmma,
                  llvm::function_ref<void()> otherwise) {
    int64_t staticK = c.op.getStaticLoopRanges()[c.k];
    if (!ShapedType::isDynamic(staticK) && staticK < 2 * kSplitDepth) {
      otherwise();
      return;
    }
    OpBuilder::InsertionGuard guard(b);
    Location loc = c.op.getLoc();
    Value parts =
        kernel.splitCount(kSmallTile.blockM, kSmallTile.blockN, kSplitDepth);
    Value split =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, parts,
                              arith::ConstantIndexOp::create(b, loc, 1));
    auto splitBranch = scf::IfOp::create(b, loc, split,
                                         /*withElseRegion=*/true);
    b.setInsertionPointToStart(splitBranch.thenBlock());
    if (c.zeroFill)
      b.clone(*c.zeroFill);
    // Partial sums have no amax: it is reduced once they are summed.
    linalg::GenericOp amax = std::exchange(c.amax, {});
    auto mma = [&] { kernel.buildLaunch(parts, alignedCopies); };
    if (wgmma)
      buildHopperLaunch(c, b, getOperation(), mma, parts);
    else
      mma();
    c.amax = amax;
    if (c.epilogue)
      b.clone(*c.epilogue);
    if (c.amax)
      reduceFallbackAmax(c, b);
    b.setInsertionPointToStart(splitBranch.elseBlock());
    otherwise();
  }

  /// The mma.sync kernel with 128x128 tiles when their grid has a wave of
  /// blocks, with 64x64 tiles otherwise: chosen when compiling if the
  /// sizes are static, by the host otherwise.
  void buildTiledLaunch(Contraction &c, OpBuilder &b, KernelBuilder &kernel) {
    if (std::optional<bool> large =
            kernel.staticallyFillsWave(kLargeTile.blockM, kLargeTile.blockN)) {
      kernel.buildLaunch({}, true, *large ? kLargeTile : kSmallTile);
      return;
    }
    OpBuilder::InsertionGuard guard(b);
    auto branch = scf::IfOp::create(
        b, c.op.getLoc(),
        kernel.fillsWave(kLargeTile.blockM, kLargeTile.blockN),
        /*withElseRegion=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    kernel.buildLaunch({}, true, kLargeTile);
    b.setInsertionPointToStart(branch.elseBlock());
    kernel.buildLaunch();
  }
};

} // namespace
