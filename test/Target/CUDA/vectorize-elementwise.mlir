// RUN: tessera-opt %s --split-input-file --tessera-cuda-vectorize-elementwise | FileCheck %s

// A bias, an activation, a scale per row and a cast to bf16 over rows of
// 768 (symbolic rows): 4 elements an iteration (16 bytes of the widest,
// f32), the f32 operands read as vector<4xf32> aligned to 16 bytes, the
// bf16 result written as vector<4xbf16> aligned to 8; the scale (indexed
// by rows only) read once and broadcast. Each iteration checks the
// addresses and otherwise computes its 4 elements one at a time.
// CHECK-LABEL: func @bias_activation_cast
// CHECK: %[[Q:.*]] = arith.divui %c768, %c4
// CHECK: scf.parallel (%[[R:.*]], %[[V:.*]]) = (%c0, %c0) to (%{{.*}}, %[[Q]])
// CHECK: %[[COL:.*]] = arith.muli %[[V]], %c4
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: memref.extract_aligned_pointer_as_index %arg3
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: scf.if
// CHECK-DAG: vector.load %arg0[%[[R]], %[[COL]]] {alignment = 16 : i64} : memref<?x768xf32>, vector<4xf32>
// CHECK-DAG: vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<768xf32>, vector<4xf32>
// CHECK-DAG: %[[S:.*]] = memref.load %arg2[%[[R]]] : memref<?xf32>
// CHECK: arith.addf %{{.*}} : vector<4xf32>
// CHECK: math.tanh %{{.*}} : vector<4xf32>
// CHECK: vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %{{.*}}, %arg3[%[[R]], %[[COL]]] {alignment = 8 : i64} : memref<?x768xbf16>, vector<4xbf16>
// CHECK: } else {
// CHECK: scf.for %[[E:.*]] = %c0 to %c4
// CHECK: %[[AT:.*]] = arith.addi %[[COL]], %[[E]]
// CHECK: memref.load %arg0[%[[R]], %[[AT]]]
// CHECK: math.tanh %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %arg3[%[[R]], %[[AT]]]
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @bias_activation_cast(%x: memref<?x768xf32>, %bias: memref<768xf32>, %s: memref<?xf32>, %y: memref<?x768xbf16>) {
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bias, %s : memref<?x768xf32>, memref<768xf32>, memref<?xf32>) outs(%y : memref<?x768xbf16>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: bf16):
    %0 = arith.addf %a, %b : f32
    %h = arith.constant 0.5 : f32
    %1 = arith.mulf %0, %h : f32
    %2 = math.tanh %1 : f32
    %3 = arith.mulf %2, %c : f32
    %4 = arith.truncf %3 : f32 to bf16
    linalg.yield %4 : bf16
  }
  return
}

// -----

// A copy of bf16 rows: 8 elements (16 bytes). A size-1 dim read at 0 (a
// broadcast) by a per-row scale of i8 rows dequantized into f32: 4
// elements an iteration (16 bytes of f32), so the i8 are read 4 bytes at
// a time.
// CHECK-LABEL: func @copy_and_broadcast
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %arg1[{{.*}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK: memref.load %arg2[%{{.*}}, %c0{{.*}}] : memref<?x1xf32>
// CHECK: vector.load %arg3[{{.*}}] {alignment = 4 : i64} : memref<?x48xi8>, vector<4xi8>
// CHECK: arith.sitofp %{{.*}} : vector<4xi8> to vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg4[{{.*}}] {alignment = 16 : i64} : memref<?x48xf32>, vector<4xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#first = affine_map<(d0, d1) -> (d0, 0)>
func.func @copy_and_broadcast(%x: memref<?x64xbf16>, %y: memref<?x64xbf16>, %s: memref<?x1xf32>, %q: memref<?x48xi8>, %z: memref<?x48xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x64xbf16>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    linalg.yield %a : bf16
  }
  linalg.generic {indexing_maps = [#first, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s, %q : memref<?x1xf32>, memref<?x48xi8>) outs(%z : memref<?x48xf32>) {
  ^bb0(%a: f32, %b: i8, %o: f32):
    %0 = arith.sitofp %b : i8 to f32
    %1 = arith.mulf %0, %a : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Rows of 6 f32: 2 elements (8 bytes) an iteration.
// CHECK-LABEL: func @eight_bytes
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64} : memref<?x6xf32>, vector<2xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @eight_bytes(%x: memref<?x6xf32>, %y: memref<?x6xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x6xf32>) outs(%y : memref<?x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.negf %a : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Left alone: an innermost size that no vector divides or that is
// dynamic; an operand the innermost loop reads across rows (a transpose)
// or along a diagonal;
// a strided innermost dim; a body that reads its indices, calls or
// computes on index values; a reduction; an op inside a kernel.
// CHECK-LABEL: func @not_these
// CHECK-NOT: vector.
// CHECK-COUNT-9: linalg.generic
// CHECK-NOT: vector.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#red = affine_map<(d0, d1) -> (d0)>
func.func private @f(f32) -> f32
func.func @not_these(%a: memref<?x7xf32>, %b: memref<?x7xf32>, %c: memref<?x?xf32>, %d: memref<?x?xf32>, %e: memref<64x64xf32>, %g: memref<64x64xf32>, %s: memref<64x64xf32, strided<[128, 2]>>, %r: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x7xf32>) outs(%b : memref<?x7xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<?x?xf32>) outs(%d : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<64x64xf32>) outs(%g : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d1)>, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<64x64xf32>) outs(%g : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : memref<64x64xf32, strided<[128, 2]>>) outs(%g : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<64x64xf32>) outs(%g : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %k = arith.sitofp %j : i32 to f32
    %0 = arith.addf %x, %k : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<64x64xf32>) outs(%g : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = func.call @f(%x) : (f32) -> f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]} ins(%e : memref<64x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = arith.addf %x, %o : f32
    linalg.yield %0 : f32
  }
  %one = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x0 = %one, %y0 = %one, %z0 = %one) threads(%tx, %ty, %tz) in (%x1 = %one, %y1 = %one, %z1 = %one) {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<64x64xf32>) outs(%g : memref<64x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    }
    gpu.terminator
  }
  return
}
