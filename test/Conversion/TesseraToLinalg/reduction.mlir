// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s

// keepdims reduces to the kept dims, then expands the unit dim back.
// CHECK-LABEL: func @reduce_mean_keepdims
func.func @reduce_mean_keepdims(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  // CHECK: linalg.fill
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
  // CHECK: arith.addf
  // CHECK: %[[C8:.*]] = arith.constant 8 : index
  // CHECK: arith.sitofp
  // CHECK: arith.divf
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
  %0 = tessera.reduce_mean %x [1] : tensor<2x8xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func @reduce_max_int
func.func @reduce_max_int(%x: tensor<2x8xi32>) -> tensor<8xi32> {
  // CHECK: arith.constant -2147483648 : i32
  // CHECK: arith.maxsi
  // CHECK-NOT: tensor.expand_shape
  %0 = tessera.reduce_max %x [0] {keepdims = false} : tensor<2x8xi32> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// A product starts from 1 and multiplies.
// CHECK-LABEL: func @reduce_prod
func.func @reduce_prod(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // CHECK: arith.constant 1.000000e+00 : f32
  // CHECK: arith.mulf
  %0 = tessera.reduce_prod %x [1] {keepdims = false} : tensor<2x8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Softmax subtracts the row max before the exponential.
// CHECK-LABEL: func @softmax
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: arith.constant 0xFF800000 : f32
  // CHECK: arith.maximumf
  // CHECK: arith.subf
  // CHECK: math.exp
  // CHECK: arith.addf
  // CHECK: arith.divf
  %0 = tessera.softmax %x : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
func.func @layer_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: arith.subf
  // CHECK: arith.mulf
  // CHECK: arith.constant 9.99999974E-6 : f32
  // CHECK: math.rsqrt
  // CHECK-NOT: tessera.layer_norm
  %0 = tessera.layer_norm %x scale(%g : tensor<8xf32>) bias(%b : tensor<8xf32>) : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// argmax carries the best value and its index; ties keep the first.
// CHECK-LABEL: func @argmax
func.func @argmax(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  // CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
  // CHECK: arith.cmpf ogt
  // CHECK: linalg.index 1
  %0 = tessera.argmax %x {axis = 1 : i64} : tensor<2x8xf32> -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}
