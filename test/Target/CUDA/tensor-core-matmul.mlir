// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul --canonicalize | FileCheck %s --check-prefix=FOLDED

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A bf16 linear layer (what --precision=bf16 gives) with its zero fill: a
// launch of 128 threads per 64x64 tile, A and B staged in three shared
// stages by 16-byte cp.async, fragments by ldmatrix (.trans for B stored
// [k][n]), mma.sync m16n8k16 on bf16; the fill becomes the accumulators'
// zero start. The original ops stay for dims the kernel cannot take; here
// the dims are static and fit, so canonicalization keeps only the kernel.
// CHECK-LABEL: func @bf16_linear
// CHECK-NOT: arith.remui
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}} = %{{.*}}, {{.*}} = %{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) workgroup(%[[SA:.*]] : memref<3x64x32xbf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<3x32x64xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %[[SA]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_copy %arg1[{{.*}}], %[[SB]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args(
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[SA]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[SB]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: } else {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
// K and N are statically whole 16-byte rows: no element-copy kernel.
// CHECK-NOT: mma_sync_gemm_unaligned
// FOLDED-LABEL: func @bf16_linear
// FOLDED-NOT: scf.if
// FOLDED-NOT: linalg.
// FOLDED: gpu.launch
// FOLDED-NOT: linalg.
// FOLDED: return
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

// f16, runtime dims, a [batch, seq, k] activation times a weight stored
// [n][k] (K contiguous) that every row shares: the batch and sequence
// dims are one M (A and the result collapsed), B's fragments come without
// .trans, and with no fill the accumulators start from the result. The
// host checks K % 8 at run time; the guard stays after canonicalization.
// CHECK-LABEL: func @f16_shared_weight
// CHECK-DAG: %[[A2:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<?x?x?xf16> into memref<?x?xf16>
// CHECK-DAG: %[[C2:.*]] = memref.collapse_shape %arg2 {{\[}}[0, 1], [2]] : memref<?x?x?xf32> into memref<?x?xf32>
// CHECK: gpu.launch {{.*}} workgroup(%[[SA:.*]] : memref<3x64x32xf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<3x64x32xf16, #gpu.address_space<workgroup>>)
// CHECK: memref.load %[[C2]][
// CHECK: nvgpu.device_async_copy %[[A2]][
// CHECK: nvgpu.device_async_copy %arg1[
// CHECK: nvgpu.ldmatrix %[[SA]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[SB]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: memref.store %{{.*}}, %[[C2]][
// K % 8 != 0 at run time takes the same kernel copying element by element.
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// FOLDED-LABEL: func @f16_shared_weight
// FOLDED: arith.remui
// FOLDED: scf.if
// FOLDED: gpu.launch
// FOLDED: } else {
// FOLDED: linalg.generic
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

// A batched product (attention's scores times values): the batch dims
// index the grid's z by their linear index.
// CHECK-LABEL: func @batched
// CHECK: %[[B0:.*]] = memref.dim %arg0, %c0
// CHECK: %[[B1:.*]] = memref.dim %arg0, %c1
// The grid's y and z hold at most 65535 blocks: the host checks M and the
// batch product (saturated) too, and K > 0.
// CHECK: arith.minui
// CHECK: scf.if
// CHECK: %[[Z0:.*]] = arith.muli %{{.*}}, %[[B0]]
// CHECK: %[[Z:.*]] = arith.muli %[[Z0]], %[[B1]]
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in ({{.*}}, {{.*}}, {{.*}} = %[[Z]])
// CHECK: arith.remui %[[BZ]], %[[B1]]
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

// A convolution's im2col GEMM: the filter (A, [F, K]) has no image dim,
// which B ([N, K, P]) and the result ([N, F, P]) have. That dim is a batch
// dim read from the grid's z; A is read at the same place for every image.
// (36 pixels are rows of 72 bytes: tiles copied element by element.)
// CHECK-LABEL: func @shared_filter
// CHECK: %[[IMAGES:.*]] = memref.dim %arg1, %c0{{.*}} : memref<?x72x36xbf16>
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in
// CHECK: %[[IMAGE:.*]] = arith.remui %[[BZ]], %[[IMAGES]]
// CHECK: memref.load %arg0[%{{[0-9]+}}, %{{[0-9]+}}] : memref<16x72xbf16>
// CHECK: memref.load %arg1[%[[IMAGE]], %{{[0-9]+}}, %{{[0-9]+}}] : memref<?x72x36xbf16>
// CHECK: nvvm.mma.sync
// CHECK: memref.store %{{.*}}, %arg2[%[[IMAGE]], %{{[0-9]+}}, %{{[0-9]+}}] : memref<?x16x36xf32>
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
#ac = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#bc = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#cc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @shared_filter(%a: memref<16x72xbf16>, %b: memref<?x72x36xbf16>, %c: memref<?x16x36xf32>) {
  linalg.generic {indexing_maps = [#ac, #bc, #cc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x72xbf16>, memref<?x72x36xbf16>) outs(%c : memref<?x16x36xf32>) {
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

// A static K that 16-byte copies cannot take (33: rows of A are 66 bytes)
// still runs on the tensor cores: the tiles are copied element by element
// (loads zero outside the matrices, stores into the same swizzled stages),
// with no run-time choice.
// CHECK-LABEL: func @unaligned_k
// CHECK-NOT: arith.remui %{{.*}}, %c8
// CHECK: gpu.launch
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.load %arg0[
// CHECK: memref.store %{{.*}}, %{{.*}}[{{.*}}] : memref<3x64x32xbf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// CHECK-NOT: tessera.cuda.kernel = "mma_sync_gemm"}
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @unaligned_k(%a: memref<64x33xbf16>, %b: memref<33x64xbf16>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x33xbf16>, memref<33x64xbf16>) outs(%c : memref<64x64xf32>) {
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

// Must not fire: an f32 product (no tensor cores without --allow-tf32), a
// result in bf16 (the kernel accumulates in f32), and A stored [k][m].
// CHECK-LABEL: func @not_these
// CHECK-NOT: gpu.launch
// CHECK-NOT: scf.if
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: gpu.launch
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#at = affine_map<(d0, d1, d2) -> (d1, d0)>
func.func @not_these(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>,
                     %a16: memref<64x64xbf16>, %b16: memref<64x64xbf16>, %c16: memref<64x64xbf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %2 = arith.mulf %x, %y : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a16, %b16 : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c16 : memref<64x64xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %2 = arith.mulf %x, %y : bf16
    %3 = arith.addf %acc, %2 : bf16
    linalg.yield %3 : bf16
  }
  linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a16, %b16 : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>) {
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

// Bufferization shares one zero fill among results through copies: a copy
// of a buffer that holds only zeros at that point counts as a zero fill
// (the copy goes; later writes to the shared buffer do not matter). A
// copy of a buffer that something else wrote after its fill does not.
// CHECK-LABEL: func @shared_zeros
// CHECK: linalg.fill ins(%{{.*}}) outs(%[[Z:.*]] : memref<64x64xf32>)
// CHECK: scf.if
// CHECK-NOT: memref.load %arg2
// CHECK: gpu.launch
// CHECK: } else {
// CHECK-NEXT: linalg.copy ins(%[[Z]]
// CHECK: linalg.generic
// CHECK: linalg.copy ins(%[[Z]] {{.*}} outs(%arg3
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK: memref.load %arg3
// CHECK: } else {
// CHECK-NEXT: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @shared_zeros(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>, %d: memref<64x64xf32>, %x: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<64x64xf32>)
  linalg.copy ins(%z : memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.copy ins(%x : memref<64x64xf32>) outs(%z : memref<64x64xf32>)
  linalg.copy ins(%z : memref<64x64xf32>) outs(%d : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%d : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  memref.dealloc %z : memref<64x64xf32>
  return
}

// -----

// Epilogues: the elementwise op right after the product that reads its
// result (here a bias add and a cast to bf16, into a buffer allocated in
// between) is computed on the accumulators in registers and stored
// instead of them; the product's own result is never written. The
// allocation moves above the kernel's launch.
// CHECK-LABEL: func @bias_epilogue
// CHECK: %[[D:.*]] = memref.alloc() : memref<64x64xbf16>
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK-NOT: memref.store %{{.*}}, %[[R:alloc[_0-9]*]][
// CHECK: scf.if
// CHECK-NEXT: %[[BIAS:.*]] = memref.load %arg2[%{{.*}}] : memref<64xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[BIAS]] : f32
// CHECK-NEXT: %[[NARROW:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: memref.store %[[NARROW]], %[[D]][
// CHECK: } else {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: linalg.generic
// CHECK: memref.dealloc
// CHECK-NEXT: return %[[D]]
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @bias_epilogue(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %bias: memref<64xf32>) -> memref<64x64xbf16> {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  %d = memref.alloc() : memref<64x64xbf16>
  linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : memref<64x64xf32>, memref<64xf32>) outs(%d : memref<64x64xbf16>) {
  ^bb0(%x0: f32, %y: f32, %o: bf16):
    %0 = arith.addf %x0, %y : f32
    %1 = arith.truncf %0 : f32 to bf16
    linalg.yield %1 : bf16
  }
  memref.dealloc %r : memref<64x64xf32>
  return %d : memref<64x64xbf16>
}

// -----

// In place: the scale writes the product's buffer, which later ops read;
// they read the scaled values the kernel stores. Not fused: an
// elementwise op that reads the result transposed, and one whose result
// buffer is also read by a later op (it would never be written).
// CHECK-LABEL: func @in_place_epilogue
// CHECK: gpu.launch
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: memref.store %{{.*}}, %arg2[
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: }
// CHECK: linalg.copy ins(%arg2
// CHECK-LABEL: func @not_epilogues
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg3
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} ins(%arg2, %arg3
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg3
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} ins(%[[R2:.*]], %arg3
// CHECK: linalg.copy ins(%[[R2]]
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @in_place_epilogue(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %r: memref<64x64xf32>, %s: memref<f32>, %o: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %s : memref<64x64xf32>, memref<f32>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: f32, %y: f32, %out: f32):
    %0 = arith.mulf %x0, %y : f32
    linalg.yield %0 : f32
  }
  linalg.copy ins(%r : memref<64x64xf32>) outs(%o : memref<64x64xf32>)
  return
}
func.func @not_epilogues(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %r: memref<64x64xf32>, %t: memref<64x64xf32>, %o: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %t : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x0: f32, %y: f32, %out: f32):
    %0 = arith.addf %x0, %y : f32
    linalg.yield %0 : f32
  }
  %r2 = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r2 : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%r2, %t : memref<64x64xf32>, memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x0: f32, %y: f32, %out: f32):
    %0 = arith.addf %x0, %y : f32
    linalg.yield %0 : f32
  }
  linalg.copy ins(%r2 : memref<64x64xf32>) outs(%t : memref<64x64xf32>)
  return
}

// -----

// f32 products stay off the tensor cores unless allow-tf32: then they run
// as mma.sync m16n8k8 on tf32, operands rounded with cvt.rna from shared
// tiles of 16 columns of K (4 floats per 16-byte copy).
// RUN: tessera-opt %s --split-input-file --tessera-cuda-tensor-core-matmul=allow-tf32 | FileCheck %s --check-prefix=TF32
// TF32-LABEL: func @f32_product
// TF32: gpu.launch {{.*}} workgroup(%[[SA:.*]] : memref<3x64x16xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<3x16x64xf32, #gpu.address_space<workgroup>>)
// TF32: nvgpu.device_async_copy %arg0[{{.*}}], %[[SA]][{{.*}}], 4, %{{.*}} {bypassL1}
// TF32: %[[X:.*]] = memref.load %[[SA]][
// TF32-NEXT: nvvm.convert.float.to.tf32 %[[X]] {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: func @f32_product
// CHECK-NOT: gpu.launch
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

// An in-place epilogue that reads its output reads the product there (the
// accumulator), not the buffer's old contents.
// CHECK-LABEL: func @epilogue_reads_output
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V:.*]], %[[V]] : f32
// CHECK-NEXT: memref.store %[[S]], %arg2[
// Not fused: an epilogue that writes into an operand of the product (other
// blocks still read it), one that uses linalg.index, and a body that
// rounds the product in bf16 before widening it is not a product the
// kernel computes.
// CHECK-LABEL: func @not_fused
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} ins(%arg2 : memref<64x64xf32>) outs(%arg0 : memref<64x64xbf16>)
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} ins(%arg2 : memref<64x64xf32>) outs(%arg3 : memref<64x64xf32>)
// CHECK: linalg.index
// CHECK-NOT: gpu.launch
// CHECK: return
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @epilogue_reads_output(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %r: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : memref<64x64xf32>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: f32, %out: f32):
    %0 = arith.addf %x0, %out : f32
    linalg.yield %0 : f32
  }
  return
}
func.func @not_fused(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %r: memref<64x64xf32>, %o: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : memref<64x64xf32>) outs(%a : memref<64x64xbf16>) {
  ^bb0(%x0: f32, %out: bf16):
    %0 = arith.truncf %x0 : f32 to bf16
    linalg.yield %0 : bf16
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : memref<64x64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x0: f32, %out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %0 = arith.addf %x0, %f : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%r : memref<64x64xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %2 = arith.mulf %x0, %y : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  }
  return
}

// -----

// int8 (what --precision=int8 gives): s8 operands with B stored [n][k]
// into i32, the zero fill folded into integer zeros. Rows of 64 s8 (64 bytes
// a stage, like 32 16-bit elements), 16 elements per cp.async, ldmatrix
// without .trans on vector<4x4xi8>, mma.sync m16n8k32 s8 wrapping into s32
// accumulators; the dequantization (i32 to f32 times the scales) fused as
// the epilogue.
// CHECK-LABEL: func @int8_linear
// CHECK: gpu.launch {{.*}} workgroup(%[[SA:.*]] : memref<3x64x64xi8, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<3x64x64xi8, #gpu.address_space<workgroup>>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %[[SA]][{{.*}}], 16, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_copy %arg1[{{.*}}], %[[SB]][{{.*}}], 16, %{{.*}} {bypassL1}
// CHECK: nvgpu.ldmatrix %[[SA]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x64xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// CHECK: nvgpu.ldmatrix %[[SB]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {intOverflowBehavior = #nvvm.mma_int_overflow<wrapped>, layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %arg3[
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @int8_linear(%a: memref<128x64xi8>, %b: memref<72x64xi8>, %scale: memref<72xf32>, %y: memref<128x72xf32>) {
  %zero = arith.constant 0 : i32
  %p = memref.alloc() : memref<128x72xi32>
  linalg.fill ins(%zero : i32) outs(%p : memref<128x72xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<128x64xi8>, memref<72x64xi8>) outs(%p : memref<128x72xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %w : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %scale : memref<128x72xi32>, memref<72xf32>) outs(%y : memref<128x72xf32>) {
  ^bb0(%v: i32, %s: f32, %o: f32):
    %f = arith.sitofp %v : i32 to f32
    %r = arith.mulf %f, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<128x72xi32>
  return
}

// -----

// Must not fire: s8 with B stored [k][n] (ldmatrix transposes 16-bit
// elements only), and s8 into i64 (a body the match takes, an accumulator
// it does not).
// CHECK-LABEL: func @int8_not_these
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d2, d1)>
func.func @int8_not_these(%a: memref<64x64xi8>, %b: memref<64x64xi8>, %c: memref<64x64xi32>, %f: memref<64x64xi64>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%c : memref<64x64xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %w : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x64xi8>, memref<64x64xi8>) outs(%f : memref<64x64xi64>) {
  ^bb0(%x: i8, %w: i8, %acc: i64):
    %0 = arith.extsi %x : i8 to i64
    %1 = arith.extsi %w : i8 to i64
    %2 = arith.muli %0, %1 : i64
    %3 = arith.addi %acc, %2 : i64
    linalg.yield %3 : i64
  }
  return
}

// -----

// fp8 current scaling's amax of what an fp8 product's kernel stores (its
// ReLU epilogue's values): a one-thread kernel starts an i32 at -inf's
// bits; the product's kernel keeps each thread's largest |value|, five
// xor shuffles give the warp's, and lane 0 folds it in by an atomic max
// on its bits; where the reduction was, a one-thread kernel folds the i32
// into its result by its own maximum. Where the kernel cannot run, the
// loops' product is reduced from -inf into a buffer of its own (the
// result's fill comes after the product) whose bits go into the i32.
// CHECK-LABEL: func @fp8_amax
// CHECK: %[[BITS:.*]] = memref.alloc() : memref<i32>
// CHECK: gpu.launch
// CHECK: arith.constant -8388608 : i32
// CHECK: memref.store %{{.*}}, %[[BITS]][]
// CHECK: } {tessera.cuda.kernel = "amax_start"}
// CHECK: %[[FALLBACK:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: memref.atomic_rmw maxs %{{.*}}, %[[BITS]][]
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// CHECK: } else {
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[FALLBACK]] : memref<f32>)
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg2 : memref<64x64xf32>) outs(%[[FALLBACK]] : memref<f32>)
// CHECK: gpu.launch
// CHECK: memref.load %[[FALLBACK]][]
// CHECK: memref.store %{{.*}}, %[[BITS]][]
// CHECK: } {tessera.cuda.kernel = "amax_bits"}
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<f32>)
// CHECK: gpu.launch
// CHECK: memref.load %[[BITS]][]
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.maximumf
// CHECK: } {tessera.cuda.kernel = "amax_fold"}
// CHECK: memref.dealloc %[[BITS]]
// CHECK: memref.dealloc %[[FALLBACK]]
// CHECK-NOT: iterator_types = ["reduction", "reduction"]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @fp8_amax(%a: memref<64x64xf8E4M3FN>, %b: memref<64x64xf8E4M3FN>, %y: memref<64x64xf32>, %amax: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %p = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%p : memref<64x64xf32>) {
  ^bb0(%x: f8E4M3FN, %w: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x : f8E4M3FN to f32
    %1 = arith.extf %w : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<64x64xf32>
  linalg.fill ins(%ninf : f32) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%amax : memref<f32>) {
  ^bb0(%v: f32, %m: f32):
    %0 = math.absf %v : f32
    %1 = arith.maximumf %m, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The amax of a bf16 product's result (a 16-bit activation that an fp8
// consumer scales by its current amax), deep enough in K for the host to
// split it when the grid is small: the split kernel stores partial sums
// without the amax, which is reduced over the summed result after it;
// the whole-K kernel computes it as it stores.
// CHECK-LABEL: func @bf16_amax
// CHECK: } {tessera.cuda.kernel = "amax_start"}
// CHECK: scf.if
// CHECK-NOT: atomic_rmw maxs
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_split_k"}
// CHECK-NOT: gpu.launch
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[FALLBACK:.*]] : memref<f32>)
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%arg2 : memref<64x64xf32>) outs(%[[FALLBACK]] : memref<f32>)
// CHECK: } {tessera.cuda.kernel = "amax_bits"}
// CHECK-NEXT: } else {
// CHECK: memref.atomic_rmw maxs
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: } {tessera.cuda.kernel = "amax_fold"}
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @bf16_amax(%a: memref<64x512xbf16>, %b: memref<512x64xbf16>, %y: memref<64x64xf32>, %amax: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x512xbf16>, memref<512x64xbf16>) outs(%y : memref<64x64xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %w : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.fill ins(%ninf : f32) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%amax : memref<f32>) {
  ^bb0(%v: f32, %m: f32):
    %0 = math.absf %v : f32
    %1 = arith.maximumf %m, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The amax of an int8 product's dequantized result (its epilogue's f32
// values, the i32 accumulator never stored): the kernel computes it as it
// stores them.
// CHECK-LABEL: func @int8_amax
// CHECK: } {tessera.cuda.kernel = "amax_start"}
// CHECK: arith.sitofp
// CHECK: math.absf
// CHECK: memref.atomic_rmw maxs
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: } {tessera.cuda.kernel = "amax_fold"}
// CHECK-NOT: iterator_types = ["reduction", "reduction"]} ins(%arg3
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @int8_amax(%a: memref<128x64xi8>, %b: memref<72x64xi8>, %scale: memref<72xf32>, %y: memref<128x72xf32>, %amax: memref<f32>) {
  %zero = arith.constant 0 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %p = memref.alloc() : memref<128x72xi32>
  linalg.fill ins(%zero : i32) outs(%p : memref<128x72xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<128x64xi8>, memref<72x64xi8>) outs(%p : memref<128x72xi32>) {
  ^bb0(%x: i8, %w: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %w : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %scale : memref<128x72xi32>, memref<72xf32>) outs(%y : memref<128x72xf32>) {
  ^bb0(%v: i32, %s: f32, %o: f32):
    %f = arith.sitofp %v : i32 to f32
    %r = arith.mulf %f, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<128x72xi32>
  linalg.fill ins(%ninf : f32) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<128x72xf32>) outs(%amax : memref<f32>) {
  ^bb0(%v: f32, %m: f32):
    %0 = math.absf %v : f32
    %1 = arith.maximumf %m, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Left to the reduction kernels: a maximum of values no math.absf makes
// non-negative (their bits would not order as integers), a sum, and the
// largest |value| of each row of a bf16 product (not over every loop).
// CHECK-LABEL: func @not_amax
// CHECK-NOT: atomic_rmw maxs
// CHECK-NOT: amax_fold
// CHECK-COUNT-2: iterator_types = ["reduction", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction"]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @not_amax(%a: memref<64x64xf8E4M3FN>, %b: memref<64x64xf8E4M3FN>, %y: memref<64x64xf32>, %a16: memref<64x64xbf16>, %b16: memref<64x64xbf16>, %y16: memref<64x64xf32>, %m: memref<f32>, %s: memref<f32>, %m16: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%y : memref<64x64xf32>) {
  ^bb0(%x: f8E4M3FN, %w: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x : f8E4M3FN to f32
    %1 = arith.extf %w : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%v: f32, %r: f32):
    %0 = arith.maximumf %r, %v : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %r: f32):
    %0 = math.absf %v : f32
    %1 = arith.addf %r, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%y16 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a16, %b16 : memref<64x64xbf16>, memref<64x64xbf16>) outs(%y16 : memref<64x64xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %w : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%y16 : memref<64x64xf32>) outs(%m16 : memref<64xf32>) {
  ^bb0(%v: f32, %r: f32):
    %0 = math.absf %v : f32
    %1 = arith.maximumf %r, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Also left alone: a maximum that ignores NaNs (arith.maxnumf; the kernel's
// integer maximum of the bits would keep one), and an amax whose buffer is
// written between the product and the reduction.
// CHECK-LABEL: func @not_amax_either
// CHECK-NOT: atomic_rmw maxs
// CHECK-NOT: amax_fold
// CHECK: linalg.fill
// CHECK-COUNT-2: iterator_types = ["reduction", "reduction"]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @not_amax_either(%a: memref<64x64xf8E4M3FN>, %b: memref<64x64xf8E4M3FN>, %y: memref<64x64xf32>, %y2: memref<64x64xf32>, %m: memref<f32>, %m2: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%y : memref<64x64xf32>) {
  ^bb0(%x: f8E4M3FN, %w: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x : f8E4M3FN to f32
    %1 = arith.extf %w : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%v: f32, %r: f32):
    %0 = math.absf %v : f32
    %1 = arith.maxnumf %r, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%y2 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%y2 : memref<64x64xf32>) {
  ^bb0(%x: f8E4M3FN, %w: f8E4M3FN, %acc: f32):
    %0 = arith.extf %x : f8E4M3FN to f32
    %1 = arith.extf %w : f8E4M3FN to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.fill ins(%one : f32) outs(%y2 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%y2 : memref<64x64xf32>) outs(%m2 : memref<f32>) {
  ^bb0(%v: f32, %r: f32):
    %0 = math.absf %v : f32
    %1 = arith.maximumf %r, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Tiles chosen per shape. A grid of 128x128 tiles with a wave of blocks
// (here 16 x 8 = 128) takes the 128x128 tile: 8 warps (256 threads) of
// 64x32, each 4x4 m16n8 tiles (16 mma per 16-deep step, 64 accumulators),
// stages of 128 rows of A and 128 columns of B. No other kernel is built.
// CHECK-LABEL: func @large_tiles
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) workgroup(%[[SA:.*]] : memref<3x128x32xbf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<3x32x128xbf16, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_128x128"}
// CHECK-NOT: gpu.launch
// CHECK: return
//
// One block row fewer (15 x 8 = 120 blocks, under a wave): the 64x64
// tile, and no 128x128 kernel.
// CHECK-LABEL: func @small_tiles
// CHECK-NOT: mma_sync_gemm_128x128
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}}) workgroup({{.*}} : memref<3x64x32xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<3x32x64xbf16, #gpu.address_space<workgroup>>)
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK-NOT: mma_sync_gemm_128x128
// CHECK: return
//
// A batch counts towards the wave: 32 products of 130x136 are 2 x 2 x 32
// blocks of 128x128.
// CHECK-LABEL: func @large_batched_tiles
// CHECK-NOT: tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_128x128"}
// CHECK-NOT: tessera.cuda.kernel = "mma_sync_gemm"}
// CHECK: return
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @large_tiles(%a: memref<2048x64xbf16>, %b: memref<64x1024xbf16>, %c: memref<2048x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2048x1024xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<2048x64xbf16>, memref<64x1024xbf16>) outs(%c : memref<2048x1024xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
func.func @small_tiles(%a: memref<1920x64xbf16>, %b: memref<64x1024xbf16>, %c: memref<1920x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<1920x64xbf16>, memref<64x1024xbf16>) outs(%c : memref<1920x1024xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}
#ab = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#bb = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#cb = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @large_batched_tiles(%a: memref<32x130x320xbf16>, %b: memref<32x320x136xbf16>, %c: memref<32x130x136xf32>) {
  linalg.generic {indexing_maps = [#ab, #bb, #cb], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x130x320xbf16>, memref<32x320x136xbf16>) outs(%c : memref<32x130x136xf32>) {
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

// Symbolic sizes: the host compares the grid of 128x128 tiles with a wave
// and launches the 128x128 or the 64x64 kernel (after split-k's test).
// CHECK-LABEL: func @tiles_chosen_at_run_time
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_split_k"}
// CHECK: arith.cmpi uge, %{{.*}}, %c128
// CHECK-NEXT: scf.if
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_128x128"}
// CHECK-NEXT: } else {
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm"}
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @tiles_chosen_at_run_time(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xf32>) {
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

// A convolution's GEMM (tessera-cuda-convolution-gemms): its bias added in
// place, and the buffer then viewed in the convolution's shape and
// returned. The view comes after the epilogue, so it reads the values the
// kernel stores: fused, with the zero fill as the start. Not fused when
// the view exists before the product (what reads through it could read
// the unbiased sums).
// CHECK-LABEL: func @conv_bias_epilogue
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: memref.load %arg2[
// CHECK: arith.addf
// CHECK: memref.store
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// CHECK: } else {
// CHECK: return
// CHECK-LABEL: func @view_before_product
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg2[
// CHECK: } {tessera.cuda.kernel = "mma_sync_gemm_unaligned"}
// CHECK: } else {
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: }
// CHECK: linalg.generic {{.*}} ins(%[[R:.*]], %arg2 : memref<2x16x36xf32>, memref<16xf32>) outs(%[[R]] : memref<2x16x36xf32>)
// CHECK-NEXT: ^bb
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
#fa = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#fb = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#fc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d1)>
func.func @conv_bias_epilogue(%f: memref<16x72xbf16>, %cols: memref<2x72x36xbf16>, %bias: memref<16xf32>) -> memref<2x16x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<2x16x36xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<2x16x36xf32>)
  linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%f, %cols : memref<16x72xbf16>, memref<2x72x36xbf16>) outs(%r : memref<2x16x36xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %acc : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id3, #ch, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r, %bias : memref<2x16x36xf32>, memref<16xf32>) outs(%r : memref<2x16x36xf32>) {
  ^bb0(%x0: f32, %y: f32, %out: f32):
    %0 = arith.addf %x0, %y : f32
    linalg.yield %0 : f32
  }
  %v = memref.expand_shape %r [[0], [1], [2, 3]] output_shape [2, 16, 6, 6] : memref<2x16x36xf32> into memref<2x16x6x6xf32>
  return %v : memref<2x16x6x6xf32>
}
func.func @view_before_product(%f: memref<16x72xbf16>, %cols: memref<2x72x36xbf16>, %bias: memref<16xf32>) -> memref<2x16x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<2x16x36xf32>
  %v = memref.expand_shape %r [[0], [1], [2, 3]] output_shape [2, 16, 6, 6] : memref<2x16x36xf32> into memref<2x16x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<2x16x36xf32>)
  linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%f, %cols : memref<16x72xbf16>, memref<2x72x36xbf16>) outs(%r : memref<2x16x36xf32>) {
  ^bb0(%x0: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x0 : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %acc : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id3, #ch, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r, %bias : memref<2x16x36xf32>, memref<16xf32>) outs(%r : memref<2x16x36xf32>) {
  ^bb0(%x0: f32, %y: f32, %out: f32):
    %0 = arith.addf %x0, %y : f32
    linalg.yield %0 : f32
  }
  return %v : memref<2x16x6x6xf32>
}
