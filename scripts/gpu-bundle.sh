#!/bin/bash
# gpu-bundle.sh - builds here what the GPU check needs on a machine with a GPU but no MLIR or build tools, into one ignored folder.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
#   scripts/gpu-bundle.sh [--build DIR] [--out DIR] [--gpu LIST] [--verify]
#
# Writes OUT (default gpu-bundle/ in the repository, git-ignored):
#   bin/tessera-gpu-run          the run-only checker and timer (links the
#   lib/libtessera_runtime.so    runtime library alone; no MLIR, LLVM or
#                                protobuf needed where it runs)
#   models/NAME/model.so         the four reference models (scripts/
#   models/NAME/test_data_set_*/ gen_models.py) compiled --target=cuda, with
#                                their inputs and PyTorch's outputs as .npy
#   bench/NAME/model.so          the benchmark models (bench/gpu_models.py):
#   bench/benchmarks.json        GEMMs, attention; the small ones with .npy
#                                test data and float64 references
#   MANIFEST                     commit, build, architectures, sizes
# from the tools of BUILD (default build/: tessera-compile, tessera-gpu-run,
# lib/libtessera_runtime.so) and the CUDA toolkit's ptxas. It fails when a
# bundled program would need a library outside the C and C++ runtimes, or
# when the bundle outgrows 56 MiB (the GPU machine gets at most 64 MiB with
# the working tree). --verify runs every checked artifact with the bundled
# runner on the PTX emulator here (minutes). Then, on the GPU machine:
#   scripts/gpu-check.sh cuda gpu-bundle        (carry gpu-bundle)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
OUT=$ROOT/gpu-bundle
GPUS=sm_80,sm_90a
VERIFY=0
while [ $# -gt 0 ]; do
  case "$1" in
  --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
  --build=*) BUILD=$(cd "${1#--build=}" && pwd); shift ;;
  --out) OUT=$2; shift 2 ;;
  --out=*) OUT=${1#--out=}; shift ;;
  --gpu) GPUS=$2; shift 2 ;;
  --gpu=*) GPUS=${1#--gpu=}; shift ;;
  --verify) VERIFY=1; shift ;;
  *) echo "usage: gpu-bundle.sh [--build DIR] [--out DIR] [--gpu LIST] [--verify]" >&2; exit 2 ;;
  esac
done
LIMIT_MIB=56
COMPILE=$BUILD/bin/tessera-compile
RUNNER=$BUILD/bin/tessera-gpu-run
RUNTIME=$BUILD/lib/libtessera_runtime.so
PY=/usr/bin/python3
for f in "$COMPILE" "$RUNNER" "$RUNTIME"; do
  [ -e "$f" ] || { echo "error: $f is missing: build it first (ninja -C $BUILD tessera-compile tessera-gpu-run tessera_runtime)" >&2; exit 1; }
done

STAGE=$(mktemp -d "${OUT%/}.tmp.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/models" "$STAGE/bench"

echo "== the runner and the runtime library"
cp "$RUNNER" "$STAGE/bin/"
cp "$RUNTIME" "$STAGE/lib/"
strip --strip-unneeded "$STAGE/bin/tessera-gpu-run" "$STAGE/lib/libtessera_runtime.so"
# Only the C and C++ runtimes (and the bundled runtime library) may be
# needed: the GPU machine has no MLIR, LLVM, protobuf or libomp of ours.
for f in "$STAGE/bin/tessera-gpu-run" "$STAGE/lib/libtessera_runtime.so"; do
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  for lib in $needed; do
    case "$lib" in
    libc.so.6 | libm.so.6 | libgcc_s.so.1 | libstdc++.so.6 | ld-linux-x86-64.so.2 | libtessera_runtime.so) ;;
    *) echo "error: $(basename "$f") needs $lib, which the GPU machine lacks" >&2; exit 1 ;;
    esac
  done
  if LD_LIBRARY_PATH=$STAGE/lib ldd "$f" | grep -q 'not found'; then
    echo "error: $(basename "$f") has a library the loader cannot find:" >&2
    LD_LIBRARY_PATH=$STAGE/lib ldd "$f" >&2
    exit 1
  fi
  echo "   $(basename "$f"): needs $needed"
done
# The runner finds the library through its RUNPATH ($ORIGIN/../lib), with
# no LD_LIBRARY_PATH: without arguments it loads and prints its usage.
set +e
env -u LD_LIBRARY_PATH "$STAGE/bin/tessera-gpu-run" > /dev/null 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { echo "error: the bundled tessera-gpu-run does not start (exit status $rc)" >&2; exit 1; }

SRC=$(mktemp -d)
trap 'rm -rf "$STAGE" "$SRC"' EXIT
echo "== the reference models (scripts/gen_models.py)"
"$PY" "$ROOT/scripts/gen_models.py" --out "$SRC/models" > /dev/null
echo "== the benchmark models (bench/gpu_models.py)"
"$PY" "$ROOT/bench/gpu_models.py" models "$SRC/bench" > /dev/null
cp "$SRC/bench/benchmarks.json" "$STAGE/bench/"

compile() { # SRC_FOLDER DEST_FOLDER
  local name
  name=$(basename "$1")
  mkdir -p "$2"
  local t0=$SECONDS
  "$COMPILE" "$1/model.onnx" --target=cuda --gpu="$GPUS" -o "$2/model.so"
  for set in "$1"/test_data_set_*; do
    [ -d "$set" ] && cp -r "$set" "$2/"
  done
  printf '   %-40s %6s KiB  %3d s\n' "$name" \
    "$(( $(stat -c %s "$2/model.so") / 1024 ))" $((SECONDS - t0))
}
echo "== compiling --target=cuda --gpu=$GPUS"
for m in "$SRC"/models/*/; do compile "${m%/}" "$STAGE/models/$(basename "$m")"; done
for m in "$SRC"/bench/*/; do compile "${m%/}" "$STAGE/bench/$(basename "$m")"; done
# Test data as .npy: the runner reads it without protobuf.
"$PY" "$ROOT/bench/gpu_models.py" npy "$STAGE" | sed 's/^/   /'

if [ "$VERIFY" = 1 ]; then
  echo "== every checked artifact on the PTX emulator, with the bundled runner"
  for d in "$STAGE"/models/*/ "$STAGE"/bench/*/; do
    ls "$d" | grep -q '^test_data_set_' || continue
    LD_LIBRARY_PATH=$STAGE/lib "$STAGE/bin/tessera-gpu-run" "$d/model.so" \
      gpu-driver=emulator --test-dir="$d" | tail -n 1
  done
fi

{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- lib include tools || echo ' (with uncommitted changes under lib, include or tools)')"
  echo "built $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) from $BUILD"
  echo "architectures $GPUS"
  echo "size $(du -sk "$STAGE" | cut -f1) KiB"
} > "$STAGE/MANIFEST"
kib=$(du -sk "$STAGE" | cut -f1)
if [ "$kib" -gt $((LIMIT_MIB * 1024)) ]; then
  echo "error: the bundle is $((kib / 1024)) MiB, over its $LIMIT_MIB MiB" >&2
  exit 1
fi
rm -rf "$OUT"
mv "$STAGE" "$OUT"
trap 'rm -rf "$SRC"' EXIT
echo "== wrote $OUT: $kib KiB"
