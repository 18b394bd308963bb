// An op the CPU lowering cannot handle yet is reported at its location and
// fails the pass.
// RUN: not tessera-opt %s --split-input-file --convert-tessera-to-linalg 2>&1 | FileCheck %s

func.func @grouped_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: failed to legalize operation 'tessera.conv2d' that was explicitly marked illegal
  %0 = tessera.conv2d %x, %w {group = 2} : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @slice_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: failed to legalize operation 'tessera.slice'
  %0 = tessera.slice %x starts [1] ends [3] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
