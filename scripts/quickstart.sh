#!/usr/bin/env bash
# scripts/quickstart.sh - builds Tessera and runs it on the bundled transformer block.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/build.sh

example=examples/transformer_block.mlir
echo "== tessera-opt --canonicalize --cse $example"
build/bin/tessera-opt --canonicalize --cse "$example"
