// VNNI matmul with B in panels: C[m, nb*32+nl] += A[m,kp,v] * B[nb,kp,nl,v]
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dims (m, nb, nl, kp, v); A [M][K/2][2]; B [N/32][K/2][32][2]; C passed as [M][N/32][32] (same bytes as [M][N]; a memref.expand_shape here made fold_memref_alias_ops hang).
#mapA = affine_map<(m, nb, nl, kp, v) -> (m, kp, v)>
#mapB = affine_map<(m, nb, nl, kp, v) -> (nb, kp, nl, v)>
#mapC = affine_map<(m, nb, nl, kp, v) -> (m, nb, nl)>
func.func @gemm_bf16(%A: memref<1024x512x2xbf16>, %B: memref<32x512x32x2xbf16>, %C: memref<1024x32x32xf32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%A, %B : memref<1024x512x2xbf16>, memref<32x512x32x2xbf16>) outs(%C : memref<1024x32x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
