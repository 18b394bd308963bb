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

// -----

// RUN: tessera-opt %s --split-input-file --tessera-cpu-sequentialize-nested-parallel=min-parallel-work=4096 | FileCheck %s --check-prefix=WORK

// With min-parallel-work, a parallel loop whose whole work is known and
// small (4 iterations of a few ops) runs sequentially; one with as many
// iterations but a large constant inner loop stays parallel, and so does
// one with a dynamic bound (the must-not-fire cases).
// WORK-LABEL: func @small
// WORK-NOT: scf.parallel
// WORK: scf.for
func.func @small(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %m[%i] : memref<4xf32>
    %n = arith.negf %v : f32
    memref.store %n, %m[%i] : memref<4xf32>
  }
  return
}

// WORK-LABEL: func @large_inner
// WORK: scf.parallel
func.func @large_inner(%m: memref<4x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c4096 step %c1 {
      %v = memref.load %m[%i, %j] : memref<4x4096xf32>
      %n = arith.negf %v : f32
      memref.store %n, %m[%i, %j] : memref<4x4096xf32>
    }
  }
  return
}

// WORK-LABEL: func @dynamic
// WORK: scf.parallel
func.func @dynamic(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %m[%i] : memref<?xf32>
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}

// A store of a constant vector (a padded buffer's zero fill, row by row)
// counts once per 16 lanes of the stored vector: 144 x 58 rows of 58 are
// 144 * 58 * 4 ops, parallel at min-parallel-work=32768 (counting each
// store once, 8352, ran 1.9 MB of zeros on one thread); rows of 8 stay
// sequential.
// RUN: tessera-opt %s --split-input-file --tessera-cpu-sequentialize-nested-parallel=min-parallel-work=32768 | FileCheck %s --check-prefix=STORES
// STORES-LABEL: func @fill_rows
// STORES: scf.parallel
// STORES-LABEL: func @fill_short_rows
// STORES-NOT: scf.parallel
func.func @fill_rows(%m: memref<144x58x58xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c58 = arith.constant 58 : index
  %c144 = arith.constant 144 : index
  %zero = arith.constant dense<0.0> : vector<58xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c144, %c58) step (%c1, %c1) {
    vector.transfer_write %zero, %m[%i, %j, %c0] {in_bounds = [true]} : vector<58xf32>, memref<144x58x58xf32>
  }
  return
}

func.func @fill_short_rows(%m: memref<144x58x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c58 = arith.constant 58 : index
  %c144 = arith.constant 144 : index
  %zero = arith.constant dense<0.0> : vector<8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c144, %c58) step (%c1, %c1) {
    vector.transfer_write %zero, %m[%i, %j, %c0] {in_bounds = [true]} : vector<8xf32>, memref<144x58x8xf32>
  }
  return
}

// -----

// RUN: tessera-opt %s --split-input-file --tessera-cpu-sequentialize-nested-parallel=min-parallel-work=4096 | FileCheck %s --check-prefix=INFOR
// Inside sequential loops only (a convolution over a symbolic batch, one
// GEMM per image), a parallel loop whose work is known and enough stays
// parallel, forking once per image; one of too little work, or of work
// known only at run time, runs sequentially as before.
// INFOR-LABEL: func @per_image
// STORES-LABEL: func @per_image
// INFOR: scf.for
// INFOR-NEXT: scf.parallel
// INFOR: scf.for
// INFOR-NOT: scf.parallel
// INFOR: return
func.func @per_image(%m: memref<?x64x4096xf32>, %s: memref<?x4xf32>, %n: index, %w: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      scf.for %k = %c0 to %c4096 step %c1 {
        memref.store %f, %m[%i, %j, %k] : memref<?x64x4096xf32>
      }
      scf.reduce
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      memref.store %f, %s[%i, %j] : memref<?x4xf32>
      scf.reduce
    }
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      scf.for %k = %c0 to %w step %c1 {
        memref.store %f, %m[%i, %j, %k] : memref<?x64x4096xf32>
      }
      scf.reduce
    }
  }
  return
}
