#!/usr/bin/env bash
# scripts/install-deps.sh - installs the Debian packages Tessera builds and tests with; idempotent.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail

packages=(
  cmake ninja-build ccache
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev libomp-22-dev
  libclang-rt-22-dev  # libFuzzer and the sanitizer runtimes (test/Fuzz, test.sh --sanitize)
  libonnx-dev libonnx-testdata libprotobuf-dev python3-onnx python3-numpy
  python3-torch python3-torchvision
  pybind11-dev libdlpack-dev python3-pytest
)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "tessera: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
