// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s

// constant: a tensor.pad yielding the value, dynamic dims included; no
// generic.
// CHECK-LABEL: func @pad_constant
func.func @pad_constant(%x: tensor<?x3xf32>) -> tensor<?x5xf32> {
  // CHECK: %[[V:.*]] = arith.constant 2.500000e+00 : f32
  // CHECK: tensor.pad %arg0 low[1, 0] high[0, 2]
  // CHECK: tensor.yield %[[V]] : f32
  // CHECK: } : tensor<?x3xf32> to tensor<?x5xf32>
  // CHECK-NOT: linalg.generic
  %0 = tessera.pad %x {pads = array<i64: 1, 0, 0, 2>, value = 2.5} : tensor<?x3xf32> -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// reflect: each result element reads the input at i - before, mirrored at
// 0 (-j) and at n - 1 (2 (n - 1) - j); the unpadded dim reads straight.
// CHECK-LABEL: func @pad_reflect
func.func @pad_reflect(%x: tensor<2x3xi64>) -> tensor<2x7xi64> {
  // CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x7xi64>)
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[J:.*]] = linalg.index 1 : index
  // CHECK: %[[SHIFTED:.*]] = arith.subi %[[J]], %{{.*}} : index
  // CHECK: %[[NEG:.*]] = arith.subi %{{.*}}, %[[SHIFTED]] : index
  // CHECK: %[[BEFORE:.*]] = arith.cmpi slt, %[[SHIFTED]]
  // CHECK: %[[LOW:.*]] = arith.select %[[BEFORE]], %[[NEG]], %[[SHIFTED]]
  // CHECK: %[[PAST:.*]] = arith.cmpi sgt, %[[LOW]]
  // CHECK: %[[C4:.*]] = arith.constant 4 : index
  // CHECK: %[[BACK:.*]] = arith.subi %[[C4]], %[[LOW]]
  // CHECK: %[[COL:.*]] = arith.select %[[PAST]], %[[BACK]], %[[LOW]]
  // CHECK: tensor.extract %arg0[%[[I]], %[[COL]]] : tensor<2x3xi64>
  %0 = tessera.pad %x {mode = 1 : i32, pads = array<i64: 0, 2, 0, 2>} : tensor<2x3xi64> -> tensor<2x7xi64>
  return %0 : tensor<2x7xi64>
}

// -----

// edge: the shifted index clamped into [0, n - 1].
// CHECK-LABEL: func @pad_edge
func.func @pad_edge(%x: tensor<4xf32>) -> tensor<7xf32> {
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[J:.*]] = arith.subi %[[I]], %{{.*}} : index
  // CHECK: %[[LOW:.*]] = arith.maxsi %[[J]], %{{.*}} : index
  // CHECK: %[[CLAMPED:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
  // CHECK: tensor.extract %arg0[%[[CLAMPED]]] : tensor<4xf32>
  %0 = tessera.pad %x {mode = 2 : i32, pads = array<i64: 1, 2>} : tensor<4xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
