// RUN: tessera-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tessera-cpu-fuse-full-reductions))" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>

// fp8 current scaling's amax of a matmul epilogue (scale, bias, ReLU) that
// reads the panel loop's result: each panel reduces its own tile (the
// epilogue applied to it, the bias sliced at the panel's columns) into its
// element of a new shared output of 8 partials; the reduction reads those.
// CHECK-LABEL: func @epilogue_amax
// CHECK: %[[P:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[L:.*]]:2 = scf.forall (%[[J:.*]]) = (0) to (384) step (48) shared_outs(%{{.*}} = %{{.*}}, %[[OUT:.*]] = %[[P]]) -> (tensor<64x384xf32>, tensor<8xf32>)
// CHECK: %[[T:.*]] = linalg.copy
// CHECK: %[[B:.*]] = tensor.extract_slice %{{.*}}[%[[J]]] [48] [1] : tensor<384xf32> to tensor<48xf32>
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[T]], %{{.*}}, %[[B]] : tensor<64x48xf32>, tensor<f32>, tensor<48xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[TILE:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWS]] : tensor<64xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[I:.*]] = affine.apply #{{.*}}()[%[[J]]]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %[[J]]] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x384xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILE]] into %[[OUT]][%[[I]]] [1] [1] : tensor<f32> into tensor<8xf32>
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[L]]#1 : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK-NOT: math.absf
// CHECK: return %[[L]]#0, %[[AMAX]]
func.func @epilogue_amax(%x: tensor<64x384xf32>, %s: tensor<f32>, %bias: tensor<384xf32>) -> (tensor<64x384xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x384xf32>
  %r = scf.forall (%j) = (0) to (384) step (48) shared_outs(%o = %empty) -> (tensor<64x384xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 48] [1, 1] : tensor<64x384xf32> to tensor<64x48xf32>
    %dst = tensor.extract_slice %o[0, %j] [64, 48] [1, 1] : tensor<64x384xf32> to tensor<64x48xf32>
    %t = linalg.copy ins(%in : tensor<64x48xf32>) outs(%dst : tensor<64x48xf32>) -> tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[0, %j] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x384xf32>
    }
  }
  %e = linalg.generic {indexing_maps = [#id, #none, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %s, %bias : tensor<64x384xf32>, tensor<f32>, tensor<384xf32>) outs(%empty : tensor<64x384xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %0, %c : f32
    %2 = arith.maximumf %1, %zero : f32
    %3 = math.absf %2 : f32
    linalg.yield %3 : f32
  } -> tensor<64x384xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%e : tensor<64x384xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %r, %amax : tensor<64x384xf32>, tensor<f32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#none3 = affine_map<(d0, d1, d2) -> ()>

// A row loop of dynamic rows (a layer norm's), reshaped to three dims and
// read through an absolute value: one partial per row block, as many as
// the loop's iterations.
// CHECK-LABEL: func @row_loop_through_reshape
// CHECK: %[[N:.*]] = affine.max #{{.*}}()[%{{.*}}]
// CHECK: %[[P:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (16) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %[[P]]) -> (tensor<?x32xf32>, tensor<?xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice
// CHECK-NEXT: tensor.parallel_insert_slice {{.*}} : tensor<f32> into tensor<?xf32>
// CHECK: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<?xf32>)
// CHECK-NOT: math.absf
// CHECK: return
func.func @row_loop_through_reshape(%x: tensor<?x32xf32>, %b: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %empty = tensor.empty(%n) : tensor<?x32xf32>
  %r = scf.forall (%i) = (0) to (%n) step (16) shared_outs(%o = %empty) -> (tensor<?x32xf32>) {
    %rows = affine.min affine_map<(d0)[s0] -> (16, s0 - d0)>(%i)[%n]
    %in = tensor.extract_slice %x[%i, 0] [%rows, 32] [1, 1] : tensor<?x32xf32> to tensor<?x32xf32>
    %dst = tensor.extract_slice %o[%i, 0] [%rows, 32] [1, 1] : tensor<?x32xf32> to tensor<?x32xf32>
    %t = linalg.copy ins(%in : tensor<?x32xf32>) outs(%dst : tensor<?x32xf32>) -> tensor<?x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [%rows, 32] [1, 1] : tensor<?x32xf32> into tensor<?x32xf32>
    }
  }
  %s = arith.divui %n, %b : index
  %e3 = tensor.expand_shape %r [[0, 1], [2]] output_shape [%b, %s, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %ee = tensor.empty(%b, %s) : tensor<?x?x32xf32>
  %abs = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e3 : tensor<?x?x32xf32>) outs(%ee : tensor<?x?x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = math.absf %a : f32
    linalg.yield %0 : f32
  } -> tensor<?x?x32xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id3, #none3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%abs : tensor<?x?x32xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>

// A function's argument has no loop that writes it: rows first (a
// reduction over the innermost dim, which the loop vectorizer runs), then
// the rows' maximum.
// CHECK-LABEL: func @argument_amax
// CHECK-NOT: scf.forall
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x768xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK: math.absf
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWS]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: math.absf
// CHECK: return %[[R]]
func.func @argument_amax(%x: tensor<?x768xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x768xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = math.absf %a : f32
    %1 = arith.maximumf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone: a sum (the order of the additions would change its
// rounding), a reduction to a row per row (not to one value), one whose
// body reads the position, a 1-D maximum (already a row), and one on
// buffers.
// CHECK-LABEL: func @not_fused
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg2 : memref<64x32xf32>)
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<64x32xf32>)
// CHECK: arith.addf
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x32xf32>)
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<64x32xf32>)
// CHECK: linalg.index
// CHECK: iterator_types = ["reduction"]} ins(%arg1 : tensor<32xf32>)
// CHECK-NOT: linalg.generic
func.func @not_fused(%x: tensor<64x32xf32>, %v: tensor<32xf32>, %b: memref<64x32xf32>, %m: memref<f32>) -> (tensor<f32>, tensor<64xf32>, tensor<f32>, tensor<f32>) {
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%b : memref<64x32xf32>) outs(%m : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  }
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  %rinit = tensor.empty() : tensor<64xf32>
  %rfill = linalg.fill ins(%zero : f32) outs(%rinit : tensor<64xf32>) -> tensor<64xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%rfill : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %pos = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %0 = arith.mulf %a, %f : f32
    %1 = arith.maximumf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<f32>
  %one = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v : tensor<32xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %sum, %rows, %pos, %one : tensor<f32>, tensor<64xf32>, tensor<f32>, tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>

// Not fused into the loop: a bias read through a transpose (its columns
// are not the tile's), and a loop that inserts two tiles into its result;
// both go rows first instead.
// CHECK-LABEL: func @not_into_loop
// CHECK: scf.forall
// CHECK-NOT: tensor<f32> into
// CHECK: linalg.transpose
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x64xf32>)
// CHECK: scf.forall
// CHECK-NOT: tensor<f32> into
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x64xf32>)
func.func @not_into_loop(%x: tensor<64x64xf32>, %bias: tensor<64xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %r = scf.forall (%j) = (0) to (64) step (16) shared_outs(%o = %empty) -> (tensor<64x64xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 16] [1, 1] : tensor<64x64xf32> to tensor<64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<64x64xf32>
    }
  }
  %tr = linalg.transpose ins(%r : tensor<64x64xf32>) outs(%empty : tensor<64x64xf32>) permutation = [1, 0]
  %e = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%tr, %bias : tensor<64x64xf32>, tensor<64xf32>) outs(%empty : tensor<64x64xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %0 = arith.addf %a, %c : f32
    linalg.yield %0 : f32
  } -> tensor<64x64xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %m1 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%e : tensor<64x64xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  %two = scf.forall (%j) = (0) to (64) step (32) shared_outs(%o = %empty) -> (tensor<64x64xf32>) {
    %a = tensor.extract_slice %x[0, %j] [32, 32] [1, 1] : tensor<64x64xf32> to tensor<32x32xf32>
    %b = tensor.extract_slice %x[32, %j] [32, 32] [1, 1] : tensor<64x64xf32> to tensor<32x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %o[0, %j] [32, 32] [1, 1] : tensor<32x32xf32> into tensor<64x64xf32>
      tensor.parallel_insert_slice %b into %o[32, %j] [32, 32] [1, 1] : tensor<32x32xf32> into tensor<64x64xf32>
    }
  }
  %m2 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%two : tensor<64x64xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %m1, %m2 : tensor<f32>, tensor<f32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#none4 = affine_map<(d0, d1, d2, d3) -> ()>

// The tiled attention's output: query blocks of 32 rows (32 x 64 tiles
// inserted into [batch, heads, rows, 64], the unit dims dropped) written
// into a buffer padded to whole blocks, then sliced to %b images of %s
// rows. Each block reduces only its rows inside the slice (none of the
// padding): min(32, max(%s - row, 0)) of them, none when its image lies
// beyond %b.
// CHECK-LABEL: func @padded_blocks
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %[[Q:.*]]) = (0, 0, 0) to (%{{.*}}, 12, %{{.*}}) step (1, 1, 32) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<?x12x?x64xf32>, tensor<?x12x?xf32>)
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[B]], %arg1
// CHECK: %[[LEFT:.*]] = arith.subi %arg2, %[[Q]]
// CHECK: %[[POSITIVE:.*]] = arith.maxsi %[[LEFT]], %c0
// CHECK: %[[MOST:.*]] = arith.minsi %{{.*}}, %[[POSITIVE]]
// CHECK: %[[ROWS:.*]] = arith.select %[[IN]], %[[MOST]], %c0
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%[[ROWS]], 64] [1, 1] : tensor<32x64xf32> to tensor<?x64xf32>
// CHECK: math.absf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice {{.*}} : tensor<f32> into tensor<?x12x?xf32>
func.func @padded_blocks(%x: tensor<?x12x?x64xf32>, %b: index, %s: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x12x?x64xf32>
  %m = tensor.dim %x, %c2 : tensor<?x12x?x64xf32>
  %empty = tensor.empty(%n, %m) : tensor<?x12x?x64xf32>
  %r = scf.forall (%i, %h, %q) = (0, 0, 0) to (%n, 12, %m) step (1, 1, 32) shared_outs(%o = %empty) -> (tensor<?x12x?x64xf32>) {
    %in = tensor.extract_slice %x[%i, %h, %q, 0] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<?x12x?x64xf32> to tensor<32x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[%i, %h, %q, 0] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<32x64xf32> into tensor<?x12x?x64xf32>
    }
  }
  %valid = tensor.extract_slice %r[0, 0, 0, 0] [%b, 12, %s, 64] [1, 1, 1, 1] : tensor<?x12x?x64xf32> to tensor<?x12x?x64xf32>
  %ee = tensor.empty(%b, %s) : tensor<?x12x?x64xf32>
  %abs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%valid : tensor<?x12x?x64xf32>) outs(%ee : tensor<?x12x?x64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = math.absf %a : f32
    linalg.yield %0 : f32
  } -> tensor<?x12x?x64xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id4, #none4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%abs : tensor<?x12x?x64xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>

// A product whose 72 columns are a 48-wide panel loop and a 24-wide one,
// put together by tensor.insert_slice (the second through a slice of the
// first's tensor, as the tiling writes it): both loops reduce their tiles,
// the second reading the bias at its columns 48 + j, and the reduction
// combines the two loops' partials.
// CHECK: #[[SHIFT:.*]] = affine_map<()[s0] -> (s0 + 48)>
// CHECK-LABEL: func @split_columns
// CHECK: %[[A:.*]]:2 = scf.forall (%[[J:.*]]) = (0) to (48) step (48) {{.*}} -> (tensor<64x48xf32>, tensor<1xf32>)
// CHECK: tensor.extract_slice %{{.*}}[%[[J]]] [48] [1] : tensor<72xf32> to tensor<48xf32>
// CHECK: %[[B:.*]]:2 = scf.forall (%[[K:.*]]) = (0) to (24) step (24) {{.*}} -> (tensor<64x24xf32>, tensor<1xf32>)
// CHECK: %[[C:.*]] = affine.apply #[[SHIFT]]()[%[[K]]]
// CHECK: tensor.extract_slice %{{.*}}[%[[C]]] [24] [1] : tensor<72xf32> to tensor<24xf32>
// CHECK: %[[M1:.*]] = linalg.generic {{.*}} ins(%[[A]]#1 : tensor<1xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[M2:.*]] = linalg.generic {{.*}} ins(%[[B]]#1 : tensor<1xf32>) outs(%[[M1]] : tensor<f32>)
// CHECK-NOT: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x72xf32>
// CHECK: return %{{.*}}, %[[M2]]
func.func @split_columns(%x: tensor<64x72xf32>, %bias: tensor<72xf32>) -> (tensor<64x72xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x72xf32>
  %d1 = tensor.extract_slice %empty[0, 0] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %p1 = scf.forall (%j) = (0) to (48) step (48) shared_outs(%o = %d1) -> (tensor<64x48xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x48xf32>
    }
  }
  %t1 = tensor.insert_slice %p1 into %empty[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %d2 = tensor.extract_slice %t1[0, 48] [64, 24] [1, 1] : tensor<64x72xf32> to tensor<64x24xf32>
  %p2 = scf.forall (%k) = (0) to (24) step (24) shared_outs(%o = %d2) -> (tensor<64x24xf32>) {
    %c = affine.apply affine_map<(d0) -> (d0 + 48)>(%k)
    %in = tensor.extract_slice %x[0, %c] [64, 24] [1, 1] : tensor<64x72xf32> to tensor<64x24xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %k] [64, 24] [1, 1] : tensor<64x24xf32> into tensor<64x24xf32>
    }
  }
  %t2 = tensor.insert_slice %p2 into %t1[0, 48] [64, 24] [1, 1] : tensor<64x24xf32> into tensor<64x72xf32>
  %e = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%t2, %bias : tensor<64x72xf32>, tensor<72xf32>) outs(%empty : tensor<64x72xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %0 = arith.addf %a, %c : f32
    %1 = math.absf %0 : f32
    linalg.yield %1 : f32
  } -> tensor<64x72xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%e : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %t2, %amax : tensor<64x72xf32>, tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>

// Not fused into the loops: a tile inserted into a tensor of defined values
// (a fill, whose zeros the amax must see where no tile lands), a tile
// inserted over another's columns (the first one's values are gone), a
// slice that cuts a loop's result in two, two results of one loop (it is
// rewritten once), and a loop that starts its result from a fill (the
// values its tiles do not cover count). Each goes rows first.
// CHECK-LABEL: func @split_not_fused
// CHECK-NOT: tensor<1xf32>
// CHECK-COUNT-5: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x72xf32>)
// CHECK-NOT: tensor<1xf32>
func.func @split_not_fused(%x: tensor<64x72xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x72xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x72xf32>) -> tensor<64x72xf32>
  %d1 = tensor.extract_slice %empty[0, 0] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %p1 = scf.forall (%j) = (0) to (48) step (48) shared_outs(%o = %d1) -> (tensor<64x48xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x48xf32>
    }
  }
  %p2 = scf.forall (%k) = (0) to (48) step (48) shared_outs(%o = %d1) -> (tensor<64x48xf32>) {
    %in = tensor.extract_slice %x[0, %k] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %k] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x48xf32>
    }
  }
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  // Into zeros.
  %a = tensor.insert_slice %p1 into %zeros[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%a : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.maximumf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  // Over the first tile's columns 24 to 48.
  %b1 = tensor.insert_slice %p1 into %empty[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %b2 = tensor.insert_slice %p2 into %b1[0, 24] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%b2 : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.maximumf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  // A slice of columns 24 to 72 of the first tile's tensor, put back.
  %c1 = tensor.insert_slice %p1 into %empty[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %cut = tensor.extract_slice %c1[0, 24] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %c2 = tensor.insert_slice %cut into %empty[0, 24] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %m3 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%c2 : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.maximumf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  // Both results of one loop.
  %h = tensor.extract_slice %empty[0, 0] [64, 36] [1, 1] : tensor<64x72xf32> to tensor<64x36xf32>
  %two:2 = scf.forall (%j) = (0) to (36) step (36) shared_outs(%o = %h, %q = %h) -> (tensor<64x36xf32>, tensor<64x36xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 36] [1, 1] : tensor<64x72xf32> to tensor<64x36xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 36] [1, 1] : tensor<64x36xf32> into tensor<64x36xf32>
      tensor.parallel_insert_slice %in into %q[0, %j] [64, 36] [1, 1] : tensor<64x36xf32> into tensor<64x36xf32>
    }
  }
  %d1b = tensor.insert_slice %two#0 into %empty[0, 0] [64, 36] [1, 1] : tensor<64x36xf32> into tensor<64x72xf32>
  %d2b = tensor.insert_slice %two#1 into %d1b[0, 36] [64, 36] [1, 1] : tensor<64x36xf32> into tensor<64x72xf32>
  %m4 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%d2b : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.maximumf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  // A loop starting from zeros.
  %z = tensor.extract_slice %zeros[0, 0] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %p3 = scf.forall (%j) = (0) to (48) step (48) shared_outs(%o = %z) -> (tensor<64x48xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x48xf32>
    }
  }
  %e3 = tensor.insert_slice %p3 into %empty[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %m5 = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%e3 : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.maximumf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %m1, %m2, %m3, %m4, %m5 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
#col = affine_map<(d0, d1) -> (d1)>

// A loop's result inserted at column 24, sliced back from column 24 and
// inserted at column 0: its tiles read the bias at their own columns j
// (the slice's offset taken off the insert's), the second loop's at
// 48 + k.
// CHECK: #[[AT48:.*]] = affine_map<()[s0] -> (s0 + 48)>
// CHECK-LABEL: func @split_through_slice
// CHECK: scf.forall (%[[J:.*]]) = (0) to (48) step (48) {{.*}} -> (tensor<64x48xf32>, tensor<1xf32>)
// CHECK: tensor.extract_slice %arg1[%[[J]]] [48] [1] : tensor<72xf32> to tensor<48xf32>
// CHECK: scf.forall (%[[K:.*]]) = (0) to (24) step (24) {{.*}} -> (tensor<64x24xf32>, tensor<1xf32>)
// CHECK: %[[C:.*]] = affine.apply #[[AT48]]()[%[[K]]]
// CHECK: tensor.extract_slice %arg1[%[[C]]] [24] [1] : tensor<72xf32> to tensor<24xf32>
// CHECK-NOT: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x72xf32>
func.func @split_through_slice(%x: tensor<64x72xf32>, %bias: tensor<72xf32>) -> (tensor<64x72xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x72xf32>
  %d1 = tensor.extract_slice %empty[0, 0] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %p1 = scf.forall (%j) = (0) to (48) step (48) shared_outs(%o = %d1) -> (tensor<64x48xf32>) {
    %in = tensor.extract_slice %x[0, %j] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %j] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x48xf32>
    }
  }
  %t1 = tensor.insert_slice %p1 into %empty[0, 24] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %back = tensor.extract_slice %t1[0, 24] [64, 48] [1, 1] : tensor<64x72xf32> to tensor<64x48xf32>
  %t2 = tensor.insert_slice %back into %empty[0, 0] [64, 48] [1, 1] : tensor<64x48xf32> into tensor<64x72xf32>
  %d2 = tensor.extract_slice %t2[0, 48] [64, 24] [1, 1] : tensor<64x72xf32> to tensor<64x24xf32>
  %p2 = scf.forall (%k) = (0) to (24) step (24) shared_outs(%o = %d2) -> (tensor<64x24xf32>) {
    %c = affine.apply affine_map<(d0) -> (d0 + 48)>(%k)
    %in = tensor.extract_slice %x[0, %c] [64, 24] [1, 1] : tensor<64x72xf32> to tensor<64x24xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %in into %o[0, %k] [64, 24] [1, 1] : tensor<64x24xf32> into tensor<64x24xf32>
    }
  }
  %t3 = tensor.insert_slice %p2 into %t2[0, 48] [64, 24] [1, 1] : tensor<64x24xf32> into tensor<64x72xf32>
  %e = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%t3, %bias : tensor<64x72xf32>, tensor<72xf32>) outs(%empty : tensor<64x72xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %0 = arith.addf %a, %c : f32
    %1 = math.absf %0 : f32
    linalg.yield %1 : f32
  } -> tensor<64x72xf32>
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]} ins(%e : tensor<64x72xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.maximumf %acc, %a : f32
    linalg.yield %0 : f32
  } -> tensor<f32>
  return %t3, %amax : tensor<64x72xf32>, tensor<f32>
}
