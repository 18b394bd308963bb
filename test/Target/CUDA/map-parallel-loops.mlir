// RUN: tessera-opt --split-input-file --verify-diagnostics --tessera-cuda-map-parallel-loops %s | FileCheck %s
// RUN: tessera-opt --split-input-file --tessera-cuda-map-parallel-loops="block-size=128" --verify-diagnostics %s | FileCheck %s --check-prefix=B128

// A 2-d elementwise nest: its dims collapse into one, tiled by the block
// size; blocks and threads along x.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[M:.*]] = memref.dim %arg0, %c0
// CHECK: %[[N:.*]] = memref.dim %arg0, %c1
// CHECK: %[[MN:.*]] = arith.muli %{{.*}}, %[[N]]
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[BLOCK:.*]] = arith.muli %{{.*}}, %[[C256]]
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[MN]]) step (%[[BLOCK]])
// CHECK:   scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[BLOCK]])
// CHECK:     arith.cmpi ult, %{{.*}}, %[[MN]]
// CHECK:     scf.if
// CHECK:       arith.remsi
// CHECK:       arith.divsi
// CHECK:       memref.load
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// B128-LABEL: func.func @elementwise
// B128: arith.constant 128 : index
func.func @elementwise(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// A row reduction: the rows are the grid; the sequential loop over the
// row stays inside each thread, and a parallel loop nested in it is
// sequential.
// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.for
// CHECK:       scf.parallel
// CHECK:       } {mapping = [#gpu.loop_dim_map<processor = sequential
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @rows(%a: memref<?x64xf32>, %s: memref<?xf32>, %t: memref<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %m = memref.dim %a, %c0 : memref<?x64xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i, %k] : memref<?x64xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %y = arith.addf %x, %acc : f32
      memref.store %y, %s[%i] : memref<?xf32>
      scf.parallel (%j) = (%c0) to (%c2) step (%c1) {
        memref.store %y, %t[%i, %j] : memref<?x2xf32>
      }
    }
  }
  return
}

// -----

// Host work on buffers (a store outside every parallel loop) becomes a
// kernel of one thread.
// CHECK-LABEL: func.func @host_store
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}})
// CHECK:   scf.parallel
// CHECK:     memref.store
// CHECK-NOT: memref.store
// CHECK: return
func.func @host_store(%a: memref<4xf32>, %v: f32) {
  %c2 = arith.constant 2 : index
  memref.store %v, %a[%c2] : memref<4xf32>
  return
}

// -----

// Host work, then a shape query the host uses (a later kernel's bounds):
// the query does not compute on the work's values, so it stays on the
// host, moved before the work's one-thread kernel. The multiply does
// compute on them and joins it.
// CHECK-LABEL: func.func @host_work_then_dim
// CHECK: memref.dim %arg0
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}})
// CHECK:   memref.load %arg1[]
// CHECK:   arith.mulf
// CHECK:   memref.store
// CHECK: scf.parallel
func.func @host_work_then_dim(%a: memref<?xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %v = memref.load %s[] : memref<f32>
  %w = arith.mulf %v, %two : f32
  memref.store %w, %s[] : memref<f32>
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %s[] : memref<f32>
    memref.store %x, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// An index the host computes between a load and the store that uses both
// (a pure op that does not read the work) moves before the work's kernel,
// which keeps the load and the store together.
// CHECK-LABEL: func.func @host_index_between
// CHECK: %[[I:.*]] = arith.index_cast %arg2 : i32 to index
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}})
// CHECK:   %[[V:.*]] = memref.load %arg1[]
// CHECK:   memref.store %[[V]], %arg0[%[[I]]]
func.func @host_index_between(%a: memref<?xf32>, %s: memref<f32>, %k: i32) {
  %v = memref.load %s[] : memref<f32>
  %i = arith.index_cast %k : i32 to index
  memref.store %v, %a[%i] : memref<?xf32>
  return
}

// -----

// Nothing to map: only views and shape queries on the host.
// CHECK-LABEL: func.func @views_only
// CHECK-NOT: scf.parallel
// CHECK-NOT: mapping
func.func @views_only(%a: memref<?x4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %v = memref.collapse_shape %a [[0, 1]] : memref<?x4xf32> into memref<?xf32>
  %d = memref.dim %v, %c0 : memref<?xf32>
  return %d : index
}

// -----

// A value read on the host and used there cannot run on the GPU: an error
// naming the op.
func.func @host_read(%a: memref<4xindex>) -> index {
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'memref.load' reads GPU memory on the host and the host uses its result}}
  %v = memref.load %a[%c2] : memref<4xindex>
  return %v : index
}
