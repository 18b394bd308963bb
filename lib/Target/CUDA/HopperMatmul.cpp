//===- HopperMatmul.cpp - bf16/f16/fp8 contractions on sm_90a wgmma -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// On an sm_90a GPU (H100/H200), a contraction the mma.sync kernel takes runs
// instead as a kernel of warpgroup MMAs fed by the Tensor Memory
// Accelerator:
//
//   - a block is one warpgroup (4 warps, 128 threads) computing a 64x128
//     tile of the result, or two computing a 128x128 tile when the grid of
//     those still fills the GPU (chosen at run time), each warpgroup with
//     wgmma.mma_async m64n128k16 (k32 for fp8) on its 64 rows (f32
//     accumulators, 64 registers per thread);
//   - K advances by 128 bytes (64 16-bit elements, 128 fp8 ones): one
//     thread issues the TMA copies of the next tiles of A (64 x 64) and B
//     (128 x 64, or 64 x 128 when B is stored [k][n]; for 16-bit elements)
//     into one of four shared-memory stages, each stage's mbarrier
//     counting the bytes in; the other stages are multiplied meanwhile;
//   - fp8 (E4M3 or E5M2) operands take m64n128k32, both K-major (B stored
//     [n][k]: fp8 wgmma has no transposed form), rows of whole 16-byte
//     chunks (K a multiple of 16, checked on the host); s8 operands the
//     same into s32 accumulators;
//   - TMA writes the tiles with the 128-byte swizzle, and the wgmma
//     shared-memory descriptors read them with the same swizzle (B stored
//     [k][n] is read transposed, MN-major);
//   - the edges need no code: TMA fills what lies outside A and B with
//     zeros, and the accumulators are stored (or the fused elementwise op
//     computed on them) with bounds checks, as the mma.sync kernel does.
//
// The host builds each operand's tensor map through the artifact's support
// code (tessera_cuda_tensor_map, once per distinct map) and launches this
// kernel only when the device reports compute capability 9.0; any other
// GPU runs the mma.sync kernel, which the artifact also holds. The kernel
// goes into a GPU module of its own that is compiled for sm_90a alone.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreMatmul.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace tessera::cuda::tensor_cores;

namespace {

/// Rows per warpgroup (wgmma's M); a block has one or two warpgroups.
constexpr int64_t kWarpgroupM = 64, kBlockN = 128, kStages = 4;
constexpr int64_t kWarpgroupThreads = 128;
/// A row of a tile is 128 bytes (64 16-bit elements, 128 fp8 ones), the
/// span of the 128-byte swizzle (and the most a swizzled TMA box row may
/// hold); each wgmma reads 32 bytes of it along K.
constexpr int64_t kRowBytes = 128, kStepBytes = 32;
constexpr int64_t kWarpgroupTileA = kWarpgroupM * kRowBytes;
constexpr int64_t kTileB = kBlockN * kRowBytes;
/// The swizzle repeats every 8 rows (1024 bytes); stages start on such a
/// boundary, so the shared window is aligned up by at most 1008 bytes.
constexpr int64_t kSwizzleAtom = 1024;
/// CUtensorMapSwizzle's 128-byte mode, and the descriptors' (bits 62-63).
constexpr int64_t kTensorMapSwizzle128B = 3, kDescriptorSwizzle128B = 1;

constexpr StringLiteral kCapabilityFn = "tessera_cuda_compute_capability";
constexpr StringLiteral kTensorMapFn = "tessera_cuda_tensor_map";

class HopperKernel : public ContractionKernel {
public:
  using ContractionKernel::ContractionKernel;

  /// Host: when the device is sm_90a and A and B suit TMA, builds their
  /// tensor maps and launches this kernel; otherwise runs `otherwise`.
  /// With `parts` (split-k), each block multiplies one of that many parts
  /// of K and adds its tile to the result atomically.
  void build(ModuleOp module, Value parts,
             llvm::function_ref<void()> otherwise) {
    splits = parts;
    declareRuntime(module);
    Value capability = func::CallOp::create(b, loc, kCapabilityFn,
                                            b.getI32Type(), ValueRange{})
                           .getResult(0);
    Value onHopper = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, capability,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 90));
    // TMA reads from 16-byte aligned addresses (the strides are multiples
    // of 16 bytes by the guard, for fp8 by the check here).
    Value ok = onHopper;
    if (c.element.getIntOrFloatBitWidth() == 8)
      ok = both(ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          rem(sizeK, 16), cst(0)));
    for (unsigned i : {0u, 1u}) {
      address[i] =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, c.operands[i]);
      ok = both(ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          rem(address[i], 16), cst(0)));
    }
    auto branch = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    buildLaunch();
    b.setInsertionPointToStart(branch.elseBlock());
    otherwise();
  }

private:
  static void declareRuntime(ModuleOp module) {
    OpBuilder b(module.getBodyRegion());
    MLIRContext *ctx = module.getContext();
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    auto declare = [&](StringRef name, FunctionType type) {
      if (module.lookupSymbol(name))
        return;
      auto f = func::FuncOp::create(b, module.getLoc(), name, type);
      f.setPrivate();
    };
    declare(kCapabilityFn, FunctionType::get(ctx, {}, {i32}));
    // address, element bytes, rank, 5 dims, 4 strides, 5 box dims, swizzle.
    SmallVector<Type> args = {i64, i32, i32};
    args.append(5, i64);
    args.append(4, i64);
    args.append(5, i32);
    args.push_back(i32);
    declare(kTensorMapFn, FunctionType::get(ctx, args, {i64}));
  }

  /// Elements along K in a tile row.
  int64_t blockK() const {
    return kRowBytes / (c.element.getIntOrFloatBitWidth() / 8);
  }

  Value i32(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  }
  Value i64(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
  }
  Value constI32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value constI64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }

  /// Host: the tensor map of operand `index` (its dims innermost first,
  /// row-major strides), with a box of `box` elements per dim.
  Value tensorMap(unsigned index, ArrayRef<Value> box) {
    Value buffer = c.operands[index];
    auto type = cast<MemRefType>(buffer.getType());
    int64_t rank = type.getRank();
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    SmallVector<Value> args = {i64(address[index]), constI32(elementBytes),
                               constI32(rank)};
    SmallVector<Value> dims;
    for (int64_t d = rank; d-- > 0;)
      dims.push_back(memref::DimOp::create(b, loc, buffer, d));
    for (int64_t d = 0; d < 5; ++d)
      args.push_back(d < rank ? i64(dims[d]) : constI64(1));
    Value stride = cst(elementBytes);
    for (int64_t d = 1; d < 5; ++d) {
      if (d < rank) {
        stride = mul(stride, dims[d - 1]);
        args.push_back(i64(stride));
      } else {
        args.push_back(constI64(0));
      }
    }
    for (int64_t d = 0; d < 5; ++d) {
      std::optional<int64_t> known =
          d < int64_t(box.size()) ? getConstantIntValue(box[d]) : 1;
      args.push_back(known ? constI32(*known) : i32(box[d]));
    }
    args.push_back(constI32(kTensorMapSwizzle128B));
    return func::CallOp::create(b, loc, kTensorMapFn, b.getI64Type(), args)
        .getResult(0);
  }

  /// Host: 128-row blocks (two warpgroups) when their grid still has a
  /// wave of blocks, 64-row blocks (one) otherwise.
  Value chooseBlockRows() {
    Value wide = fillsWave(2 * kWarpgroupM, kBlockN);
    return select(wide, cst(2 * kWarpgroupM), cst(kWarpgroupM));
  }

  void buildLaunch() {
    blockM = chooseBlockRows();
    // Box dims, innermost first.
    tensorMaps[0] = tensorMap(0, {cst(blockK()), blockM});
    tensorMaps[1] = c.bKMajor
                        ? tensorMap(1, {cst(blockK()), cst(kBlockN)})
                        : tensorMap(1, {cst(kRowBytes / 2), cst(blockK())});
    Value gridX = arith::CeilDivUIOp::create(b, loc, sizeN, cst(kBlockN));
    Value gridY = arith::CeilDivUIOp::create(b, loc, sizeM, blockM);
    Value gridZ = splits ? splits : cst(1);
    for (Value size : batchSizes)
      gridZ = mul(gridZ, size);
    Value one = cst(1);
    // A warpgroup per 64 rows; the stages, their barriers and the slack to
    // align the window to the swizzle's 1024 bytes.
    Value threads = mul(div(blockM, kWarpgroupM), cst(kWarpgroupThreads));
    Value sharedBytes =
        add(mul(cst(kStages), stageBytes()), cst(kStages * 8 + kSwizzleAtom));
    auto launch =
        gpu::LaunchOp::create(b, loc, gridX, gridY, gridZ, threads, one, one,
                              /*dynamicSharedMemorySize=*/i32(sharedBytes));
    launch->setAttr(
        "tessera.cuda.kernel",
        b.getStringAttr(splits ? "wgmma_gemm_split_k" : "wgmma_gemm"));
    launch->setAttr("tessera.cuda.arch", b.getStringAttr("sm_90a"));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    buildKernel(launch);
    gpu::TerminatorOp::create(b, loc);
  }

  /// Warp w of the block (w % 4 of warpgroup w / 4) holds rows 16w ..
  /// 16w+15; register 4j+r at row lane/4 + 8*(r/2), column 8j + 2*(lane%4)
  /// + r%2.
  std::pair<Value, Value> fragmentPosition(int64_t index) override {
    int64_t j = index / 4, r = index % 4;
    Value row =
        add(mul(div(tid, 32), cst(16)), add(div(lane, 4), cst(8 * (r / 2))));
    Value col = add(cst(8 * j + r % 2), mul(rem(lane, 4), cst(2)));
    return {row, col};
  }

  /// A shared-memory address (an offset in the block's window) as a
  /// pointer.
  Value sharedPointer(Value address) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i64(address));
  }
  /// A stage: A's tile (blockM rows of 128 bytes), then B's.
  Value stageBytes() { return add(mul(blockM, cst(kRowBytes)), cst(kTileB)); }
  Value tileA(Value stage) { return add(smem, mul(stage, stageBytes())); }
  Value tileB(Value stage) {
    return add(tileA(stage), mul(blockM, cst(kRowBytes)));
  }
  Value barrier(Value stage) {
    Value barriers = mul(cst(kStages), stageBytes());
    return sharedPointer(add(smem, add(barriers, mul(stage, cst(8)))));
  }

  /// The wgmma descriptor of a tile at shared `address` (128-byte
  /// swizzle): start address, leading and stride byte offsets, each >> 4.
  Value descriptor(Value address, int64_t leading, int64_t stride) {
    Value start = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, i64(address), constI64(0x3FFFF)),
        constI64(4));
    int64_t fields = ((leading >> 4) << 16) | ((stride >> 4) << 32) |
                     (kDescriptorSwizzle128B << 62);
    return arith::OrIOp::create(b, loc, start, constI64(fields));
  }

  /// The tensor-map coordinates (innermost first) of operand `index`'s
  /// tile that starts at loop dims `at`.
  SmallVector<Value> coordinates(unsigned index,
                                 const llvm::DenseMap<unsigned, Value> &at) {
    SmallVector<Value> result;
    for (unsigned dim : llvm::reverse(c.roles[index]))
      result.push_back(i32(at.lookup(dim)));
    return result;
  }

  /// One TMA copy of operand `index`'s box at `at` into shared `address`,
  /// counted on `bar`.
  void copyBox(unsigned index, Value address, Value bar,
               const llvm::DenseMap<unsigned, Value> &at) {
    Value map = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), tensorMaps[index]);
    // The copy's destination is in the cluster's shared window (address
    // space 7), where this block's own shared memory is too.
    Value destination = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
        sharedPointer(address));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, destination, map, coordinates(index, at), bar, ValueRange{},
        Value(), Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
  }

  /// Thread 0 starts the copies of K tile `kTile` into stage `stage`.
  void issueTile(Value kTile, Value stage) {
    Value bar = barrier(stage);
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), bar, i32(stageBytes()), NVVM::MemScopeKind::CTA,
        /*relaxed=*/false, /*predicate=*/Value());
    llvm::DenseMap<unsigned, Value> at = batchIndex;
    at[c.k] = mul(kTile, cst(blockK()));
    at[c.m] = m0;
    at[c.n] = n0;
    copyBox(0, tileA(stage), bar, at);
    if (c.bKMajor) {
      copyBox(1, tileB(stage), bar, at);
      return;
    }
    // B stored [k][n]: two boxes of 64 columns, each K rows of 128 bytes.
    copyBox(1, tileB(stage), bar, at);
    at[c.n] = add(n0, cst(kRowBytes / 2));
    copyBox(1, add(tileB(stage), cst(kTileB / 2)), bar, at);
  }

  /// acc += the products of the K tile in stage `stage`: four
  /// wgmma.mma_async m64n128k16 (k32 for fp8), the descriptors' start
  /// address advanced 32 bytes along K each time.
  Value multiplyStage(Value stage, Value acc) {
    // This warpgroup's 64 rows of A.
    Value warpgroupA = add(
        tileA(stage), mul(div(tid, kWarpgroupThreads), cst(kWarpgroupTileA)));
    Value descA = descriptor(warpgroupA, 16, 8 * kRowBytes);
    // K-major B: rows of N like A's rows of M. MN-major B: 8 rows of K
    // 1024 bytes apart, its two 64-column halves kTileB / 2 apart.
    Value descB = c.bKMajor
                      ? descriptor(tileB(stage), 16, 8 * kRowBytes)
                      : descriptor(tileB(stage), kTileB / 2, 8 * kRowBytes);
    MLIRContext *ctx = b.getContext();
    int64_t depth = kStepBytes / (c.element.getIntOrFloatBitWidth() / 8);
    auto shape = NVVM::MMAShapeAttr::get(ctx, kWarpgroupM, kBlockN, depth);
    auto type = isa<Float16Type>(c.element)        ? NVVM::WGMMATypes::f16
                : isa<Float8E4M3FNType>(c.element) ? NVVM::WGMMATypes::e4m3
                : isa<Float8E5M2Type>(c.element)   ? NVVM::WGMMATypes::e5m2
                : c.element.isInteger(8)           ? NVVM::WGMMATypes::s8
                                                   : NVVM::WGMMATypes::bf16;
    auto accumulator =
        c.element.isInteger(8) ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32;
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kk = 0; kk < kRowBytes / kStepBytes; ++kk) {
      // 32 bytes along K into K-major rows, or 16 rows (2048 bytes) down
      // an MN-major tile of 16-bit elements; the fields count 16 bytes.
      int64_t stepA = kk * 2, stepB = c.bKMajor ? kk * 2 : kk * 16 * 8;
      Value a = arith::AddIOp::create(b, loc, descA, constI64(stepA));
      Value bd = arith::AddIOp::create(b, loc, descB, constI64(stepB));
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, acc.getType(), acc, a, bd, shape, type, type, accumulator,
          NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
          NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
          c.bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          /*satfinite=*/nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    return acc;
  }

  void buildKernel(gpu::LaunchOp launch) {
    MLIRContext *ctx = b.getContext();
    tid = launch.getThreadIds().x;
    lane = rem(tid, 32);
    m0 = mul(launch.getBlockIds().y, blockM);
    n0 = mul(launch.getBlockIds().x, cst(kBlockN));

    auto workgroup = gpu::AddressSpaceAttr::get(
        ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
    Value window = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, window);
    smem = arith::AndIOp::create(b, loc, add(base, cst(kSwizzleAtom - 1)),
                                 cst(~(kSwizzleAtom - 1)));

    Value isLeader =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, cst(0));
    // K tiles [first, first + count): all of them, or one part's.
    Value numK = arith::CeilDivUIOp::create(b, loc, sizeK, cst(blockK()));
    auto [first, count] = kTiles(launch.getBlockIds().z, splits, numK);
    {
      // Thread 0 sets up the barriers (one arrival each: its own, with
      // the bytes to expect) and starts stages 0 .. kStages-2.
      auto leader = scf::IfOp::create(b, loc, isLeader, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(leader.thenBlock());
      for (int64_t s = 0; s < kStages; ++s)
        NVVM::MBarrierInitOp::create(b, loc, barrier(cst(s)), constI32(1),
                                     Value());
      // The copies (async proxy) see the initialized barriers.
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      // The tensor maps were written to global memory by the host (a
      // generic-proxy copy): the tensormap proxy that reads them acquires
      // them first.
      for (Value map : tensorMaps)
        NVVM::FenceProxyAcquireOp::create(
            b, loc, NVVM::MemScopeKind::SYS,
            LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                     map),
            constI32(128));
      for (int64_t s = 0; s + 1 < kStages; ++s) {
        auto inside = scf::IfOp::create(b, loc, lt(cst(s), count), false);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(inside.thenBlock());
        issueTile(add(first, cst(s)), cst(s));
      }
    }
    gpu::BarrierOp::create(b, loc);

    auto accType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(
                 kBlockN / 2,
                 cast<MemRefType>(c.operands[2].getType()).getElementType()));
    Value acc = LLVM::UndefOp::create(b, loc, accType);
    SmallVector<Value> start;
    if (splits)
      start.assign(kBlockN / 2,
                   arith::ConstantOp::create(
                       b, loc, b.getZeroAttr(accType.getBody().front())));
    else
      start = startAccumulators(kBlockN / 2);
    for (auto [i, v] : llvm::enumerate(start))
      acc = LLVM::InsertValueOp::create(b, loc, acc, v, i);

    // Step kt works on stage kt % kStages, which holds tile first + kt.
    auto loop = scf::ForOp::create(b, loc, cst(0), count, cst(1), acc);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kt = loop.getInductionVar();
      // Every warp is done with stage (kt-1) % kStages (its wgmma groups
      // completed), which thread 0 now refills with tile kt + kStages-1.
      gpu::BarrierOp::create(b, loc);
      Value ahead = add(kt, cst(kStages - 1));
      auto refill =
          scf::IfOp::create(b, loc, both(isLeader, lt(ahead, count)), false);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(refill.thenBlock());
        issueTile(add(first, ahead), rem(ahead, kStages));
      }
      Value stage = rem(kt, kStages);
      Value parity = i32(rem(div(kt, kStages), 2));
      NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(stage), parity,
                                            constI32(0x989680));
      scf::YieldOp::create(
          b, loc, multiplyStage(stage, loop.getRegionIterArgs().front()));
    }
    SmallVector<Value> values;
    for (int64_t i = 0; i < kBlockN / 2; ++i)
      values.push_back(
          LLVM::ExtractValueOp::create(b, loc, loop.getResult(0), i));
    storeAccumulators(values, /*atomicAdd=*/bool(splits));
  }

  std::array<Value, 2> address, tensorMaps;
  Value blockM, tid, lane, smem, splits;
};

} // namespace

bool tessera::cuda::tensor_cores::isFp8(const Contraction &c) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(c.element);
}

bool tessera::cuda::tensor_cores::hopperTakes(const Contraction &c) {
  // 8-bit wgmma reads B K-major only (the int8 match requires it anyway).
  if (c.element.isF32() ||
      (c.element.getIntOrFloatBitWidth() == 8 && !c.bKMajor))
    return false;
  for (unsigned i : {0u, 1u})
    if (cast<MemRefType>(c.operands[i].getType()).getRank() > 5)
      return false;
  return true;
}

void tessera::cuda::tensor_cores::buildHopperLaunch(
    Contraction &c, OpBuilder &b, ModuleOp module,
    llvm::function_ref<void()> otherwise, Value parts) {
  HopperKernel kernel(c, b);
  kernel.readSizes();
  kernel.build(module, parts, otherwise);
}
