// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg="attention-query-block=128 attention-key-block=256" | FileCheck %s
// RUN: not tessera-opt %s --split-input-file --convert-tessera-to-linalg="attention-query-block=1" 2>&1 | FileCheck %s --check-prefix=BAD

// The tiled attention's blocks are options (the CPU target takes 128 x 256
// for AVX2's register tile): blocks of 128 queries and 256 keys.
// CHECK-LABEL: func @blocks
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 512) step (1, 128)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512{{.*}} step %c256
// CHECK: tensor.extract_slice %{{.*}} [1, 64, 256]
// CHECK: linalg.generic {{.*}}outs(%{{.*}} : tensor<128x256xf32>)
// BAD: error: attention blocks of 1 queries and 128 keys: each must be at least 2
func.func @blocks(%q: tensor<2x512x64xf32>, %k: tensor<2x512x64xf32>, %v: tensor<2x512x64xf32>) -> tensor<2x512x64xf32> {
  %0 = tessera.attention %q, %k, %v : tensor<2x512x64xf32>, tensor<2x512x64xf32>, tensor<2x512x64xf32> -> tensor<2x512x64xf32>
  return %0 : tensor<2x512x64xf32>
}

// -----

// Half a block where only half divides the sequence (192 queries, 384
// keys: blocks of 64 and 128, no smaller block of the rest); a scale of 1
// multiplies nothing.
// CHECK-LABEL: func @half_blocks
// CHECK: scf.forall (%{{.*}}) = (0) to (192) step (64)
// CHECK-NOT: arith.mulf
// CHECK: scf.for %{{.*}} = %{{.*}} to %c384{{.*}} step %c128
// CHECK-NOT: linalg.generic {{.*}}outs(%{{.*}} : tensor<64x64xf32>)
// CHECK: linalg.generic {{.*}}outs(%{{.*}} : tensor<64x128xf32>)
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: scf.forall.in_parallel
func.func @half_blocks(%q: tensor<192x32xf32>, %k: tensor<384x32xf32>, %v: tensor<384x32xf32>) -> tensor<192x32xf32> {
  %0 = tessera.attention %q, %k, %v {scale = 1.0 : f32} : tensor<192x32xf32>, tensor<384x32xf32>, tensor<384x32xf32> -> tensor<192x32xf32>
  return %0 : tensor<192x32xf32>
}
