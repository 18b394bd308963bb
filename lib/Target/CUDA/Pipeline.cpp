//===- Pipeline.cpp - the CUDA backend's lowering pipeline ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Target/CUDA/Pipeline.h"
#include "tessera/Conversion/Passes.h"
#include "tessera/Target/CPU/Passes.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Target/CUDA/Passes.h"
#include "tessera/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessera::cuda::buildLinalgPipeline(OpPassManager &pm, bool fuse) {
  // Fusion regions are inlined: the kernels are formed from linalg ops.
  // Attention the fused tensor-core kernel takes (bf16/f16) becomes a call
  // that tessera-cuda-flash-attention replaces with the kernel once the
  // program is on buffers; other attention lowers to its products and
  // softmax.
  pm.addPass(createFlashAttentionCallPass());
  ::tessera::ConvertTesseraToLinalgPassOptions lowering;
  lowering.keepReductionRegions = false;
  // The CPU's tiled attention loop nest allocates inside its parallel
  // loop: here attention the fused kernel does not take is its products
  // and softmax, each a kernel.
  lowering.tiledAttention = false;
  // fp8 operands stay fp8 up to the tensor-core kernels (sm_90a's wgmma
  // reads them as they are; tessera-cuda-decode-fp8 widens what remains).
  lowering.fp8Operands = true;
  pm.addNestedPass<func::FuncOp>(createConvertTesseraToLinalgPass(lowering));
  // Narrow convolutions: an im2col gather and a tensor-core GEMM.
  pm.addNestedPass<func::FuncOp>(createConvolutionGemmsPass());
  // Elementwise producers computed inside their consumers' loops (one
  // kernel instead of one per op).
  // Transposed operands read in place: no transpose kernel per run.
  pm.addNestedPass<func::FuncOp>(createFoldTransposesPass());
  if (fuse)
    pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tessera::cuda::buildGPUPipeline(OpPassManager &pm,
                                     const CUDAOptions &options) {
  // The signature, read while the entry function still takes tensors.
  RecordSignaturePassOptions signature;
  signature.dropArgAttrs = true;
  pm.addPass(createRecordSignaturePass(signature));
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addNestedPass<func::FuncOp>(createExpandMathPass());

  // Outputs are buffers the caller owns (the runtime copies them to the
  // host and gives them back).
  cpu::buildBufferizePipeline(pm);
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());

  // Every copy and loop nest a kernel; views stay on the host.
  pm.addNestedPass<func::FuncOp>(createReshapesToViewsPass());
  pm.addNestedPass<func::FuncOp>(createCopiesToLinalgPass());
  // bf16/f16 contractions: tensor-core kernels (gpu.launch) of their own.
  TensorCoreMatmulPassOptions tensorCores;
  tensorCores.allowTF32 = options.allowTF32;
  tensorCores.hopper = llvm::is_contained(options.gpus, "sm_90a");
  pm.addPass(createTensorCoreMatmulPass(tensorCores));
  pm.addPass(createFlashAttentionPass());
  pm.addNestedPass<func::FuncOp>(createDecodeFp8Pass());
  // Row reductions (softmax, norms): one warp per row.
  pm.addNestedPass<func::FuncOp>(createWarpReductionsPass());
  // Elementwise ops and copies: 16-byte loads and stores.
  pm.addNestedPass<func::FuncOp>(createVectorizeElementwisePass());
  pm.addPass(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createPlaceBuffersPass());
  // Loops nested in a kernel's loop run sequentially in its thread.
  pm.addNestedPass<func::FuncOp>(cpu::createSequentializeNestedParallelPass());
  MapParallelLoopsPassOptions map;
  map.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createMapParallelLoopsPass(map));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  // Constants and dims go into the kernels (not passed as arguments), so
  // that divisions by tile sizes become shifts there.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeKernelModulesPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCheckHostCodePass());
}

void tessera::cuda::buildLLVMPipeline(OpPassManager &pm,
                                      const CUDAOptions &options) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // One NVVM target per architecture (sm_90a's alone on the kernels that
  // use its instructions): gpu-module-to-binary writes the PTX of each.
  AttachTargetsPassOptions targets;
  targets.chips.assign(options.gpus.begin(), options.gpus.end());
  // What remains of math after tessera-cuda-expand-math (floor, sqrt,
  // fabs) calls libdevice, whose bodies are single PTX instructions.
  targets.linkLibs = {options.cudaPath + "/nvvm/libdevice/libdevice.10.bc"};
  pm.addPass(createAttachTargetsPass(targets));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  // Host code: buffers come from the artifact's device allocator.
  pm.addPass(createConvertMathToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createDeviceGlobalsPass());
  pm.addPass(createCanonicalizerPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  KernelImagesPassOptions images;
  images.cudaPath = options.cudaPath;
  pm.addPass(createKernelImagesPass(images));
}

void tessera::cuda::registerDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, nvgpu::NVGPUDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerNVVMDialectTranslation(registry);
  registerConvertNVVMToLLVMInterface(registry);
}
