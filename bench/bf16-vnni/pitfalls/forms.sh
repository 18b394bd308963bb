#!/bin/bash
# Which vector.contract forms does MLIR 22's
# apply_patterns.x86vector.vector_contract_to_packed_type_dot_product rewrite?
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Prints, per form, what is left after the pattern: x86vector.avx512.dot (rewritten) or vector.contract.
HERE=$(cd "$(dirname "$0")/.." && pwd); export PATH=/usr/lib/llvm-22/bin:$PATH
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; cd "$T"   # scratch .mlir files live in a temporary folder
mk() { # name lhsT rhsT accT mapA mapB mapC iters
cat > $1.mlir <<EOT
func.func @f(%a: $2, %b: $3, %c: $4) -> $4 {
  %0 = vector.contract {indexing_maps = [$5, $6, $7], iterator_types = $8, kind = #vector.kind<add>} %a, %b, %c : $2, $3 into $4
  return %0 : $4
}
EOT
printf "%-14s %-24s %-26s %-20s -> %s\n" "$1" "$2" "$3" "$4" "$(mlir-opt $1.mlir -transform-preload-library="transform-library-paths=$HERE/xform.mlir" -transform-interpreter 2>&1 | grep -o 'x86vector.avx512.dot[^:]*: vector<[0-9a-z]*>\|vector.contract\|error.*' | head -1)"
}
V='affine_map<(d4, d1, d2, d3) -> (d1, d3, d4)>'; W='affine_map<(d4, d1, d2, d3) -> (d3, d2, d4)>'; X='affine_map<(d4, d1, d2, d3) -> (d1, d2)>'; IT='["reduction", "parallel", "parallel", "reduction"]'
mk vnni_1x16 'vector<1x1x2xbf16>' 'vector<1x16x2xbf16>' 'vector<1x16xf32>' "$V" "$W" "$X" "$IT"
mk vnni_1x8 'vector<1x1x2xbf16>' 'vector<1x8x2xbf16>' 'vector<1x8xf32>' "$V" "$W" "$X" "$IT"
mk vnni_acc1d 'vector<1x1x2xbf16>' 'vector<1x16x2xbf16>' 'vector<16xf32>' "$V" "$W" 'affine_map<(d4, d1, d2, d3) -> (d2)>' "$IT"
mk vnni_1x32 'vector<1x1x2xbf16>' 'vector<1x32x2xbf16>' 'vector<1x32xf32>' "$V" "$W" "$X" "$IT"
mk vnni_8x16 'vector<8x1x2xbf16>' 'vector<1x16x2xbf16>' 'vector<8x16xf32>' "$V" "$W" "$X" "$IT"
mk vnni_kp2 'vector<1x2x2xbf16>' 'vector<2x16x2xbf16>' 'vector<1x16xf32>' "$V" "$W" "$X" "$IT"
mk vnni_bf16acc 'vector<1x1x2xbf16>' 'vector<1x16x2xbf16>' 'vector<1x16xbf16>' "$V" "$W" "$X" "$IT"
mk vnni_f16 'vector<1x1x2xf16>' 'vector<1x16x2xf16>' 'vector<1x16xf32>' "$V" "$W" "$X" "$IT"
mk flat_1x2x16 'vector<1x2xbf16>' 'vector<2x16xbf16>' 'vector<1x16xf32>' 'affine_map<(d0, d1, d2) -> (d0, d2)>' 'affine_map<(d0, d1, d2) -> (d2, d1)>' 'affine_map<(d0, d1, d2) -> (d0, d1)>' '["parallel", "parallel", "reduction"]'
mk brgemm_bcstB 'vector<1x16x1x2xbf16>' 'vector<1x1x1x2xbf16>' 'vector<16x1xf32>' 'affine_map<(d0, d4, d1, d2, d3) -> (d0, d1, d3, d4)>' 'affine_map<(d0, d4, d1, d2, d3) -> (d0, d3, d2, d4)>' 'affine_map<(d0, d4, d1, d2, d3) -> (d1, d2)>' '["reduction", "reduction", "parallel", "parallel", "reduction"]'
mk packB5d 'vector<1x1x2xbf16>' 'vector<1x1x16x2xbf16>' 'vector<1x1x16xf32>' 'affine_map<(m, nb, nl, kp, v) -> (m, kp, v)>' 'affine_map<(m, nb, nl, kp, v) -> (nb, kp, nl, v)>' 'affine_map<(m, nb, nl, kp, v) -> (m, nb, nl)>' '["parallel", "parallel", "parallel", "reduction", "reduction"]'
