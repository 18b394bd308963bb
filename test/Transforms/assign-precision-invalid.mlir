// RUN: not tessera-opt %s --tessera-assign-precision="policy=int4" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not tessera-opt %s --tessera-assign-precision="policy=bf16 keep-fp32=(unclosed" 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not tessera-opt %s --tessera-assign-precision="policy=bf16 target=nowhere" 2>&1 | FileCheck %s --check-prefix=TARGET

// RUN: not tessera-opt %s --tessera-assign-precision="policy=fp8 fp8-scaling=delayed" 2>&1 | FileCheck %s --check-prefix=SCALING
// SCALING: error: unknown fp8 scaling 'delayed' (expected static or current)
// RUN: not tessera-opt %s --tessera-assign-precision="policy=fp8 fp8-format=e3m4" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: unknown fp8 format 'e3m4' (expected e4m3 or e5m2)
// POLICY: error: unknown precision policy 'int4' (expected one of: fp32, bf16, fp16, fp8, int8)
// REGEX: error: --keep-fp32 pattern '(unclosed' is not a valid regular expression: parentheses not balanced
// TARGET: error: no target named 'nowhere'
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = tessera.matmul %x, %x : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
