// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @reduce_no_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reduce_sum' op expects at least one axis}}
  %0 = tessera.reduce_sum %x [] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reduce_mean' op axis 2 is out of range for rank 2}}
  %0 = tessera.reduce_mean %x [2] : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reduce_max' op axis -1 appears more than once}}
  %0 = tessera.reduce_max %x [1, -1] : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reduce_min' op result type 'tensor<2x1xf32>' differs from the inferred type 'tensor<2xf32>'}}
  %0 = tessera.reduce_min %x [1] {keepdims = false} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.softmax' op axis 2 is out of range for rank 2}}
  %0 = tessera.softmax %x {axis = 2} : tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<f32>) {
  // expected-error @+1 {{'tessera.log_softmax' op axis -1 is out of range for rank 0}}
  %0 = tessera.log_softmax %x : tensor<f32>
  return
}

// -----

func.func @softmax_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'tessera.softmax' op operand #0 must be ranked tensor of Tessera floating-point values, but got 'tensor<4xi32>'}}
  %0 = tessera.softmax %x : tensor<4xi32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'tessera.layer_norm' op axis -3 is out of range for rank 2}}
  %0 = tessera.layer_norm %x {axis = -3} : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'tessera.layer_norm' op epsilon must be non-negative, got -1.000000e-05}}
  %0 = tessera.layer_norm %x {epsilon = -1.0e-5 : f32} : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.layer_norm' op scale shape [4] does not broadcast to the normalized shape [8]}}
  %0 = tessera.layer_norm %x scale(%g : tensor<4xf32>) : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+1 {{'tessera.layer_norm' op bias shape [2, 8] does not broadcast to the normalized shape [8]}}
  %0 = tessera.layer_norm %x bias(%b : tensor<2x8xf32>) : tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_result_type(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'tessera.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = "tessera.layer_norm"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x8xf32>) -> tensor<2x8xbf16>
  return
}

// -----

func.func @rms_norm_scale_shape(%x: tensor<2x8xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'tessera.rms_norm' op scale shape [2] does not broadcast to the normalized shape [8]}}
  %0 = tessera.rms_norm %x scale(%g : tensor<2xf32>) : tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'tessera.rms_norm' op axis 2 is out of range for rank 2}}
  %0 = tessera.rms_norm %x {axis = 2} : tensor<2x8xf32>
  return
}

// -----

func.func @argmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.argmax' op axis 2 is out of range for rank 2}}
  %0 = tessera.argmax %x {axis = 2 : i64} : tensor<2x3xf32> -> tensor<2x1xi64>
  return
}

// -----

func.func @argmin_result_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.argmin' op result type 'tensor<2x1xi64>' differs from the inferred type 'tensor<1x3xi64>'}}
  %0 = tessera.argmin %x : tensor<2x3xf32> -> tensor<2x1xi64>
  return
}

// -----

func.func @pool_rank(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op expects an input of rank 3 or more (N x C x spatial dims), got rank 2}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : tensor<4x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.avg_pool' op kernel_shape must be 2 positive values, one per spatial dim}}
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @pool_strides(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op strides must be 2 positive values}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @pool_dilations(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op dilations must be 2 positive values}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op pads must be 4 non-negative values (begins, then ends)}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, -1, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @pool_pad_window(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.avg_pool' op pads of spatial dim 1 must be smaller than the window (2)}}
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 2, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x5xf32>
  return
}

// -----

func.func @pool_window_fits(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op the window does not fit in spatial dim 0 of the input}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 5, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x1x3xf32>
  return
}

// -----

func.func @pool_result(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'tessera.max_pool' op result type 'tensor<1x1x3x3xf32>' differs from the inferred type 'tensor<1x1x2x2xf32>'}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}
