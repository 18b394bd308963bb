// mma_cpasync.mlir - MLIR 22 GEMM through nvgpu (cp.async, ldmatrix, mma.sync) for the
// PTX emulator tests. Lowered by ../gen_ptx.sh.
// Tiled f16 x f16 -> f32 GEMM, one warp per 16x8 output tile.
// cp.async (nvgpu.device_async_copy) global->shared, bar.sync, ldmatrix, mma.sync m16n8k16.
module attributes {gpu.container_module} {
gpu.module @kernels {
  gpu.func @mma_cpasync(%A: memref<64x64xf16>, %Bt: memref<64x64xf16>, %C: memref<64x64xf32>)
      workgroup(%sA: memref<16x16xf16, #gpu.address_space<workgroup>>,
                %sB: memref<8x16xf16, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %tid = gpu.thread_id x
    %bx = gpu.block_id x
    %by = gpu.block_id y
    %m0 = arith.muli %by, %c16 : index
    %n0 = arith.muli %bx, %c8 : index
    // cp.async A tile: lane -> row tid/2, col (tid%2)*8 (16 bytes each)
    %ar = arith.divui %tid, %c2 : index
    %am = arith.remui %tid, %c2 : index
    %ac = arith.muli %am, %c8 : index
    %garow = arith.addi %m0, %ar : index
    // B tile (stored N x K): lanes 0..15 copy row tid/2, col (tid%2)*8
    %br = arith.remui %ar, %c8 : index
    %gbrow = arith.addi %n0, %br : index
    // ldmatrix addresses
    %lr16 = arith.remui %tid, %c16 : index
    %lq = arith.divui %tid, %c16 : index
    %lc16 = arith.muli %lq, %c8 : index
    %lr8 = arith.remui %tid, %c8 : index
    %lq8 = arith.divui %tid, %c8 : index
    %lq8m = arith.remui %lq8, %c2 : index
    %lc8 = arith.muli %lq8m, %c8 : index
    %zero = arith.constant dense<0.0> : vector<2x2xf32>
    %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%acc_it = %zero) -> (vector<2x2xf32>) {
      %gk = arith.addi %k, %ac : index
      %t0 = nvgpu.device_async_copy %A[%garow, %gk], %sA[%ar, %ac], 8 : memref<64x64xf16> to memref<16x16xf16, #gpu.address_space<workgroup>>
      %t1 = nvgpu.device_async_copy %Bt[%gbrow, %gk], %sB[%br, %ac], 8 : memref<64x64xf16> to memref<8x16xf16, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t0, %t1
      nvgpu.device_async_wait %g
      gpu.barrier
      %a = nvgpu.ldmatrix %sA[%lr16, %lc16] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      %b = nvgpu.ldmatrix %sB[%lr8, %lc8] {numTiles = 2 : i32, transpose = false} : memref<8x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
      %d = nvgpu.mma.sync(%a, %b, %acc_it) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.barrier
      scf.yield %d : vector<2x2xf32>
    }
    // store: c0,c1 at row g, cols 2*(lane%4)+{0,1}; c2,c3 at row g+8
    %grp = arith.divui %tid, %c4 : index
    %q = arith.remui %tid, %c4 : index
    %cc = arith.muli %q, %c2 : index
    %row0 = arith.addi %m0, %grp : index
    %row1 = arith.addi %row0, %c8 : index
    %col0 = arith.addi %n0, %cc : index
    %v0 = vector.extract %acc[0] : vector<2xf32> from vector<2x2xf32>
    %v1 = vector.extract %acc[1] : vector<2xf32> from vector<2x2xf32>
    vector.store %v0, %C[%row0, %col0] : memref<64x64xf32>, vector<2xf32>
    vector.store %v1, %C[%row1, %col0] : memref<64x64xf32>, vector<2xf32>
    gpu.return
  }
}
}
