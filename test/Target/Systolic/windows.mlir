// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s

// A padded, grouped convolution: each run copies the input into the
// interior of a constant tensor of zeros, im2col copies each group's
// windows (bf16), and each group is a GEMM against its own filters.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "conv_1/padded" constant f32 [1, 2, 6, 6] at {{[0-9]+}} value dense<0.000000e+00>
// CHECK: systolic.tensor "conv_1/im2col" scratch bf16 [2, 16, 9]
// CHECK: systolic.tensor "conv_1/weights" constant bf16 [2, 9, 2]
// CHECK: systolic.tensor "conv_1/product" scratch f32 [2, 16, 2]
// CHECK: systolic.vector copy f32 src 0 dst {{[0-9]+}} rows 8 cols 4
// CHECK: systolic.vector copy bf16 {{.*}} rows 96 cols 3
// CHECK-COUNT-2: systolic.drain
// CHECK-NOT: systolic.drain
// CHECK: systolic.vector copy f32 src 0 dst {{[0-9]+}} rows 16 cols 4
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = tessera.constant dense<0.5> : tensor<4x1x3x3xf32>
  %0 = tessera.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<1x2x4x4xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Without padding the convolution reads its input in place: no padded
// copy (the must-not-fire case), one group, one GEMM (two folds of its
// depth of 18 on the 16-row array, one drain).
// CHECK-LABEL: systolic.program
// CHECK-NOT: padded
// CHECK: systolic.tensor "conv_1/im2col" scratch bf16 [1, 4, 18]
// CHECK: systolic.matmul {{.*}} depth 16
// CHECK: systolic.matmul {{.*}} depth 2
// CHECK-COUNT-1: systolic.drain
// CHECK-NOT: systolic.drain
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32> {
  %w = tessera.constant dense<0.5> : tensor<3x2x3x3xf32>
  %0 = tessera.conv2d %x, %w : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// Max pooling with pads and ceil mode: the padded input is -inf around
// the input and past it to the last window (7 = 1 + 4 + 2); each window
// is a row of 9, reduced by a row maximum into the output.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "max_pool_1/padded" constant f32 [1, 2, 7, 7] at {{[0-9]+}} value dense<0xFF800000>
// CHECK: systolic.tensor "max_pool_1/windows" scratch f32 [18, 9]
// CHECK: systolic.tensor "output_0" output f32 [1, 2, 3, 3] at [[OUT:[0-9]+]]
// CHECK: systolic.vector row_max f32 src 0 dst {{[0-9]+}} rows 18 cols 9
// CHECK: systolic.store dram [[OUT]]
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Average pooling whose pads do not count: the windows at the border are
// shorter, so each output row is scaled by its own 1 / count (corners 1,
// edges 1/2, the centre 1/4).
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "avg_pool_1/padded" constant f32 [1, 2, 6, 6] at {{[0-9]+}} value dense<0.000000e+00>
// CHECK: systolic.tensor "avg_pool_1/scales" constant f32 [18] at [[SCALES:[0-9]+]] value dense<[1.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01, 2.500000e-01, 5.000000e-01, 1.000000e+00,
// CHECK: systolic.vector row_sum f32 src 0 dst [[SUM:[0-9]+]] rows 18 cols 4
// CHECK: systolic.vector mul f32 src [[SUM]] dst [[SUM]] rows 18 cols 1 mode full
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// The same pads counted (count_include_pad): every window has 4 elements,
// one division by an immediate, no per-row scales.
// CHECK-LABEL: systolic.program
// CHECK-NOT: scales
// CHECK: systolic.vector row_sum f32 src 0 dst [[SUM:[0-9]+]] rows 18 cols 4
// CHECK: systolic.vector div f32 src [[SUM]] dst [[SUM]] rows 18 cols 1 mode immediate imm 4.000000e+00
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> {
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad} : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// A constant pad that is the model's output: the tensor of the pad value
// is copied whole into the output, then the input into its interior
// (offset (0 * 6 + 1) * 4 bytes).
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "pad_1/filled" constant f32 [3, 6] at [[FILLED:[0-9]+]] value dense<2.500000e+00>
// CHECK: systolic.tensor "output_0" output f32 [3, 6] at [[#POUT:]]
// CHECK: systolic.load unified dram [[FILLED]]
// CHECK: systolic.vector copy f32 src 0 dst {{[0-9]+}} rows 3 cols 6
// CHECK: systolic.store dram [[#POUT]]
// CHECK: systolic.load unified dram 0
// CHECK: systolic.vector copy f32 src 0 dst {{[0-9]+}} rows 2 cols 3
// CHECK: systolic.store dram [[#POUT+4]] sram {{[0-9]+}} rows 2 row_bytes 12 stride 24
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %0 = tessera.pad %x {pads = array<i64: 0, 1, 1, 2>, value = 2.5} : tensor<2x3xf32> -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}
