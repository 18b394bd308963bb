// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#mA = affine_map<(m, n, kp, v) -> (m, kp, v)>
#mB = affine_map<(m, n, kp, v) -> (kp, n, v)>
#mC = affine_map<(m, n, kp, v) -> (m, n)>
// k loop with the C tile as a vector iter_arg: A [16][K/2][2], B [K/2][16][2], K = 256
func.func @gemm_tile_k(%A: memref<16x128x2xbf16>, %B: memref<128x16x2xbf16>, %C: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %c = vector.transfer_read %C[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x16xf32>, vector<16x16xf32>
  %r = scf.for %kp = %c0 to %c128 step %c16 iter_args(%acc = %c) -> (vector<16x16xf32>) {
    %a = vector.transfer_read %A[%c0, %kp, %c0], %pb {in_bounds = [true, true, true]} : memref<16x128x2xbf16>, vector<16x16x2xbf16>
    %b = vector.transfer_read %B[%kp, %c0, %c0], %pb {in_bounds = [true, true, true]} : memref<128x16x2xbf16>, vector<16x16x2xbf16>
    %d = vector.contract {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"], kind = #vector.kind<add>} %a, %b, %acc : vector<16x16x2xbf16>, vector<16x16x2xbf16> into vector<16x16xf32>
    scf.yield %d : vector<16x16xf32>
  }
  vector.transfer_write %r, %C[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, memref<16x16xf32>
  return
}
