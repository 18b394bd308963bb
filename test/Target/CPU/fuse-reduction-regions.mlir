// RUN: tessera-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-tessera-to-linalg{keep-reduction-regions=true},tessera-cpu-fuse-reduction-regions))" | FileCheck %s

// A softmax region with its prologue (a scale) is one loop over blocks of
// 16 rows: the row maximum, the exponentials, their sum and the division
// all run inside it on the block's rows; nothing is left outside.
// CHECK-LABEL: func @softmax_region
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 64) step (1, 16)
// CHECK: tensor.extract_slice %{{.*}} : tensor<2x64x32xf32> to tensor<1x16x32xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: arith.mulf
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK-NOT: tessera.fusion
// CHECK: return %[[R]]
func.func @softmax_region(%x: tensor<2x64x32xf32>, %s: tensor<f32>) -> tensor<2x64x32xf32> {
  %0 = tessera.fusion reduction {
    %1 = tessera.mul %x, %s : tensor<2x64x32xf32>, tensor<f32> -> tensor<2x64x32xf32>
    %2 = tessera.softmax %1 {axis = -1 : i64} : tensor<2x64x32xf32>
    tessera.yield %2 : tensor<2x64x32xf32>
  } : tensor<2x64x32xf32>
  return %0 : tensor<2x64x32xf32>
}

// -----

// A layer_norm no region holds becomes a region of its own; rows that 16
// does not divide go one at a time, and dynamic ones too.
// CHECK-LABEL: func @lone_layer_norm
// CHECK: scf.forall (%{{.*}}) in (6)
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: math.rsqrt
// CHECK: scf.forall.in_parallel
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
// CHECK: math.rsqrt
// CHECK-NOT: tessera.
func.func @lone_layer_norm(%x: tensor<6x32xf32>, %d: tensor<?x?x32xf32>, %g: tensor<32xf32>) -> (tensor<6x32xf32>, tensor<?x?x32xf32>) {
  %0 = tessera.layer_norm %x scale(%g : tensor<32xf32>) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : tensor<6x32xf32>
  %1 = tessera.layer_norm %d scale(%g : tensor<32xf32>) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : tensor<?x?x32xf32>
  return %0, %1 : tensor<6x32xf32>, tensor<?x?x32xf32>
}

// -----

// Must not fire: the region's input (a matmul outside it) is computed once,
// before the row loop, not recomputed per row.
// CHECK-LABEL: func @input_not_recomputed
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: scf.forall
// CHECK-NOT: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: scf.forall.in_parallel
func.func @input_not_recomputed(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>) -> tensor<16x32xf32> {
  %m = tessera.matmul %a, %b : tensor<16x8xf32>, tensor<8x32xf32> -> tensor<16x32xf32>
  %0 = tessera.fusion reduction {
    %1 = tessera.softmax %m {axis = -1 : i64} : tensor<16x32xf32>
    tessera.yield %1 : tensor<16x32xf32>
  } : tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

// Must not fire: a region whose result is itself a reduction (a mean) and
// regions of other kinds are inlined as they are, with no row loop.
// CHECK-LABEL: func @not_fused
// CHECK-NOT: scf.forall
// CHECK-NOT: tessera.fusion
// CHECK: return
func.func @not_fused(%x: tensor<4x32xf32>) -> (tensor<4xf32>, tensor<4x32xf32>) {
  %0 = tessera.fusion reduction {
    %1 = tessera.exp %x : tensor<4x32xf32>
    %2 = tessera.reduce_mean %1 [1] {keepdims = false} : tensor<4x32xf32> -> tensor<4xf32>
    tessera.yield %2 : tensor<4xf32>
  } : tensor<4xf32>
  %3 = tessera.fusion elementwise {
    %4 = tessera.exp %x : tensor<4x32xf32>
    %5 = tessera.neg %4 : tensor<4x32xf32>
    tessera.yield %5 : tensor<4x32xf32>
  } : tensor<4x32xf32>
  return %0, %3 : tensor<4xf32>, tensor<4x32xf32>
}
