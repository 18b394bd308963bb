#!/bin/bash
# run.sh - rebuilds the vdpbf16ps bf16 GEMM prototypes with MLIR 22 and benchmarks them beside both peaks.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Usage: bench/bf16-vnni/run.sh [rounds]   (each round runs every binary once; a kernel binary reports
#        the best and worst of 5 calls; bench.py prints min/median/max over the rounds)
# Needs an AVX512-BF16 CPU, /usr/lib/llvm-22/bin (mlir-opt, mlir-translate, llc, clang) and cc (gcc).
# Every generated file and binary goes to bench/bf16-vnni/out/ (git-ignored).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$HERE/out"; cd "$HERE/out"
export PATH=/usr/lib/llvm-22/bin:$PATH
ROUNDS=${1:-5}
M=1024 N=1024 K=1024
LOWER="--convert-vector-to-scf --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine
  --convert-vector-to-llvm=enable-x86vector --convert-arith-to-llvm --finalize-memref-to-llvm
  --convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 --convert-cf-to-llvm --convert-ub-to-llvm
  --reconcile-unrealized-casts"
finish() { # name harness-defines : k_<name>.x86.mlir -> LLVM IR -> asm -> binary
  local name=$1 defs=$2
  mlir-opt k_$name.x86.mlir $LOWER -o k_$name.llvm.mlir
  mlir-translate --mlir-to-llvmir k_$name.llvm.mlir -o k_$name.ll
  llc -O3 -mcpu=native k_$name.ll -o k_$name.s
  echo "$name: $(grep -c 'x86vector.avx512.dot' k_$name.x86.mlir) x86vector.avx512.dot -> $(grep -c vdpbf16ps k_$name.s) vdpbf16ps, $(grep -c 'vfmadd...ps.*zmm' k_$name.s) zmm FMAs in k_$name.s"
  clang -O2 -march=native $defs -DM=$M -DN=$N -DK=$K "$HERE/harness.c" k_$name.s -lm -o gemm_$name
}
# Route 1: vector-level kernel written by gen.py (VNNI-form vector.contract ops),
#          x86vector pattern applied by xform.mlir.
hand() { # name gen-flags harness-defines
  python3 "$HERE/gen.py" $M $N $K $2 > k_$1.mlir
  mlir-opt k_$1.mlir -transform-preload-library="transform-library-paths=$HERE/xform.mlir" \
    -transform-interpreter -o k_$1.x86.mlir
  finish $1 "$3"
}
hand direct "" ""
hand packA "--pack-a" "-DPACK_A"
hand packB "--pack-b" "-DPACK_B"
hand packAB "--pack-a --pack-b" "-DPACK_A -DPACK_B"
# Comparison without vdpbf16ps: A as f32, B's bf16 pairs widened with shift/and, vfmadd231ps.
hand fma "--fma" "-DA_F32"
hand fmaB "--fma --pack-b" "-DA_F32 -DPACK_B"
# Route 2: linalg.generic on VNNI-packed operands, scheduled entirely by transform dialect
#          (tile 8x32, k-pair loop, 1x16 pieces unrolled, vectorize, hoist, x86vector),
#          then the (test-registered) transfer-flattening patterns.
linalg() { # name input schedule harness-defines
  mlir-opt "$HERE/linalg_route/$2" -transform-preload-library="transform-library-paths=$HERE/linalg_route/$3" \
    -transform-interpreter --test-vector-transfer-flatten-patterns -canonicalize -cse -o k_$1.x86.mlir
  finish $1 "$4"
}
linalg linalg_direct gemm_vnni.mlir schedule.mlir ""
linalg linalg_packB gemm_vnni_packB.mlir schedule_packB.mlir "-DPACK_B"
echo "== checks"
mlir-opt "$HERE/pack_b.mlir" > /dev/null && echo "pack_b.mlir (linalg.pack to [N/32][K/2][32][2]) verifies"
echo "bf16_to_fma.mlir (x86vector vector_contract_bf16_to_fma -> AVX-NE-CONVERT; expected to fail in llc without avx_ne_convert):"
set +o pipefail
mlir-opt "$HERE/pitfalls/bf16_to_fma.mlir" -transform-interpreter -test-transform-dialect-erase-schedule \
    --expand-strided-metadata --lower-affine --convert-vector-to-llvm=enable-x86vector --convert-to-llvm \
    --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | llc -O3 -mcpu=native -o /dev/null 2>&1 \
  | grep -m1 'Cannot select' || echo "  llc selected it (this CPU has avx_ne_convert)"
set -o pipefail
"$HERE/pitfalls/forms.sh"
cc -O2 -mavx512f -mavx512bf16 "$HERE/../peak_bf16.c" -o peak_bf16
cc -O2 -mavx512f "$HERE/../peak_fma.c" -o peak_fma
python3 "$HERE/bench.py" "$ROUNDS" peak_bf16 peak_fma gemm_direct gemm_packA gemm_packB gemm_packAB \
  gemm_linalg_direct gemm_linalg_packB gemm_fma gemm_fmaB
