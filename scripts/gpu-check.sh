#!/bin/bash
# gpu-check.sh - the GPU check: Tessera's CUDA artifacts on a GPU against expected outputs and PyTorch, and the PTX emulator's differential pack.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
#   scripts/gpu-check.sh cuda [BUNDLE [gpu_bench.py options]]   on the GPU machine
#   scripts/gpu-check.sh all [BUNDLE]          cuda, then record into $OUT/golden
#   scripts/gpu-check.sh record [GOLDEN_DIR]   on a machine with a GPU + nvcc
#   scripts/gpu-check.sh compare GOLDEN_DIR    anywhere, with tessera-ptx-emu
#
# cuda: runs a bundle that scripts/gpu-bundle.sh built on a development
# machine (default BUNDLE: gpu-bundle/ in the repository; carry it to the
# GPU machine): needs the bundle, python3 with PyTorch and the CUDA driver,
# no MLIR and no build tools. First a preflight (a 16^3 GEMM, bench/probe, on GPU
# $TESSERA_GPU_DEVICE, default 0, under a 60 s timeout) that stops with
# exit status 3 and one clear line when no GPU or driver answers; then
# bench/gpu_bench.py: the four reference models and the checked benchmark
# models against their expected outputs (max error ratio 1e-4), PyTorch on
# the same ops, the benchmark artifacts; one table on stdout, JSON in
# $RESULTS/gpu-check.json ($RESULTS: $OUT when set, else .). The whole step
# is bounded at 6 minutes ($TESSERA_GPU_CHECK_SECONDS, default 360).
# TESSERA_GPU_DRIVER=emulator runs the same steps on the PTX emulator (a
# plumbing test without a GPU; pass --only and --skip-torch, it is slow).
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
mode=${1:-all}

# Prints each case as: NAME TOL OUTPUTS PTX OPTIONS...
cases() { grep -v -e '^#' -e '^[[:space:]]*$' "$CASES"; }

case "$mode" in
cuda)
  BUNDLE=${2:-$ROOT/gpu-bundle}
  shift $(($# < 2 ? $# : 2))
  RESULTS=${OUT:-.}
  LIMIT=${TESSERA_GPU_CHECK_SECONDS:-360}
  DRIVER=${TESSERA_GPU_DRIVER:-cuda}
  DEVICE=${TESSERA_GPU_DEVICE:-0}
  PYTHON=${PYTHON:-python3}
  RUNNER=$BUNDLE/bin/tessera-gpu-run
  if [ ! -x "$RUNNER" ] || [ ! -f "$BUNDLE/bench/benchmarks.json" ]; then
    echo "error: no GPU bundle at $BUNDLE: build it with scripts/gpu-bundle.sh on a development machine and carry it" >&2
    exit 2
  fi
  BUNDLE=$(cd "$BUNDLE" && pwd)
  mkdir -p "$RESULTS"
  echo "== GPU check of CUDA artifacts: bundle $BUNDLE, driver $DRIVER, device $DEVICE"
  sed 's/^/   /' "$BUNDLE/MANIFEST" 2>/dev/null || true
  if command -v nvidia-smi > /dev/null; then
    timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total \
      --format=csv,noheader || echo "note: nvidia-smi failed"
  else
    echo "note: no nvidia-smi on the PATH"
  fi
  echo "== preflight: one small artifact on the GPU (60 s at most)"
  probe=$BUNDLE/bench/probe
  set +e
  preflight=$(LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    timeout -k 5 60 "$RUNNER" "$probe/model.so" gpu-driver="$DRIVER" \
    device="$DEVICE" --test-dir="$probe" 2>&1)
  rc=$?
  set -e
  echo "$preflight" | sed 's/^/   /'
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "error: the GPU check's preflight did not finish in 60 s (a GPU that does not answer?)" >&2
    exit 3
  elif [ $rc -ne 0 ]; then
    why=$(echo "$preflight" | grep -m1 '^error:' || true)
    if echo "$why" | grep -q 'no CUDA'; then
      echo "error: no usable NVIDIA GPU here: ${why#error: }" >&2
    else
      echo "error: the preflight artifact failed on GPU $DEVICE: ${why:-see above}" >&2
    fi
    exit 3
  fi
  left=$((LIMIT - SECONDS))
  # gpu_bench.py stops starting steps 25 s before the limit; timeout ends
  # it (and the runner it waits on) at the limit whatever happens.
  set +e
  timeout -k 10 "$left" "$PYTHON" -u "$ROOT/bench/gpu_bench.py" \
    --bundle "$BUNDLE" --json "$RESULTS/gpu-check.json" \
    --deadline $((left - 25)) --gpu-driver "$DRIVER" --device "$DEVICE" "$@"
  rc=$?
  set -e
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "error: the GPU check ran past its ${LIMIT} s; what it measured is in $RESULTS/gpu-check.json" >&2
  fi
  echo "== GPU check: exit status $rc after ${SECONDS} s; JSON: $RESULTS/gpu-check.json"
  exit $rc
  ;;
all)
  set +e
  "$0" cuda "${2:-$ROOT/gpu-bundle}"
  cuda=$?
  "$0" record
  record=$?
  echo "== cuda: exit status $cuda; record (emulator golden outputs): exit status $record"
  [ $cuda -eq 0 ] && [ $record -eq 0 ]
  exit $?
  ;;
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
  echo "usage: gpu-check.sh cuda [BUNDLE [gpu_bench.py options]] | all [BUNDLE] | record [GOLDEN_DIR] | compare GOLDEN_DIR" >&2
  exit 2
  ;;
esac
