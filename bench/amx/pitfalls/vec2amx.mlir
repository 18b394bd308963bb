// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#mA = affine_map<(m, n, kp, v) -> (m, kp, v)>
#mB = affine_map<(m, n, kp, v) -> (kp, n, v)>
#mC = affine_map<(m, n, kp, v) -> (m, n)>
// VNNI-form contraction on one 16x16 C tile: A [16 m][16 kp][2], B [16 kp][16 n][2]
func.func @gemm_tile(%A: memref<16x16x2xbf16>, %B: memref<16x16x2xbf16>, %C: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %a = vector.transfer_read %A[%c0, %c0, %c0], %pb {in_bounds = [true, true, true]} : memref<16x16x2xbf16>, vector<16x16x2xbf16>
  %b = vector.transfer_read %B[%c0, %c0, %c0], %pb {in_bounds = [true, true, true]} : memref<16x16x2xbf16>, vector<16x16x2xbf16>
  %c = vector.transfer_read %C[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x16xf32>, vector<16x16xf32>
  %d = vector.contract {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<16x16x2xbf16>, vector<16x16x2xbf16> into vector<16x16xf32>
  vector.transfer_write %d, %C[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, memref<16x16xf32>
  return
}
