#!/usr/bin/env bash
# scripts/quickstart.sh - builds Tessera, compiles a transformer from ONNX and runs it against PyTorch.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/build.sh

example=examples/transformer_block.mlir
echo "== tessera-opt --canonicalize --cse $example (a transformer block in the tessera dialect)"
mkdir -p build/quickstart
build/bin/tessera-opt --canonicalize --cse "$example" \
  > build/quickstart/transformer_block.mlir
head -n 12 build/quickstart/transformer_block.mlir
echo "   ... (whole output in build/quickstart/transformer_block.mlir)"

out=build/quickstart
echo "== exporting a GPT-style decoder from PyTorch to $out/gpt"
/usr/bin/python3 scripts/gen_models.py --out "$out" --only gpt > /dev/null
echo "== tessera-compile $out/gpt/model.onnx -o $out/gpt.so -v"
build/bin/tessera-compile "$out/gpt/model.onnx" -o "$out/gpt.so" -v 2>&1 \
  | grep -E "Total|Import|LLVM|Code generation"
echo "== tessera-run $out/gpt.so against PyTorch's outputs"
build/bin/tessera-run "$out/gpt.so" \
  --input="$out/gpt/test_data_set_0/input_0.pb" \
  --expected="$out/gpt/test_data_set_0/output_0.pb" --max-error-ratio=1e-4 \
  --benchmark=20
