// RUN: tessera-opt %s --split-input-file --verify-diagnostics --convert-tessera-to-systolic="accel=small" -o /dev/null

// The lowering decides no operand format: without the casts that say it
// (tessera-systolic-operand-formats, later the precision passes), a float
// matmul or convolution is an error at the op.

func.func @dense(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %w = tessera.constant dense<0.5> : tensor<16x4xf32>
  // expected-error @+1 {{the systolic array multiplies bf16, f16 or fp8 operands: cast this op's fp32 operands to one of them (tessera-systolic-operand-formats does)}}
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32> {
  %w = tessera.constant dense<0.5> : tensor<3x2x2x2xf32>
  // expected-error @+1 {{the systolic array multiplies}}
  %0 = tessera.conv2d %x, %w {strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}
