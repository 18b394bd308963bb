// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s
// Without the graph's fusion regions nothing fuses: the lowering is no
// second fusion engine. The first case's bias add and ReLU are steps of
// their own on the vector unit.
// RUN: tessera-opt %s --split-input-file --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s --check-prefix=UNFUSED
// UNFUSED-LABEL: systolic.program attributes {accel = "small"
// UNFUSED-NOT: bias =
// UNFUSED: systolic.drain f32 {{.*}} rows 32 cols 16
// UNFUSED-NOT: relu
// UNFUSED: systolic.vector add f32
// UNFUSED: systolic.vector relu f32

// Two layers: the first with its bias and ReLU in the drain, its result a
// bf16 scratch tensor the second reads after a fence on its first load;
// the function's result an fp32 output. 40 x 24 weights on a 16 x 16
// array: three k folds and two column tiles (the last 8 wide).
// CHECK-LABEL: systolic.program attributes {accel = "small"
// CHECK: systolic.tensor "input_0" input bf16 [32, 40] at 0
// CHECK: systolic.tensor "matmul_1/weights" constant bf16 [40, 24] at {{[0-9]+}} value
// CHECK: systolic.tensor "matmul_1/bias" constant f32 [24] at [[BIAS:[0-9]+]] value
// CHECK: systolic.tensor "matmul_1/result" scratch bf16 [32, 24] at [[HIDDEN:[0-9]+]]
// CHECK: systolic.tensor "output_0" output f32 [32, 16] at
// CHECK: systolic.load unified dram [[BIAS]]
// CHECK-SAME: signal = 64
// CHECK: systolic.load weights
// CHECK: systolic.matmul bf16 {{.*}} rows 32 depth 16 cols 16
// CHECK: systolic.matmul bf16 {{.*}} rows 32 depth 16 cols 16 {accumulate
// CHECK: systolic.matmul bf16 {{.*}} rows 32 depth 8 cols 16 {accumulate
// CHECK: systolic.drain bf16 {{.*}} rows 32 cols 16 {bias = {{[0-9]+}} : i64, relu
// CHECK: systolic.store dram [[HIDDEN]]
// CHECK: systolic.drain bf16 {{.*}} rows 32 cols 8 {bias
// CHECK: systolic.load weights {{.*}} {fence
// CHECK: systolic.load unified dram [[HIDDEN]]
// CHECK: systolic.drain f32
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
// CHECK: systolic.tensor "input_0" input bf16 [1, 8, 16] at 0
// CHECK: systolic.tensor "matmul_1/weights" constant bf16 [16, 4]
// CHECK: systolic.matmul bf16 {{.*}} rows 8 depth 16 cols 4
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
// CHECK: systolic.tensor "input_0/f8E4M3FN" scratch f8E4M3FN [8, 16]
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/weights" constant f8E4M3FN [16, 4]
// CHECK: systolic.vector quantize f8E4M3FN {{.*}}imm 5.000000e-01
// CHECK: systolic.matmul f8E4M3FN
// CHECK: systolic.drain f32 {{.*}}{scale = 1.250000e-01
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

// -----

// Epilogues: the ops after a GEMM run on each output block on chip before
// its store. The first projection's bias goes in the drain and its GELU
// in the epilogue (stored in bf16: only a matmul reads it); the second's
// residual add reads its block of %x and stores the model output. No
// fp32 product is ever stored.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/result" scratch bf16 [8, 16]
// CHECK-NOT: "scratch" "f32"
// CHECK: systolic.matmul bf16 {{.*}} rows 8 depth 16 cols 16
// CHECK-NEXT: systolic.drain f32 acc 0 sram [[P:[0-9]+]] rows 8 cols 16 {bias
// CHECK-NEXT: systolic.vector gelu bf16 src [[P]] dst [[G:[0-9]+]] rows 8 cols 16
// CHECK-NEXT: systolic.store dram {{[0-9]+}} sram [[G]] rows 8 row_bytes 32
// CHECK: systolic.load unified dram 0 sram [[R:[0-9]+]] rows 8 row_bytes 64 stride 64
// CHECK: systolic.drain f32 acc 0 sram [[Q:[0-9]+]] rows 8 cols 16
// CHECK-NEXT: systolic.vector add f32 src [[Q]] dst [[S:[0-9]+]] rows 8 cols 16 mode full src2 [[R]]
// CHECK-NEXT: systolic.store dram {{[0-9]+}} sram [[S]] rows 8 row_bytes 64
// CHECK-NOT: systolic.vector
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %w1 = tessera.constant dense<0.5> : tensor<16x16xf32>
  %b1 = tessera.constant dense<0.25> : tensor<16xf32>
  %w2 = tessera.constant dense<0.125> : tensor<16x16xf32>
  %0 = tessera.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %1 = tessera.add %0, %b1 : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %2 = tessera.gelu %1 : tensor<8x16xf32>
  %3 = tessera.matmul %2, %w2 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %4 = tessera.add %3, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}

// -----

// Attention scores: the scale in the drain and the softmax in the
// epilogue when a block holds whole rows (8 keys <= 16 columns).
// CHECK-LABEL: systolic.program
// CHECK: systolic.drain f32 {{.*}} rows 8 cols 8 {scale = 5.000000e-01
// CHECK-NEXT: systolic.vector row_max
// CHECK: systolic.vector div f32
// CHECK-NEXT: systolic.store
func.func @main(%q: tensor<2x8x4xf32>, %k: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
  %s = tessera.matmul %q, %k {alpha = 0.5 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  %p = tessera.softmax %s {axis = -1 : i64} : tensor<2x8x8xf32>
  return %p : tensor<2x8x8xf32>
}

// -----

// Must not fuse: a product with two users is stored, and a softmax over
// 32 keys (more than the array's 16 columns: no block holds whole rows)
// runs as a vector step of its own after the GEMM's stores.
// CHECK-LABEL: systolic.program
// CHECK: systolic.drain f32 acc {{[0-9]+}} sram [[A:[0-9]+]] rows 8 cols 16
// CHECK-NEXT: systolic.store dram {{[0-9]+}} sram [[A]]
// CHECK: systolic.load unified {{.*}} {fence
// CHECK: systolic.vector row_max
func.func @main(%q: tensor<8x4xf32>, %k: tensor<4x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %s = tessera.matmul %q, %k : tensor<8x4xf32>, tensor<4x32xf32> -> tensor<8x32xf32>
  %p = tessera.softmax %s {axis = -1 : i64} : tensor<8x32xf32>
  %r = tessera.relu %s : tensor<8x32xf32>
  return %p, %r : tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Per-column weight scales (axis -1 of [K, N] weights): the drain scales by
// the input's scale, the epilogue multiplies by a row of column scales.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/scales" constant f32 [4] at {{[0-9]+}} value dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK: systolic.matmul i8
// CHECK: systolic.drain f32 {{.*}}{int32, scale = 5.000000e-01
// CHECK-NEXT: systolic.vector mul f32 {{.*}}mode row
// CHECK-NEXT: systolic.store
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %t = tessera.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w = tessera.constant dense<3> : tensor<16x4xi8>
  %z = tessera.constant dense<0> : tensor<i8>
  %q = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<8x16xf32> -> tensor<8x16xi8>
  %dq = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<8x16xi8> -> tensor<8x16xf32>
  %dw = tessera.dequantize %w scale(%t : tensor<4xf32>) {axis = -1} : tensor<16x4xi8> -> tensor<16x4xf32>
  %0 = tessera.matmul %dq, %dw : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// int8 as tessera-assign-precision writes it: the input quantized, i8
// weights, an i32 product dequantized per column by sx * sw. The drain
// scales by sx = 0.5, the epilogue by the column scales sw = 1..4 (the
// dequantize's 0.5..2 over sx); the dequantize runs no step of its own.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/scales" constant f32 [4] at {{[0-9]+}} value dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK: systolic.vector quantize i8 {{.*}}imm 5.000000e-01
// CHECK: systolic.matmul i8
// CHECK: systolic.drain f32 {{.*}}{int32, scale = 5.000000e-01
// CHECK-NEXT: systolic.vector mul f32 {{.*}}mode row
// CHECK-NEXT: systolic.store
// CHECK-NOT: systolic.vector
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %d = tessera.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>
  %w = tessera.constant dense<3> : tensor<16x4xi8>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xi8>
  %0 = tessera.matmul %q, %w : tensor<8x16xi8>, tensor<16x4xi8> -> tensor<8x4xi32>
  %1 = tessera.dequantize %0 scale(%d : tensor<4xf32>) {axis = 1 : i64} : tensor<8x4xi32> -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// fp8 as the policy writes it: the input quantized by 0.5, fp8 weights,
// the product scaled by alpha (sx * sw = 0.125) in the drain.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/weights" constant f8E4M3FN [16, 4]
// CHECK: systolic.vector quantize f8E4M3FN {{.*}}imm 5.000000e-01
// CHECK: systolic.matmul f8E4M3FN
// CHECK: systolic.drain f32 {{.*}}{scale = 1.250000e-01
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %w = tessera.constant dense<1.5> : tensor<16x4xf8E4M3FN>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xf8E4M3FN>
  %0 = tessera.matmul %q, %w {alpha = 0.125 : f32} : tensor<8x16xf8E4M3FN>, tensor<16x4xf8E4M3FN> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// bf16 as the policy writes it: the input cast, the weights' cast folded
// into a bf16 constant, read as they are.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "matmul_{{[0-9]+}}/weights" constant bf16 [16, 4] at {{[0-9]+}} value dense<1.500000e+00>
// CHECK: systolic.matmul bf16
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %w = tessera.constant dense<1.5> : tensor<16x4xbf16>
  %c = tessera.cast %x : tensor<8x16xf32> to tensor<8x16xbf16>
  %0 = tessera.matmul %c, %w : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
