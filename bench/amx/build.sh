#!/bin/bash
# build.sh NAME M N K [gen.py flags...]  -> out/bin/NAME, out/asm/NAME.s, out/mlir/NAME.{mlir,ll,o}
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -eo pipefail
export PATH=/usr/lib/llvm-22/bin:$PATH
cd "$(dirname "$0")"; mkdir -p out/bin out/asm out/mlir
name=$1; shift; M=$1; N=$2; K=$3; shift 3
python3 gen.py $M $N $K "$@" > out/mlir/$name.mlir
mlir-opt out/mlir/$name.mlir --lower-affine --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
  | mlir-translate --mlir-to-llvmir > out/mlir/$name.ll
llc -O3 -mattr=+amx-bf16,+amx-tile,+avx512f out/mlir/$name.ll -o out/asm/$name.s
llc -O3 -mattr=+amx-bf16,+amx-tile,+avx512f -filetype=obj out/mlir/$name.ll -o out/mlir/$name.o
clang -O2 harness.c out/mlir/$name.o -lm -o out/bin/$name
