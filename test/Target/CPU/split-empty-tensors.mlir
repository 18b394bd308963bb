// RUN: tessera-opt %s --split-input-file --tessera-cpu-split-empty-tensors | FileCheck %s

// Two kernels writing into one shared empty tensor (as CSE leaves them)
// get one each, next to the original, with its dynamic size.
// CHECK-LABEL: func @shared
// CHECK: %[[A:.*]] = tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK: linalg.generic {{.*}} outs(%[[B]] : tensor<?xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[A]] : tensor<?xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @shared(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// Must not fire: an empty tensor with one use stays as it is.
// CHECK-LABEL: func @single
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
#map = affine_map<(d0) -> (d0)>
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
