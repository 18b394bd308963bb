#!/usr/bin/env bash
# scripts/sanitize-build.sh DIR [NINJA-TARGETS...] - configures (once) and
# builds Tessera's instrumented build in DIR: ASan + UBSan on every Tessera
# source (TESSERA_SANITIZE) plus libFuzzer's coverage (TESSERA_ENABLE_FUZZERS),
# so that one build folder serves both `scripts/test.sh --sanitize` (the
# whole suite under the sanitizers) and `scripts/fuzz.sh` (long campaigns).
# Tessera's own code is compiled without optimization: with ASan and UBSan,
# -O3 takes three times as long to compile (52 s against 16 s for the
# dialect's ops), and what an input exercises is mostly Debian's optimized
# MLIR, LLVM and protobuf libraries anyway.
# Builds under `nice`; TESSERA_SANITIZE_JOBS sets ninja's parallelism
# (default: every core).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: scripts/sanitize-build.sh DIR [TARGETS...]" >&2; exit 2; }
build="$1"; shift
case "$build" in /*) ;; *) build="$root/$build" ;; esac
opt=(-DCMAKE_C_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG")
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    "${opt[@]}" -DTESSERA_SANITIZE=ON -DTESSERA_ENABLE_FUZZERS=ON
elif ! grep -q '^CMAKE_CXX_FLAGS_RELEASE:STRING=-O0 -DNDEBUG$' \
    "$build/CMakeCache.txt"; then
  # A folder configured before the build went to -O0.
  cmake "${opt[@]}" "$build" > /dev/null
fi
nice -n 10 ninja -C "$build" -j"${TESSERA_SANITIZE_JOBS:-$(nproc)}" "$@"
