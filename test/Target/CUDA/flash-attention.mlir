// RUN: tessera-opt %s --split-input-file --tessera-cuda-flash-attention-call | FileCheck %s --check-prefix=CALL
// RUN: tessera-opt %s --split-input-file --tessera-cuda-flash-attention-call --tessera-cuda-flash-attention | FileCheck %s --check-prefix=KERNEL

// bf16 attention with a head dim of 64, a broadcast mask and symbolic
// sequences: a call on its buffers (the output's rows from the query),
// carrying the scale and the causal flag; then the kernel in its place.
// CALL-LABEL: func.func @causal_masked
// CALL-DAG: %[[Q:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x4x?x64xbf16> to memref<2x4x?x64xbf16>
// CALL-DAG: %[[K:.*]] = bufferization.to_buffer %arg1 read_only : tensor<2x4x?x64xbf16> to memref<2x4x?x64xbf16>
// CALL-DAG: %[[M:.*]] = bufferization.to_buffer %arg2 read_only : tensor<2x1x1x?xf32> to memref<2x1x1x?xf32>
// CALL: %[[ROWS:.*]] = memref.dim %[[Q]], %c2
// CALL: %[[OUT:.*]] = memref.alloc(%[[ROWS]]) {alignment = 64 : i64} : memref<2x4x?x64xbf16>
// CALL: call @tessera_flash_attention(%[[Q]], %[[K]], %{{.*}}, %[[M]], %[[OUT]]) {tessera.causal, tessera.scale = 1.250000e-01 : f32}
// CALL: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CALL: return %[[R]]
// CALL: func.func private @tessera_flash_attention(memref<2x4x?x64xbf16>, memref<2x4x?x64xbf16>, memref<2x4x?x64xbf16>, memref<2x1x1x?xf32>, memref<2x4x?x64xbf16>) attributes {tessera.cuda.flash_attention}
// KERNEL-LABEL: func.func @causal_masked
// KERNEL-NOT: call @tessera_flash_attention
// KERNEL: scf.if
// KERNEL: gpu.launch
// KERNEL-SAME: workgroup(%{{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>)
// KERNEL: nvgpu.device_async_copy
// KERNEL: scf.for
// KERNEL: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// KERNEL: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// KERNEL: memref.load {{.*}} : memref<2x1x1x?xf32>
// KERNEL: gpu.shuffle xor
// KERNEL: math.exp
// KERNEL: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// KERNEL: vector.store {{.*}} : memref<2x4x?x64xbf16>, vector<2xbf16>
// KERNEL: } {tessera.cuda.kernel = "flash_attention"}
// KERNEL-NOT: func.func private @tessera_flash_attention
func.func @causal_masked(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %m: tensor<2x1x1x?xf32>) -> tensor<2x4x?x64xbf16> {
  %0 = tessera.attention %q, %k, %k mask(%m : tensor<2x1x1x?xf32>) {causal} : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// A head dim of 80: shared rows padded by one 16-byte chunk (88 elements)
// instead of the swizzle.
// KERNEL-LABEL: func.func @padded_rows
// KERNEL: gpu.launch
// KERNEL-SAME: memref<64x88xf16, #gpu.address_space<workgroup>>
// KERNEL: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
func.func @padded_rows(%q: tensor<3x40x80xf16>) -> tensor<3x40x80xf16> {
  %0 = tessera.attention %q, %q, %q {scale = 1.0 : f32} : tensor<3x40x80xf16>, tensor<3x40x80xf16>, tensor<3x40x80xf16> -> tensor<3x40x80xf16>
  return %0 : tensor<3x40x80xf16>
}

// -----

// Must not fire: f32 attention, a head dim that is not a multiple of 16,
// a dynamic head dim, a value head dim other than the query's, an fp8
// mask; and a call to any other function stays a call.
// CALL-LABEL: func.func @not_taken
// CALL-NOT: bufferization.to_buffer
// CALL: tessera.attention {{.*}} -> tensor<1x8x64xf32>
// CALL: tessera.attention {{.*}} -> tensor<1x8x40xbf16>
// CALL: tessera.attention {{.*}} -> tensor<1x8x?xbf16>
// CALL: tessera.attention {{.*}} -> tensor<1x8x32xbf16>
// CALL: tessera.attention {{.*}} mask({{.*}}f8E4M3FN>) {{.*}} -> tensor<1x8x64xbf16>
// KERNEL-LABEL: func.func @not_taken
// KERNEL: call @other
// KERNEL-NOT: gpu.launch
func.func private @other(memref<4xf32>)
func.func @not_taken(%a: tensor<1x8x64xf32>, %b: tensor<1x8x40xbf16>, %c: tensor<1x8x?xbf16>, %buf: memref<4xf32>, %q: tensor<1x8x64xbf16>, %v: tensor<1x8x32xbf16>, %m8: tensor<8x8xf8E4M3FN>) -> (tensor<1x8x64xf32>, tensor<1x8x40xbf16>, tensor<1x8x?xbf16>, tensor<1x8x32xbf16>, tensor<1x8x64xbf16>) {
  %0 = tessera.attention %a, %a, %a : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %1 = tessera.attention %b, %b, %b : tensor<1x8x40xbf16>, tensor<1x8x40xbf16>, tensor<1x8x40xbf16> -> tensor<1x8x40xbf16>
  %2 = tessera.attention %c, %c, %c {scale = 1.0 : f32} : tensor<1x8x?xbf16>, tensor<1x8x?xbf16>, tensor<1x8x?xbf16> -> tensor<1x8x?xbf16>
  %3 = tessera.attention %q, %q, %v : tensor<1x8x64xbf16>, tensor<1x8x64xbf16>, tensor<1x8x32xbf16> -> tensor<1x8x32xbf16>
  %4 = tessera.attention %q, %q, %q mask(%m8 : tensor<8x8xf8E4M3FN>) : tensor<1x8x64xbf16>, tensor<1x8x64xbf16>, tensor<1x8x64xbf16> -> tensor<1x8x64xbf16>
  call @other(%buf) : (memref<4xf32>) -> ()
  return %0, %1, %2, %3, %4 : tensor<1x8x64xf32>, tensor<1x8x40xbf16>, tensor<1x8x?xbf16>, tensor<1x8x32xbf16>, tensor<1x8x64xbf16>
}
