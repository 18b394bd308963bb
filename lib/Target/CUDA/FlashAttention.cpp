//===- FlashAttention.cpp - attention as one tensor-core kernel -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tessera.attention on bf16 or f16 operands with a head dim that is a
// multiple of 16 up to 128 becomes one kernel in the manner of
// FlashAttention-2. Before bufferization,
// tessera-cuda-flash-attention-call replaces the op with a call to a
// private declaration on its buffers (query, key, value, mask, and a new
// output buffer that becomes the result tensor), which bufferization and
// deallocation treat as any call; after bufferization,
// tessera-cuda-flash-attention builds the kernel in its place:
//
//   - a block of 4 warps owns 64 query rows, 16 per warp; the query tile
//     stays in shared memory (its fragments are read again for each key
//     block, leaving the registers to the accumulators);
//   - 64 keys at a time: S = Q K^T with mma.sync m16n8k16 (f32
//     accumulators), then the online softmax on the accumulators (row
//     maxima across the four threads that share a row with warp shuffles,
//     rescaling of the running output and sums), then O += P V with P's
//     accumulators repacked in registers as the A operand;
//   - K and V tiles are copied into shared memory with cp.async while the
//     previous product runs (K of the next block during the softmax and
//     P V, V during Q K^T), rows XOR-swizzled (head dims 64, 128) or
//     padded against bank conflicts;
//   - the scale, the additive mask (read per element, broadcast along its
//     unit dims) and the causal limit apply to the scores; causal blocks
//     past a query block's last visible key are skipped;
//   - no sequence x sequence tensor exists; the output is divided by the
//     row sums once, rounded to the operands' type and stored.
//
// Every dim but the head dim is a runtime value. A row whose keys are all
// hidden (or that has no keys) comes out zero.
//
//===----------------------------------------------------------------------===//
#include "FlashAttention.h"
#include "KernelBuilding.h"

#include "tessera/Dialect/Tessera/IR/TesseraOps.h"
#include "tessera/Target/CUDA/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tessera::cuda {
#define GEN_PASS_DEF_FLASHATTENTIONCALLPASS
#define GEN_PASS_DEF_FLASHATTENTIONPASS
#include "tessera/Target/CUDA/Passes.h.inc"
} // namespace tessera::cuda

using namespace mlir;
namespace ts = mlir::tessera;

namespace {

constexpr int64_t kBlockM = 64, kBlockN = 64, kThreads = 128;
/// The marks of a flash-attention declaration and of its calls' scale and
/// causal flag.
constexpr llvm::StringLiteral kKernelAttr = "tessera.cuda.flash_attention";
constexpr llvm::StringLiteral kScaleAttr = "tessera.scale";
constexpr llvm::StringLiteral kCausalAttr = "tessera.causal";
/// The grid's y dim holds at most this many blocks; more batch entries
/// are looped over.
constexpr int64_t kMaxGridY = 65535;

/// Whether dim `i` of `operand` broadcasts against extent `extent` (it is a
/// static 1 where the extent is not).
bool broadcasts(ShapedType operand, int64_t i, int64_t extent) {
  return operand.getDimSize(i) == 1 && extent != 1;
}

/// Whether `dim` may stand for `extent` at run time: equal statically, a
/// broadcast unit dim, or dynamic where the extent is (then taken to be
/// equal, as the lowering of products takes dynamic batch dims).
bool compatible(int64_t dim, int64_t extent) {
  return dim == extent || dim == 1;
}

} // namespace

namespace tessera::cuda::flash_attention {

std::optional<std::string> whyNot(Operation *op, Type element) {
  auto attention = dyn_cast<ts::AttentionOp>(op);
  if (!attention)
    return std::string("not attention");
  if (!isa<BFloat16Type, Float16Type>(element))
    return std::string("the fused attention kernel takes bf16 or f16");
  RankedTensorType q = attention.getQuery().getType();
  RankedTensorType k = attention.getKey().getType();
  RankedTensorType v = attention.getValue().getType();
  RankedTensorType result = attention.getResult().getType();
  int64_t rank = q.getRank();
  if (k.getRank() != rank || v.getRank() != rank || rank < 2)
    return std::string("query, key and value of different ranks");
  for (RankedTensorType type : {k, v, result})
    if (type.getElementType() != q.getElementType())
      return std::string("operands of different types");
  int64_t d = q.getDimSize(rank - 1);
  if (ShapedType::isDynamic(d) || d % 16 != 0 || d > 128)
    return std::string("a head dim that is not a static multiple of 16 up "
                       "to 128");
  if (k.getDimSize(rank - 1) != d || v.getDimSize(rank - 1) != d)
    return std::string("key or value head dims differ from the query's");
  if (k.getDimSize(rank - 2) != v.getDimSize(rank - 2))
    return std::string("key and value of different lengths");
  for (int64_t i = 0; i + 2 < rank; ++i)
    for (RankedTensorType type : {q, k, v})
      if (!compatible(type.getDimSize(i), result.getDimSize(i)))
        return std::string("batch dims that broadcast other than along "
                           "static unit dims");
  if (Value mask = attention.getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    if (!isa<Float32Type, BFloat16Type, Float16Type>(type.getElementType()))
      return std::string("a mask that is not f32, bf16 or f16");
    if (type.getRank() > rank)
      return std::string("a mask of a higher rank than the scores");
    for (int64_t i = 0; i < type.getRank(); ++i) {
      int64_t at = rank - type.getRank() + i;
      int64_t extent = at + 2 < rank    ? result.getDimSize(at)
                       : at + 2 == rank ? q.getDimSize(at)
                                        : k.getDimSize(at - 1);
      if (!compatible(type.getDimSize(i), extent))
        return std::string("a mask dim that broadcasts other than as a "
                           "static unit dim");
    }
  }
  return std::nullopt;
}

} // namespace tessera::cuda::flash_attention

namespace {

/// Builds the kernel and its launch for one call to a flash-attention
/// declaration: its operands are the query, key and value buffers, the
/// mask's if there is one, and the output buffer.
class FlashAttentionBuilder : ::tessera::cuda::KernelArith {
public:
  FlashAttentionBuilder(func::CallOp call, OpBuilder &b)
      : KernelArith(b, call.getLoc()) {
    ValueRange args = call.getArgOperands();
    for (unsigned x = 0; x < 3; ++x) {
      operands[x] = args[x];
      types[x] = cast<MemRefType>(args[x].getType());
    }
    if (args.size() == 5) {
      mask_ = args[3];
      maskType = cast<MemRefType>(mask_.getType());
    }
    out = args.back();
    resultType = cast<MemRefType>(out.getType());
    element = types[0].getElementType();
    rank = types[0].getRank();
    headDim = types[0].getDimSize(rank - 1);
    rowStride = headDim % 64 == 0 ? headDim : headDim + 8;
    causal = call->hasAttr(kCausalAttr);
    scale = cast<FloatAttr>(call->getAttr(kScaleAttr)).getValueAsDouble();
  }

  /// Emits the launch (when there is work) at the builder's insertion
  /// point.
  void build() {
    sizeQ = memref::DimOp::create(b, loc, operands[0], rank - 2);
    sizeK = memref::DimOp::create(b, loc, operands[1], rank - 2);
    batch = cst(1);
    for (int64_t i = 0; i + 2 < rank; ++i) {
      batchSizes.push_back(memref::DimOp::create(b, loc, out, i));
      batch = mul(batch, batchSizes.back());
    }
    Value zero = cst(0);
    auto positive = [&](Value x) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, x, zero);
    };
    auto ifAny = scf::IfOp::create(b, loc, both(positive(sizeQ),
                                                positive(batch)),
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifAny.thenBlock());
    buildLaunch();
  }

private:
  void buildLaunch() {
    Value gridX = arith::CeilDivUIOp::create(b, loc, sizeQ, cst(kBlockM));
    Value gridY = arith::MinUIOp::create(b, loc, batch, cst(kMaxGridY));
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    auto tile = MemRefType::get({kBlockM, rowStride}, element,
                                MemRefLayoutAttrInterface(), workgroup);
    Value one = cst(1);
    auto launch = gpu::LaunchOp::create(
        b, loc, gridX, gridY, one, cst(kThreads), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, TypeRange{tile, tile, tile});
    launch->setAttr("tessera.cuda.kernel",
                    b.getStringAttr("flash_attention"));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    smQ = launch.getWorkgroupAttributions()[0];
    smK = launch.getWorkgroupAttributions()[1];
    smV = launch.getWorkgroupAttributions()[2];
    tid = launch.getThreadIds().x;
    lane = rem(tid, 32);
    warpRow = mul(div(tid, 32), cst(16));
    m0 = mul(launch.getBlockIds().x, cst(kBlockM));
    // Batch entries beyond the grid's y limit: a loop (one trip usually).
    auto loop = scf::ForOp::create(b, loc, launch.getBlockIds().y, batch,
                                   launch.getGridSize().y);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      buildBatchEntry(loop.getInductionVar());
    }
    gpu::TerminatorOp::create(b, loc);
  }

  /// Where the 16-byte chunk `chunk` of shared row `row` starts, in
  /// elements, such that the eight rows one ldmatrix phase reads land in
  /// eight distinct bank groups: rows of 8 or 16 chunks (head dims 64 and
  /// 128) XOR-swizzle their chunks; other rows are padded by one chunk (an
  /// odd number of chunks apart).
  Value swizzled(Value row, Value chunk) {
    if (rowStride != headDim)
      return mul(chunk, cst(8));
    return mul(arith::XOrIOp::create(b, loc, chunk, rem(row, 8)), cst(8));
  }

  /// The indices of operand `x` (0: query, 1: key, 2: value) at `row` of
  /// its last-but-one dim and `col` of its last.
  SmallVector<Value> indicesOf(unsigned x, Value row, Value col) {
    SmallVector<Value> indices;
    for (int64_t i = 0; i + 2 < rank; ++i)
      indices.push_back(broadcasts(types[x], i, resultType.getDimSize(i))
                            ? cst(0)
                            : batchIndex[i]);
    indices.push_back(row);
    indices.push_back(col);
    return indices;
  }

  /// Copies rows base .. base+63 of operand `x` (`size` rows in all) into
  /// shared tile `tile` with cp.async, zero-filled past the last row.
  void copyRows(unsigned x, Value tile, Value base, Value size) {
    int64_t chunksPerRow = headDim / 8;
    Value zero = cst(0), eight = cst(8);
    for (int64_t i = 0; i < kBlockM * chunksPerRow / kThreads; ++i) {
      Value id = add(tid, cst(i * kThreads));
      Value r = div(id, chunksPerRow), chunk = rem(id, chunksPerRow);
      Value row = add(base, r);
      Value valid = lt(row, size);
      copy16(tile, {r, swizzled(r, chunk)}, operands[x],
             indicesOf(x, select(valid, row, zero), mul(chunk, eight)), 8,
             valid);
    }
  }

  Value ldmatrix(Value tile, Value row, Value chunk, bool transpose) {
    return ldmatrix4(tile, {row, swizzled(row, chunk)}, element, transpose);
  }

  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  /// The maximum (or sum) of `value` over the four threads of a quad (the
  /// threads that hold one accumulator row).
  Value quadReduce(Value value, bool sum) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, value, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = sum ? Value(arith::AddFOp::create(b, loc, value, other))
                  : Value(arith::MaximumFOp::create(b, loc, value, other));
    }
    return value;
  }

  /// The additive mask at query row `row`, key `key` (both inside), in f32.
  Value maskAt(Value row, Value key) {
    SmallVector<Value> indices;
    for (int64_t i = 0; i < maskType.getRank(); ++i) {
      int64_t at = rank - maskType.getRank() + i;
      int64_t extent = at + 2 < rank    ? resultType.getDimSize(at)
                       : at + 2 == rank ? types[0].getDimSize(at)
                                        : types[1].getDimSize(at - 1);
      if (broadcasts(maskType, i, extent))
        indices.push_back(cst(0));
      else
        indices.push_back(at + 2 < rank    ? batchIndex[at]
                          : at + 2 == rank ? row
                                           : key);
    }
    Value value = memref::LoadOp::create(b, loc, mask_, indices);
    if (!value.getType().isF32())
      value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return value;
  }

  /// Query rows m0 .. m0+63 of batch entry `linear` (row-major over the
  /// result's batch dims).
  void buildBatchEntry(Value linear) {
    batchIndex.assign(batchSizes.size(), Value());
    for (size_t i = batchSizes.size(); i-- > 0;) {
      batchIndex[i] = arith::RemUIOp::create(b, loc, linear, batchSizes[i]);
      linear = arith::DivUIOp::create(b, loc, linear, batchSizes[i]);
    }
    Value zero = cst(0), block = cst(kBlockN);
    // Q and the first K tile, in flight while the key blocks are counted.
    copyRows(0, smQ, m0, sizeQ);
    copyRows(1, smK, zero, sizeK);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);

    // Key blocks: all, or (causal) up to the block's last visible key,
    // m0 + 63 + (Sk - Sq).
    Value keys = sizeK;
    if (causal) {
      Value reach = add(add(m0, block), sizeK);
      Value visible = arith::MinUIOp::create(b, loc, sizeK, sub(reach, sizeQ));
      keys = select(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          reach, sizeQ),
                    visible, zero);
    }
    Value numBlocks = arith::CeilDivUIOp::create(b, loc, keys, block);

    // Loop state: the output accumulators, then per row (g, g+8) the
    // running maximum and this thread's part of the running sum.
    int64_t outTiles = headDim / 8;
    Value zeroF = f32(0), negInf = f32(-INFINITY);
    SmallVector<Value> init(outTiles * 4, zeroF);
    init.append({negInf, negInf, zeroF, zeroF});
    auto loop = scf::ForOp::create(b, loc, zero, numBlocks, cst(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> state(loop.getRegionIterArgs());
      buildKeyBlock(loop.getInductionVar(), numBlocks, state);
      scf::YieldOp::create(b, loc, state);
    }
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    storeOutput(loop.getResults());
    // The shared tiles are free for the next batch entry.
    gpu::BarrierOp::create(b, loc);
  }

  /// One block of 64 keys: `state` (output accumulators, maxima, sums) is
  /// updated in place.
  void buildKeyBlock(Value j, Value numBlocks, SmallVector<Value> &state) {
    int64_t outTiles = headDim / 8;
    Value n0 = mul(j, cst(kBlockN));
    // K tile j (and at first Q) is in, and every warp is done with V tile
    // j-1.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    gpu::BarrierOp::create(b, loc);
    copyRows(2, smV, n0, sizeK);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);

    // S = Q K^T: 8 tiles of 16 x 8 per warp. The warp's query fragments
    // are read again for each block (registers go to the accumulators).
    // K rows are the B operand stored with its K (head) dim contiguous:
    // plain ldmatrix, two n8 tiles per x4 (keys 0-7 chunks 2kk and 2kk+1,
    // then keys 8-15).
    NVVM::MMATypes type = mmaType(element);
    Value zeroF = f32(0);
    SmallVector<Value> s(32, zeroF);
    Value group = div(lane, 8), lane16 = rem(lane, 16), half = div(lane, 16);
    for (int64_t kk = 0; kk < headDim / 16; ++kk) {
      Value queries = ldmatrix(smQ, add(warpRow, lane16),
                               add(cst(2 * kk), half), false);
      SmallVector<Value> fragQ;
      for (int64_t r = 0; r < 4; ++r)
        fragQ.push_back(operandRegister(queries, r, element));
      for (int64_t np = 0; np < 4; ++np) {
        Value row = add(cst(np * 16), add(rem(lane, 8), mul(div(group, 2),
                                                              cst(8))));
        Value fragment =
            ldmatrix(smK, row, add(cst(2 * kk), rem(group, 2)), false);
        for (int64_t nt = 2 * np; nt < 2 * np + 2; ++nt)
          mma(s, nt, fragQ,
              {operandRegister(fragment, (nt % 2) * 2, element),
               operandRegister(fragment, (nt % 2) * 2 + 1, element)},
              {16, 8, 16}, type);
      }
    }
    // Every warp is done with K tile j: the next one may come in.
    gpu::BarrierOp::create(b, loc);
    Value next = add(j, cst(1));
    auto ifNext = scf::IfOp::create(b, loc, lt(next, numBlocks), false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifNext.thenBlock());
      copyRows(1, smK, add(n0, cst(kBlockN)), sizeK);
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);

    // The online softmax. Accumulator r of tile nt: row g + 8*(r/2), key
    // 8*nt + 2*(lane%4) + r%2.
    Value g = div(lane, 4), t2 = mul(rem(lane, 4), cst(2));
    Value scaleF = f32(scale), negInf = f32(-INFINITY);
    Value rows[2] = {add(add(m0, warpRow), g),
                     add(add(m0, warpRow), add(g, cst(8)))};
    Value rowMax[2] = {negInf, negInf};
    for (int64_t i = 0; i < 32; ++i) {
      int64_t nt = i / 4, r = i % 4;
      Value row = rows[r / 2];
      Value key = add(n0, add(t2, cst(nt * 8 + r % 2)));
      Value x = arith::MulFOp::create(b, loc, s[i], scaleF);
      Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           key, sizeK);
      if (mask_) {
        Value zero = cst(0);
        Value inside = both(lt(row, sizeQ), lt(key, sizeK));
        x = arith::AddFOp::create(
            b, loc, x,
            maskAt(select(inside, row, zero), select(inside, key, zero)));
      }
      if (causal)
        // Key j is visible from query i when j <= i + (Sk - Sq).
        hidden = arith::OrIOp::create(
            b, loc, hidden,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                  add(key, sizeQ), add(row, sizeK)));
      s[i] = select(hidden, negInf, x);
      rowMax[r / 2] = arith::MaximumFOp::create(b, loc, rowMax[r / 2], s[i]);
    }
    Value alpha[2], shift[2];
    int64_t stateMax = outTiles * 4, stateSum = stateMax + 2;
    for (int64_t h = 0; h < 2; ++h) {
      Value newMax = arith::MaximumFOp::create(
          b, loc, state[stateMax + h], quadReduce(rowMax[h], false));
      // A row that has seen no visible key yet subtracts 0 (exp(-inf) = 0
      // then, not NaN).
      Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         newMax, negInf);
      shift[h] = select(none, zeroF, newMax);
      alpha[h] = math::ExpOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, state[stateMax + h], shift[h]));
      state[stateMax + h] = newMax;
      state[stateSum + h] =
          arith::MulFOp::create(b, loc, state[stateSum + h], alpha[h]);
    }
    for (int64_t i = 0; i < 32; ++i) {
      int64_t h = (i % 4) / 2;
      s[i] = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, s[i], shift[h]));
      state[stateSum + h] =
          arith::AddFOp::create(b, loc, state[stateSum + h], s[i]);
    }
    for (int64_t i = 0; i < outTiles * 4; ++i)
      state[i] = arith::MulFOp::create(b, loc, state[i], alpha[(i % 4) / 2]);

    // V tile j is in.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
    gpu::BarrierOp::create(b, loc);

    // O += P V. P's accumulators for keys 16*kk .. 16*kk+15 are tiles 2kk
    // and 2kk+1, which hold the A fragment's four registers as they are
    // (rows g and g+8, keys 2t, 2t+1 and 8 more). V is the B operand
    // stored [key][head]: ldmatrix.trans, two n8 tiles per x4.
    auto pack = [&](Value lo, Value hi) {
      Value pair = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, element),
          ValueRange{arith::TruncFOp::create(b, loc, element, lo),
                     arith::TruncFOp::create(b, loc, element, hi)});
      return operandRegister(pair, element);
    };
    for (int64_t kk = 0; kk < kBlockN / 16; ++kk) {
      int64_t lo = 2 * kk * 4, hi = (2 * kk + 1) * 4;
      SmallVector<Value> fragP = {pack(s[lo], s[lo + 1]),
                                  pack(s[lo + 2], s[lo + 3]),
                                  pack(s[hi], s[hi + 1]),
                                  pack(s[hi + 2], s[hi + 3])};
      for (int64_t np = 0; np < headDim / 16; ++np) {
        Value fragment = ldmatrix(smV, add(cst(kk * 16), lane16),
                                  add(cst(2 * np), half), true);
        for (int64_t nt = 2 * np; nt < 2 * np + 2; ++nt)
          mma(state, nt, fragP,
              {operandRegister(fragment, (nt % 2) * 2, element),
               operandRegister(fragment, (nt % 2) * 2 + 1, element)},
              {16, 8, 16}, type);
      }
    }
  }

  /// The output rows of this thread divided by their sums, rounded and
  /// stored two elements at a time.
  void storeOutput(ValueRange state) {
    int64_t outTiles = headDim / 8, stateSum = outTiles * 4 + 2;
    Value g = div(lane, 4), t2 = mul(rem(lane, 4), cst(2));
    Value zeroF = f32(0), oneF = f32(1);
    Value inverse[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value sum = quadReduce(state[stateSum + h], true);
      Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          sum, zeroF);
      inverse[h] = select(empty, zeroF,
                          arith::DivFOp::create(b, loc, oneF, sum));
    }
    auto pairType = VectorType::get({2}, element);
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(add(m0, warpRow), add(g, cst(8 * h)));
      auto ifInside = scf::IfOp::create(b, loc, lt(row, sizeQ), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifInside.thenBlock());
      for (int64_t nt = 0; nt < outTiles; ++nt) {
        SmallVector<Value> pair;
        for (int64_t e = 0; e < 2; ++e)
          pair.push_back(arith::TruncFOp::create(
              b, loc, element,
              arith::MulFOp::create(b, loc, state[nt * 4 + 2 * h + e],
                                    inverse[h])));
        Value value = vector::FromElementsOp::create(b, loc, pairType, pair);
        // The output has the result's batch dims (never broadcast).
        SmallVector<Value> indices(batchIndex);
        indices.append({row, add(t2, cst(nt * 8))});
        vector::StoreOp::create(b, loc, value, out, indices);
      }
    }
  }

  Type element;
  int64_t rank, headDim, rowStride;
  double scale;
  bool causal;
  std::array<Value, 3> operands;
  std::array<MemRefType, 3> types;
  Value mask_, out;
  MemRefType maskType, resultType;
  Value sizeQ, sizeK, batch;
  SmallVector<Value> batchSizes, batchIndex;
  Value smQ, smK, smV, tid, lane, warpRow, m0;
};

/// tessera.attention -> a call to a declaration on buffers, which
/// bufferization passes through and tessera-cuda-flash-attention replaces
/// with the kernel.
struct FlashAttentionCallPass
    : ::tessera::cuda::impl::FlashAttentionCallPassBase<
          FlashAttentionCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ts::AttentionOp> found;
    module.walk([&](ts::AttentionOp op) {
      Type element = op.getQuery().getType().getElementType();
      if (!::tessera::cuda::flash_attention::whyNot(op, element))
        found.push_back(op);
    });
    SymbolTable symbols(module);
    for (ts::AttentionOp op : found)
      rewrite(op, symbols);
  }

  void rewrite(ts::AttentionOp op, SymbolTable &symbols) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto bufferType = [](Type type) -> MemRefType {
      auto tensor = cast<RankedTensorType>(type);
      return MemRefType::get(tensor.getShape(), tensor.getElementType());
    };
    SmallVector<Value> args;
    for (Value tensor : op->getOperands())
      args.push_back(bufferization::ToBufferOp::create(
          b, loc, bufferType(tensor.getType()), tensor, /*read_only=*/true));
    // The output's dynamic sizes: batch dims from an operand that has them
    // dynamic (the others match or broadcast), the rows from the query.
    RankedTensorType resultType = op.getResult().getType();
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < resultType.getRank(); ++i) {
      if (!resultType.isDynamicDim(i))
        continue;
      for (unsigned x = 0; x < 3; ++x)
        if (cast<ShapedType>(args[x].getType()).isDynamicDim(i)) {
          dynamicSizes.push_back(memref::DimOp::create(b, loc, args[x], i));
          break;
        }
    }
    Value out = memref::AllocOp::create(b, loc, bufferType(resultType),
                                        dynamicSizes, b.getI64IntegerAttr(64));
    args.push_back(out);

    // The declaration, private to the module (one per call: the types
    // differ).
    OpBuilder atModule = OpBuilder::atBlockEnd(getOperation().getBody());
    auto callee = func::FuncOp::create(
        atModule, loc, "tessera_flash_attention",
        b.getFunctionType(ValueRange(args).getTypes(), {}));
    callee.setPrivate();
    callee->setAttr(kKernelAttr, b.getUnitAttr());
    symbols.insert(callee);

    auto call = func::CallOp::create(b, loc, callee, args);
    int64_t headDim = resultType.getDimSize(resultType.getRank() - 1);
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(double(headDim));
    call->setAttr(kScaleAttr, b.getF32FloatAttr(scale));
    if (op.getCausal())
      call->setAttr(kCausalAttr, b.getUnitAttr());
    op.getResult().replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, loc, resultType, out, /*restrict=*/true, /*writable=*/true));
    op.erase();
  }
};

/// Calls to flash-attention declarations -> the kernel.
struct FlashAttentionPass
    : ::tessera::cuda::impl::FlashAttentionPassBase<FlashAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> declarations;
    module.walk([&](func::FuncOp func) {
      if (func->hasAttr(kKernelAttr))
        declarations.push_back(func);
    });
    if (declarations.empty())
      return;
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && callee->hasAttr(kKernelAttr))
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      FlashAttentionBuilder(call, b).build();
      call.erase();
    }
    for (func::FuncOp declaration : declarations)
      declaration.erase();
  }
};

} // namespace
