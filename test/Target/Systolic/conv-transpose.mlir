// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s

// ConvTranspose as the importer writes it (the input spread with zeros,
// a convolution against the transposed, flipped filter) with its kernel
// equal to its stride (2 x 2 at stride 2, PaddleOCR's upsampling): one
// GEMM of the input as [N*H*W, C] (a transposing copy into bf16) against
// a constant [C, F*2*2] matrix of the filter (evaluated at compile time
// from the transpose and the negative-step slice), the bias repeated per
// tap in the drain, and a copy that scatters the product's columns to
// [N, F, 2H, 2W]. Nothing spreads the input with zeros, nothing is
// im2col'd.
// CHECK-LABEL: systolic.program
// CHECK-NOT: filled
// CHECK-NOT: padded
// CHECK-NOT: im2col
// CHECK: systolic.tensor "conv_transpose_1/nhwc" scratch bf16 [60, 4]
// CHECK: systolic.tensor "conv_transpose_1/weights" constant bf16 [4, 24]
// CHECK: systolic.tensor "conv_transpose_1/bias" constant f32 [24]
// CHECK: systolic.tensor "conv_transpose_1/product" scratch f32 [60, 24]
// CHECK: systolic.tensor "output_0" output f32 [2, 6, 10, 12]
// CHECK: systolic.vector copy bf16
// CHECK: systolic.matmul bf16 {{.*}} depth 4 cols 16
// CHECK: systolic.drain f32 {{.*}} {bias =
// CHECK: systolic.matmul bf16 {{.*}} depth 4 cols 8
// CHECK: systolic.vector copy f32
// CHECK: }
func.func @main(%x: tensor<2x4x5x6xf32>) -> tensor<2x6x10x12xf32> {
  %w = tessera.constant dense<0.5> : tensor<4x6x2x2xf32>
  %b = tessera.constant dense<0.25> : tensor<6xf32>
  %0 = tessera.reshape %x : tensor<2x4x5x6xf32> -> tensor<2x4x5x1x6x1xf32>
  %1 = tessera.pad %0 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<2x4x5x1x6x1xf32> -> tensor<2x4x5x2x6x2xf32>
  %2 = tessera.reshape %1 : tensor<2x4x5x2x6x2xf32> -> tensor<2x4x10x12xf32>
  %3 = tessera.transpose %w [1, 0, 2, 3] : tensor<4x6x2x2xf32> -> tensor<6x4x2x2xf32>
  %4 = tessera.slice %3 starts [-1, -1] ends [-3, -3] axes [2, 3] steps [-1, -1] : tensor<6x4x2x2xf32> -> tensor<6x4x2x2xf32>
  %5 = tessera.conv2d %2, %4 bias(%b : tensor<6xf32>) {pads = array<i64: 1, 1, 0, 0>} : tensor<2x4x10x12xf32>, tensor<6x4x2x2xf32> -> tensor<2x6x10x12xf32>
  return %5 : tensor<2x6x10x12xf32>
}

// -----

// A 3 x 3 kernel at stride 2 (each output reads several taps) is not one
// GEMM (the must-not-fire case): the spread input is a constant tensor of
// zeros the run fills, padded, im2col'd and multiplied as a convolution.
// CHECK-LABEL: systolic.program
// CHECK-NOT: nhwc
// CHECK: systolic.tensor "pad_1/filled" constant f32 [1, 4, 5, 2, 6, 2]
// CHECK: systolic.tensor "conv_2/im2col" scratch bf16 [1, 132, 36]
func.func @main(%x: tensor<1x4x5x6xf32>) -> tensor<1x6x11x12xf32> {
  %w = tessera.constant dense<0.5> : tensor<4x6x3x3xf32>
  %0 = tessera.reshape %x : tensor<1x4x5x6xf32> -> tensor<1x4x5x1x6x1xf32>
  %1 = tessera.pad %0 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<1x4x5x1x6x1xf32> -> tensor<1x4x5x2x6x2xf32>
  %2 = tessera.reshape %1 : tensor<1x4x5x2x6x2xf32> -> tensor<1x4x10x12xf32>
  %3 = tessera.transpose %w [1, 0, 2, 3] : tensor<4x6x3x3xf32> -> tensor<6x4x3x3xf32>
  %4 = tessera.slice %3 starts [-1, -1] ends [-4, -4] axes [2, 3] steps [-1, -1] : tensor<6x4x3x3xf32> -> tensor<6x4x3x3xf32>
  %5 = tessera.conv2d %2, %4 {pads = array<i64: 2, 2, 1, 0>} : tensor<1x4x10x12xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x11x12xf32>
  return %5 : tensor<1x6x11x12xf32>
}

// -----

// A matmul with transpose_a and alpha against constant weights: the lhs
// through a transposing copy into bf16 (its innermost dim moves: DMA rows
// of one element), alpha as the drain's scale, the bias after it.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/lhs_transposed" scratch bf16 [2, 8, 16]
// CHECK: systolic.load unified dram 0 sram 0 rows 16 row_bytes 4 stride 32 {fence}
// CHECK: systolic.vector copy bf16 {{.*}} rows 16 cols 16
// CHECK: systolic.matmul bf16 {{.*}} rows 16 depth 16 cols 4
// CHECK: systolic.drain f32 {{.*}} rows 16 cols 4 {bias = {{[0-9]+}} : i64, scale = 2.000000e+00 : f32
func.func @main(%x: tensor<2x16x8xf32>) -> tensor<2x8x4xf32> {
  %w = tessera.constant dense<0.5> : tensor<16x4xf32>
  %b = tessera.constant dense<0.25> : tensor<4xf32>
  %0 = tessera.matmul %x, %w {transpose_a, alpha = 2.0 : f32} : tensor<2x16x8xf32>, tensor<16x4xf32> -> tensor<2x8x4xf32>
  %1 = tessera.add %0, %b : tensor<2x8x4xf32>, tensor<4xf32> -> tensor<2x8x4xf32>
  return %1 : tensor<2x8x4xf32>
}
