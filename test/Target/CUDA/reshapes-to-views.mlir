// RUN: tessera-opt --split-input-file --tessera-cuda-reshapes-to-views %s | FileCheck %s

// A reshape whose shape buffer the host fills with runtime dims becomes a
// view with those sizes and row-major strides; the buffer goes away.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.reshape
// CHECK: %[[D:.*]] = memref.dim %arg0, %c0
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[D]], 4, 16], strides: [64, 16, 1]
func.func @dynamic(%a: memref<?x64xf32>) -> memref<?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %d = memref.dim %a, %c0 : memref<?x64xf32>
  %shape = memref.alloc() : memref<3xindex>
  memref.store %d, %shape[%c0] : memref<3xindex>
  memref.store %c4, %shape[%c1] : memref<3xindex>
  memref.store %c16, %shape[%c2] : memref<3xindex>
  %r = memref.reshape %a(%shape) : (memref<?x64xf32>, memref<3xindex>) -> memref<?x4x16xf32>
  memref.dealloc %shape : memref<3xindex>
  return %r : memref<?x4x16xf32>
}

// -----

// A shape that comes from elsewhere (an argument) is left alone.
// CHECK-LABEL: func.func @from_argument
// CHECK: memref.reshape
// CHECK-NOT: memref.reinterpret_cast
func.func @from_argument(%a: memref<?x64xf32>, %shape: memref<2xindex>) -> memref<?x?xf32> {
  %r = memref.reshape %a(%shape) : (memref<?x64xf32>, memref<2xindex>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

// An element stored twice is not a known shape: left alone.
// CHECK-LABEL: func.func @stored_twice
// CHECK: memref.reshape
func.func @stored_twice(%a: memref<64xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %shape = memref.alloc() : memref<1xindex>
  memref.store %n, %shape[%c0] : memref<1xindex>
  memref.store %n, %shape[%c0] : memref<1xindex>
  %r = memref.reshape %a(%shape) : (memref<64xf32>, memref<1xindex>) -> memref<?xf32>
  return %r : memref<?xf32>
}
