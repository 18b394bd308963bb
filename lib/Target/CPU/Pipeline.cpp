//===- Pipeline.cpp - the CPU backend's lowering pipeline -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Conversion/Passes.h"
#include "tessera/Target/CPU/Passes.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

tessera::cpu::DotProducts tessera::cpu::dotProductsFor(llvm::StringRef cpu,
                                                       bool hasAvx512BF16,
                                                       bool hasAvx512VNNI) {
  DotProducts dots;
  dots.bf16 = hasAvx512BF16 && cpu.starts_with("znver");
  dots.int8 = hasAvx512VNNI;
  return dots;
}

tessera::cpu::DotProducts tessera::cpu::hostDotProducts() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return dotProductsFor(llvm::sys::getHostCPUName(),
                        features.lookup("avx512bf16"),
                        features.lookup("avx512vnni"));
}

void tessera::cpu::buildLinalgPipeline(OpPassManager &pm, bool fuse,
                                       const CPUOptions &options) {
  // Identical kernels (a model's repeated layers) are lowered and compiled
  // once, as functions.
  ::tessera::OutlineKernelsPassOptions outline;
  outline.summary = options.summarizeSharedKernels;
  pm.addPass(createOutlineKernelsPass(outline));
  ::tessera::ConvertTesseraToLinalgPassOptions lowering;
  lowering.keepReductionRegions = fuse;
  lowering.reportSlowPaths = options.reportGenericContractions;
  // Attention's blocks for the register tile (measured at sequence 512 and
  // 2048, docs/Architecture.md): with AVX2's 4 x 24 tile, larger blocks
  // (128 queries x 256 keys) spend less of the time outside it; with
  // AVX-512's 8 x 48 tile, the pass's 64 x 128.
  if (options.vectorBits == 256) {
    lowering.attentionQueryBlock = 128;
    lowering.attentionKeyBlock = 256;
  }
  // tessera-cpu-strided-reads reads every other element of a row as
  // contiguous vectors and a shuffle: a stride-2 depthwise convolution
  // then reads its taps at the stride instead of computing twice the
  // columns and subsampling (MobileNetV2's at 112 x 112, one thread, both
  // with strided reads: 0.45 ms subsampled, 0.30 ms at the stride).
  lowering.maxWindowStride = kMaxReadStride;
  pm.addNestedPass<func::FuncOp>(createConvertTesseraToLinalgPass(lowering));
  // Softmax and normalization regions as one loop over rows.
  if (fuse)
    pm.addNestedPass<func::FuncOp>(createFuseReductionRegionsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tessera::cpu::buildBufferizePipeline(OpPassManager &pm,
                                          bool freeForallAllocations) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loop-carried tensors may come back in a new buffer (attention's
  // running row maximum is read again after it is updated).
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
  if (freeForallAllocations)
    pm.addNestedPass<func::FuncOp>(createFreeForallAllocationsPass());
  // Public functions return buffers their caller owns (cloned when they
  // would alias a constant), so outputs may have data-dependent shapes.
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  // Canonicalize first, as upstream's deallocation pipeline does: the
  // simplification's buffer-origin analysis is computed once, and the
  // trivial deallocations it would erase on the way left it reading erased
  // values (a crash on a symbolic-batch ViT's classifier head).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Parallel loops with less work than this (iterations times ops, known
/// at compile time) run on the calling thread: forking costs more, and
/// more so when another process shares the cores (MobileNetV2's small
/// layers: docs/Architecture.md).
static constexpr int64_t kMinParallelWork = 32768;

void tessera::cpu::buildLLVMPipeline(OpPassManager &pm,
                                     const CPUOptions &options) {
  // The signature, read while the entry function still takes tensors, for
  // the artifact and the JIT; LLVM has no use for the argument attributes.
  RecordSignaturePassOptions signature;
  signature.dropArgAttrs = true;
  pm.addPass(createRecordSignaturePass(signature));
  pm.addNestedPass<func::FuncOp>(createSetFunctionLinkagePass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  // erf, tanh, exp and log as polynomials, so elementwise loops vectorize.
  pm.addNestedPass<func::FuncOp>(createApproximateMathPass());
  // Register tiles for matmul-like loops, their accumulators hoisted out of
  // the k loop into vector registers.
  TileContractionsPassOptions tiling;
  tiling.reportGeneric = options.reportGenericContractions;
  tiling.vectorBits = options.vectorBits;
  tiling.bf16DotProduct = options.bf16DotProduct;
  tiling.int8DotProduct = options.int8DotProduct;
  pm.addPass(createTileContractionsPass(tiling));
  // A tensor's largest |value| (fp8 current scaling's amax) computed by
  // the loop that writes the tensor, tile by tile.
  pm.addNestedPass<func::FuncOp>(createFuseFullReductionsPass());
  // Elementwise loops and row reductions in vector steps.
  pm.addNestedPass<func::FuncOp>(createVectorizeLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLoopInvariantSubsetHoistingPass());
  pm.addPass(createCanonicalizerPass());
  // After the last CSE before bufferization: one empty tensor per use.
  pm.addNestedPass<func::FuncOp>(createSplitEmptyTensorsPass());
  // Results that are strided slices returned as copies (bufferization
  // would cast them to contiguous buffers).
  pm.addNestedPass<func::FuncOp>(createCopyStridedResultsPass());

  buildBufferizePipeline(pm, /*freeForallAllocations=*/true);
  // Equal subviews become one value, so that copies of a tile onto itself
  // (left by bufferizing in-place inserts) fold away.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Strided copies (pads, concatenations) shared among the threads instead
  // of moved by the runtime on the calling thread.
  pm.addNestedPass<func::FuncOp>(createParallelCopiesPass());
  // Reads of every other column (a depthwise convolution's taps at stride
  // 2) as contiguous reads and a shuffle, not a load per lane.
  pm.addNestedPass<func::FuncOp>(createStridedReadsPass());

  // Parallel dims run on OpenMP threads (reductions stay sequential loops
  // inside); `threads` = 0 leaves the count to the OpenMP runtime.
  // Loads and stores through subviews index the base buffer directly (no
  // descriptor per tile step).
  pm.addPass(memref::createFoldMemRefAliasOpsPass());
  pm.addPass(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  SequentializeNestedParallelPassOptions sequential;
  sequential.minParallelWork = kMinParallelWork;
  pm.addNestedPass<func::FuncOp>(
      createSequentializeNestedParallelPass(sequential));
  ConvertSCFToOpenMPPassOptions openmp;
  openmp.numThreads = options.threads;
  pm.addPass(createConvertSCFToOpenMPPass(openmp));
  // Parallel loops of dynamic bounds fork only when their iterations make
  // enough work.
  ParallelIfEnoughWorkPassOptions enoughWork;
  enoughWork.minParallelWork = kMinParallelWork;
  pm.addNestedPass<func::FuncOp>(createParallelIfEnoughWorkPass(enoughWork));
  // Each thread's share of a region's iterations computed in the region.
  pm.addPass(createStaticChunksPass());
  // Inlines the alloca scopes that hold no allocas before loops become
  // blocks.
  pm.addNestedPass<func::FuncOp>(createInlineAllocaScopesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // LLVM intrinsics where they exist (sqrt), libm for the rest (pow).
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Row sums (softmax, norms, attention's running sum) as a tree of
  // vector adds: in order, a 128-element row was 128 dependent scalar adds.
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  vectorOptions.reassociateFPReductions = true;
  // vdpbf16ps (x86vector.avx512.dot) for bf16 products.
  vectorOptions.x86Vector = true;
  // A 16 x 16 f32 transpose (a symbolic-size convolution's product back to
  // NCHW) as shuffles in registers, not 256 element moves.
  vectorOptions.vectorTransposeLowering =
      vector::VectorTransposeLowering::Shuffle16x16;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  // Allocations go through the runtime's block cache, so that large
  // buffers are reused across runs instead of being faulted in each time.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  // Dynamic byte sizes that overflow fail instead of wrapping.
  pm.addNestedPass<func::FuncOp>(createGuardAllocationSizesPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  // Everything else in one conversion (func, cf, arith, index, OpenMP
  // regions), so that values crossing region boundaries agree on their
  // LLVM types.
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // A refused allocation stops the run instead of being written through.
  pm.addPass(createCheckAllocationsPass());
}
