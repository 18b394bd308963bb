// Invalid IR gives a located diagnostic and a non-zero exit, not a crash.
// RUN: not tessera-opt %s 2>&1 | FileCheck %s

func.func @bad(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // CHECK: diagnostics-exit.mlir:[[@LINE+1]]:8: error: 'tessera.matmul' op contracting dimensions differ
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
