// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul --canonicalize | FileCheck %s --check-prefix=FOLDED

// One row times a deep K (a decoding step's linear layer, with its bias):
// the host computes the parts, min(ceil(128 / blocks), K / 256, 16) with
// at least 1; with more than one, the zero fill runs first, the kernel's
// grid z holds the parts, each block multiplies its range of K tiles
// from zero and adds its tile to the result atomically, and the bias add
// runs after as its own op. Otherwise the fused kernel runs as before.
// CHECK-LABEL: func @decode_step
// CHECK: %[[D:.*]] = memref.alloc() : memref<1x64xbf16>
// CHECK: scf.if
// CHECK: %[[PARTS:.*]] = arith.maxui %{{.*}}, %c1
// CHECK: %[[SPLIT:.*]] = arith.cmpi ugt, %[[PARTS]], %c1
// CHECK: scf.if %[[SPLIT]] {
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[R:.*]] : memref<1x64xf32>)
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in ({{.*}}, {{.*}}, {{.*}} = %[[PARTS]])
// CHECK: arith.remui %[[BZ]], %[[PARTS]]
// CHECK: arith.ceildivui %{{.*}}, %[[PARTS]]
// CHECK: nvvm.mma.sync
// CHECK-NOT: arith.truncf
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[R]][
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_split_k"}
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[R]], %arg2 : memref<1x64xf32>, memref<64xf32>) outs(%[[D]] : memref<1x64xbf16>)
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-NOT: memref.atomic_rmw
// CHECK: arith.truncf
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// With hopper, the split product runs on the wgmma kernel on an sm_90a
// GPU (grid z the parts, its tile added atomically, no epilogue), on the
// mma.sync kernel elsewhere; the bias add after either.
// HOPPER-LABEL: func @decode_step
// HOPPER: %[[PARTS:.*]] = arith.maxui %{{.*}}, %c1
// HOPPER: scf.if
// HOPPER-NEXT: linalg.fill
// HOPPER: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %[[PARTS]])
// HOPPER: nvvm.wgmma.mma_async
// HOPPER-NOT: arith.truncf
// HOPPER: memref.atomic_rmw addf
// HOPPER: "wgmma_gemm_split_k"}
// HOPPER-NEXT: } else {
// HOPPER: "mma_sync_gemm_split_k"}
// HOPPER: }
// HOPPER-NEXT: linalg.generic
// HOPPER: } else {
// HOPPER: "wgmma_gemm"}
// HOPPER: "mma_sync_gemm"}
// The parts are known here: 8.
// FOLDED-LABEL: func @decode_step
// FOLDED: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c8{{.*}})
// FOLDED: mma_sync_gemm_split_k
// FOLDED-NOT: "mma_sync_gemm"
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @decode_step(%a: memref<1x2048xbf16>, %b: memref<2048x64xbf16>, %bias: memref<64xf32>) -> memref<1x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<1x64xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<1x2048xbf16>, memref<2048x64xbf16>) outs(%r : memref<1x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  %d = memref.alloc() : memref<1x64xbf16>
  linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : memref<1x64xf32>, memref<64xf32>) outs(%d : memref<1x64xbf16>) {
  ^bb0(%x0: f32, %y: f32, %o: bf16):
    %0 = arith.addf %x0, %y : f32
    %1 = arith.truncf %0 : f32 to bf16
    linalg.yield %1 : bf16
  }
  memref.dealloc %r : memref<1x64xf32>
  return %d : memref<1x64xbf16>
}

// -----

// Must not fire: a static K under two parts' depth (511) keeps the one
// kernel, with no question asked at run time.
// CHECK-LABEL: func @shallow
// FOLDED-LABEL: func @shallow
// CHECK-NOT: mma_sync_gemm_split_k
// CHECK-NOT: atomic_rmw
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK-NOT: mma_sync_gemm_split_k
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @shallow(%a: memref<1x504xbf16>, %b: memref<504x64xbf16>, %c: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<1x504xbf16>, memref<504x64xbf16>) outs(%c : memref<1x64xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// A grid that fills the GPU does not split: 1024 x 1024 is 256 blocks,
// so the parts fold to 1 and only the fused kernel stays.
// CHECK-LABEL: func @wide
// CHECK: mma_sync_gemm_split_k
// FOLDED-LABEL: func @wide
// FOLDED-NOT: mma_sync_gemm_split_k
// FOLDED: "mma_sync_gemm"
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @wide(%a: memref<1024x1024xbf16>, %b: memref<1024x1024xbf16>, %c: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<1024x1024xbf16>, memref<1024x1024xbf16>) outs(%c : memref<1024x1024xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// fp8 operands with one row split K: on an sm_90a GPU on the wgmma
// kernel (which reads the fp8 bytes as they are), elsewhere on the
// mma.sync kernel copying its tiles element by element, decoded to bf16;
// unsplit, the same two. K of 2056 (no multiple of 16) gets the same
// kernels, and the wgmma kernel's host check refuses it at run time.
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul=hopper | FileCheck %s --check-prefix=HOPPER
// HOPPER-LABEL: func @fp8_decode_step
// HOPPER: %[[PARTS:.*]] = arith.maxui %{{.*}}, %c1
// HOPPER: arith.cmpi ugt, %[[PARTS]], %c1
// HOPPER-NEXT: scf.if
// HOPPER: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %[[PARTS]])
// HOPPER: nvvm.wgmma.mma_async
// HOPPER: memref.atomic_rmw addf
// HOPPER: "wgmma_gemm_split_k"}
// HOPPER-NEXT: } else {
// HOPPER-NOT: nvgpu.device_async_copy
// HOPPER: arith.extf %{{.*}} : f8E4M3FN to f32
// HOPPER: memref.atomic_rmw addf
// HOPPER: } {tessera.cuda.kernel = "mma_sync_gemm_split_k_unaligned"}
// HOPPER: } else {
// HOPPER: "wgmma_gemm"}
// HOPPER: "mma_sync_gemm_unaligned"
// HOPPER-LABEL: func @fp8_misaligned_decode_step
// HOPPER: "wgmma_gemm_split_k"
// HOPPER: "mma_sync_gemm_split_k_unaligned"
// HOPPER: "wgmma_gemm"
// HOPPER: "mma_sync_gemm_unaligned"
// HOPPER: return
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @fp8_decode_step(%a: memref<1x2048xf8E4M3FN>, %b: memref<64x2048xf8E4M3FN>, %r: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<1x2048xf8E4M3FN>, memref<64x2048xf8E4M3FN>) outs(%r : memref<1x64xf32>) {
  ^bb0(%x0: f8E4M3FN, %y: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x0 : f8E4M3FN to f32
    %1 = arith.extf %y : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @fp8_misaligned_decode_step(%a: memref<1x2056xf8E4M3FN>, %b: memref<64x2056xf8E4M3FN>, %r: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<1x2056xf8E4M3FN>, memref<64x2056xf8E4M3FN>) outs(%r : memref<1x64xf32>) {
  ^bb0(%x0: f8E4M3FN, %y: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x0 : f8E4M3FN to f32
    %1 = arith.extf %y : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
