// RUN: tessera-opt %s --split-input-file --tessera-cuda-fold-transposes --canonicalize | FileCheck %s

// A transposed weight read by a product: the product reads the weight as
// it is stored ([n][k]), through its map composed with the permutation,
// and the transpose goes away.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func @transposed_weight
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[BT]], #{{.*}}]{{.*}} ins(%arg0, %arg1 : tensor<16x40xbf16>, tensor<24x40xbf16>)
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @transposed_weight(%x: tensor<16x40xbf16>, %w: tensor<24x40xbf16>, %init: tensor<16x24xf32>) -> tensor<16x24xf32> {
  %e = tensor.empty() : tensor<40x24xbf16>
  %t = linalg.transpose ins(%w : tensor<24x40xbf16>) outs(%e : tensor<40x24xbf16>) permutation = [1, 0]
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %t : tensor<16x40xbf16>, tensor<40x24xbf16>) outs(%init : tensor<16x24xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %0 = arith.extf %p : bf16 to f32
    %1 = arith.extf %q : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

// -----

// A rank-4 permutation (heads moved before the sequence) read by an
// elementwise op: element [b, h, s, d] is element [b, s, h, d] of the
// input. A transpose that something else uses (here the function's
// result) stays for that use.
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func @heads
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0
// CHECK: linalg.generic {indexing_maps = [#[[P]], #{{.*}}]{{.*}} ins(%arg0 : tensor<2x8x4x16xf32>)
// CHECK: return %{{.*}}, %[[T]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @heads(%x: tensor<2x8x4x16xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xf32>) {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<2x8x4x16xf32>) outs(%e : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.empty() : tensor<2x4x8x16xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<2x4x8x16xf32>) outs(%o : tensor<2x4x8x16xbf16>) {
  ^bb0(%p: f32, %q: bf16):
    %0 = arith.truncf %p : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<2x4x8x16xbf16>
  return %y, %t : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xf32>
}
