// RUN: tessera-opt %s --split-input-file --tessera-expose-calibration-values | FileCheck %s

// Each operand the precision passes may narrow becomes an extra result,
// named by its calibration key; the constant weight does not (its range
// is known at compile time).
// CHECK-LABEL: func @linear
// CHECK-SAME: -> (tensor<4x16xf32> {tessera.name = "y"}, tensor<4x8xf32> {tessera.name = "tessera.calibration:/fc1/MatMul:lhs"}, tensor<4x16xf32> {tessera.name = "tessera.calibration:#1:lhs"}, tensor<16x16xf32> {tessera.name = "tessera.calibration:#1:rhs"})
// CHECK: %[[H:.*]] = tessera.matmul %arg0
// CHECK: %[[Y:.*]] = tessera.matmul %[[H]], %arg1
// CHECK: return %[[Y]], %arg0, %[[H]], %arg1
func.func @linear(%x: tensor<4x8xf32>, %w2: tensor<16x16xf32>) -> (tensor<4x16xf32> {tessera.name = "y"}) {
  %w = tessera.constant dense<0.5> : tensor<8x16xf32>
  %h = tessera.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("/fc1/MatMul")
  %y = tessera.matmul %h, %w2 : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Must not fire: narrow and integer matmuls, and no matmul at all.
// CHECK-LABEL: func @nothing
// CHECK-SAME: -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>)
// CHECK-NOT: tessera.calibration
func.func @nothing(%a: tensor<2x2xbf16>, %i: tensor<2x2xi8>, %e: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>) {
  %0 = tessera.matmul %a, %a : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
  %1 = tessera.matmul %i, %i : tensor<2x2xi8>, tensor<2x2xi8> -> tensor<2x2xi32>
  %2 = tessera.exp %e : tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>
}
