// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// Every op and every field of the systolic program round-trips: formats
// are element types, choices are enums, addresses are integers.

// CHECK-LABEL: systolic.program attributes {accel = "small", dram_bytes = 4096 : i64}
systolic.program attributes {accel = "small", dram_bytes = 4096 : i64} {
  // CHECK-NEXT: systolic.tensor "x" input f32 [4, 8] at 0
  systolic.tensor "x" input f32 [4, 8] at 0
  // CHECK-NEXT: systolic.tensor "w" constant bf16 [2, 2] at 128 value dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  systolic.tensor "w" constant bf16 [2, 2] at 128 value dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK-NEXT: systolic.tensor "q" scratch f8E4M3FN [16] at 192
  systolic.tensor "q" scratch f8E4M3FN [16] at 192
  // CHECK-NEXT: systolic.tensor "e" scratch f8E5M2 [16] at 208
  systolic.tensor "e" scratch f8E5M2 [16] at 208
  // CHECK-NEXT: systolic.tensor "i" scratch i8 [16] at 224
  systolic.tensor "i" scratch i8 [16] at 224
  // CHECK-NEXT: systolic.tensor "h" scratch f16 [16] at 256
  systolic.tensor "h" scratch f16 [16] at 256
  // CHECK-NEXT: systolic.tensor "y" output f32 [4, 8] at 512
  systolic.tensor "y" output f32 [4, 8] at 512

  // CHECK-NEXT: systolic.load weights dram 128 sram 0 rows 2 row_bytes 4 stride 4 {fence, signal = 1 : i64}
  systolic.load weights dram 128 sram 0 rows 2 row_bytes 4 stride 4 {fence, signal = 1 : i64}
  // A stride of 0 reads the same row again (a broadcast).
  // CHECK-NEXT: systolic.load unified dram 0 sram 0 rows 4 row_bytes 32 stride 0
  systolic.load unified dram 0 sram 0 rows 4 row_bytes 32 stride 0
  // CHECK-NEXT: systolic.matmul bf16 weights 0 activations 0 acc 0 rows 4 depth 2 cols 2 {accumulate, wait = 1 : i64}
  systolic.matmul bf16 weights 0 activations 0 acc 0 rows 4 depth 2 cols 2 {accumulate, wait = 1 : i64}
  // CHECK-NEXT: systolic.matmul f8E4M3FN weights 0 activations 0 acc 0 rows 4 depth 2 cols 2
  systolic.matmul f8E4M3FN weights 0 activations 0 acc 0 rows 4 depth 2 cols 2
  // CHECK-NEXT: systolic.matmul i8 weights 0 activations 0 acc 0 rows 4 depth 2 cols 2
  systolic.matmul i8 weights 0 activations 0 acc 0 rows 4 depth 2 cols 2
  // CHECK-NEXT: systolic.drain f32 acc 0 sram 64 rows 4 cols 2 {bias = 32 : i64, int32, relu, scale = 5.000000e-01 : f32}
  systolic.drain f32 acc 0 sram 64 rows 4 cols 2 {bias = 32 : i64, int32, relu, scale = 5.000000e-01 : f32}
  // CHECK-NEXT: systolic.drain i8 acc 0 sram 64 rows 4 cols 2 {scale = 2.500000e-01 : f32}
  systolic.drain i8 acc 0 sram 64 rows 4 cols 2 {scale = 2.500000e-01 : f32}
  // CHECK-NEXT: systolic.vector gelu_tanh bf16 src 0 dst 128 rows 4 cols 8
  systolic.vector gelu_tanh bf16 src 0 dst 128 rows 4 cols 8
  // CHECK-NEXT: systolic.vector add f32 src 0 dst 128 rows 4 cols 8 mode row src2 256
  systolic.vector add f32 src 0 dst 128 rows 4 cols 8 mode row src2 256
  // CHECK-NEXT: systolic.vector pow f32 src 0 dst 128 rows 4 cols 8 mode immediate imm 2.000000e+00
  systolic.vector pow f32 src 0 dst 128 rows 4 cols 8 mode immediate imm 2.0
  // CHECK-NEXT: systolic.vector quantize i8 src 0 dst 128 rows 4 cols 8 imm 5.000000e-02
  systolic.vector quantize i8 src 0 dst 128 rows 4 cols 8 imm 0.05
  // CHECK-NEXT: systolic.vector row_max f32 src 0 dst 128 rows 4 cols 8 {signal = 16 : i64}
  systolic.vector row_max f32 src 0 dst 128 rows 4 cols 8 {signal = 16 : i64}
  // CHECK-NEXT: systolic.gather dram 0 sram 128 indices 0 rows 4 row_bytes 32 table_rows 70000 {fence}
  systolic.gather dram 0 sram 128 indices 0 rows 4 row_bytes 32 table_rows 70000 {fence}
  // CHECK-NEXT: systolic.store dram 512 sram 64 rows 4 row_bytes 32 stride 32 {wait = 16 : i64}
  systolic.store dram 512 sram 64 rows 4 row_bytes 32 stride 32 {wait = 16 : i64}
}
