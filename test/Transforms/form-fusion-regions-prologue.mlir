// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions | FileCheck %s

// A reduction's prologue continues through a cast that changes the
// element type (i1 to i64) and through round: the count of values beyond
// a bound is one region.
// CHECK-LABEL: func @count_through_cast
// CHECK: tessera.fusion reduction {
// CHECK-NEXT: tessera.div
// CHECK-NEXT: tessera.round
// CHECK-NEXT: tessera.abs
// CHECK-NEXT: tessera.compare gt
// CHECK-NEXT: tessera.cast {{.*}} : tensor<8x64xi1> to tensor<8x64xi64>
// CHECK-NEXT: tessera.reduce_sum
// CHECK-NEXT: tessera.yield
func.func @count_through_cast(%x: tensor<8x64xf32>) -> tensor<i64> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %b = tessera.constant dense<127.5> : tensor<f32>
  %d = tessera.div %x, %s : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %r = tessera.round %d : tensor<8x64xf32>
  %a = tessera.abs %r : tensor<8x64xf32>
  %c = tessera.compare gt, %a, %b : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xi1>
  %i = tessera.cast %c : tensor<8x64xi1> to tensor<8x64xi64>
  %n = tessera.reduce_sum %i [0, 1] {keepdims = false} : tensor<8x64xi64> -> tensor<i64>
  return %n : tensor<i64>
}

// -----

// Must not fire: the prologue stops at a producer with another user (the
// rounded values are also returned), and does not follow an operand of
// another shape (the broadcast bound's producer, the compare's first
// operand).
// CHECK-LABEL: func @shared_and_broadcast
// CHECK: %[[R:.*]] = tessera.round
// CHECK: %[[NB:.*]] = tessera.neg
// CHECK: tessera.fusion reduction {
// CHECK-NEXT: tessera.compare lt, %[[NB]], %[[R]]
// CHECK-NEXT: tessera.cast
// CHECK-NEXT: tessera.reduce_sum
// CHECK: return %{{.*}}, %[[R]]
func.func @shared_and_broadcast(%x: tensor<8x64xf32>, %bound: tensor<64xf32>) -> (tensor<i64>, tensor<8x64xf32>) {
  %r = tessera.round %x : tensor<8x64xf32>
  %nb = tessera.neg %bound : tensor<64xf32>
  %c = tessera.compare lt, %nb, %r : tensor<64xf32>, tensor<8x64xf32> -> tensor<8x64xi1>
  %i = tessera.cast %c : tensor<8x64xi1> to tensor<8x64xi64>
  %n = tessera.reduce_sum %i [0, 1] {keepdims = false} : tensor<8x64xi64> -> tensor<i64>
  return %n, %r : tensor<i64>, tensor<8x64xf32>
}

// -----

// A select's value operand of the reduction's own type comes before its
// i1 condition of the same shape: the prologue follows the product, not
// the mask.
// CHECK-LABEL: func @select_follows_value
// CHECK: %[[M:.*]] = tessera.compare
// CHECK: tessera.fusion reduction {
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.where %[[M]]
// CHECK-NEXT: tessera.reduce_sum
func.func @select_follows_value(%a: tensor<8x64xf32>, %b: tensor<8x64xf32>, %t: tensor<8x64xf32>) -> (tensor<f32>, tensor<8x64xi1>) {
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %m = tessera.compare gt, %t, %zero : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xi1>
  %p = tessera.mul %a, %b : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %w = tessera.where %m, %p, %zero : tensor<8x64xi1>, tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %n = tessera.reduce_sum %w [0, 1] {keepdims = false} : tensor<8x64xf32> -> tensor<f32>
  return %n, %m : tensor<f32>, tensor<8x64xi1>
}
