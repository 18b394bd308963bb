// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul=hopper | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul | FileCheck %s --check-prefix=NOHOPPER
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul="hopper allow-tf32" | FileCheck %s --check-prefix=TF32

// Without `hopper`, no sm_90a kernel and no question to the runtime.
// NOHOPPER-NOT: tessera_cuda_compute_capability
// NOHOPPER-NOT: nvvm.wgmma

// A bf16 linear layer with B stored [k][n]: inside the mma.sync kernel's
// guard, the host asks the device's compute capability; on 9.0, with A and
// B 16-byte aligned, it builds their tensor maps (dims innermost first,
// byte strides, boxes of 64 columns, the 128-byte swizzle = 3) and
// launches a warpgroup per 64 rows of a 64x128 or 128x128 tile.
// Thread 0 initializes four mbarriers, then issues three stages of TMA
// copies (A's box, and B's two 64-column boxes 8192 bytes apart), each
// with the stage's bytes expected; the loop refills a stage, waits
// on the next one's phase parity and runs four m64n128k16 wgmmas reading B
// transposed (layoutB row). Other GPUs, or misaligned operands, run the
// mma.sync kernel.
// CHECK-LABEL: func.func private @tessera_cuda_compute_capability() -> i32
// CHECK-LABEL: func.func private @tessera_cuda_tensor_map(i64, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32) -> i64
// CHECK-LABEL: func @bf16_linear
// CHECK: scf.if
// CHECK: %[[CC:.*]] = func.call @tessera_cuda_compute_capability() : () -> i32
// CHECK: %[[HOPPER:.*]] = arith.cmpi eq, %[[CC]], %c90_i32
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: arith.remui %[[PA]], %c16
// CHECK: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: arith.remui %[[PB]], %c16
// CHECK: scf.if
// Blocks of 128 rows (two warpgroups) when their grid still has 128 blocks,
// else of 64: A's box rows, the threads and the shared memory follow.
// CHECK: %[[WIDE:.*]] = arith.cmpi uge, %{{.*}}, %c128
// CHECK: %[[ROWS:.*]] = arith.select %[[WIDE]], %c128{{.*}}, %c64{{.*}} : index
// CHECK: %[[ROWS32:.*]] = arith.index_castui %[[ROWS]] : index to i32
// CHECK: %[[MAPA:.*]] = func.call @tessera_cuda_tensor_map({{.*}}, %c2_i32{{.*}}, %c2_i32{{.*}}, {{.*}}, %c64_i32{{.*}}, %[[ROWS32]], %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: %[[MAPB:.*]] = func.call @tessera_cuda_tensor_map({{.*}}, %c64_i32{{.*}}, %c64_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: %[[GRIDY:.*]] = arith.ceildivui %{{.*}}, %[[ROWS]]
// CHECK: %[[WARPGROUPS:.*]] = arith.divui %[[ROWS]], %c64
// CHECK: %[[THREADS:.*]] = arith.muli %[[WARPGROUPS]], %c128
// CHECK: gpu.launch {{.*}} in ({{.*}}, {{.*}} = %[[GRIDY]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[THREADS]], {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) dynamic_shared_memory_size
// CHECK: gpu.dynamic_shared_memory
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: llvm.inttoptr %[[MAPA]] : i64 to !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: llvm.inttoptr %[[MAPB]] : i64 to !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: arith.addi %{{.*}}, %c8192
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: } {tessera.cuda.arch = "sm_90a", tessera.cuda.kernel = "wgmma_gemm"}
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: } else {
// CHECK: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @bf16_linear(%a: memref<128x64xbf16>, %b: memref<64x72xbf16>, %c: memref<128x72xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x72xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<128x64xbf16>, memref<64x72xbf16>) outs(%c : memref<128x72xf32>) {
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

// f16 with B stored [n][k] (K-major, like A): one box of 64 (k) x 128 (n)
// rows, read untransposed (layoutB col); A's batch and sequence dims are
// one collapsed M, and the accumulators start from the result.
// CHECK-LABEL: func @f16_shared_weight
// CHECK: %[[A2:.*]] = memref.collapse_shape %arg0
// CHECK: memref.extract_aligned_pointer_as_index %[[A2]]
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c64_i32{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c64_i32{{.*}}, %c128_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: gpu.launch
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: memref.load
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
#a3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b3 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @f16_shared_weight(%a: memref<?x?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?x?xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// Batch dims are outer tensor-map dims (rank 4 here), their coordinates
// the block's batch indices.
// CHECK-LABEL: func @batched
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c2_i32{{.*}}, %c4_i32{{.*}}, {{.*}}, %c64_i32{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
#a4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#b4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#c4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @batched(%a: memref<?x4x?x?xbf16>, %b: memref<?x4x?x16xbf16>, %c: memref<?x4x?x16xf32>) {
  linalg.generic {indexing_maps = [#a4, #b4, #c4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x4x?x?xbf16>, memref<?x4x?x16xbf16>) outs(%c : memref<?x4x?x16xf32>) {
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

// Must not fire: tf32 products (wgmma's tf32 form is not built) keep the
// mma.sync kernel alone, and ask nothing of the runtime.
// TF32-LABEL: func @f32_product
// TF32-NOT: tessera_cuda_compute_capability
// TF32-NOT: nvvm.wgmma
// TF32: nvvm.mma.sync
// TF32-NOT: nvvm.wgmma
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @f32_product(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %2 = arith.mulf %x, %y : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// fp8 (E4M3) with B stored [n][k]: on 9.0, with K a multiple of 16 (TMA
// strides rows of whole 16-byte chunks) and both operands aligned, 1-byte
// tensor maps with boxes of 128 elements along K (128 bytes) and four
// m64n128k32 wgmmas a stage, both operands K-major (layoutB col). Elsewhere
// the mma.sync kernel stages the tiles decoded to bf16, element by element
// (tessera-cuda-decode-fp8 expands the widening). K is symbolic, so a
// split-k branch comes first (the same two kernels, split).
// CHECK-LABEL: func @fp8_linear
// CHECK: scf.if
// CHECK: "wgmma_gemm_split_k"}
// CHECK: "mma_sync_gemm_split_k_unaligned"}
// CHECK: } else {
// CHECK: %[[K:.*]] = memref.dim %arg0, %c1
// CHECK: %[[CC:.*]] = func.call @tessera_cuda_compute_capability() : () -> i32
// CHECK: %[[HOPPER:.*]] = arith.cmpi eq, %[[CC]], %c90_i32
// CHECK: %[[K16:.*]] = arith.remui %[[K]], %c16{{(_[0-9]+)?}} : index
// CHECK: arith.cmpi eq, %[[K16]], %c0
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c1_i32{{.*}}, %c2_i32{{.*}}, {{.*}}, %c128_i32{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c1_i32{{.*}}, %c2_i32{{.*}}, {{.*}}, %c128_i32{{.*}}, %c128_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: gpu.launch
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: } {tessera.cuda.arch = "sm_90a", tessera.cuda.kernel = "wgmma_gemm"}
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: memref.load %arg0{{.*}} : memref<?x?xf8E4M3FN>
// CHECK-NEXT: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// TF32-LABEL: func @fp8_linear
// NOHOPPER-LABEL: func @fp8_linear
// NOHOPPER-NOT: nvvm.wgmma
// NOHOPPER: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @fp8_linear(%a: memref<?x?xf8E4M3FN>, %b: memref<?x?xf8E4M3FN>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f8E4M3FN, %y: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x : f8E4M3FN to f32
    %1 = arith.extf %y : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// Must not fire: fp8 (E5M2) with B stored [k][n]. fp8 wgmma has no
// transposed form, so only the mma.sync kernel (tiles decoded to bf16) runs,
// on every GPU.
// CHECK-LABEL: func @fp8_b_kn
// CHECK-NOT: nvvm.wgmma
// CHECK-NOT: tessera_cuda_compute_capability
// CHECK: arith.extf %{{.*}} : f8E5M2 to f32
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @fp8_b_kn(%a: memref<64x64xf8E5M2>, %b: memref<64x128xf8E5M2>, %c: memref<64x128xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xf8E5M2>, memref<64x128xf8E5M2>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f8E5M2, %y: f8E5M2, %acc: f32):
    %0 = arith.extf %x : f8E5M2 to f32
    %1 = arith.extf %y : f8E5M2 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// int8 with B stored [n][k]: the sm_90a kernel reads the s8 bytes through
// TMA as it reads fp8 ones (1-byte maps, boxes of 128 along K) and runs four
// m64n128k32 s8 wgmmas a stage into s32 accumulators, which start from
// integer zeros.
// CHECK-LABEL: func @int8_linear
// CHECK: func.call @tessera_cuda_tensor_map({{.*}}, %c1_i32{{.*}}, %c2_i32{{.*}}, {{.*}}, %c128_i32{{.*}}, %{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c3_i32{{.*}})
// CHECK: gpu.launch
// CHECK: llvm.mlir.undef : !llvm.struct<(i32, i32,
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
// CHECK: } {tessera.cuda.arch = "sm_90a", tessera.cuda.kernel = "wgmma_gemm"}
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<s8>
// TF32-LABEL: func @int8_linear
// NOHOPPER-LABEL: func @int8_linear
// NOHOPPER-NOT: nvvm.wgmma
// NOHOPPER: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<s8>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @int8_linear(%a: memref<?x64xi8>, %b: memref<72x64xi8>, %c: memref<?x72xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<?x72xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x64xi8>, memref<72x64xi8>) outs(%c : memref<?x72xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
