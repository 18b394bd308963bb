// RUN: tessera-opt %s --split-input-file --tessera-cpu-free-forall-allocations | FileCheck %s

// A buffer allocated in each forall iteration is freed at its end.
// CHECK-LABEL: func @packed
// CHECK: scf.forall
// CHECK: %[[P:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK: memref.copy %{{.*}}, %[[P]]
// CHECK: memref.dealloc %[[P]] : memref<4x32xf32>
// CHECK-NEXT: }
func.func @packed(%b: memref<4x64xf32>, %o: memref<64xf32>) {
  scf.forall (%j) = (0) to (64) step (32) {
    %s = memref.subview %b[0, %j] [4, 32] [1, 1] : memref<4x64xf32> to memref<4x32xf32, strided<[64, 1], offset: ?>>
    %p = memref.alloc() : memref<4x32xf32>
    memref.copy %s, %p : memref<4x32xf32, strided<[64, 1], offset: ?>> to memref<4x32xf32>
    %c0 = arith.constant 0 : index
    %v = memref.load %p[%c0, %c0] : memref<4x32xf32>
    memref.store %v, %o[%j] : memref<64xf32>
  }
  return
}

// -----

// Must not fire: an allocation outside any forall (the caller owns it), and
// one the iteration already frees.
// CHECK-LABEL: func @untouched
// CHECK-COUNT-1: memref.dealloc
// CHECK-NOT: memref.dealloc
func.func @untouched() -> memref<8xf32> {
  %r = memref.alloc() : memref<8xf32>
  scf.forall (%j) = (0) to (2) step (1) {
    %p = memref.alloc() : memref<8xf32>
    memref.dealloc %p : memref<8xf32>
  }
  return %r : memref<8xf32>
}
