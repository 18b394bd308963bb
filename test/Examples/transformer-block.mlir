// The example that scripts/quickstart.sh runs parses, verifies and folds.
// RUN: tessera-opt --canonicalize --cse %tessera_src_root/examples/transformer_block.mlir | FileCheck %s

// CHECK-LABEL: func.func @encoder_layer
// CHECK: tessera.matmul
// CHECK: tessera.split
// CHECK: tessera.attention
// The reshape pair around the output projection folds into one reshape.
// CHECK: %[[MERGED:.*]] = tessera.transpose %{{.*}} [0, 2, 1, 3] : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
// CHECK-NEXT: tessera.reshape %[[MERGED]] : tensor<1x16x4x16xf32> -> tensor<1x16x64xf32>
// CHECK-COUNT-3: tessera.matmul
// The multiply by one is gone.
// CHECK-NOT: tessera.mul
// CHECK-NOT: tessera.constant
// CHECK: return
