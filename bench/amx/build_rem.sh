#!/bin/bash
# build_rem.sh M N K -> out/bin_rem/rem_M_N_K (remainder/peeling demo from gen_rem.py)
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -eo pipefail
export PATH=/usr/lib/llvm-22/bin:$PATH
cd "$(dirname "$0")"; mkdir -p out/bin_rem out/mlir_rem
M=$1; N=$2; K=$3; n=rem_${M}_${N}_${K}
python3 gen_rem.py $M $N $K > out/mlir_rem/$n.mlir
mlir-opt out/mlir_rem/$n.mlir --lower-affine --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
  | mlir-translate --mlir-to-llvmir > out/mlir_rem/$n.ll
llc -O3 -mattr=+amx-bf16,+amx-tile,+avx512f out/mlir_rem/$n.ll -o out/mlir_rem/$n.s
llc -O3 -mattr=+amx-bf16,+amx-tile,+avx512f -filetype=obj out/mlir_rem/$n.ll -o out/mlir_rem/$n.o
clang -O2 harness.c out/mlir_rem/$n.o -lm -o out/bin_rem/$n
