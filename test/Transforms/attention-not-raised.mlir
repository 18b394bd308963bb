// RUN: tessera-opt %s --tessera-raise-attention --tessera-form-fusion-regions="summary=true" 2>&1 | FileCheck %s

// When a softmax over q @ k^T is not raised to attention, the fusion
// report says which condition failed, at the product with v; the marker
// the raising left is gone from the IR.
// CHECK: not fused (attention): tessera.matmul node 'attn/pv': the scores are masked with a select whose other value is not a constant at most -1e4
// CHECK-NOT: attention_not_raised
func.func @main(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<4x8xf32> {
  %inf = tessera.constant dense<-1.0> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %m = tessera.where %keep, %s, %inf : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32> loc("attn/pv")
  return %o : tensor<4x8xf32>
}
