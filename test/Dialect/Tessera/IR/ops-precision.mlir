// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @fp8_per_tensor
func.func @fp8_per_tensor(%x: tensor<128x768xf32>, %s: tensor<f32>) -> tensor<128x768xbf16> {
  // CHECK: %[[Q:.*]] = tessera.quantize %{{.*}} scale(%{{.*}} : tensor<f32>) : tensor<128x768xf32> -> tensor<128x768xf8E4M3FN>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<128x768xf32> -> tensor<128x768xf8E4M3FN>
  // CHECK: tessera.dequantize %[[Q]] scale(%{{.*}} : tensor<f32>) : tensor<128x768xf8E4M3FN> -> tensor<128x768xbf16>
  %y = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<128x768xf8E4M3FN> -> tensor<128x768xbf16>
  return %y : tensor<128x768xbf16>
}

// -----

// CHECK-LABEL: func @e5m2
func.func @e5m2(%x: tensor<16xbf16>, %s: tensor<1xbf16>) -> tensor<16xf8E5M2> {
  // CHECK: tessera.quantize %{{.*}} scale(%{{.*}} : tensor<1xbf16>) : tensor<16xbf16> -> tensor<16xf8E5M2>
  %q = tessera.quantize %x scale(%s : tensor<1xbf16>) : tensor<16xbf16> -> tensor<16xf8E5M2>
  return %q : tensor<16xf8E5M2>
}

// -----

// CHECK-LABEL: func @int8_per_channel
func.func @int8_per_channel(%w: tensor<768x3072xf32>, %s: tensor<3072xf32>, %z: tensor<3072xi8>) -> tensor<768x3072xf32> {
  // CHECK: %[[Q:.*]] = tessera.quantize %{{.*}} scale(%{{.*}} : tensor<3072xf32>) zero_point(%{{.*}} : tensor<3072xi8>) {axis = 1 : i64} : tensor<768x3072xf32> -> tensor<768x3072xi8>
  %q = tessera.quantize %w scale(%s : tensor<3072xf32>) zero_point(%z : tensor<3072xi8>) {axis = 1} : tensor<768x3072xf32> -> tensor<768x3072xi8>
  // CHECK: tessera.dequantize %[[Q]] scale(%{{.*}} : tensor<3072xf32>) zero_point(%{{.*}} : tensor<3072xi8>) {axis = -1 : i64} : tensor<768x3072xi8> -> tensor<768x3072xf32>
  %d = tessera.dequantize %q scale(%s : tensor<3072xf32>) zero_point(%z : tensor<3072xi8>) {axis = -1} : tensor<768x3072xi8> -> tensor<768x3072xf32>
  return %d : tensor<768x3072xf32>
}

// -----

// CHECK-LABEL: func @int32_accumulator
func.func @int32_accumulator(%acc: tensor<4x16xi32>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // CHECK: tessera.dequantize %{{.*}} scale(%{{.*}} : tensor<f32>) : tensor<4x16xi32> -> tensor<4x16xf32>
  %0 = tessera.dequantize %acc scale(%s : tensor<f32>) : tensor<4x16xi32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
