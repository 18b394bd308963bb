// VNNI-packed matmul as a linalg.generic: C[m,n] += A[m,kp,v] * B[kp,n,v]
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dims (m, n, kp, v); A is [M][K/2][2] (a free reshape of row-major [M][K]),
// B is [K/2][N][2] (VNNI packing of [K][N]).
#mapA = affine_map<(m, n, kp, v) -> (m, kp, v)>
#mapB = affine_map<(m, n, kp, v) -> (kp, n, v)>
#mapC = affine_map<(m, n, kp, v) -> (m, n)>
func.func @gemm_bf16(%A: memref<1024x512x2xbf16>, %B: memref<512x1024x2xbf16>, %C: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<1024x512x2xbf16>, memref<512x1024x2xbf16>) outs(%C : memref<1024x1024xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
