#!/bin/bash
# run.sh - rebuilds and runs the whole AMX bf16 GEMM prototype (see README.md).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# usage: bench/amx/run.sh [rounds (default 11)] [kernel name regex for bench.py]
# Needs an AMX CPU, /usr/lib/llvm-22/bin (mlir-opt, mlir-translate, llc, clang) and cc (gcc).
# Every build output and result goes to bench/amx/out/ (git-ignored).
set -eo pipefail
cd "$(dirname "$0")"
R=${1:-11}
FILTER=${2:-}
export PATH=/usr/lib/llvm-22/bin:$PATH
mkdir -p out/peak out/sigill out/pitfalls
echo "== CPU flags"; grep -o 'amx_bf16\|amx_tile\|amx_int8\|avx512_bf16' /proc/cpuinfo | sort | uniq -c
echo "== peaks (bench/peak_fma.c and bench/peak_bf16.c, plus peak/peak_amx*.c)"
cc -O2 -mavx512f -mavx512bf16 ../peak_fma.c -o out/peak/peak_fma
cc -O2 -mavx512f -mavx512bf16 ../peak_bf16.c -o out/peak/peak_bf16
for f in peak_amx peak_amx6; do clang -O2 -mamx-tile -mamx-bf16 peak/$f.c -o out/peak/$f; done
echo "== arch_prctl / SIGILL check"
./build.sh sig64 64 64 64 >/dev/null && clang -O1 sigill/sigill.c out/mlir/sig64.o -o out/sigill/sigill
./out/sigill/sigill || true        # expected: SIGILL at the first tile-data instruction (tilezero), rc 42
./out/sigill/sigill perm           # expected: arch_prctl -> 0, no fault
echo "== remainder (peeling) tests: every C entry checked"
for s in "37 41 72" "5 9 8" "50 100 66" "33 17 34" "128 768 770" "16 16 32"; do ./build_rem.sh $s && ./out/bin_rem/rem_${s// /_} $s 0 2>/dev/null; done
echo "== remainders in ONE function (expected to fail in LLVM 22: > 8 distinct tile shapes)"
python3 gen_rem.py 37 41 72 --one-func > out/pitfalls/rem_one_func.mlir
mlir-opt out/pitfalls/rem_one_func.mlir --lower-affine --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
  | mlir-translate --mlir-to-llvmir | llc -O3 -mattr=+amx-bf16,+amx-tile,+avx512f -o /dev/null 2>&1 | head -1 || true
echo "== verifier limits"
set +o pipefail
for t in 16x32xbf16 17x32xbf16 16x33xbf16 5x8xbf16 16x16xf32 16x17xf32; do printf "%-12s " $t
  echo "func.func @f() { %z = amx.tile_zero : !amx.tile<$t>
  return }" | mlir-opt 2>&1 >/dev/null | head -1 | grep . || echo ok; done
for f in mulf_bad mulf_shapes; do printf "%-12s " $f; mlir-opt pitfalls/$f.mlir 2>&1 >/dev/null | head -1 | grep . || echo ok; done
set -o pipefail
echo "== convert-vector-to-amx (22): VNNI vector.contract -> amx ops; with a vector iter_arg the acc goes through allocas"
mlir-opt pitfalls/vec2amx.mlir --convert-vector-to-amx > out/pitfalls/vec2amx.out
mlir-opt pitfalls/vec2amx_loop.mlir --convert-vector-to-amx > out/pitfalls/vec2amx_loop.out
grep -c 'amx.tile_mulf' out/pitfalls/vec2amx.out; grep -c 'memref.alloca' out/pitfalls/vec2amx_loop.out
echo "== build all GEMM variants"
./variants.sh > /dev/null
echo "tile spills (1024-byte spill/reload lines) per variant with any:"; grep -c '1024-byte' out/asm/*.s | grep -v ':0$' || true
echo "== cache-resident microkernel test (192x192x256, A packed, 100 calls per sample, paired with a short AMX peak)"
for v in "2x2 all" "2x2 bj" "1x4 bj" "4x1 ai" "1x6 bj" "1x2 bj"; do set -- $v; tm=${1%x*}; tn=${1#*x}
  ./build.sh l1_${1}_${2} 192 192 256 --tm $tm --tn $tn --order $2 --pack-a >/dev/null; done
./bench_paired.py 7 100 192 192 256 1 out/bin/l1_2x2_all out/bin/l1_2x2_bj out/bin/l1_1x4_bj out/bin/l1_4x1_ai out/bin/l1_1x6_bj out/bin/l1_1x2_bj
echo "== full benchmark, $R rounds"
./bench.py $R $FILTER | tee out/bench_last.txt
python3 summarize.py out/results.json
