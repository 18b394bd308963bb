// RUN: tessera-opt %s --split-input-file --tessera-cpu-free-forall-allocations | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cpu-free-forall-allocations | mlir-opt --split-input-file --ownership-based-buffer-deallocation --canonicalize | FileCheck %s --check-prefix=FREED

// A forall body is wrapped in an execute_region, so that buffer
// deallocation frees what an iteration allocates: a buffer made directly
// in the body and the buffers a loop inside it returns.
// CHECK-LABEL: func @packed
// CHECK: scf.forall
// CHECK-NEXT: scf.execute_region {
// CHECK-NEXT: memref.subview
// CHECK: memref.store
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// FREED-LABEL: func @packed
// FREED: scf.forall
// FREED-NOT: scf.execute_region
// FREED: %[[P:.*]] = memref.alloc() : memref<4x32xf32>
// FREED: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[P]], %{{.*}} = %false)
// FREED: memref.load %[[R]]#0
// FREED: %[[BASE:[a-z_0-9]+]], %{{.*}} = memref.extract_strided_metadata %[[R]]#0
// FREED-NEXT: bufferization.dealloc (%[[P]], %[[BASE]] : memref<4x32xf32>, memref<f32>) if (%true, %[[R]]#1)
func.func @packed(%b: memref<4x64xf32>, %o: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%j) = (0) to (64) step (32) {
    %s = memref.subview %b[0, %j] [4, 32] [1, 1] : memref<4x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
    %p = memref.alloc() : memref<4x32xf32>
    memref.copy %s, %p : memref<4x32xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32>
    // A loop-carried buffer replaced on each step, as bufferization writes
    // attention's running maximum.
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %p) -> (memref<4x32xf32>) {
      %n = memref.alloc() : memref<4x32xf32>
      memref.copy %acc, %n : memref<4x32xf32> to memref<4x32xf32>
      scf.yield %n : memref<4x32xf32>
    }
    %v = memref.load %r[%c0, %c0] : memref<4x32xf32>
    memref.store %v, %o[%j] : memref<64xf32>
  }
  return
}

// -----

// Must not fire: a forall whose body holds only its terminator.
// CHECK-LABEL: func @empty
// CHECK: scf.forall
// CHECK-NOT: scf.execute_region
func.func @empty() {
  scf.forall (%j) = (0) to (64) step (32) {
  }
  return
}
