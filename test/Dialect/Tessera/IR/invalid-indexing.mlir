// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @gather_elements_rank(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'tessera.gather_elements' op indices have rank 1, the input rank 2}}
  %0 = tessera.gather_elements %x[%i] axis 1 : tensor<2x3xf32>, tensor<2xi64> -> tensor<2xf32>
  return
}

// -----

func.func @gather_elements_too_large(%x: tensor<2x3xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+1 {{'tessera.gather_elements' op indices [4, 2] exceed the input [2, 3] in dim 0}}
  %0 = tessera.gather_elements %x[%i] axis 1 : tensor<2x3xf32>, tensor<4x2xi64> -> tensor<4x2xf32>
  return
}

// -----

func.func @gather_nd_tuple(%x: tensor<2x3xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{'tessera.gather_nd' op the last dim of indices must be static and in [1, 2]}}
  %0 = tessera.gather_nd %x[%i] : tensor<2x3xf32>, tensor<4x3xi64> -> tensor<4xf32>
  return
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.scatter_nd' op updates must have shape [2, 4], got [2, 3]}}
  %0 = tessera.scatter_nd %x[%i], %u : tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @scatter_elements_shapes(%x: tensor<3x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.scatter_elements' op indices [2, 2] and updates [2, 3] must have one shape of the data's rank 2}}
  %0 = tessera.scatter_elements %x[%i], %u axis 0 : tensor<3x3xf32>, tensor<2x2xi64>, tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @resize_scales(%x: tensor<1x1x2x2xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'tessera.resize' op scales must have 4 entries, one per dim}}
  %0 = tessera.resize %x, %s : tensor<1x1x2x2xf32>, tensor<3xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @resize_roi(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.resize' op tf_crop_and_resize needs a roi}}
  %0 = tessera.resize %x, %s {coordinate_mode = 6 : i32} : tensor<1x1x2x2xf32>, tensor<4xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @resize_linear_int(%x: tensor<1x1x2x2xi32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.resize' op interpolates linear on floating-point tensors only, not 'i32'}}
  %0 = tessera.resize %x, %s {mode = 1 : i32} : tensor<1x1x2x2xi32>, tensor<4xf32> -> tensor<1x1x4x4xi32>
  return
}

// -----

func.func @resize_sizes(%x: tensor<1x1x?x?xf32>, %s: tensor<4xf32>, %n: tensor<3xi64>) {
  // expected-error @+1 {{'tessera.resize' op sizes must have 4 entries, one per dim}}
  %0 = tessera.resize %x, %s sizes(%n : tensor<3xi64>) : tensor<1x1x?x?xf32>, tensor<4xf32> -> tensor<1x1x?x?xf32>
  return
}
