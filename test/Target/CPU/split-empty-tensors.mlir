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

// -----

// A part computed into a slice of the empty tensor and inserted back into
// the same slice keeps one tensor with its insert (apart, the insert would
// be a copy); the other part and the other kernel get their own.
// CHECK-LABEL: func @slice_and_insert
// CHECK-COUNT-3: tensor.empty() : tensor<8xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[S:.*]] = tensor.extract_slice %[[A:.*]][0] [4] [1]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4xf32>)
// CHECK: tensor.insert_slice %[[P]] into %[[A]][0] [4] [1]
#map = affine_map<(d0) -> (d0)>
func.func @slice_and_insert(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = tensor.extract_slice %e[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%s : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %i = tensor.insert_slice %p into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %q = tensor.extract_slice %e[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %i2 = tensor.insert_slice %q into %i[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %k = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %i2, %k : tensor<8xf32>, tensor<8xf32>
}
