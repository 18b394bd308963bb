// RUN: tessera-opt %s --split-input-file --tessera-cpu-sequentialize-nested-parallel | FileCheck %s

// A parallel loop inside a sequential one becomes sequential; the outermost
// parallel loop stays parallel.
// CHECK-LABEL: func @nested
func.func @nested(%m: memref<8x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  // CHECK: scf.parallel (%[[I:.*]]) =
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    // CHECK: scf.for %[[K:.*]] =
    scf.for %k = %c0 to %c8 step %c1 {
      // CHECK-NOT: scf.parallel
      // CHECK: scf.for %[[J:.*]] =
      // CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]], %[[K]], %[[J]]]
      scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
        memref.store %f, %m[%i, %k, %j] : memref<8x8x8xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// A lone parallel loop, and one with a reduction, are left alone.
// CHECK-LABEL: func @untouched
func.func @untouched(%m: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // CHECK: scf.parallel
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %m[%i] : memref<8xf32>
    scf.reduce
  }
  // CHECK: scf.for
  // CHECK: scf.parallel {{.*}} init
  %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %s = scf.parallel (%j) = (%c0) to (%c8) step (%c1) init (%acc) -> f32 {
      %v = memref.load %m[%j] : memref<8xf32>
      scf.reduce(%v : f32) {
      ^bb0(%a: f32, %b: f32):
        %sum = arith.addf %a, %b : f32
        scf.reduce.return %sum : f32
      }
    }
    scf.yield %s : f32
  }
  return %r : f32
}
