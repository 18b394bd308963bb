// RUN: tessera-opt %s --split-input-file --tessera-cpu-parallel-if-enough-work=min-parallel-work=1000 | FileCheck %s

// A loop nest of dynamic bounds whose body makes 4 ops of work: the
// threads fork when its ceil(n / 1) * ceil(m / 16) iterations are at least
// ceil(1000 / 4) = 250.
// CHECK-LABEL: func @dynamic_bounds
// CHECK-SAME: (%[[M:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[W:.*]]: index)
// CHECK-DAG: %[[ROWS:.*]] = arith.ceildivsi {{.*}}, %[[ONE:.*]] : index
// CHECK-DAG: %[[COLS:.*]] = arith.ceildivsi {{.*}}, %[[STEP:.*]] : index
// CHECK: %[[TRIPS:.*]] = arith.muli {{.*}}, %[[COLS]] : index
// CHECK: %[[LEAST:.*]] = arith.constant 250 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[TRIPS]], %[[LEAST]] : index
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

func.func private @unknown(index)

// A body of unknown work (a call; in a model, a block of a product's rows
// of dynamic size): the threads fork when there are two iterations or more.
// CHECK-LABEL: func @unknown_work
// CHECK: %[[TRIPS:.*]] = arith.muli
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[TRIPS]], %[[TWO]] : index
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
// decides those at compile time), a region that already has an `if`.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: arith.cmpi
// CHECK: omp.parallel {
// CHECK: omp.parallel if(%{{.*}}) {
// CHECK-NOT: omp.parallel if
func.func @left_alone(%m: memref<?xf32>, %n: index, %flag: i1) {
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
  return
}
