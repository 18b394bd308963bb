#!/bin/bash
# gen_ptx.sh - regenerates the checked-in PTX inputs of the emulator tests.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# nvcc -ptx for the .cu sources, MLIR 22's NVVM pipeline for the .mlir ones
# (the PTX is pulled out of gpu.binary's assembly string). CPU only.
set -euo pipefail
cd "$(dirname "$0")/Inputs"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
MLIR_OPT=${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
for f in warp_reduce cp_async_pipeline mma_gemm flash_attn; do
  "$NVCC" -arch=sm_80 -O3 -ptx "$f.cu" -o "$f.ptx"
done
"$NVCC" -arch=sm_90 -O3 -ptx mbarrier_bulk.cu -o mbarrier_bulk.ptx
"$PTXAS" -arch=sm_90 mbarrier_bulk.ptx -o /dev/null
"$NVCC" -arch=sm_90a -O3 -ptx wgmma_gemm.cu -o wgmma_gemm.ptx
"$PTXAS" -arch=sm_90a wgmma_gemm.ptx -o /dev/null
"$NVCC" -arch=sm_90a -O3 -ptx tma_wgmma_gemm.cu -o tma_wgmma_gemm.ptx
"$PTXAS" -arch=sm_90a tma_wgmma_gemm.ptx -o /dev/null
for f in mma_cpasync; do
  "$MLIR_OPT" "$f.mlir" \
    -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" |
    python3 -c '
import re, sys
m = re.search(r"assembly = \"((?:[^\"\\]|\\.)*)\"", sys.stdin.read())
if not m:
    sys.exit("gen_ptx.sh: no assembly attribute in gpu.binary")
s, out, i = m.group(1), bytearray(), 0
while i < len(s):
    if s[i] != "\\":
        out += s[i].encode(); i += 1
    elif s[i + 1] in "\\\"":
        out += s[i + 1].encode(); i += 2
    elif s[i + 1] in "nt":
        out += b"\n" if s[i + 1] == "n" else b"\t"; i += 2
    else:
        out.append(int(s[i + 1:i + 3], 16)); i += 3
sys.stdout.buffer.write(bytes(out))' > "$f.ptx"
  "$PTXAS" -arch=sm_90 "$f.ptx" -o /dev/null
done
for f in warp_reduce cp_async_pipeline mma_gemm flash_attn; do
  "$PTXAS" -arch=sm_80 "$f.ptx" -o /dev/null
done
