// RUN: tessera-opt %s --split-input-file --tessera-cpu-static-chunks | FileCheck %s

// A collapsed nest of two loops: each thread runs its share of the
// ceil(n / 1) * ceil(w / 16) iterations, [total * t / T, total * (t + 1) / T),
// with (i, j) divided out of its first iteration once (by max(trips, 1):
// an empty inner loop divides by nothing) and then carried (j steps,
// wrapping to 0 into i); no worksharing loop (no
// __kmpc_for_static_init, no barrier before the region's join).
// CHECK-LABEL: func @collapsed
// CHECK: omp.parallel {
// CHECK: %[[ROWS:.*]] = arith.ceildivsi
// CHECK: %[[COLS:.*]] = arith.ceildivsi
// CHECK: %[[TOTAL:.*]] = arith.muli {{.*}}, %[[COLS]] : index
// CHECK: %[[T32:.*]] = func.call @omp_get_thread_num() : () -> i32
// CHECK: %[[T:.*]] = arith.index_cast %[[T32]] : i32 to index
// CHECK: %[[N32:.*]] = func.call @omp_get_num_threads() : () -> i32
// CHECK: %[[N:.*]] = arith.index_cast %[[N32]] : i32 to index
// CHECK: %[[B0:.*]] = arith.muli %[[TOTAL]], %[[T]] : index
// CHECK: %[[BEGIN:.*]] = arith.divui %[[B0]], %[[N]] : index
// CHECK: %[[T1:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK: %[[E0:.*]] = arith.muli %[[TOTAL]], %[[T1]] : index
// CHECK: %[[END:.*]] = arith.divui %[[E0]], %[[N]] : index
// CHECK: %[[DIV:.*]] = arith.maxui %[[COLS]], %{{.*}} : index
// CHECK: %[[J0:.*]] = arith.remui %[[BEGIN]], %[[DIV]] : index
// CHECK: %[[I0:.*]] = arith.divui %[[BEGIN]], %[[DIV]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]] step %[[ONE:.*]] iter_args(%[[II:.*]] = %[[I0]], %[[JI:.*]] = %[[J0]]) -> (index, index) {
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: %[[IS:.*]] = arith.muli %[[II]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[IS]] : index
// CHECK: %[[JS:.*]] = arith.muli %[[JI]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.addi %{{.*}}, %[[JS]] : index
// CHECK: memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK: %[[JN:.*]] = arith.addi %[[JI]], %[[ONE]] : index
// CHECK: %[[JW:.*]] = arith.cmpi eq, %[[JN]], %[[COLS]] : index
// CHECK: %[[JM:.*]] = arith.select %[[JW]], %{{.*}}, %[[JN]] : index
// CHECK: %[[IN:.*]] = arith.addi %[[II]], %[[ONE]] : index
// CHECK: %[[IW:.*]] = arith.cmpi eq, %[[IN]], %[[ROWS]] : index
// CHECK: scf.yield %{{.*}}, %{{.*}} : index, index
// CHECK-NOT: omp.wsloop
// CHECK: omp.terminator
// CHECK: func.func private @omp_get_thread_num() -> i32
// CHECK: func.func private @omp_get_num_threads() -> i32
func.func @collapsed(%m: memref<?x?xf32>, %n: index, %w: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%n, %w) step (%c1, %c16) collapse(2) {
        %v = memref.load %m[%i, %j] : memref<?x?xf32>
        %d = arith.addf %v, %v : f32
        memref.store %d, %m[%i, %j] : memref<?x?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// One loop: the linear iteration is the loop's own, no division; the
// region keeps its `if`.
// CHECK-LABEL: func @one_loop
// CHECK: omp.parallel if(%{{.*}}) {
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{[a-z0-9_]+}} {
// CHECK-NOT: arith.divui
// CHECK: %[[S:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %{{.*}}, %[[S]] : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]]
// CHECK-NOT: omp.wsloop
func.func @one_loop(%m: memref<?xf32>, %n: index, %go: i1) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  omp.parallel if(%go) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c4) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Must not fire: a reduction, an op after the loop in its region, a
// dynamic schedule, inclusive bounds, a non-constant step and a nested
// wrapper (simd) keep their worksharing loops (and nothing is declared).
// CHECK-LABEL: func @left_alone
// CHECK-COUNT-6: omp.wsloop
// CHECK-NOT: scf.for
// CHECK-NOT: omp_get_thread_num
omp.declare_reduction @add_f32 : f32 init {
^bb0(%arg: f32):
  %0 = arith.constant 0.0 : f32
  omp.yield (%0 : f32)
} combiner {
^bb1(%a: f32, %b: f32):
  %1 = arith.addf %a, %b : f32
  omp.yield (%1 : f32)
}
func.func @left_alone(%m: memref<?xf32>, %sum: memref<f32>, %n: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %acc = llvm.mlir.constant(1 : i64) : i64
  %ptr = llvm.alloca %acc x f32 : (i64) -> !llvm.ptr
  omp.parallel {
    omp.wsloop reduction(@add_f32 %ptr -> %prv : !llvm.ptr) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %v = memref.load %m[%i] : memref<?xf32>
        %old = llvm.load %prv : !llvm.ptr -> f32
        %new = arith.addf %old, %v : f32
        llvm.store %new, %prv : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.barrier
    omp.terminator
  }
  omp.parallel {
    omp.wsloop schedule(dynamic) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) inclusive step (%c1) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%s) {
        memref.store %f, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.simd {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          memref.store %f, %m[%i] : memref<?xf32>
          omp.yield
        }
      } {omp.composite}
    } {omp.composite}
    omp.terminator
  }
  return
}
