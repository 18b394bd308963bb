// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf32>, tensor<2x2xbf16>, tensor<3xi64>, tensor<i1>) {
  // CHECK: tessera.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = tessera.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: tessera.constant dense<5.000000e-01> : tensor<2x2xbf16>
  %1 = tessera.constant dense<0.5> : tensor<2x2xbf16>
  // CHECK: tessera.constant dense<[1, -1, 64]> : tensor<3xi64>
  %2 = tessera.constant dense<[1, -1, 64]> : tensor<3xi64>
  // CHECK: tessera.constant dense<true> : tensor<i1>
  %3 = tessera.constant dense<true> : tensor<i1>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2x2xbf16>, tensor<3xi64>, tensor<i1>
}

// -----

// CHECK-LABEL: func @resource_constant
func.func @resource_constant() -> tensor<2xf32> {
  // CHECK: tessera.constant dense_resource<weight> : tensor<2xf32>
  %0 = tessera.constant dense_resource<weight> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// CHECK-LABEL: func @fusion_epilogue
// CHECK-SAME: (%[[X:.*]]: tensor<128x768xf32>, %[[W:.*]]: tensor<768x3072xf32>)
func.func @fusion_epilogue(%x: tensor<128x768xf32>, %w: tensor<768x3072xf32>) -> tensor<128x3072xf32> {
  // CHECK: %[[F:.*]] = tessera.fusion epilogue {
  // CHECK-NEXT: %[[MM:.*]] = tessera.matmul %[[X]], %[[W]]
  // CHECK-NEXT: %[[G:.*]] = tessera.gelu %[[MM]]
  // CHECK-NEXT: tessera.yield %[[G]] : tensor<128x3072xf32>
  // CHECK-NEXT: } : tensor<128x3072xf32>
  %0 = tessera.fusion epilogue {
    %1 = tessera.matmul %x, %w : tensor<128x768xf32>, tensor<768x3072xf32> -> tensor<128x3072xf32>
    %2 = tessera.gelu %1 : tensor<128x3072xf32>
    tessera.yield %2 : tensor<128x3072xf32>
  } : tensor<128x3072xf32>
  // CHECK: return %[[F]]
  return %0 : tensor<128x3072xf32>
}

// -----

// CHECK-LABEL: func @fusion_kinds
func.func @fusion_kinds(%x: tensor<4x8xf32>, %q: tensor<1x2x8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<1x2x8x4xf32>) {
  // CHECK: %{{.*}}:2 = tessera.fusion elementwise attributes {note = "two results"} {
  %a:2 = tessera.fusion elementwise attributes {note = "two results"} {
    %e = tessera.exp %x : tensor<4x8xf32>
    %n = tessera.neg %e : tensor<4x8xf32>
    tessera.yield %e, %n : tensor<4x8xf32>, tensor<4x8xf32>
  } : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: tessera.fusion reduction {
  %r = tessera.fusion reduction {
    %s = tessera.reduce_sum %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
    tessera.yield %s : tensor<4x1xf32>
  } : tensor<4x1xf32>
  // CHECK: tessera.fusion attention {
  %t = tessera.fusion attention {
    %o = tessera.attention %q, %q, %q {causal} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
    tessera.yield %o : tensor<1x2x8x4xf32>
  } : tensor<1x2x8x4xf32>
  return %a#0, %a#1, %r, %t : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<1x2x8x4xf32>
}
