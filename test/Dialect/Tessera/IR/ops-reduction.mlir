// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @reductions
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x8xf32>)
func.func @reductions(%x: tensor<2x?x8xf32>) -> (tensor<2x?x1xf32>, tensor<?xf32>, tensor<1x?x1xf32>, tensor<2x?xf32>) {
  // CHECK: tessera.reduce_sum %[[X]] [-1] : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  %0 = tessera.reduce_sum %x [-1] : tensor<2x?x8xf32> -> tensor<2x?x1xf32>
  // CHECK: tessera.reduce_mean %[[X]] [0, 2] {keepdims = false} : tensor<2x?x8xf32> -> tensor<?xf32>
  %1 = tessera.reduce_mean %x [0, 2] {keepdims = false} : tensor<2x?x8xf32> -> tensor<?xf32>
  // CHECK: tessera.reduce_max %[[X]] [2, 0] : tensor<2x?x8xf32> -> tensor<1x?x1xf32>
  %2 = tessera.reduce_max %x [2, 0] : tensor<2x?x8xf32> -> tensor<1x?x1xf32>
  // CHECK: tessera.reduce_min %[[X]] [2] {keepdims = false} : tensor<2x?x8xf32> -> tensor<2x?xf32>
  %3 = tessera.reduce_min %x [2] {keepdims = false} : tensor<2x?x8xf32> -> tensor<2x?xf32>
  return %0, %1, %2, %3 : tensor<2x?x1xf32>, tensor<?xf32>, tensor<1x?x1xf32>, tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @integer_reduction
func.func @integer_reduction(%x: tensor<4x4xi32>) -> tensor<4x1xi32> {
  // CHECK: tessera.reduce_sum %{{.*}} [1] : tensor<4x4xi32> -> tensor<4x1xi32>
  %0 = tessera.reduce_sum %x [1] : tensor<4x4xi32> -> tensor<4x1xi32>
  return %0 : tensor<4x1xi32>
}

// -----

// CHECK-LABEL: func @softmaxes
func.func @softmaxes(%x: tensor<1x12x128x128xf32>) -> (tensor<1x12x128x128xf32>, tensor<1x12x128x128xf32>) {
  // CHECK: tessera.softmax %{{.*}} : tensor<1x12x128x128xf32>
  %0 = tessera.softmax %x : tensor<1x12x128x128xf32>
  // CHECK: tessera.log_softmax %{{.*}} {axis = 1 : i64} : tensor<1x12x128x128xf32>
  %1 = tessera.log_softmax %x {axis = 1} : tensor<1x12x128x128xf32>
  return %0, %1 : tensor<1x12x128x128xf32>, tensor<1x12x128x128xf32>
}

// -----

// CHECK-LABEL: func @layer_norm_forms
func.func @layer_norm_forms(%x: tensor<?x128x768xbf16>, %g: tensor<768xbf16>, %b: tensor<768xbf16>, %g2: tensor<128x768xbf16>) -> (tensor<?x128x768xbf16>, tensor<?x128x768xbf16>, tensor<?x128x768xbf16>) {
  // CHECK: tessera.layer_norm %{{.*}} scale(%{{.*}} : tensor<768xbf16>) bias(%{{.*}} : tensor<768xbf16>) {epsilon = 9.99999996E-13 : f32} : tensor<?x128x768xbf16>
  %0 = tessera.layer_norm %x scale(%g : tensor<768xbf16>) bias(%b : tensor<768xbf16>) {epsilon = 1.0e-12 : f32} : tensor<?x128x768xbf16>
  // CHECK: tessera.layer_norm %{{.*}} : tensor<?x128x768xbf16>
  %1 = tessera.layer_norm %x : tensor<?x128x768xbf16>
  // CHECK: tessera.layer_norm %{{.*}} scale(%{{.*}} : tensor<128x768xbf16>) {axis = 1 : i64} : tensor<?x128x768xbf16>
  %2 = tessera.layer_norm %x scale(%g2 : tensor<128x768xbf16>) {axis = 1} : tensor<?x128x768xbf16>
  return %0, %1, %2 : tensor<?x128x768xbf16>, tensor<?x128x768xbf16>, tensor<?x128x768xbf16>
}

// -----

// CHECK-LABEL: func @rms_norm_forms
func.func @rms_norm_forms(%x: tensor<1x16x512xf32>, %g: tensor<512xf32>) -> (tensor<1x16x512xf32>, tensor<1x16x512xf32>) {
  // CHECK: tessera.rms_norm %{{.*}} scale(%{{.*}} : tensor<512xf32>) {epsilon = 9.99999974E-6 : f32} : tensor<1x16x512xf32>
  %0 = tessera.rms_norm %x scale(%g : tensor<512xf32>) {epsilon = 1.0e-5 : f32} : tensor<1x16x512xf32>
  // CHECK: tessera.rms_norm %{{.*}} : tensor<1x16x512xf32>
  %1 = tessera.rms_norm %x : tensor<1x16x512xf32>
  return %0, %1 : tensor<1x16x512xf32>, tensor<1x16x512xf32>
}

// -----

// CHECK-LABEL: func @arg_reductions
func.func @arg_reductions(%x: tensor<2x?x8xf32>, %y: tensor<4xi32>) -> (tensor<2x?x1xi64>, tensor<2x8xi64>, tensor<1xi64>) {
  // CHECK: tessera.argmax %{{.*}} {axis = -1 : i64} : tensor<2x?x8xf32> -> tensor<2x?x1xi64>
  %0 = tessera.argmax %x {axis = -1 : i64} : tensor<2x?x8xf32> -> tensor<2x?x1xi64>
  // CHECK: tessera.argmin %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index} : tensor<2x?x8xf32> -> tensor<2x8xi64>
  %1 = tessera.argmin %x {axis = 1 : i64, keepdims = false, select_last_index} : tensor<2x?x8xf32> -> tensor<2x8xi64>
  // CHECK: tessera.argmax %{{.*}} : tensor<4xi32> -> tensor<1xi64>
  %2 = tessera.argmax %y : tensor<4xi32> -> tensor<1xi64>
  return %0, %1, %2 : tensor<2x?x1xi64>, tensor<2x8xi64>, tensor<1xi64>
}

// -----

// Pooling: the output size floors, or rounds up with ceil_mode (the last
// window of 4 + 0 + 0 with kernel 3 and stride 2 starts at 2, inside).
// CHECK-LABEL: func @pools
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4x4xf32>, %[[Y:.*]]: tensor<1x2x9xi8>)
func.func @pools(%x: tensor<?x3x4x4xf32>, %y: tensor<1x2x9xi8>) -> (tensor<?x3x1x1xf32>, tensor<?x3x2x2xf32>, tensor<1x2x4xi8>) {
  // CHECK: tessera.max_pool %[[X]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<?x3x4x4xf32> -> tensor<?x3x1x1xf32>
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x3x4x4xf32> -> tensor<?x3x1x1xf32>
  // CHECK: tessera.avg_pool %[[X]] {ceil_mode, count_include_pad, {{.*}}} : tensor<?x3x4x4xf32> -> tensor<?x3x2x2xf32>
  %1 = tessera.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode, count_include_pad} : tensor<?x3x4x4xf32> -> tensor<?x3x2x2xf32>
  // 1-D, dilated and padded: kernel 3 with dilation 2 spans 5; (9 + 1 + 1 - 5) / 2 + 1 = 4.
  // CHECK: tessera.max_pool %[[Y]] {{.*}} : tensor<1x2x9xi8> -> tensor<1x2x4xi8>
  %2 = tessera.max_pool %y {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 2>} : tensor<1x2x9xi8> -> tensor<1x2x4xi8>
  return %0, %1, %2 : tensor<?x3x1x1xf32>, tensor<?x3x2x2xf32>, tensor<1x2x4xi8>
}

// -----

// CHECK-LABEL: func @product
func.func @product(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  // CHECK: tessera.reduce_prod %{{.*}} [1] {keepdims = false} : tensor<3x4xf32> -> tensor<3xf32>
  %0 = tessera.reduce_prod %x [1] {keepdims = false} : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
