// RUN: tessera-opt %s --split-input-file --convert-tessera-to-systolic="accel=small" | FileCheck %s

// Two layers: the first with its bias and ReLU in the drain, its result a
// bf16 scratch tensor the second reads after a fence on its first load;
// the function's result an fp32 output. 40 x 24 weights on a 16 x 16
// array: three k folds and two column tiles (the last 8 wide).
// CHECK-LABEL: systolic.program attributes {accel = "small"
// CHECK: systolic.tensor "input_0" "input" "bf16" [32, 40] at 0
// CHECK: systolic.tensor "matmul_1/weights" "constant" "bf16" [40, 24] at {{[0-9]+}} value
// CHECK: systolic.tensor "matmul_1/bias" "constant" "f32" [24] at [[BIAS:[0-9]+]] value
// CHECK: systolic.tensor "matmul_1/result" "scratch" "bf16" [32, 24] at [[HIDDEN:[0-9]+]]
// CHECK: systolic.tensor "output_0" "output" "f32" [32, 16] at
// CHECK: systolic.load "unified" dram [[BIAS]]
// CHECK-SAME: signal = 64
// CHECK: systolic.load "weights"
// CHECK: systolic.matmul "bf16" {{.*}} rows 32 depth 16 cols 16
// CHECK: systolic.matmul "bf16" {{.*}} rows 32 depth 16 cols 16 {accumulate
// CHECK: systolic.matmul "bf16" {{.*}} rows 32 depth 8 cols 16 {accumulate
// CHECK: systolic.drain "bf16" {{.*}} rows 32 cols 16 {bias = {{[0-9]+}} : i64, relu
// CHECK: systolic.store dram [[HIDDEN]]
// CHECK: systolic.drain "bf16" {{.*}} rows 32 cols 8 {bias
// CHECK: systolic.load "weights" {{.*}} {fence
// CHECK: systolic.load "unified" dram [[HIDDEN]]
// CHECK: systolic.drain "f32"
// CHECK-NOT: relu
// CHECK: systolic.store
// CHECK-NOT: func.func
func.func @main(%x: tensor<32x40xf32>) -> tensor<32x16xf32> {
  %w1 = tessera.constant dense<0.5> : tensor<40x24xf32>
  %b1 = tessera.constant dense<0.25> : tensor<24xf32>
  %w2 = tessera.constant dense<0.125> : tensor<24x16xf32>
  %0 = tessera.matmul %x, %w1 : tensor<32x40xf32>, tensor<40x24xf32> -> tensor<32x24xf32>
  %1 = tessera.add %0, %b1 : tensor<32x24xf32>, tensor<24xf32> -> tensor<32x24xf32>
  %2 = tessera.relu %1 : tensor<32x24xf32>
  %3 = tessera.matmul %2, %w2 : tensor<32x24xf32>, tensor<24x16xf32> -> tensor<32x16xf32>
  return %3 : tensor<32x16xf32>
}

// -----

// Transposed constant weights are transposed at compile time; a reshape
// of the input is a view.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_0" "input" "bf16" [1, 8, 16] at 0
// CHECK: systolic.tensor "matmul_1/weights" "constant" "bf16" [16, 4]
// CHECK: systolic.matmul "bf16" {{.*}} rows 8 depth 16 cols 4
func.func @main(%x: tensor<1x8x16xf32>) -> tensor<8x4xf32> {
  %w = tessera.constant dense<1.0> : tensor<4x16xf32>
  %r = tessera.reshape %x : tensor<1x8x16xf32> -> tensor<8x16xf32>
  %0 = tessera.matmul %r, %w {transpose_b} : tensor<8x16xf32>, tensor<4x16xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A matmul of fp8 (E4M3FN) quantized operands in QDQ form: the input
// quantized on the vector unit, the constant fp8 weights as they are, the
// array multiplying fp8, the drain scaling the fp32 sums by 0.5 * 0.25.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_0/f8E4M3FN" "scratch" "f8E4M3FN" [8, 16]
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/weights" "constant" "f8E4M3FN" [16, 4]
// CHECK: systolic.vector "quantize" "f8E4M3FN" {{.*}}imm = 5.000000e-01
// CHECK: systolic.matmul "f8E4M3FN"
// CHECK: systolic.drain "f32" {{.*}}{scale = 1.250000e-01
// CHECK-NOT: int32
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %sw = tessera.constant dense<0.25> : tensor<f32>
  %w = tessera.constant dense<1.5> : tensor<16x4xf8E4M3FN>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xf8E4M3FN>
  %dq = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<8x16xf8E4M3FN> -> tensor<8x16xf32>
  %dw = tessera.dequantize %w scale(%sw : tensor<f32>) : tensor<16x4xf8E4M3FN> -> tensor<16x4xf32>
  %0 = tessera.matmul %dq, %dw : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
