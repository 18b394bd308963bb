// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Column panels of 32 run on threads (scf.forall), each packing its rhs
// slice contiguously; rows tile by 8 and k by 1 in inner loops, and the tile
// becomes an (8 x 1) by (1 x 32) vector contraction.
// CHECK-LABEL: func @matmul
func.func @matmul(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>, %acc: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // CHECK: scf.forall (%{{.*}}) = (0) to (64) step (32)
  // CHECK: bufferization.alloc_tensor() copy(%{{.*}}) : tensor<64x32xf32>
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
  // CHECK: scf.for
  // CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Sizes the register tile does not divide, dynamic sizes and elementwise
// loops are left alone.
// CHECK-LABEL: func @untouched
func.func @untouched(%x: tensor<12x64xf32>, %w: tensor<64x64xf32>, %acc: tensor<12x64xf32>, %d: tensor<?x64xf32>, %dacc: tensor<?x64xf32>) -> (tensor<12x64xf32>, tensor<?x64xf32>) {
  // CHECK-NOT: scf.forall
  // CHECK-NOT: vector.contract
  // CHECK: linalg.generic
  // CHECK: linalg.generic
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<12x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<12x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%dacc : tensor<?x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %0, %1 : tensor<12x64xf32>, tensor<?x64xf32>
}
