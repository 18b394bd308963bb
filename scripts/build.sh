#!/usr/bin/env bash
# scripts/build.sh - configures (once) and builds Tessera into build/ with clang-22 and Ninja.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-deps.sh

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
fi
ninja -C build "$@"
