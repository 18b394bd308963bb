// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s
// With report-slow-paths, each attention the tiled loop nest does not take
// says why (@not_flash's two, in order); the tiled ones say nothing, and
// without the option nothing does.
// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg=report-slow-paths 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark
// REPORT-NOT: remark
// REPORT: remark: attention stays decomposed (its products and a softmax, not the tiled attention kernel): a query shared along a leading dim
// REPORT-NOT: remark
// REPORT: remark: attention stays decomposed (its products and a softmax, not the tiled attention kernel): not f32 of one rank with static head dims
// REPORT-NOT: remark
// REPORT: remark: attention stays decomposed (its products and a softmax, not the tiled attention kernel): leading dims that broadcast other than as a static unit dim of the keys and values
// REPORT-NOT: remark

// Static attention becomes one tiled loop nest: (leading dims, query
// blocks of 64) in parallel, key blocks of 128 in sequence carrying the row
// maximum, row sum and accumulator; no 256 x 256 score tensor exists, only
// 64 x 128 blocks.
// CHECK-LABEL: func @flash
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<1x2x256x64xf32>) outs(%{{.*}} : tensor<1x2x64x256xf32>) permutation = [0, 1, 3, 2]
// CHECK: scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[QI:[a-z0-9]+]]) = (0, 0, 0) to (1, 2, 256) step (1, 1, 64)
// The scale multiplies the query block once, before the key loop; with no
// mask, nothing else runs between a block's product and its row maximum.
// CHECK: %[[QB:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64] [1, 1, 1, 1] : tensor<1x2x256x64xf32> to tensor<64x64xf32>
// CHECK: %[[QS:.*]] = linalg.generic {{.*}} ins(%[[QB]] : tensor<64x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.*}}, %cst_1 : f32
// CHECK: scf.for %[[KJ:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
// CHECK: tensor.extract_slice %[[KT]][%[[B]], %[[H]], 0, %[[KJ]]] [1, 1, 64, 128]
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[QS]], {{.*}}outs(%{{.*}} : tensor<64x128xf32>)
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<64x128xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64]
// CHECK-NOT: tensor<1x2x256x256xf32>
// CHECK-NOT: bf16
func.func @flash(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %0 = tessera.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32> -> tensor<1x2x256x64xf32>
  return %0 : tensor<1x2x256x64xf32>
}

// -----

// Causal: the key loop stops after the last block a query block sees, and
// positions past the diagonal (offset by Sk - Sq) are -inf. 160 keys are
// one block of 128 in the loop and one block of the last 32 after it,
// masked the same way.
// CHECK-LABEL: func @flash_causal
// CHECK: scf.forall (%{{.*}}, %[[QI:[a-z0-9]+]]) = (0, 0) to (2, 64) step (1, 64)
// CHECK: %[[LAST:.*]] = arith.addi %[[QI]], %c{{[0-9]+}}
// CHECK: %[[N:.*]] = arith.divui %[[LAST]], %c128
// CHECK: %[[END:.*]] = arith.muli %[[N]], %c128
// CHECK: %[[ATLEAST:.*]] = arith.maxsi %[[END]], %c128
// CHECK: %[[BOUND:.*]] = arith.minsi %[[ATLEAST]], %c128
// CHECK: scf.for %{{.*}} = %c0 to %[[BOUND]] step %c128
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, %c128] [1, 32, 32] [1, 1, 1] : tensor<2x32x160xf32> to tensor<32x32xf32>
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: scf.forall.in_parallel
func.func @flash_causal(%q: tensor<2x64x32xf32>, %k: tensor<2x160x32xf32>, %v: tensor<2x160x32xf32>) -> tensor<2x64x32xf32> {
  %0 = tessera.attention %q, %k, %v {causal} : tensor<2x64x32xf32>, tensor<2x160x32xf32>, tensor<2x160x32xf32> -> tensor<2x64x32xf32>
  return %0 : tensor<2x64x32xf32>
}

// -----

// A padding mask [B, 1, 1, Sk] is read a block at a time: its unit dims
// broadcast, its key dim follows the key block.
// CHECK-LABEL: func @flash_mask
// CHECK: scf.for %[[KJ:[a-z0-9]+]] =
// CHECK: tensor.extract_slice %arg3[%{{.*}}, 0, 0, %[[KJ]]] [1, 1, 1, 128] [1, 1, 1, 1] : tensor<2x1x1x256xf32> to tensor<1x128xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BCAST:.*]], #{{.*}}]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
func.func @flash_mask(%q: tensor<2x4x256x64xf32>, %k: tensor<2x4x256x64xf32>, %v: tensor<2x4x256x64xf32>, %m: tensor<2x1x1x256xf32>) -> tensor<2x4x256x64xf32> {
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<2x1x1x256xf32>) : tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32>, tensor<2x4x256x64xf32> -> tensor<2x4x256x64xf32>
  return %0 : tensor<2x4x256x64xf32>
}

// -----

// Sequences that no block divides (197 tokens, as in a ViT) are not padded:
// whole blocks (queries 0-191 in blocks of 64, keys 0-127 in one block of
// 128) and then one block of the rest, of static size (5 queries, 69 keys),
// nothing masked but the model's own mask, nothing copied but k^T.
// CHECK-LABEL: func @flash_tail
// CHECK-NOT: tensor.pad
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<12x197x64xf32>)
// CHECK: %[[F:.*]] = scf.forall (%[[H:[a-z0-9]+]], %[[QI:[a-z0-9]+]]) = (0, 0) to (12, 192) step (1, 64) shared_outs(%{{.*}} = %{{.*}})
// CHECK: tensor.extract_slice %arg0[%[[H]], %[[QI]], 0] [1, 64, 64]
// CHECK: scf.for %[[KJ:[a-z0-9]+]] = %{{.*}} to %c128 step %c128
// CHECK: tensor.extract_slice %arg3[0, %[[KJ]]] [1, 128]
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
// CHECK: tensor.extract_slice %[[KT]][%[[H]], 0, %c128] [1, 64, 69] [1, 1, 1] : tensor<12x64x197xf32> to tensor<64x69xf32>
// CHECK: tensor.extract_slice %arg2[%[[H]], %c128, 0] [1, 69, 64]
// CHECK: tensor.extract_slice %arg3[0, %c128] [1, 69]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[H]], %[[QI]], 0] [1, 64, 64]
// CHECK: %[[T:.*]] = scf.forall (%[[H2:[a-z0-9]+]], %[[QI2:[a-z0-9]+]]) = (0, 192) to (12, 197) step (1, 5) shared_outs(%{{.*}} = %[[F]])
// CHECK: tensor.extract_slice %arg0[%[[H2]], %[[QI2]], 0] [1, 5, 64]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128 step %c128{{.*}} -> (tensor<5xf32>, tensor<5xf32>, tensor<5x64xf32>)
// CHECK: tensor.extract_slice %arg3[0, %c128] [1, 69]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[H2]], %[[QI2]], 0] [1, 5, 64]
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[T]]
func.func @flash_tail(%q: tensor<12x197x64xf32>, %k: tensor<12x197x64xf32>, %v: tensor<12x197x64xf32>, %m: tensor<1x197xf32>) -> tensor<12x197x64xf32> {
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<1x197xf32>) {scale = 0.125 : f32} : tensor<12x197x64xf32>, tensor<12x197x64xf32>, tensor<12x197x64xf32> -> tensor<12x197x64xf32>
  return %0 : tensor<12x197x64xf32>
}

// -----

// Causal with more keys than queries (query i sees keys up to i + 103) and
// both tails: the loop stops at the last whole key block a query block
// sees, and the last 44 keys are taken only by query blocks whose last row
// sees key 256 (scf.if). A mask over queries and keys is read at the
// query block's rows, 5 of them in the query tail.
// CHECK-LABEL: func @flash_causal_tails
// CHECK: scf.forall (%[[QI:[a-z0-9]+]]) = (0) to (192) step (64)
// CHECK: %[[BOUND:.*]] = arith.minsi %{{.*}}, %c256
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[BOUND]] step
// CHECK: scf.yield
// CHECK: %[[LAST:.*]] = arith.addi %[[QI]], %c166
// CHECK: %[[SEES:.*]] = arith.cmpi sge, %[[LAST]], %c256
// CHECK: scf.if %[[SEES]] -> (tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>)
// CHECK: tensor.extract_slice %arg3[%[[QI]], %c256] [64, 44]
// CHECK: arith.cmpi sgt
// CHECK: } else {
// CHECK: scf.forall (%[[QJ:[a-z0-9]+]]) = (192) to (197) step (5)
// CHECK: tensor.extract_slice %arg3[%[[QJ]], %{{.*}}] [5, 128]
// CHECK: arith.addi %[[QJ]], %c107
// CHECK: scf.if
// CHECK: tensor.extract_slice %arg3[%[[QJ]], %c256] [5, 44]
func.func @flash_causal_tails(%q: tensor<197x32xf32>, %k: tensor<300x32xf32>, %v: tensor<300x32xf32>, %m: tensor<197x300xf32>) -> tensor<197x32xf32> {
  %0 = tessera.attention %q, %k, %v mask(%m : tensor<197x300xf32>) {causal} : tensor<197x32xf32>, tensor<300x32xf32>, tensor<300x32xf32> -> tensor<197x32xf32>
  return %0 : tensor<197x32xf32>
}

// -----

// Dynamic queries with static keys: the queries are padded at run time,
// the keys end in a block of the last 69 and none is masked.
// CHECK-LABEL: func @flash_mixed
// CHECK: tensor.pad %arg0
// CHECK-NOT: tensor.pad
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c128 step %c128
// CHECK-NOT: arith.cmpi
// CHECK: tensor.extract_slice %{{.*}}[0, %c128] [32, 69] [1, 1] : tensor<32x197xf32> to tensor<32x69xf32>
// CHECK-NOT: arith.cmpi
// CHECK: scf.forall.in_parallel
func.func @flash_mixed(%q: tensor<?x32xf32>, %k: tensor<197x32xf32>) -> tensor<?x32xf32> {
  %0 = tessera.attention %q, %k, %k : tensor<?x32xf32>, tensor<197x32xf32>, tensor<197x32xf32> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// Sequences shorter than a block are one block of their own size.
// CHECK-LABEL: func @flash_short
// CHECK-NOT: tensor.pad
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 20) step (1, 20)
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}}outs(%{{.*}} : tensor<20x20xf32>)
// CHECK-NOT: scf.forall (
func.func @flash_short(%q: tensor<2x20x16xf32>) -> tensor<2x20x16xf32> {
  %0 = tessera.attention %q, %q, %q : tensor<2x20x16xf32>, tensor<2x20x16xf32>, tensor<2x20x16xf32> -> tensor<2x20x16xf32>
  return %0 : tensor<2x20x16xf32>
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

// Keys and values shared by the heads (multi-query: one kv head) and by
// groups of heads (grouped-query: the query grouped as [2, 4] heads
// against a unit dim): each query block reads the one k^T and v block in
// place (offset 0 along the shared dim); the query and output follow every
// loop index.
// CHECK-LABEL: func @flash_shared_kv
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<2x1x256x64xf32>)
// CHECK: scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[QI:[a-z0-9]+]]) = (0, 0, 0) to (2, 4, 256) step (1, 1, 64)
// CHECK: tensor.extract_slice %arg0[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64]
// CHECK: scf.for %[[KJ:[a-z0-9]+]] =
// CHECK: tensor.extract_slice %[[KT]][%[[B]], 0, 0, %[[KJ]]] [1, 1, 64, 128]
// CHECK: tensor.extract_slice %arg2[%[[B]], 0, %[[KJ]], 0] [1, 1, 128, 64]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], %[[QI]], 0] [1, 1, 64, 64]
// CHECK-NOT: tensor<2x4x256x256xf32>
// CHECK: linalg.transpose ins(%arg4 : tensor<1x2x1x128x64xf32>)
// CHECK: scf.forall (%[[GB:[a-z0-9]+]], %[[GG:[a-z0-9]+]], %[[GH:[a-z0-9]+]], %{{.*}}) = (0, 0, 0, 0) to (1, 2, 4, 128) step (1, 1, 1, 64)
// CHECK: tensor.extract_slice %{{.*}}[%[[GB]], %[[GG]], 0, 0, %{{.*}}] [1, 1, 1, 64, 128]
// CHECK: tensor.extract_slice %arg5[%[[GB]], %[[GG]], 0, %{{.*}}, 0] [1, 1, 1, 128, 64]
// CHECK-NOT: tensor<1x2x4x128x128xf32>
func.func @flash_shared_kv(%q: tensor<2x4x256x64xf32>, %k: tensor<2x1x256x64xf32>, %v: tensor<2x1x256x64xf32>, %gq: tensor<1x2x4x128x64xf32>, %gk: tensor<1x2x1x128x64xf32>, %gv: tensor<1x2x1x128x64xf32>) -> (tensor<2x4x256x64xf32>, tensor<1x2x4x128x64xf32>) {
  %0 = tessera.attention %q, %k, %v : tensor<2x4x256x64xf32>, tensor<2x1x256x64xf32>, tensor<2x1x256x64xf32> -> tensor<2x4x256x64xf32>
  %1 = tessera.attention %gq, %gk, %gv : tensor<1x2x4x128x64xf32>, tensor<1x2x1x128x64xf32>, tensor<1x2x1x128x64xf32> -> tensor<1x2x4x128x64xf32>
  return %0, %1 : tensor<2x4x256x64xf32>, tensor<1x2x4x128x64xf32>
}

// -----

// Not tiled: a query shared along a leading dim (the keys' heads against
// one query head), a dynamic head dim and keys of a dynamic leading dim
// against the query's static one keep the decomposed form (scores
// materialized).
// CHECK-LABEL: func @not_flash
// CHECK-NOT: scf.forall (
// CHECK: tensor<4x128x128xf32>
// CHECK-NOT: scf.forall (
// CHECK: tensor<8x?xf32>
// CHECK-NOT: scf.forall (
// CHECK: tensor<?x64x128xf32>
// CHECK-NOT: scf.forall (
func.func @not_flash(%q2: tensor<1x128x64xf32>, %k2: tensor<4x128x64xf32>, %q3: tensor<8x?xf32>, %q4: tensor<4x128x64xf32>, %k4: tensor<?x128x64xf32>) -> (tensor<4x128x64xf32>, tensor<8x?xf32>, tensor<4x128x64xf32>) {
  %1 = tessera.attention %q2, %k2, %k2 : tensor<1x128x64xf32>, tensor<4x128x64xf32>, tensor<4x128x64xf32> -> tensor<4x128x64xf32>
  %2 = tessera.attention %q3, %q3, %q3 {scale = 0.125 : f32} : tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x?xf32>
  %3 = tessera.attention %q4, %k4, %k4 : tensor<4x128x64xf32>, tensor<?x128x64xf32>, tensor<?x128x64xf32> -> tensor<4x128x64xf32>
  return %1, %2, %3 : tensor<4x128x64xf32>, tensor<8x?xf32>, tensor<4x128x64xf32>
}

// -----

// Attention a bf16 policy left f32 with narrow products: k^T and v are
// rounded to bf16 once, each query block after its scale, each block's
// probabilities before their product with v (their sum stays f32); both
// products extend bf16 operands into f32 accumulators. The unmarked
// attention above keeps f32 operands throughout.
// CHECK-LABEL: func @flash_narrow_products
// CHECK: linalg.transpose ins(%arg1 : tensor<2x256x64xf32>)
// CHECK: %[[KT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64x256xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<2x256x64xf32>) outs(%{{.*}} : tensor<2x256x64xbf16>)
// CHECK: scf.forall
// CHECK: %[[QS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x64xbf16>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.truncf
// CHECK: tensor.extract_slice %[[KT]]{{.*}} to tensor<64x128xbf16>
// CHECK: tensor.extract_slice %[[V]]{{.*}} to tensor<128x64xbf16>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[QS]], %{{.*}} : tensor<64x64xbf16>, tensor<64x128xbf16>) outs(%{{.*}} : tensor<64x128xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.extf
// CHECK: math.exp
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x128xbf16>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[P]], %{{.*}} : tensor<64x128xbf16>, tensor<128x64xbf16>) outs(%{{.*}} : tensor<64x64xf32>)
// CHECK: return
func.func @flash_narrow_products(%q: tensor<2x256x64xf32>, %k: tensor<2x256x64xf32>, %v: tensor<2x256x64xf32>) -> tensor<2x256x64xf32> {
  %0 = tessera.attention %q, %k, %v {scale = 0.125 : f32, tessera.narrow_products = bf16} : tensor<2x256x64xf32>, tensor<2x256x64xf32>, tensor<2x256x64xf32> -> tensor<2x256x64xf32>
  return %0 : tensor<2x256x64xf32>
}
