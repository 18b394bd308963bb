// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s

// Broadcasting: the smaller operand is read through a map of the trailing dims.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>)
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
  // CHECK: arith.addf
  // CHECK-NOT: tessera.add
  %0 = tessera.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A static unit dim stretches through a constant-0 map entry; a dynamic dim
// takes its size from the operand.
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func @mul_dynamic
func.func @mul_dynamic(%a: tensor<?x4xi32>, %b: tensor<1x4xi32>) -> tensor<?x4xi32> {
  // CHECK: %[[C0:.*]] = arith.constant 0 : index
  // CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %[[C0]] : tensor<?x4xi32>
  // CHECK: tensor.empty(%[[D]]) : tensor<?x4xi32>
  // CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ONE]], #{{.*}}]
  // CHECK: arith.muli
  %0 = tessera.mul %a, %b : tensor<?x4xi32>, tensor<1x4xi32> -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}

// -----

// CHECK-LABEL: func @compare_where_cast
func.func @compare_where_cast(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xbf16> {
  // CHECK: arith.cmpf olt
  %c = tessera.compare lt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  // CHECK: arith.select
  %w = tessera.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  %r = tessera.cast %w : tensor<4xf32> to tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// Activations decompose into arith and math; narrow floats compute in f32.
// CHECK-LABEL: func @activations
func.func @activations(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  // CHECK: arith.extf %{{.*}} : bf16 to f32
  // CHECK: math.erf %{{.*}} : f32
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  %0 = tessera.gelu %x : tensor<8xbf16>
  // CHECK: math.tanh
  %1 = tessera.gelu %0 approximate = tanh : tensor<8xbf16>
  // CHECK: math.exp
  // CHECK: arith.divf
  %2 = tessera.silu %1 : tensor<8xbf16>
  return %2 : tensor<8xbf16>
}

// -----

// Ops of other dialects are left alone.
// CHECK-LABEL: func @not_tessera
func.func @not_tessera(%x: f32) -> f32 {
  // CHECK-NEXT: %[[R:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT: return %[[R]]
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}

// -----

// Trigonometric, hyperbolic and rounding ops are math ops on each element
// (in f32 for narrower floats); Round rounds halves to even.
// CHECK-LABEL: func @math_unary
// CHECK: math.sin
// CHECK: math.acosh
// CHECK: math.ceil
// CHECK: arith.extf
// CHECK-NEXT: math.roundeven
// CHECK-NEXT: arith.truncf
func.func @math_unary(%x: tensor<8xf32>, %h: tensor<8xbf16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>) {
  %0 = tessera.sin %x : tensor<8xf32>
  %1 = tessera.acosh %x : tensor<8xf32>
  %2 = tessera.ceil %x : tensor<8xf32>
  %3 = tessera.round %h : tensor<8xbf16>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>
}
