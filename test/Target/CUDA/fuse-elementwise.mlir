// RUN: tessera-opt %s --split-input-file --tessera-cuda-fuse-elementwise | FileCheck %s

// An elementwise producer with one use is computed inside its consumer:
// an elementwise consumer, or a row reduction (a softmax's sum).
// CHECK-LABEL: func @chains
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @chains(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// Not into a product (the cast would run K times per element, and the
// tensor-core kernel takes only narrow operands), and not a producer with
// two uses.
// CHECK-LABEL: func @not_these
// CHECK: %[[NARROW:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<16x32xf32>) outs(%{{.*}} : tensor<16x32xbf16>)
// CHECK: linalg.generic {{.*}}"reduction"{{.*}} ins(%[[NARROW]], %arg1 : tensor<16x32xbf16>, tensor<32x8xbf16>)
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<16x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[NEG]], %arg3 : tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[NEG]]
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_these(%x: tensor<16x32xf32>, %w: tensor<32x8xbf16>, %y: tensor<16x8xf32>, %init: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %e = tensor.empty() : tensor<16x32xbf16>
  %narrow = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x32xf32>) outs(%e : tensor<16x32xbf16>) {
  ^bb0(%p: f32, %o: bf16):
    %0 = arith.truncf %p : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<16x32xbf16>
  %prod = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%narrow, %w : tensor<16x32xbf16>, tensor<32x8xbf16>) outs(%init : tensor<16x8xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %0 = arith.extf %p : bf16 to f32
    %1 = arith.extf %q : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<16x8xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<16x8xf32>) outs(%e2 : tensor<16x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %0 = arith.negf %p : f32
    linalg.yield %0 : f32
  } -> tensor<16x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%neg, %init : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e2 : tensor<16x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %0 = arith.addf %p, %q : f32
    linalg.yield %0 : f32
  } -> tensor<16x8xf32>
  return %prod, %sum, %neg : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// Symbolic rows: the next op's tensor.empty reads the producer's size with
// tensor.dim, which is computed from the producer's own operand instead,
// so that the producer's one real use fuses (a product's scale then its
// ReLU, one epilogue).
// CHECK-LABEL: func @symbolic_rows
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x8xf32>) outs(%[[E]] : tensor<?x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @symbolic_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d) : tensor<?x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.mulf %a, %two : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  %d2 = tensor.dim %scaled, %c0 : tensor<?x8xf32>
  %e2 = tensor.empty(%d2) : tensor<?x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%scaled : tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %zero : f32
    linalg.yield %0 : f32
  } -> tensor<?x8xf32>
  return %relu : tensor<?x8xf32>
}
