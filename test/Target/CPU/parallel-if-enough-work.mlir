// RUN: tessera-opt %s --split-input-file --tessera-cpu-parallel-if-enough-work=min-parallel-work=1000 | FileCheck %s

// A loop nest of dynamic bounds whose body makes 4 ops of work: the
// threads fork when its ceil(n / 1) * ceil(w / 16) iterations are two or
// more and at least ceil(1000 / 4) = 250.
// CHECK-LABEL: func @dynamic_bounds
// CHECK: %[[ROWS:.*]] = arith.ceildivsi
// CHECK: %[[COLS:.*]] = arith.ceildivsi
// CHECK: %[[TRIPS:.*]] = arith.muli {{.*}}, %[[COLS]] : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[MANY:.*]] = arith.cmpi sge, %[[TRIPS]], %[[TWO]] : index
// CHECK: %[[LEAST:.*]] = arith.constant 250 : index
// CHECK: %[[BIG:.*]] = arith.cmpi sge, %[[TRIPS]], %[[LEAST]] : index
// CHECK: %[[ENOUGH:.*]] = arith.andi %[[MANY]], %[[BIG]] : i1
// CHECK: omp.parallel if(%[[ENOUGH]])
func.func @dynamic_bounds(%m: memref<?x?xf32>, %n: index, %w: index) {
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

// Rows on threads, each a loop over a width of dynamic size (an image of
// symbolic size): work not known at compile time, the threads fork with
// two rows or more.
// CHECK-LABEL: func @row_loop
// CHECK: %[[ROWS:.*]] = arith.ceildivsi
// CHECK: %[[TRIPS:.*]] = arith.muli {{.*}}, %[[ROWS]] : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[TRIPS]], %[[TWO]] : index
// CHECK-NOT: arith.andi
// CHECK: omp.parallel if(%[[ENOUGH]])
func.func @row_loop(%m: memref<?x?xf32>, %n: index, %w: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        scf.for %j = %c0 to %w step %c16 {
          %v = memref.load %m[%i, %j] : memref<?x?xf32>
          memref.store %v, %m[%i, %j] : memref<?x?xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

func.func private @unknown(index)

// A body whose work is not known before the region (a call; in a model, a
// block of a product's rows of dynamic size): the threads fork when there
// are two iterations or more.
// CHECK-LABEL: func @unknown_work
// CHECK: %[[TRIPS:.*]] = arith.muli
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[TRIPS]], %[[TWO]] : index
// CHECK-NOT: arith.andi
// CHECK: omp.parallel if(%[[ENOUGH]])
func.func @unknown_work(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        func.call @unknown(%i) : (index) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Must not fire: constant bounds (tessera-cpu-sequentialize-nested-parallel
// decides those at compile time), a region that already has an `if`,
// inclusive bounds, i32 bounds, a dynamic step, and a bound computed inside
// the region.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: arith.cmpi
// CHECK: omp.parallel {
// CHECK: omp.parallel if(%{{.*}}) {
// CHECK: omp.parallel {
// CHECK: omp.parallel {
// CHECK: omp.parallel {
// CHECK: omp.parallel {
// CHECK-NOT: omp.parallel if
func.func @left_alone(%m: memref<?xf32>, %n: index, %flag: i1, %a: i32, %b: i32, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
        %v = memref.load %m[%i] : memref<?xf32>
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel if(%flag) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %v = memref.load %m[%i] : memref<?xf32>
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) inclusive step (%c1) {
        %v = memref.load %m[%i] : memref<?xf32>
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  %one = arith.constant 1 : i32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i32 = (%a) to (%b) step (%one) {
        %x = arith.index_cast %i : i32 to index
        %v = memref.load %m[%x] : memref<?xf32>
        memref.store %v, %m[%x] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%s) {
        %v = memref.load %m[%i] : memref<?xf32>
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    %k = memref.dim %m, %c0 : memref<?xf32>
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%k) step (%c1) {
        %v = memref.load %m[%i] : memref<?xf32>
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
