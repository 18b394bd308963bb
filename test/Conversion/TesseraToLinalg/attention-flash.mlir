// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s

// Static attention becomes one tiled loop nest: (leading dims, query
// blocks of 64) in parallel, key blocks of 128 in sequence carrying the row
// maximum, row sum and accumulator; no 256 x 256 score tensor exists, only
// 64 x 128 blocks.
// CHECK-LABEL: func @flash
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<1x2x256x64xf32>) outs(%{{.*}} : tensor<1x2x64x256xf32>) permutation = [0, 1, 3, 2]
// CHECK: scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[QI:[a-z0-9]+]]) = (0, 0, 0) to (1, 2, 256) step (1, 1, 64)
// CHECK: tensor.extract_slice %arg0[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x256x64xf32> to tensor<64x64xf32>
// CHECK: scf.for %[[KJ:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK: tensor.extract_slice %[[KT]][%[[B]], %[[H]], 0, %[[KJ]]] [1, 1, 64, 128]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}}outs(%{{.*}} : tensor<64x128xf32>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64]
// CHECK-NOT: tensor<1x2x256x256xf32>
func.func @flash(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %0 = tessera.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32> -> tensor<1x2x256x64xf32>
  return %0 : tensor<1x2x256x64xf32>
}

// -----

// Causal: the key loop stops after the last block a query block sees, and
// positions past the diagonal (offset by Sk - Sq) are -inf.
// CHECK-LABEL: func @flash_causal
// CHECK: scf.forall (%{{.*}}, %[[QI:[a-z0-9]+]]) = (0, 0) to (2, 64) step (1, 64)
// CHECK: %[[LAST:.*]] = arith.addi %[[QI]], %c{{[0-9]+}}
// CHECK: %[[N:.*]] = arith.divui %[[LAST]], %c32
// CHECK: %[[END:.*]] = arith.muli %[[N]], %c32
// CHECK: %[[ATLEAST:.*]] = arith.maxsi %[[END]], %c32
// CHECK: %[[BOUND:.*]] = arith.minsi %[[ATLEAST]], %c96
// CHECK: scf.for %{{.*}} = %c0 to %[[BOUND]] step %c32
// CHECK: arith.cmpi sgt
// CHECK: arith.select
func.func @flash_causal(%q: tensor<2x64x32xf32>, %k: tensor<2x96x32xf32>, %v: tensor<2x96x32xf32>) -> tensor<2x64x32xf32> {
  %0 = tessera.attention %q, %k, %v {causal} : tensor<2x64x32xf32>, tensor<2x96x32xf32>, tensor<2x96x32xf32> -> tensor<2x64x32xf32>
  return %0 : tensor<2x64x32xf32>
}

// -----

// A padding mask [B, 1, 1, Sk] is read a block at a time: its unit dims
// broadcast, its key dim follows the key block.
// CHECK-LABEL: func @flash_mask
// CHECK: scf.for %[[KJ:[a-z0-9]+]] =
// CHECK: tensor.extract_slice %arg3[%{{.*}}, 0, 0, %[[KJ]]] [1, 1, 1, 128] [1, 1, 1, 1] : tensor<2x1x1x256xf32> to tensor<1x128xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BCAST:.*]], #{{.*}}]
func.func @flash_mask(%q: tensor<2x4x256x64xf32>, %k: tensor<2x4x256x64xf32>, %v: tensor<2x4x256x64xf32>, %m: tensor<2x1x1x256xf32>) -> tensor<2x4x256x64xf32> {
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<2x1x1x256xf32>) : tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32> -> tensor<2x4x256x64xf32>
  return %0 : tensor<2x4x256x64xf32>
}

// -----

// Sequences that no block divides (197 tokens, as in a ViT) are padded
// with zeros up to whole blocks (queries to 224 in blocks of 32, keys to
// 256 in one block of 128 and a second), the padded keys (columns >= 197)
// take -inf before the softmax, and the output drops the padded rows. A
// mask over keys is padded with them.
// CHECK-LABEL: func @flash_padded
// CHECK: %[[Q:.*]] = tensor.pad %arg0 low[0, 0, 0] high[0, 27, 0]
// CHECK: } : tensor<12x197x64xf32> to tensor<12x224x64xf32>
// CHECK: %[[K:.*]] = tensor.pad %arg1 low[0, 0, 0] high[0, 59, 0]
// CHECK: %[[V:.*]] = tensor.pad %arg2 low[0, 0, 0] high[0, 59, 0]
// CHECK: %[[M:.*]] = tensor.pad %arg3 low[0, 0] high[0, 59]
// CHECK: linalg.transpose ins(%[[K]] : tensor<12x256x64xf32>)
// CHECK: %[[F:.*]] = scf.forall (%{{.*}}, %[[QI:[a-z0-9]+]]) = (0, 0) to (12, 224) step (1, 32)
// CHECK: tensor.extract_slice %[[Q]]
// CHECK: scf.for %[[KJ:[a-z0-9]+]] = %{{.*}} to %c256 step %c128
// CHECK: tensor.extract_slice %[[M]]
// CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %[[KJ]]
// CHECK: %[[PAD:.*]] = arith.cmpi sge, %[[COL]], %c197
// CHECK: arith.select %[[PAD]], %cst{{.*}}, %{{.*}}
// CHECK: tensor.extract_slice %[[F]][0, 0, 0] [12, 197, 64] [1, 1, 1] : tensor<12x224x64xf32> to tensor<12x197x64xf32>
func.func @flash_padded(%q: tensor<12x197x64xf32>, %k: tensor<12x197x64xf32>, %v: tensor<12x197x64xf32>, %m: tensor<1x197xf32>) -> tensor<12x197x64xf32> {
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<1x197xf32>) {scale = 0.125 : f32} : tensor<12x197x64xf32>, tensor<12x197x64xf32>, tensor<12x197x64xf32> -> tensor<12x197x64xf32>
  return %0 : tensor<12x197x64xf32>
}

// -----

// Dynamic sequences (a symbolic sequence length) are tiled too: blocks of
// 32 queries and 64 keys, each sequence padded at run time up to whole
// blocks, keys at or past the actual length masked, the padded rows
// dropped.
// CHECK-LABEL: func @flash_dynamic
// CHECK: %[[SQ:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[SK:.*]] = tensor.dim %arg1, %c0
// CHECK: arith.divui %{{.*}}, %c32
// CHECK: arith.divui %{{.*}}, %c64
// CHECK: tensor.pad %arg0 low[0, 0] high[%{{.*}}, 0]
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (32)
// CHECK: scf.for
// CHECK: arith.cmpi sge, %{{.*}}, %[[SK]]
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
func.func @flash_dynamic(%q: tensor<?x64xf32>, %k: tensor<?x64xf32>, %v: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = tessera.attention %q, %k, %v {scale = 0.125 : f32} : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Not tiled: a key/value broadcast over a leading dim and a dynamic head
// dim keep the decomposed form (scores materialized).
// CHECK-LABEL: func @not_flash
// CHECK-NOT: scf.forall
// CHECK: tensor<4x128x128xf32>
// CHECK-NOT: scf.forall
// CHECK: tensor<8x?xf32>
// CHECK-NOT: scf.forall
func.func @not_flash(%q2: tensor<4x128x64xf32>, %k2: tensor<1x128x64xf32>, %q3: tensor<8x?xf32>) -> (tensor<4x128x64xf32>, tensor<8x?xf32>) {
  %1 = tessera.attention %q2, %k2, %k2 : tensor<4x128x64xf32>, tensor<1x128x64xf32>, tensor<1x128x64xf32> -> tensor<4x128x64xf32>
  %2 = tessera.attention %q3, %q3, %q3 {scale = 0.125 : f32} : tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x?xf32>
  return %1, %2 : tensor<4x128x64xf32>, tensor<8x?xf32>
}
