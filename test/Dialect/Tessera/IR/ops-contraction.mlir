// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @matmul_2d
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: tessera.matmul %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func @matmul_batched_dynamic_transposed
func.func @matmul_batched_dynamic_transposed(%a: tensor<?x12x128x64xbf16>, %b: tensor<?x12x128x64xbf16>) -> tensor<?x12x128x128xf32> {
  // CHECK: tessera.matmul %{{.*}}, %{{.*}} {alpha = 1.250000e-01 : f32, transpose_b} : tensor<?x12x128x64xbf16>, tensor<?x12x128x64xbf16> -> tensor<?x12x128x128xf32>
  %0 = tessera.matmul %a, %b {transpose_b, alpha = 0.125 : f32} : tensor<?x12x128x64xbf16>, tensor<?x12x128x64xbf16> -> tensor<?x12x128x128xf32>
  return %0 : tensor<?x12x128x128xf32>
}

// -----

// CHECK-LABEL: func @matmul_gemm_transpose_a
func.func @matmul_gemm_transpose_a(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: tessera.matmul %{{.*}}, %{{.*}} {transpose_a} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %0 = tessera.matmul %a, %b {transpose_a} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func @matmul_vectors_and_int8
func.func @matmul_vectors_and_int8(%v: tensor<8xf32>, %m: tensor<3x8x16xf32>, %qa: tensor<4x8xi8>, %qb: tensor<8x16xi8>) -> (tensor<3x16xf32>, tensor<4x16xi32>) {
  // CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<3x8x16xf32> -> tensor<3x16xf32>
  %0 = tessera.matmul %v, %m : tensor<8xf32>, tensor<3x8x16xf32> -> tensor<3x16xf32>
  // CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8x16xi8> -> tensor<4x16xi32>
  %1 = tessera.matmul %qa, %qb : tensor<4x8xi8>, tensor<8x16xi8> -> tensor<4x16xi32>
  return %0, %1 : tensor<3x16xf32>, tensor<4x16xi32>
}

// -----

// CHECK-LABEL: func @matmul_fp8
func.func @matmul_fp8(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>) -> tensor<64x64xbf16> {
  // CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xbf16>
  %0 = tessera.matmul %a, %b : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xbf16>
  return %0 : tensor<64x64xbf16>
}

// -----

// CHECK-LABEL: func @conv2d_patch_embedding
func.func @conv2d_patch_embedding(%img: tensor<1x3x32x32xf32>, %w: tensor<64x3x8x8xf32>, %b: tensor<64xf32>) -> tensor<1x64x4x4xf32> {
  // CHECK: tessera.conv2d %{{.*}}, %{{.*}} bias(%{{.*}} : tensor<64xf32>) {strides = array<i64: 8, 8>} : tensor<1x3x32x32xf32>, tensor<64x3x8x8xf32> -> tensor<1x64x4x4xf32>
  %0 = tessera.conv2d %img, %w bias(%b : tensor<64xf32>) {strides = array<i64: 8, 8>} : tensor<1x3x32x32xf32>, tensor<64x3x8x8xf32> -> tensor<1x64x4x4xf32>
  return %0 : tensor<1x64x4x4xf32>
}

// -----

// CHECK-LABEL: func @conv2d_padded_grouped
func.func @conv2d_padded_grouped(%x: tensor<?x8x7x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32> {
  // CHECK: tessera.conv2d %{{.*}}, %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x8x7x7xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x4x4xf32>
  %0 = tessera.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2} : tensor<?x8x7x7xf32>, tensor<8x4x3x3xf32> -> tensor<?x8x4x4xf32>
  return %0 : tensor<?x8x4x4xf32>
}

// -----

// CHECK-LABEL: func @attention_causal
func.func @attention_causal(%q: tensor<1x12x128x64xf32>, %k: tensor<1x12x128x64xf32>, %v: tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32> {
  // CHECK: tessera.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
  %0 = tessera.attention %q, %k, %v {causal} : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
  return %0 : tensor<1x12x128x64xf32>
}

// -----

// CHECK-LABEL: func @attention_mask_scale_dynamic
func.func @attention_mask_scale_dynamic(%q: tensor<?x12x?x64xbf16>, %k: tensor<?x12x?x64xbf16>, %v: tensor<?x12x?x32xbf16>, %m: tensor<?x1x1x?xbf16>) -> tensor<?x12x?x32xbf16> {
  // CHECK: tessera.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<?x1x1x?xbf16>) {scale = 1.250000e-01 : f32} : tensor<?x12x?x64xbf16>, tensor<?x12x?x64xbf16>, tensor<?x12x?x32xbf16> -> tensor<?x12x?x32xbf16>
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<?x1x1x?xbf16>) {scale = 0.125 : f32} : tensor<?x12x?x64xbf16>, tensor<?x12x?x64xbf16>, tensor<?x12x?x32xbf16> -> tensor<?x12x?x32xbf16>
  return %0 : tensor<?x12x?x32xbf16>
}
