// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s

// Attention's products: Q is a transposing copy of a projection
// ([1, 8, 2, 4] -> [1, 2, 8, 4], whole rows of 4 per DMA row), K^T a copy
// whose innermost dim is strided (8 elements a DMA row apart, per output
// row), both written in bf16 since only matmuls read them; one GEMM per
// head with the rhs loaded as weights, the heads' GEMMs one schedule
// whose second head's loads go to the next slots without a fence (its
// folds follow the first's); the scale (alpha) in the drain.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "transpose_{{[0-9]+}}/result" scratch bf16 [1, 2, 8, 4]
// CHECK: systolic.tensor "transpose_{{[0-9]+}}/result" scratch bf16 [1, 2, 4, 8]
// CHECK-NOT: unscaled
// CHECK: systolic.load unified dram 0 sram 0 rows 8 row_bytes 16 stride 32 {fence}
// CHECK: systolic.vector copy bf16
// CHECK: systolic.load unified dram 256 sram 0 rows 8 row_bytes 4 stride 32 {fence}
// CHECK: systolic.load weights dram 640 sram 0 {{.*}} {fence}
// CHECK: systolic.matmul bf16 weights 0 {{.*}} rows 8 depth 4 cols 8
// CHECK-NOT: fence
// CHECK: systolic.load weights dram 704 sram 512
// CHECK-NOT: fence
// CHECK: systolic.matmul bf16 weights 512 {{.*}} rows 8 depth 4 cols 8
// CHECK: systolic.drain f32 {{.*}} rows 8 cols 8 {scale = 5.000000e-01 : f32
// CHECK-NOT: systolic.vector
func.func @main(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32> {
  %0 = tessera.transpose %q [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
  %1 = tessera.transpose %k [0, 2, 3, 1] : tensor<1x8x2x4xf32> -> tensor<1x2x4x8xf32>
  %2 = tessera.matmul %0, %1 {alpha = 0.5 : f32} : tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x8x8xf32>
  return %2 : tensor<1x2x8x8xf32>
}

// -----

// A slice of the last dim (rows of 4 from offset 4, stride 8), a
// concatenation written part by part into strided rows of the result, a
// constant causal mask (a where of constants) read as a constant, and a
// mask broadcast over heads materialized by a stride-0 copy.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "constant/f32_{{[0-9]+}}" constant f32 [16] at {{[0-9]+}} value dense<[1.000000e+00, -1.000000e+09
// CHECK: systolic.load unified dram 16 sram 0 rows 4 row_bytes 16 stride 32 {fence
// CHECK: systolic.store dram 384 {{.*}} rows 4 row_bytes 16 stride 32
// CHECK: systolic.store dram 400 {{.*}} rows 4 row_bytes 16 stride 32
// CHECK: systolic.load unified dram 512 sram 0 rows 4 row_bytes 16 stride 16 {fence}
// CHECK-NEXT: systolic.load unified dram 512 sram 64 rows 4 row_bytes 16 stride 16
// CHECK: systolic.vector add f32 {{.*}}mode full
func.func @main(%x: tensor<4x8xf32>, %s: tensor<2x4x4xf32>) -> (tensor<4x8xf32>, tensor<2x4x4xf32>) {
  %0 = tessera.slice %x starts [4] ends [8] axes [1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %1 = tessera.neg %0 : tensor<4x4xf32>
  %2 = tessera.concat %1, %0 axis 1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
  %c = tessera.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %one = tessera.constant dense<1.0> : tensor<4x4xf32>
  %neg = tessera.constant dense<-1.0e9> : tensor<f32>
  %m = tessera.where %c, %one, %neg : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %3 = tessera.add %s, %m : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  return %2, %3 : tensor<4x8xf32>, tensor<2x4x4xf32>
}

// -----

// A constant mask reshaped before it is added (unsqueezed for the heads, as
// PyTorch's decoder layer exports its causal mask): the reshape of constant
// values is read as the values are, a constant in the program; a reshape of
// a runtime value that is not in memory yet stays an error (errors.mlir).
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "constant/f32_{{[0-9]+}}" constant f32 [16] at {{[0-9]+}} value dense<[0.000000e+00, -1.000000e+09
// CHECK: systolic.vector add f32 {{.*}}mode full
func.func @main(%s: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %m = tessera.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %u = tessera.reshape %m : tensor<4x4xf32> -> tensor<1x4x4xf32>
  %0 = tessera.add %s, %u : tensor<2x4x4xf32>, tensor<1x4x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// A patch-embedding convolution (stride = kernel, no padding): an im2col
// copy into bf16 [1 group, N*OH*OW, C*KH*KW], a GEMM with the filter transposed at
// compile time and the bias in the drain, and a copy to [N, F, OH, OW];
// a gather of one constant index is a copy of that slice.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "conv_{{[0-9]+}}/im2col" scratch bf16 [1, 4, 8]
// CHECK: systolic.tensor "conv_{{[0-9]+}}/weights" constant bf16 [1, 8, 3]
// CHECK: systolic.matmul bf16 {{.*}} rows 4 depth 8 cols 3
// CHECK: systolic.drain f32 {{.*}}bias =
// CHECK: systolic.store dram 384 {{.*}} rows 2 row_bytes 8 stride 8
// CHECK: systolic.load unified dram 400 sram 0 rows 1 row_bytes 16 stride 48 {fence
func.func @main(%x: tensor<1x2x4x4xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x4xf32>) {
  %w = tessera.constant dense<0.5> : tensor<3x2x2x2xf32>
  %b = tessera.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = tessera.conv2d %x, %w bias(%b : tensor<3xf32>) {strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32> -> tensor<1x3x2x2xf32>
  %r = tessera.reshape %0 : tensor<1x3x2x2xf32> -> tensor<1x3x4xf32>
  %i = tessera.constant dense<1> : tensor<i64>
  %1 = tessera.gather %r[%i] axis 1 : tensor<1x3x4xf32>, tensor<i64> -> tensor<1x4xf32>
  return %0, %1 : tensor<1x3x2x2xf32>, tensor<1x4xf32>
}

// -----

// An embedding lookup of token ids: the integer input is placed as fp32
// indices; per chunk the ids are loaded, handed to the load queue by the
// vector unit, gathered from the fp32 table, converted and stored.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_0" input f32 [1, 4] at 0
// CHECK: systolic.load unified dram 0 sram 0 rows 1 row_bytes 16 stride 16 {fence, signal = 64
// CHECK-NEXT: systolic.vector copy f32 src 0 dst [[IDS:[0-9]+]] rows 4 cols 1 {signal = 128 : i64, wait = 64
// CHECK-NEXT: systolic.gather dram {{[0-9]+}} sram [[ROWS:[0-9]+]] indices [[IDS]] rows 4 row_bytes 32 table_rows 6 {signal = 64 : i64, wait = 128
// CHECK-NEXT: systolic.vector copy f32 src [[ROWS]]
// CHECK-NEXT: systolic.store
func.func @main(%ids: tensor<1x4xi64>) -> tensor<1x4x8xf32> {
  %table = tessera.constant dense<0.5> : tensor<6x8xf32>
  %0 = tessera.gather %table[%ids] axis 0 : tensor<6x8xf32>, tensor<1x4xi64> -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// A split (q, k and v from one projection) is one slice per piece, each a
// strided copy of its columns.
// CHECK-LABEL: systolic.program
// CHECK: systolic.load unified dram 0 sram 0 rows 4 row_bytes 8 stride 24 {fence
// CHECK: systolic.load unified dram 8 sram 0 rows 4 row_bytes 8 stride 24 {fence
// CHECK: systolic.load unified dram 16 sram 0 rows 4 row_bytes 8 stride 24 {fence
func.func @main(%x: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %q, %k, %v = tessera.split %x axis 1 : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  %0 = tessera.neg %q : tensor<4x2xf32>
  %1 = tessera.neg %k : tensor<4x2xf32>
  %2 = tessera.neg %v : tensor<4x2xf32>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Two splits of unnamed ops in one function: each piece is a tensor of
// its own (no name shared between them).
// CHECK-LABEL: systolic.program
// CHECK-COUNT-4: systolic.load unified {{.*}} rows 4 row_bytes 8 stride 16 {fence
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %a, %b = tessera.split %x axis 1 : tensor<4x4xf32> -> tensor<4x2xf32>, tensor<4x2xf32>
  %c, %d = tessera.split %y axis 1 : tensor<4x4xf32> -> tensor<4x2xf32>, tensor<4x2xf32>
  %0 = tessera.neg %a : tensor<4x2xf32>
  %1 = tessera.neg %b : tensor<4x2xf32>
  %2 = tessera.neg %c : tensor<4x2xf32>
  %3 = tessera.neg %d : tensor<4x2xf32>
  return %0, %1, %2, %3 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A model output that is a view (a classifier's Flatten after its
// pooling): the computed value's tensor becomes the output, with the
// output's name and shape.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "logits" output f32 [2, 8]
// CHECK-NOT: systolic.tensor "logits"
func.func @main(%x: tensor<2x8x1x1xf32>) -> (tensor<2x8xf32> {tessera.name = "logits"}) {
  %0 = tessera.add %x, %x : tensor<2x8x1x1xf32>, tensor<2x8x1x1xf32> -> tensor<2x8x1x1xf32>
  %1 = tessera.reshape %0 : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
