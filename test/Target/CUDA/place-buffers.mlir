// RUN: tessera-opt --tessera-cuda-place-buffers %s | FileCheck %s

// CHECK: module attributes {tessera.cuda.host_globals = [@shape_only, @both_host]}
// A global also read by a kernel keeps its device use; the host's read
// goes to a copy.
// CHECK: memref.global "private" constant @both :
// CHECK: memref.global "private" constant @both_host :
module {
  memref.global "private" constant @shape_only : memref<2xindex> = dense<[4, 16]>
  memref.global "private" constant @both : memref<2xindex> = dense<[1, 2]>
  memref.global "private" constant @weights : memref<4xf32> = dense<1.0>

  // CHECK-LABEL: func.func @f
  func.func @f(%out: memref<4xf32>) -> index {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // A small buffer only the host reads and writes goes on its stack.
    // CHECK: memref.alloca() : memref<2xindex>
    // CHECK-NOT: memref.dealloc
    %s = memref.alloc() : memref<2xindex>
    memref.store %c4, %s[%c0] : memref<2xindex>
    %x = memref.load %s[%c0] : memref<2xindex>
    memref.dealloc %s : memref<2xindex>
    // A buffer a parallel loop (a kernel) touches stays device memory.
    // CHECK: memref.alloc() : memref<4xf32>
    %t = memref.alloc() : memref<4xf32>
    // CHECK: memref.get_global @shape_only
    %g = memref.get_global @shape_only : memref<2xindex>
    %y = memref.load %g[%c1] : memref<2xindex>
    // CHECK: memref.get_global @both_host
    %b = memref.get_global @both : memref<2xindex>
    %z = memref.load %b[%c1] : memref<2xindex>
    // CHECK: memref.get_global @both :
    // CHECK: memref.get_global @weights
    %b2 = memref.get_global @both : memref<2xindex>
    %w = memref.get_global @weights : memref<4xf32>
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      %v = memref.load %w[%i] : memref<4xf32>
      %k = memref.load %b2[%c0] : memref<2xindex>
      memref.store %v, %t[%i] : memref<4xf32>
      memref.store %v, %out[%k] : memref<4xf32>
    }
    memref.dealloc %t : memref<4xf32>
    %sum = arith.addi %x, %y : index
    %r = arith.addi %sum, %z : index
    return %r : index
  }
}
