// RUN: tessera-opt %s --split-input-file --tessera-cpu-vectorize-loops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// An elementwise op with a broadcast operand: rows one at a time on
// threads, each row in steps of 64 elements read and written as vectors.
// CHECK-LABEL: func @bias_gelu
// CHECK: scf.forall (%{{.*}}, %[[J:.*]]) = (0, 0) to (4, 128) step (1, 64)
// CHECK: vector.transfer_read {{.*}} : tensor<1x64xf32>, vector<64xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<64xf32>, vector<64xf32>
// CHECK: math.erf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_write {{.*}} : vector<64xf32>, tensor<1x64xf32>
// CHECK-NOT: linalg.generic
func.func @bias_gelu(%x: tensor<4x128xf32>, %b: tensor<128xf32>) -> tensor<4x128xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x128xf32>, tensor<128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %r = math.erf %s : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  return %0 : tensor<4x128xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A reduction over the innermost axis (softmax's row max): one row per
// iteration, reduced as one vector.
// CHECK-LABEL: func @row_max
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: vector.transfer_read {{.*}} : tensor<1x96xf32>, vector<96xf32>
// CHECK: vector.reduction <maximumf>, {{.*}} : vector<96xf32> into f32
// CHECK-NOT: linalg.generic
func.func @row_max(%x: tensor<8x96xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x96xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Rows of 80 elements (64 does not divide them): steps of 16.
// CHECK-LABEL: func @steps_of_16
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 80) step (1, 16)
// CHECK: vector<16xf32>
func.func @steps_of_16(%x: tensor<2x80xf32>) -> tensor<2x80xf32> {
  %e = tensor.empty() : tensor<2x80xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x80xf32>) outs(%e : tensor<2x80xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<2x80xf32>
  return %0 : tensor<2x80xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Must not fire: i1 results (memory holds them as bytes), a reduction
// over a dynamic row of i32 (masked rows take f32), a reduction over an
// outer axis, and a single small tile.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%x: tensor<4x64xf32>, %d: tensor<4x?xi32>, %rows: tensor<4xi32>, %init: tensor<64xf32>, %one: tensor<1x32xf32>) -> (tensor<4x64xi1>, tensor<4xi32>, tensor<64xf32>, tensor<1x32xf32>) {
  %c0 = arith.constant 0 : index
  %e1 = tensor.empty() : tensor<4x64xi1>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e1 : tensor<4x64xi1>) {
  ^bb0(%a: f32, %o: i1):
    %z = arith.constant 0.0 : f32
    %r = arith.cmpf ogt, %a, %z : f32
    linalg.yield %r : i1
  } -> tensor<4x64xi1>
  %1 = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%d : tensor<4x?xi32>) outs(%rows : tensor<4xi32>) {
  ^bb0(%a: i32, %o: i32):
    %r = arith.addi %a, %o : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e4 = tensor.empty() : tensor<1x32xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%one : tensor<1x32xf32>) outs(%e4 : tensor<1x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>
  return %0, %1, %2, %4 : tensor<4x64xi1>, tensor<4xi32>, tensor<64xf32>, tensor<1x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A row of 100, longer than one step and divided by no vector width, is
// split into 96 columns (vector steps of 16) and the last 4 (one vector).
// A reduction over such a row is not split (it is vectorized whole).
// CHECK-LABEL: func @long_row
// CHECK: scf.forall {{.*}} to (4, 96) step (1, 16)
// CHECK: vector.transfer_read {{.*}} : tensor<1x16xf32>, vector<16xf32>
// CHECK: scf.forall {{.*}} in (4) {{.*}} -> (tensor<4x4xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<1x4xf32>, vector<4xf32>
// CHECK: vector.reduction <add>, {{.*}} : vector<100xf32> into f32
func.func @long_row(%odd: tensor<4x100xf32>, %init: tensor<4xf32>) -> (tensor<4x100xf32>, tensor<4xf32>) {
  %e3 = tensor.empty() : tensor<4x100xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%odd : tensor<4x100xf32>) outs(%e3 : tensor<4x100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x100xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%odd : tensor<4x100xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %3, %s : tensor<4x100xf32>, tensor<4xf32>
}

// -----

// A pad of the two innermost dims: one loop over the planes (here the 2
// images), each copying its source into the middle (vector steps) and
// filling only the border (the columns left and right); no fill of the
// whole tensor. A pad of an outer dim keeps upstream's decomposition: a
// fill of the whole tensor, the source inserted.
// CHECK-LABEL: func @pad
// CHECK-NOT: tensor.pad
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x16xf32>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1xf32>, tensor<1x1x1xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1xf32>, tensor<1x1x1xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, 0] [1, 3, 96]
// CHECK: scf.forall {{.*}} to (4, 3, 80) step (1, 1, 16)
// CHECK: tensor.insert_slice %arg1 into {{.*}}[1, 0, 0] [2, 3, 94] [1, 1, 1] : tensor<2x3x94xf32> into tensor<4x3x94xf32>
func.func @pad(%x: tensor<2x3x94xf32>, %y: tensor<2x3x94xf32>) -> (tensor<2x3x96xf32>, tensor<4x3x94xf32>) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %z : f32
  } : tensor<2x3x94xf32> to tensor<2x3x96xf32>
  %q = tensor.pad %y low[1, 0, 0] high[1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %z : f32
  } : tensor<2x3x94xf32> to tensor<4x3x94xf32>
  return %p, %q : tensor<2x3x96xf32>, tensor<4x3x94xf32>
}

// -----

// A row block inside a loop (a fused reduction's rows) is one tile: it is
// vectorized as it is, a 32-element row at a time.
// CHECK-LABEL: func @row_in_loop
// CHECK: scf.forall
// CHECK: vector.transfer_read {{.*}} : tensor<1x32xf32>, vector<32xf32>
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.generic
func.func @row_in_loop(%x: tensor<4x32xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.forall (%i) in (4) shared_outs(%o = %init) -> (tensor<4xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 32] [1, 1] : tensor<4x32xf32> to tensor<1x32xf32>
    %acc = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%row : tensor<1x32xf32>) outs(%acc : tensor<1xf32>) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %0 : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>

// Dynamic outer dims (a symbolic sequence and batch) with a static row:
// the outer loops run one step at a time on threads, and the row in
// vector steps, elementwise and reductions alike.
// CHECK-LABEL: func @dynamic_rows
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x64xf32>, vector<64xf32>
// CHECK: arith.negf {{.*}} : vector<64xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x768xf32>, vector<768xf32>
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.generic
func.func @dynamic_rows(%x: tensor<?x?x64xf32>, %y: tensor<?x?x768xf32>, %init: tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %e = tensor.empty(%s, %b) : tensor<?x?x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<?x?x64xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y : tensor<?x?x768xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#gate = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>

// A dynamic batch with a broadcast operand (a squeeze-and-excitation gate
// [N, C, 1, 1] read by (n, c, 0, 0)): the same, the gate read once per
// row and broadcast.
// CHECK-LABEL: func @dynamic_broadcast
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (%{{.*}}, 24, 6, 80) step (1, 1, 1, 16)
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x1x16xf32>, vector<16xf32>
// CHECK: vector.broadcast {{.*}} : vector<f32> to vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_broadcast(%x: tensor<?x24x6x80xf32>, %g: tensor<?x24x1x1xf32>) -> tensor<?x24x6x80xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x24x6x80xf32>
  %e = tensor.empty(%n) : tensor<?x24x6x80xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #gate, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %g : tensor<?x24x6x80xf32>, tensor<?x24x1x1xf32>) outs(%e : tensor<?x24x6x80xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x24x6x80xf32>
  return %0 : tensor<?x24x6x80xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Must not fire: a dynamic loop nest whose body reads its indices
// (linalg.index) is not a plain elementwise op, with a static row or a
// dynamic one.
// CHECK-LABEL: func @dynamic_with_index
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK-COUNT-2: linalg.generic
func.func @dynamic_with_index(%d: tensor<?x64xf32>, %w: tensor<4x?xf32>) -> (tensor<?x64xf32>, tensor<4x?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %r = arith.addf %a, %f : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %c1 = arith.constant 1 : index
  %m = tensor.dim %w, %c1 : tensor<4x?xf32>
  %ew = tensor.empty(%m) : tensor<4x?xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x?xf32>) outs(%ew : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %r = arith.addf %a, %f : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Must not fire: a static row reduction whose combiner is no vector
// reduction kind (a subtraction) fails the vectorizer's precondition; it
// is neither tiled nor vectorized, statically or with a dynamic outer dim.
// CHECK-LABEL: func @unknown_combiner
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK-COUNT-2: linalg.generic
func.func @unknown_combiner(%x: tensor<4x64xf32>, %init: tensor<4xf32>, %d: tensor<?x64xf32>, %dinit: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%d : tensor<?x64xf32>) outs(%dinit : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#se = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>

// Images of symbolic size (the innermost loop, their width, is dynamic):
// rows on threads, each row a loop of masked steps of 16, the last one
// partial; a squeeze-and-excitation scale [N, C, 1, 1] and a bias per
// channel read as broadcasts.
// CHECK-LABEL: func @dynamic_width
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 8, %{{.*}})
// CHECK: scf.for %[[W:.*]] = %c0 to %[[WIDTH:.*]] step %c16
// CHECK: %[[N:.*]] = affine.min {{.*}}(%[[W]])[%[[WIDTH]]]
// CHECK: %[[MASK:.*]] = vector.create_mask {{.*}}, %[[N]] : vector<1x1x1x16xi1>
// CHECK: %[[ROW:.*]] = vector.extract %[[MASK]][0, 0, 0] : vector<16xi1>
// CHECK: vector.transfer_read {{.*}}, %[[ROW]] {{.*}} : tensor<1x1x1x?xf32>, vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x1x1x?xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_width(%x: tensor<?x8x?x?xf32>, %s: tensor<?x8x1x1xf32>, %b: tensor<8xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %0 = linalg.generic {indexing_maps = [#id, #se, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %b : tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>, tensor<8xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %r = arith.addf %m, %d : f32
    linalg.yield %r : f32
  } -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// A 1-D op of dynamic length: its masked steps are the parallel loop's
// iterations.
// CHECK-LABEL: func @dynamic_vector
// CHECK: scf.forall (%[[I:.*]]) = (0) to (%{{.*}}) step (16)
// CHECK: %[[N:.*]] = affine.min {{.*}}(%[[I]])
// CHECK: %[[MASK:.*]] = vector.create_mask %[[N]] : vector<16xi1>
// CHECK: vector.transfer_read {{.*}}, %[[MASK]] {{.*}} : tensor<?xf32>, vector<16xf32>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}}, %[[MASK]] {{.*}} : vector<16xf32>, tensor<?xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_vector(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Must not fire on a dynamic row: i1 results, a window's read (not a
// projected permutation), a read through tensor.extract.
// CHECK-LABEL: func @dynamic_row_left_alone
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: vector.
func.func @dynamic_row_left_alone(%x: tensor<4x?xf32>, %wide: tensor<4x?xf32>, %table: tensor<8xf32>) -> (tensor<4x?xi1>, tensor<4x?xf32>, tensor<4x?xf32>) {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<4x?xf32>
  %e1 = tensor.empty(%n) : tensor<4x?xi1>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%e1 : tensor<4x?xi1>) {
  ^bb0(%a: f32, %o: i1):
    %z = arith.constant 0.0 : f32
    %r = arith.cmpf ogt, %a, %z : f32
    linalg.yield %r : i1
  } -> tensor<4x?xi1>
  %e = tensor.empty(%n) : tensor<4x?xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 + 1)>, #id], iterator_types = ["parallel", "parallel"]} ins(%wide : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c3 = arith.constant 3 : index
    %t = tensor.extract %table[%c3] : tensor<8xf32>
    %r = arith.addf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  return %0, %2, %3 : tensor<4x?xi1>, tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

// Nearest upsampling by 2 over an image of symbolic size (a Resize's
// copy, reading floor(x / 2)): rows on threads, each row in steps of 16
// outputs, 8 inputs read and each repeated twice by a shuffle, the last
// step masked at both ends.
#up_read = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#up_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @upsample_by_two
// CHECK: scf.forall
// CHECK: scf.for %[[AT:.*]] = %{{.*}} to %{{.*}} step %c16{{(_[0-9]+)?}}
// CHECK: %[[FROM:.*]] = arith.divui %[[AT]], %c2{{(_[0-9]+)?}}
// CHECK: %[[IN:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: %[[V:.*]] = vector.transfer_read %{{.*}}[%[[Z:.*]], %[[Z]], %[[Z]], %[[FROM]]], %{{.*}}, %[[IN]] {in_bounds = [true]} : tensor<1x1x1x?xf32>, vector<8xf32>
// CHECK: %[[W:.*]] = vector.shuffle %[[V]], %[[V]] [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7] : vector<8xf32>, vector<8xf32>
// CHECK: %[[OUT:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.transfer_write %[[W]], %{{.*}}[%[[Z]], %[[Z]], %[[Z]], %[[AT]]], %[[OUT]] {in_bounds = [true]} : vector<16xf32>, tensor<1x1x1x?xf32>
// CHECK-NOT: linalg.generic
func.func @upsample_by_two(%x: tensor<?x8x?x?xf32>, %n: index, %h: index, %w: index) -> tensor<?x8x?x?xf32> {
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %0 = linalg.generic {indexing_maps = [#up_read, #up_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x8x?x?xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// Not upsamplings: a factor of 3 on the row (16 lanes are not whole
// pixels of it), and a copy that computes on the way.
#up3_read = affine_map<(d0, d1) -> (d0, d1 floordiv 3)>
#up2_read = affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 2)>
#up_id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @not_upsamplings
// CHECK-NOT: vector.shuffle
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: vector.shuffle
func.func @not_upsamplings(%x: tensor<4x?xf32>, %h: index, %w: index) -> (tensor<4x?xf32>, tensor<?x?xf32>) {
  %e = tensor.empty(%w) : tensor<4x?xf32>
  %0 = linalg.generic {indexing_maps = [#up3_read, #up_id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%e : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x?xf32>
  %e2 = tensor.empty(%h, %w) : tensor<?x?xf32>
  %1 = linalg.generic {indexing_maps = [#up2_read, #up_id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %0, %1 : tensor<4x?xf32>, tensor<?x?xf32>
}

// -----

// Must not fire: a bf16 loop nest whose innermost loop is shorter than 4
// (the pair packing of a bf16 GEMM's rhs for vdpbf16ps): its transposing
// read would lower to inserts at a variable index, which LLVM's x86
// backend cannot do on bf16 vectors. The same nest in f32 vectorizes.
// CHECK-LABEL: func @pairs
// CHECK-NOT: xbf16>, vector<
// CHECK: linalg.transpose ins(%arg0 : tensor<4x2x8xbf16>)
// CHECK: vector.transfer_read {{.*}} : tensor<1x2x1xf32>, vector<2xf32>
func.func @pairs(%b: tensor<4x2x8xbf16>, %f: tensor<4x2x8xf32>) -> (tensor<4x8x2xbf16>, tensor<4x8x2xf32>) {
  %e = tensor.empty() : tensor<4x8x2xbf16>
  %0 = linalg.transpose ins(%b : tensor<4x2x8xbf16>) outs(%e : tensor<4x8x2xbf16>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<4x8x2xf32>
  %1 = linalg.transpose ins(%f : tensor<4x2x8xf32>) outs(%e2 : tensor<4x8x2xf32>) permutation = [0, 2, 1]
  return %0, %1 : tensor<4x8x2xbf16>, tensor<4x8x2xf32>
}

// -----

// Asymmetric pads of a symbolic-size image (1 row above, 3 below, 2
// columns left, none right): the source at [1, 2], the rows above and
// below the whole width, the left columns beside the source's rows.
// CHECK-LABEL: func @pad_asymmetric
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 4) shared_outs
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 2] [1, 1, %[[H:.*]], %[[W:.*]]] [1, 1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 1, %[[WP:.*]]] [1, 1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, 0] [1, 1, 3, %[[WP]]] [1, 1, 1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 0] [1, 1, %[[H]], 2] [1, 1, 1, 1]
// CHECK-NOT: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, %{{.*}}] [1, 1, %[[H]], 0]
// CHECK: tensor.parallel_insert_slice
func.func @pad_asymmetric(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 3, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x4x?x?xf32> to tensor<?x4x?x?xf32>
  return %p : tensor<?x4x?x?xf32>
}

// -----

// Must not fire: a rank-2 pad (no planes), a pad by a dynamic amount.
// CHECK-LABEL: func @pad_not_planes
// CHECK: tensor.insert_slice %arg0 into {{.*}}[0, 1] [6, 94] [1, 1] : tensor<6x94xf32> into tensor<6x96xf32>
// CHECK: tensor.insert_slice %arg1 into {{.*}}[0, 0, %arg2] [2, 3, 8] [1, 1, 1] : tensor<2x3x8xf32> into tensor<2x3x?xf32>
func.func @pad_not_planes(%x: tensor<6x94xf32>, %y: tensor<2x3x8xf32>, %n: index) -> (tensor<6x96xf32>, tensor<2x3x?xf32>) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x94xf32> to tensor<6x96xf32>
  %q = tensor.pad %y low[0, 0, %n] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %z : f32
  } : tensor<2x3x8xf32> to tensor<2x3x?xf32>
  return %p, %q : tensor<6x96xf32>, tensor<2x3x?xf32>
}

// -----

// Must not fire on a bf16 pad (its border columns would be vectors of one
// bf16, which LLVM's x86 backend cannot always store): the whole tensor is
// filled, the source inserted.
// CHECK-LABEL: func @pad_bf16
// CHECK: tensor.insert_slice %arg0 into {{.*}}[0, 0, 1] [2, 3, 94] [1, 1, 1] : tensor<2x3x94xbf16> into tensor<2x3x96xbf16>
func.func @pad_bf16(%x: tensor<2x3x94xbf16>) -> tensor<2x3x96xbf16> {
  %z = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %z : bf16
  } : tensor<2x3x94xbf16> to tensor<2x3x96xbf16>
  return %p : tensor<2x3x96xbf16>
}

// -----

// A symbolic-size convolution's product [N, P, F] back to [N, F, P]: blocks
// of 16 x 16 on threads (N, F in 16s, P in 128s), each block 16 masked row
// loads of F, one transpose in registers, 16 masked row stores of P (a
// column beyond F's 40 masked off): a loop of full blocks, then one of the
// partial block (its rows beyond P masked off too).
// CHECK-LABEL: func @inner_transpose
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (%{{.*}}, 40, %{{.*}}) step (1, 16, 128)
// CHECK: %[[COLS:.*]] = tensor.dim %{{.*}} : tensor<1x?x?xf32>
// CHECK: %[[WIDTH:.*]] = tensor.dim %{{.*}} : tensor<1x?x?xf32>
// CHECK: %[[FULL:.*]] = affine.apply #{{.*}}()[%[[WIDTH]]]
// CHECK: %[[BLOCKS:.*]] = scf.for %{{.*}} = %{{.*}} to %[[FULL]] step %{{.*}} iter_args
// CHECK-COUNT-16: vector.transfer_read {{.*}} : tensor<1x?x?xf32>, vector<16xf32>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK-COUNT-16: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x?x?xf32>
// The partial block: a row (lane) at or beyond what is left reads nothing
// (mask size 0) and is read at the block's first row.
// CHECK: scf.for %[[AT:.*]] = %[[FULL]] to %[[WIDTH]] step %{{.*}} iter_args(%{{.*}} = %[[BLOCKS]])
// CHECK: %[[LEFT:.*]] = arith.subi %[[WIDTH]], %[[AT]]
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[LEFT]]
// CHECK: arith.select %[[IN]], %{{.*}}, %[[AT]]
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %{{.*}}, %[[LEFT]]
// CHECK: %[[N:.*]] = arith.select %[[IN0]], %[[COLS]], %{{.*}}
// CHECK: vector.create_mask %[[N]] : vector<16xi1>
// CHECK-COUNT-16: vector.transfer_read {{.*}} : tensor<1x?x?xf32>, vector<16xf32>
// CHECK: vector.transpose
// CHECK-NOT: linalg.transpose
func.func @inner_transpose(%x: tensor<?x?x40xf32>) -> tensor<?x40x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x40xf32>
  %p = tensor.dim %x, %c1 : tensor<?x?x40xf32>
  %e = tensor.empty(%n, %p) : tensor<?x40x?xf32>
  %0 = linalg.transpose ins(%x : tensor<?x?x40xf32>) outs(%e : tensor<?x40x?xf32>) permutation = [0, 2, 1]
  return %0 : tensor<?x40x?xf32>
}

// -----

// An image [N, C, H, W] of symbolic size to [N, H, W, C]: the blocks are
// 16 pixels of a row (the input's innermost dim) by 16 channels (the
// output's).
// CHECK-LABEL: func @to_nhwc
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (%{{.*}}, %{{.*}}, %{{.*}}, 24) step (1, 1, 16, 128)
// CHECK: vector.transfer_read {{.*}} : tensor<1x?x1x?xf32>, vector<16xf32>
// CHECK: vector.transpose {{.*}} : vector<16x16xf32> to vector<16x16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x1x?x?xf32>
// CHECK-NOT: linalg.transpose
func.func @to_nhwc(%x: tensor<?x24x?x?xf32>) -> tensor<?x?x?x24xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x24x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x24x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x24x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x?x?x24xf32>
  %0 = linalg.transpose ins(%x : tensor<?x24x?x?xf32>) outs(%e : tensor<?x?x?x24xf32>) permutation = [0, 2, 3, 1]
  return %0 : tensor<?x?x?x24xf32>
}

// -----

// Static block dims of at least a block each take it too (a
// convolution's product [N, P, F] with its pixels as rows back to NCHW).
// CHECK-LABEL: func @static_transpose
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 40, 49) step (1, 16, 128)
// CHECK: vector.transpose {{.*}} : vector<16x16xf32> to vector<16x16xf32>
// CHECK-NOT: linalg.transpose
func.func @static_transpose(%x: tensor<1x49x40xf32>) -> tensor<1x40x49xf32> {
  %e = tensor.empty() : tensor<1x40x49xf32>
  %0 = linalg.transpose ins(%x : tensor<1x49x40xf32>) outs(%e : tensor<1x40x49xf32>) permutation = [0, 2, 1]
  return %0 : tensor<1x40x49xf32>
}

// -----

// Must not fire: a static block dim narrower than a block (the vector
// steps take it), the element type is not f32, the input's innermost dim
// is the output's too (only outer dims move: rows copy as they are).
// CHECK-LABEL: func @not_inner_transposes
// CHECK-NOT: vector.transpose
func.func @not_inner_transposes(%x: tensor<2x64x8xf32>, %h: tensor<?x?x40xf16>, %y: tensor<?x4x?xf32>) -> (tensor<2x8x64xf32>, tensor<?x40x?xf16>, tensor<4x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<2x8x64xf32>
  %0 = linalg.transpose ins(%x : tensor<2x64x8xf32>) outs(%e : tensor<2x8x64xf32>) permutation = [0, 2, 1]
  %n = tensor.dim %h, %c0 : tensor<?x?x40xf16>
  %p = tensor.dim %h, %c1 : tensor<?x?x40xf16>
  %eh = tensor.empty(%n, %p) : tensor<?x40x?xf16>
  %1 = linalg.transpose ins(%h : tensor<?x?x40xf16>) outs(%eh : tensor<?x40x?xf16>) permutation = [0, 2, 1]
  %m = tensor.dim %y, %c0 : tensor<?x4x?xf32>
  %q = tensor.dim %y, %c2 : tensor<?x4x?xf32>
  %ey = tensor.empty(%m, %q) : tensor<4x?x?xf32>
  %2 = linalg.transpose ins(%y : tensor<?x4x?xf32>) outs(%ey : tensor<4x?x?xf32>) permutation = [1, 0, 2]
  return %0, %1, %2 : tensor<2x8x64xf32>, tensor<?x40x?xf16>, tensor<4x?x?xf32>
}

// -----

// A learned upsampling's blocks [N, H, W*2, 2, F] to [N, F, H, 2, W*2]:
// the input's innermost dim (F, loop 1) is two loops from the output's
// (W*2, loop 4); blocks of 16 filters by 16 columns, the rows (H, 2)
// outer loops on the threads.
// CHECK-LABEL: func @upsampling_blocks
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0, 0) to (%{{.*}}, 24, %{{.*}}, 2, %{{.*}}) step (1, 16, 1, 1, 128)
// CHECK-COUNT-16: vector.transfer_read
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK-COUNT-16: vector.transfer_write
// CHECK-NOT: linalg.transpose
func.func @upsampling_blocks(%x: tensor<?x?x?x2x24xf32>) -> tensor<?x24x?x2x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?x2x24xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?x?x2x24xf32>
  %w = tensor.dim %x, %c2 : tensor<?x?x?x2x24xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x24x?x2x?xf32>
  %0 = linalg.transpose ins(%x : tensor<?x?x?x2x24xf32>) outs(%e : tensor<?x24x?x2x?xf32>) permutation = [0, 4, 1, 3, 2]
  return %0 : tensor<?x24x?x2x?xf32>
}

// -----

#img = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (n, c)>
#cols = affine_map<(h, w) -> (h, w)>
#col = affine_map<(h, w) -> (w)>

// A global average pool's sum over an image of symbolic size: each channel
// on the threads, its rows in masked steps of 16, each step's lanes past
// the row's end set to the sum's neutral element before the horizontal
// add (an unmasked reduction, which LLVM lowers as a tree). A maximum
// takes -inf there. A reduction over the leading loop (a column sum) is
// left to the scalar loops.
// CHECK-LABEL: func @masked_sum
// CHECK: %[[ZEROS:.*]] = arith.constant dense<-0.000000e+00> : vector<16xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 96)
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c16
// CHECK: vector.create_mask
// CHECK: vector.transfer_read
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ZEROS]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: vector.reduction <add>, %[[KEPT]], %{{.*}} : vector<16xf32> into f32
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-NOT: vector.reduction
func.func @masked_sum(%x: tensor<?x96x?x?xf32>, %acc: tensor<?x96xf32>, %m: tensor<?x?xf32>, %cacc: tensor<?xf32>) -> (tensor<?x96xf32>, tensor<?xf32>) {
  %0 = linalg.generic {indexing_maps = [#img, #chan], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<?x96x?x?xf32>) outs(%acc : tensor<?x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x96xf32>
  %1 = linalg.generic {indexing_maps = [#cols, #col], iterator_types = ["reduction", "parallel"]} ins(%m : tensor<?x?xf32>) outs(%cacc : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %0, %1 : tensor<?x96xf32>, tensor<?xf32>
}

// maxnum's identity is NaN (it returns its other operand); the
// NaN-propagating maximum's is -inf.
// CHECK-LABEL: func @masked_max
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<0x7FC00000> : vector<16xf32>
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: scf.forall
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NAN]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: vector.reduction <maxnumf>, %[[KEPT]]
// CHECK: scf.forall
// CHECK: %[[KEPTMAX:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: vector.reduction <maximumf>, %[[KEPTMAX]]
func.func @masked_max(%x: tensor<?x96x?x?xf32>, %acc: tensor<?x96xf32>) -> (tensor<?x96xf32>, tensor<?x96xf32>) {
  %0 = linalg.generic {indexing_maps = [#img, #chan], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<?x96x?x?xf32>) outs(%acc : tensor<?x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maxnumf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x96xf32>
  %1 = linalg.generic {indexing_maps = [#img, #chan], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<?x96x?x?xf32>) outs(%acc : tensor<?x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x96xf32>
  return %0, %1 : tensor<?x96xf32>, tensor<?x96xf32>
}
