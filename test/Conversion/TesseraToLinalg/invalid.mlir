// An op the CPU lowering cannot handle yet is reported at its location with
// the reason its pattern gave (not MLIR's "failed to legalize") and fails
// the pass.
// RUN: not tessera-opt %s --split-input-file --convert-tessera-to-linalg 2>&1 | FileCheck %s

func.func @conv_dynamic_spatial_window(%x: tensor<1x4x?x8xf32>, %w: tensor<4x2x?x3xf32>) -> tensor<1x4x?x6xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: cannot lower 'tessera.conv2d' to linalg: convolution with dynamic spatial dims and a dynamic window
  %0 = tessera.conv2d %x, %w {group = 2} : tensor<1x4x?x8xf32>, tensor<4x2x?x3xf32> -> tensor<1x4x?x6xf32>
  return %0 : tensor<1x4x?x6xf32>
}

// -----

func.func @slice_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: cannot lower 'tessera.slice' to linalg: slice of a dynamic dim
  %0 = tessera.slice %x starts [1] ends [3] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @pool_dynamic_spatial_dilated(%x: tensor<1x1x?xf32>) -> tensor<1x1x?xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: cannot lower 'tessera.avg_pool' to linalg: dilated average pooling of dynamic spatial dims
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 2>} : tensor<1x1x?xf32> -> tensor<1x1x?xf32>
  return %0 : tensor<1x1x?xf32>
}

// -----

func.func @pad_reflect_dynamic(%x: tensor<?x3xf32>) -> tensor<?x5xf32> {
  // CHECK: invalid.mlir:[[@LINE+1]]:8: error: cannot lower 'tessera.pad' to linalg: reflect and edge padding of dynamic dims
  %0 = tessera.pad %x {mode = 1 : i32, pads = array<i64: 0, 1, 0, 1>} : tensor<?x3xf32> -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// CHECK-NOT: failed to legalize
