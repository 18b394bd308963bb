// bf16_to_fma.mlir - MLIR 22's vector_contract_bf16_to_fma pattern emits AVX-NE-CONVERT
// (vbcstnebf162ps, vcvtne{e,o}bf162ps); llc -mcpu=native on a CPU without avx_ne_convert
// stops with "Cannot select: intrinsic %llvm.x86.vbcstnebf162ps256" (run.sh shows it).
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#map = affine_map<(d4, d1, d2, d3) -> (d1, d3, d4)>
#map1 = affine_map<(d4, d1, d2, d3) -> (d3, d2, d4)>
#map2 = affine_map<(d4, d1, d2, d3) -> (d1, d2)>
func.func @f(%arg0: memref<4x1x2xbf16>, %arg1: memref<1x32x2xbf16>, %arg2: vector<1x8xf32>) -> vector<1x8xf32> {
  %c0 = arith.constant 0 : index
  %1 = vector.load %arg0[%c0, %c0, %c0] : memref<4x1x2xbf16>, vector<1x1x2xbf16>
  %2 = vector.load %arg1[%c0, %c0, %c0] : memref<1x32x2xbf16>, vector<1x8x2xbf16>
  %3 = vector.contract {indexing_maps = [#map, #map1, #map2], iterator_types = ["reduction", "parallel", "parallel", "reduction"], kind = #vector.kind<add>} %1, %2, %arg2 : vector<1x1x2xbf16>, vector<1x8x2xbf16> into vector<1x8xf32>
  return %3 : vector<1x8xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.x86vector.vector_contract_bf16_to_fma
    } : !transform.any_op
    transform.yield
  }
}
