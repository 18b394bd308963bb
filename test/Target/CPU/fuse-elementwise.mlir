// RUN: tessera-opt %s --split-input-file --tessera-cpu-fuse-elementwise | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Two elementwise generics become one.
// CHECK-LABEL: func @chain
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // CHECK: linalg.generic
  // CHECK: math.exp
  // CHECK: arith.addf
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// An activation feeding a matmul stays its own loop nest: fused, it would
// run once per multiply-add.
// CHECK-LABEL: func @not_into_contraction
func.func @not_into_contraction(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
  // CHECK: math.erf
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
  // CHECK-NOT: math.erf
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.erf %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}
