#!/bin/bash
# gpu-check.sh - the PTX emulator's differential pack: the same kernels on a GPU and on the emulator.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
#   scripts/gpu-check.sh record [GOLDEN_DIR]   on a machine with a GPU + nvcc
#   scripts/gpu-check.sh compare GOLDEN_DIR    anywhere, with tessera-ptx-emu
#
# record: compiles the CUDA probes of test/Target/CUDA/Emulator/Inputs/*.cu
# for sm_90a (and checks that the checked-in PTX is still what nvcc emits),
# builds Inputs/hw/ptx-hw-run.cu, runs every launch of Inputs/hw/cases.txt on
# GPU 0 and writes each output buffer to GOLDEN_DIR/NAME.BUFFER.bin (default
# $OUT/golden when $OUT is set, else ./golden), with the GPU's name and the
# driver version in GOLDEN_DIR/MANIFEST.
#
# compare: runs the same launches on the emulator and checks each output
# against the golden file (bit-exact, or within the case's tolerance).
#
# Nothing here has been run on hardware yet: no golden outputs exist in the
# repository (docs/CUDA.md, "PTX emulator").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
INPUTS=$ROOT/test/Target/CUDA/Emulator/Inputs
CASES=$INPUTS/hw/cases.txt
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
EMU=${TESSERA_PTX_EMU:-tessera-ptx-emu}
mode=${1:-record}

# Prints each case as: NAME TOL OUTPUTS PTX OPTIONS...
cases() { grep -v -e '^#' -e '^[[:space:]]*$' "$CASES"; }

case "$mode" in
record)
  GOLDEN=${2:-${OUT:+$OUT/golden}}
  GOLDEN=${GOLDEN:-golden}
  mkdir -p "$GOLDEN"
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  echo "== compiling the CUDA probes"
  for cu in "$INPUTS"/*.cu; do
    base=$(basename "$cu" .cu)
    "$NVCC" -arch=sm_90a -O3 -cubin "$cu" -o "$WORK/$base.cubin"
    # The checked-in PTX came from gen_ptx.sh; report drift, do not fail.
    arch=sm_80
    grep -q '^\.target sm_90a' "$INPUTS/$base.ptx" && arch=sm_90a
    grep -q '^\.target sm_90$' "$INPUTS/$base.ptx" && arch=sm_90
    "$NVCC" -arch=$arch -O3 -ptx "$cu" -o "$WORK/$base.ptx"
    cmp -s "$WORK/$base.ptx" "$INPUTS/$base.ptx" ||
      echo "note: $base.ptx differs from a fresh nvcc -ptx (rerun gen_ptx.sh?)"
  done
  echo "== building ptx-hw-run"
  "$NVCC" -O2 -std=c++17 "$INPUTS/hw/ptx-hw-run.cu" -o "$WORK/ptx-hw-run" -lcuda
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    "$NVCC" --version | tail -n 1
    echo "cases: $(cases | wc -l)"
  } > "$GOLDEN/MANIFEST"
  echo "== running $(cases | wc -l) launches"
  fail=0
  while read -r name tol outs ptx opts; do
    dumps=()
    for b in ${outs//,/ }; do dumps+=("--dump=$b:$GOLDEN/$name.$b.bin"); done
    # shellcheck disable=SC2086 # opts is a list of options
    if (cd "$INPUTS" && "$WORK/ptx-hw-run" "$ptx" $opts "${dumps[@]}"); then
      echo "ok   $name"
    else
      echo "FAIL $name"
      fail=1
    fi
  done < <(cases)
  exit $fail
  ;;
compare)
  GOLDEN=${2:?usage: gpu-check.sh compare GOLDEN_DIR}
  GOLDEN=$(cd "$GOLDEN" && pwd)
  fail=0
  while read -r name tol outs ptx opts; do
    expects=()
    for b in ${outs//,/ }; do
      [ -f "$GOLDEN/$name.$b.bin" ] || { echo "MISSING $name.$b.bin"; fail=1; continue 2; }
      expects+=("--expect=$b:file:$GOLDEN/$name.$b.bin:$tol")
    done
    # shellcheck disable=SC2086
    if (cd "$INPUTS" && "$EMU" "$ptx" $opts "${expects[@]}" > /dev/null); then
      echo "ok   $name"
    else
      echo "FAIL $name (rerun: cd $INPUTS && $EMU $ptx $opts ${expects[*]})"
      fail=1
    fi
  done < <(cases)
  exit $fail
  ;;
*)
  echo "usage: gpu-check.sh record [GOLDEN_DIR] | compare GOLDEN_DIR" >&2
  exit 2
  ;;
esac
