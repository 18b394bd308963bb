// RUN: tessera-opt %s --split-input-file --verify-diagnostics --convert-tessera-to-systolic="accel=small" -o /dev/null

// An op the vector unit cannot run yet is reported where it is.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'tessera.softmax' cannot run on the systolic target yet: its lowering handles matmuls with constant weights and their bias and ReLU epilogues}}
  %0 = tessera.softmax %x : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Weights that are not constants.
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{the systolic target needs constant 2-D weights}}
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
