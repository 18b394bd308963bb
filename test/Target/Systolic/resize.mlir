// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s

// Nearest x2 upsampling (asymmetric, floor: PaddleOCR's FPN) is one
// strided copy: each input row loaded twice (a DMA stride of 0), each
// element stored twice (two stores of 4 elements 8 bytes apart per row),
// no vector arithmetic and no scratch tensor.
// CHECK-LABEL: systolic.program
// CHECK-NOT: scratch
// CHECK: systolic.load unified dram 0 sram 0 rows 2 row_bytes 16 stride 0 {fence}
// CHECK: systolic.vector copy f32 src 0 dst {{[0-9]+}} rows 24 cols 4
// CHECK-NEXT: systolic.store dram 128 {{.*}} rows 4 row_bytes 4 stride 8
// CHECK-NEXT: systolic.store dram 132 {{.*}} rows 4 row_bytes 4 stride 8
// CHECK-NOT: fence
// CHECK-NOT: systolic.vector
// CHECK: }
func.func @main(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {coordinate_mode = 4 : i32, nearest_mode = 2 : i32} : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Irregular index maps (align_corners from 3 x 4 to 5 x 7: rows 0 0 1 2 2
// and columns 0 1 1 2 2 3 3, rounding halves down) are split into
// segments of equal runs: one copy per product of segments, each fenced
// behind the previous one's stores, still no arithmetic.
// CHECK-LABEL: systolic.program
// CHECK-COUNT-4: systolic.vector copy f32
// CHECK-NOT: systolic.vector
// CHECK: }
func.func @main(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x5x7xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 1.66666663, 1.75]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {coordinate_mode = 3 : i32} : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x5x7xf32>
  return %0 : tensor<1x2x5x7xf32>
}

// -----

// Linear (half_pixel) resamples the last dim, then the one before: per
// dim two copies of the neighbours each tap reads, then on the vector
// unit the first times its weights, the second times its weights, their
// sum: along the columns the weights are one row (mode row), along the
// rows one value per row (mode column).
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "resize_1/tap" scratch f32 [1, 2, 3, 8]
// CHECK: systolic.tensor "resize_1/weights" constant f32 [8] at {{[0-9]+}} value dense<[2.500000e-01, 7.500000e-01,
// CHECK: systolic.tensor "resize_1/partial" scratch f32 [1, 2, 3, 8]
// CHECK: systolic.tensor "resize_1/weights_2" constant f32 [12]
// CHECK: systolic.vector mul f32 {{.*}} rows 6 cols 8 mode row
// CHECK-NEXT: systolic.vector mul f32 {{.*}} rows 6 cols 8 mode row
// CHECK-NEXT: systolic.vector add f32 {{.*}} rows 6 cols 8 mode full
// CHECK: systolic.vector mul f32 {{.*}} rows 12 cols 8 mode column
// CHECK-NEXT: systolic.vector mul f32 {{.*}} rows 12 cols 8 mode column
// CHECK-NEXT: systolic.vector add f32 {{.*}} rows 12 cols 8 mode full
func.func @main(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {mode = 1 : i32} : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// tf_crop_and_resize outside the roi reads the extrapolation value from
// a one-element constant (stride 0).
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "resize_1/extrapolation" constant f32 [1] at [[FILL:[0-9]+]] value dense<7.000000e+00>
// CHECK: systolic.load unified dram [[FILL]] {{.*}} stride 0
func.func @main(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %r = tessera.constant dense<[0.0, 0.0, -0.5, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>
  %0 = tessera.resize %x, %s roi(%r : tensor<8xf32>) {coordinate_mode = 6 : i32, extrapolation_value = 7.0 : f64} : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Irregular maps in two dims whose product of segments is large
// (asymmetric, floor, from 10 x 10 to 34 x 34: ten segments a dim)
// resample one dim at a time: the columns into an fp32 scratch tensor,
// then its rows into the result.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "resize_1/partial" scratch f32 [1, 2, 10, 34]
// CHECK: systolic.tensor "output_0" output f32 [1, 2, 34, 34]
// CHECK-COUNT-20: systolic.vector copy f32
// CHECK-NOT: systolic.vector
func.func @main(%x: tensor<1x2x10x10xf32>) -> tensor<1x2x34x34xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 3.4, 3.4]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {coordinate_mode = 4 : i32, nearest_mode = 2 : i32} : tensor<1x2x10x10xf32>, tensor<4xf32> -> tensor<1x2x34x34xf32>
  return %0 : tensor<1x2x34x34xf32>
}
