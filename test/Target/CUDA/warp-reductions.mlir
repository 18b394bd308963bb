// RUN: tessera-opt %s --split-input-file --tessera-cuda-warp-reductions | FileCheck %s

// A softmax's sum over rows of a dynamic length, exp fused in: one warp per
// row. Each lane folds elements lane, lane+32, ... from 0 (addf's
// identity), five butterfly shuffles combine the lanes, lane 0 adds the
// total to the result.
// CHECK-LABEL: func @row_sum
// CHECK: scf.if
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: scf.if
// CHECK: %{{.*}} = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c32{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK: memref.load %arg0[%{{.*}}, %[[K]]]
// CHECK: math.exp
// CHECK: arith.addf %[[ACC]], %{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: arith.cmpi eq
// CHECK: memref.load %arg1
// CHECK: arith.addf
// CHECK: memref.store {{.*}} %arg1
// CHECK: tessera.cuda.kernel = "warp_reduction"
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<?x?xf32>, %sum: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %s = arith.addf %out, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A maximum over 128-element rows of a 3-d buffer: the identity is -inf.
// CHECK-LABEL: func @row_max
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NINF]])
// CHECK: arith.maximumf
func.func @row_max(%x: memref<2x5x128xf32>, %m: memref<2x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, j) -> (a, b, j)>, affine_map<(a, b, j) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<2x5x128xf32>) outs(%m : memref<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Must not fire: rows of 32 (most lanes would idle), a reduction that is
// not the innermost loop (a column sum), a body that is not a fold (the
// running value is subtracted from), and a product (two reduction loops
// would be needed: a matmul's k is not last here).
// CHECK-LABEL: func @not_rows
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.generic
func.func @not_rows(%short: memref<4x32xf32>, %r4: memref<4xf32>, %x: memref<64x64xf32>, %c: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%short : memref<4x32xf32>) outs(%r4 : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.subf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<64x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A maximum of |x| over every loop of a dynamic 3-d buffer into one value
// (an fp8 scale's amax): two launches. Warps reduce chunks of the flattened
// loops (chunk = max(ceil(n / 1024), 256) elements, the loops' values
// unflattened row-major) into a temporary buffer of partial results, then
// one warp reduces those and folds the total into the result.
// CHECK-LABEL: func @amax_all
// CHECK: arith.cmpi ugt, %[[N:[0-9]+]], %c0
// CHECK: scf.if
// CHECK: %[[CEIL:.*]] = arith.ceildivui %[[N]], %c1024
// CHECK: %[[CHUNK:.*]] = arith.maxui %[[CEIL]], %c256
// CHECK: %[[PARTS:.*]] = arith.ceildivui %[[N]], %[[CHUNK]]
// CHECK: %[[PARTIAL:.*]] = memref.alloc(%[[PARTS]]) : memref<?xf32>
// CHECK: gpu.launch
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %[[CHUNK]]
// CHECK: arith.minui %{{.*}}, %[[N]]
// CHECK: scf.for
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: memref.load %arg0
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[PARTIAL]]
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c32
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[PARTS]] step %c32
// CHECK: memref.load %[[PARTIAL]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.load %arg1[] : memref<f32>
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg1[] : memref<f32>
// CHECK: tessera.cuda.kernel = "warp_reduction_total"
// CHECK: memref.dealloc %[[PARTIAL]]
// CHECK-NOT: linalg.generic
func.func @amax_all(%x: memref<?x?x64xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%x : memref<?x?x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Must not fire: a full reduction of 48 elements (a single thread is as
// fast), and one into a result that is not one value.
// CHECK-LABEL: func @not_full
// CHECK-NOT: gpu.launch
// CHECK-COUNT-2: linalg.generic
func.func @not_full(%x: memref<6x8xf32>, %s: memref<f32>, %y: memref<64x64xf32>, %t: memref<1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : memref<6x8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0)>], iterator_types = ["reduction", "reduction"]} ins(%y : memref<64x64xf32>) outs(%t : memref<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The amax of what an elementwise op just wrote (a normalization's output,
// with a fill of the result between): the reduction's first launch
// computes the op's values from its inputs, stores them and reduces them;
// the op's own loop nest is gone.
// CHECK-LABEL: func @normalized_amax
// CHECK-NOT: linalg.generic
// CHECK: linalg.fill
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK: memref.load %arg1
// CHECK: memref.load %arg2
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %arg3[
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: tessera.cuda.kernel = "warp_reduction_total"
// CHECK-NOT: linalg.generic
func.func @normalized_amax(%x: memref<?x64xf32>, %mean: memref<?xf32>, %gamma: memref<64xf32>, %y: memref<?x64xf32>, %m: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %gamma : memref<?x64xf32>, memref<?xf32>, memref<64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %mu: f32, %g: f32, %out: f32):
    %0 = arith.subf %in, %mu : f32
    %1 = arith.mulf %0, %g : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : memref<?x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Must not fire: an op between that reads the buffer (it needs the values
// before the reduction), and a producer that reads the buffer at another
// element (a transpose in place: its threads would race). Both stay loop
// nests and the reductions load the buffer.
// CHECK-LABEL: func @producer_kept
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK: memref.load %arg1
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: gpu.launch
// CHECK: memref.load %arg4
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
func.func @producer_kept(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %z: memref<?x64xf32>, %m: memref<f32>, %sq: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  linalg.copy ins(%y : memref<?x64xf32>) outs(%z : memref<?x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : memref<?x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (b, a)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%sq : memref<64x64xf32>) outs(%sq : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%sq : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Must not fire either: the producer's input freed between (the launch
// would read it after), a reduction whose other input is the same buffer
// read transposed (its elements come from other lanes), and a row
// reduction (only full ones take a producer).
// CHECK-LABEL: func @producer_kept_too
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: memref.dealloc %arg0
// CHECK: gpu.launch
// CHECK: memref.load %arg1
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: gpu.launch
// CHECK: memref.load %arg3
// CHECK: memref.load %arg3
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: gpu.launch
// CHECK: memref.load %arg1
// CHECK: tessera.cuda.kernel = "warp_reduction"
func.func @producer_kept_too(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %m: memref<f32>, %sq: memref<64x64xf32>, %rows: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %x : memref<?x64xf32>
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : memref<?x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  %c = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} outs(%sq : memref<64x64xf32>) {
  ^bb0(%out: f32):
    linalg.yield %c : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (b, a)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%sq, %sq : memref<64x64xf32>, memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %a = arith.subf %p, %q : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<?x64xf32>) outs(%rows : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The amax of a contraction's result (attention's P·V product, heads as a
// batch dim, the value read transposed): the reduction's first launch
// computes each element from the element's value in the buffer (its
// fill), running the reduction loop in order as the contraction would,
// stores it and reduces it; the contraction's own loop nest is gone.
// CHECK-LABEL: func @product_amax
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<?x4x?x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: %[[KEYS:.*]] = memref.dim %arg0, %{{.*}} : memref<?x4x?x?xf32>
// CHECK: %[[START:.*]] = memref.load %arg2[
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[KEYS]] step %{{.*}} iter_args(%[[SUM:.*]] = %[[START]]) -> (f32)
// CHECK: memref.load %arg0[{{.*}}, %[[J]]]
// CHECK: memref.load %arg1[{{.*}}, %[[J]], {{.*}}]
// CHECK: arith.mulf
// CHECK: %[[NEXT:.*]] = arith.addf %[[SUM]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: tessera.cuda.kernel = "warp_reduction_total"
// CHECK-NOT: linalg.generic
func.func @product_amax(%p: memref<?x4x?x?xf32>, %v: memref<?x?x4x16xf32>, %o: memref<?x4x?x16xf32>, %m: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<?x4x?x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, j)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : memref<?x4x?x?xf32>, memref<?x?x4x16xf32>) outs(%o : memref<?x4x?x16xf32>) {
  ^bb0(%a: f32, %w: f32, %out: f32):
    %0 = arith.mulf %a, %w : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : memref<?x4x?x16xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %out, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Must not fire: a contraction that reads the buffer it writes (another
// lane's element may not be computed yet), one whose parallel loops write
// the buffer transposed (its elements are not in its loops' order), and
// one whose input is written between. The contractions stay loop nests
// and the reductions load the buffer.
// CHECK-LABEL: func @product_kept
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: gpu.launch
// CHECK: memref.load %arg1
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: gpu.launch
// CHECK: memref.load %arg2
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.fill
// CHECK: gpu.launch
// CHECK: memref.load %arg2
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
func.func @product_kept(%a: memref<64x64xf32>, %sq: memref<64x64xf32>, %out: memref<64x64xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %sq : memref<64x64xf32>, memref<64x64xf32>) outs(%sq : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%sq : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j, i)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %a : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%out : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %a : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%one : f32) outs(%a : memref<64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%out : memref<64x64xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A contraction with two reduction loops apart (k before the column loop,
// l after it) whose body reads the index of one: its loops run nested in
// the op's order (k outer, l inner) from the element's value, the index
// read as l's induction variable.
// CHECK-LABEL: func @two_reduction_loops
// CHECK: gpu.launch
// CHECK: memref.load %arg1[
// CHECK: scf.for %[[K:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK: scf.for %[[L:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK: memref.load %arg0[%{{.*}}, %[[K]], %[[L]]]
// CHECK: arith.index_cast %[[L]]
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %arg1[
// CHECK: tessera.cuda.kernel = "warp_reduction_partials"
// CHECK-NOT: linalg.generic
func.func @two_reduction_loops(%x: memref<?x8x4xf32>, %o: memref<?x16xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j, l) -> (i, k, l)>, affine_map<(i, k, j, l) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%x : memref<?x8x4xf32>) outs(%o : memref<?x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %l = linalg.index 3 : index
    %li = arith.index_cast %l : index to i32
    %lf = arith.sitofp %li : i32 to f32
    %0 = arith.mulf %in, %lf : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%o : memref<?x16xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}
