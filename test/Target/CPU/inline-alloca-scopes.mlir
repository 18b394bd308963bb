// RUN: tessera-opt %s --split-input-file --tessera-cpu-inline-alloca-scopes | FileCheck %s

// A scope holding a call (buffer deallocation's helper) and a loop, and no
// alloca, is inlined into its parent.
// CHECK-LABEL: func @call_inside
// CHECK-NOT: memref.alloca_scope
// CHECK: scf.for
// CHECK: call @helper
// CHECK: return
func.func private @helper(memref<?xf32>)
func.func @call_inside(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.alloca_scope {
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %m[%i] : memref<?xf32>
      memref.store %v, %m[%c0] : memref<?xf32>
    }
    func.call @helper(%m) : (memref<?xf32>) -> ()
  }
  return
}

// -----

// Must not fire: a scope with an alloca of its own keeps it; an inner
// scope's alloca does not count for the outer one, which is inlined.
// CHECK-LABEL: func @with_alloca
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<4xf32>
// CHECK: return
func.func @with_alloca() {
  memref.alloca_scope {
    memref.alloca_scope {
      %a = memref.alloca() : memref<4xf32>
    }
  }
  return
}
