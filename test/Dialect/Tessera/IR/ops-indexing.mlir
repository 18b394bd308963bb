// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @indexing
func.func @indexing(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>, %t: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: tessera.gather_elements %{{.*}}[%{{.*}}] axis 1 : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  %0 = tessera.gather_elements %x[%i] axis 1 : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  // CHECK: tessera.gather_nd %{{.*}}[%{{.*}}] : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2xf32>
  %1 = tessera.gather_nd %x[%i] : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2xf32>
  // CHECK: tessera.scatter_nd %{{.*}}[%{{.*}}], %{{.*}} {reduction = 1 : i32} : tensor<2x3xf32>, tensor<2x1xi64>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tessera.scatter_nd %x[%t], %u {reduction = 1 : i32} : tensor<2x3xf32>, tensor<2x1xi64>, tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: tessera.scatter_elements %{{.*}}[%{{.*}}], %{{.*}} axis 1 : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  %3 = tessera.scatter_elements %x[%i], %0 axis 1 : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @resize
func.func @resize(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>, %r: tensor<8xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) {
  // CHECK: tessera.resize %{{.*}}, %{{.*}} {coordinate_mode = 3 : i32, mode = 2 : i32} : tensor<1x1x2x2xf32>, tensor<4xf32> -> tensor<1x1x4x4xf32>
  %0 = tessera.resize %x, %s {mode = 2 : i32, coordinate_mode = 3 : i32} : tensor<1x1x2x2xf32>, tensor<4xf32> -> tensor<1x1x4x4xf32>
  // CHECK: tessera.resize %{{.*}}, %{{.*}} roi(%{{.*}} : tensor<8xf32>) {coordinate_mode = 6 : i32, extrapolation_value = 1.000000e+01 : f64, mode = 1 : i32}
  %1 = tessera.resize %x, %s roi(%r : tensor<8xf32>) {mode = 1 : i32, coordinate_mode = 6 : i32, extrapolation_value = 10.0} : tensor<1x1x2x2xf32>, tensor<4xf32> -> tensor<1x1x3x3xf32>
  return %0, %1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
}

// CHECK-LABEL: func @resize_sizes
func.func @resize_sizes(%x: tensor<1x1x?x?xf32>, %s: tensor<4xf32>, %n: tensor<4xi64>) -> tensor<1x1x?x?xf32> {
  // CHECK: tessera.resize %{{.*}}, %{{.*}} sizes(%{{.*}} : tensor<4xi64>) {mode = 1 : i32} : tensor<1x1x?x?xf32>, tensor<4xf32> -> tensor<1x1x?x?xf32>
  %0 = tessera.resize %x, %s sizes(%n : tensor<4xi64>) {mode = 1 : i32} : tensor<1x1x?x?xf32>, tensor<4xf32> -> tensor<1x1x?x?xf32>
  return %0 : tensor<1x1x?x?xf32>
}
