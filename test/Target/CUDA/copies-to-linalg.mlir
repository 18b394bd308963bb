// RUN: tessera-opt --tessera-cuda-copies-to-linalg %s | FileCheck %s

// A copy bufferization left (an output that is a weight) becomes a
// linalg.copy, so that it is lowered to a kernel.
// CHECK-LABEL: func.func @copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<2x3xf32>) outs(%{{.*}} : memref<2x3xf32>)
func.func @copy(%a: memref<2x3xf32>, %b: memref<2x3xf32>) {
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  return
}

// Other memory ops are not copies.
// CHECK-LABEL: func.func @no_copy
// CHECK-NOT: linalg.copy
// CHECK: memref.store
func.func @no_copy(%a: memref<2xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  memref.store %v, %a[%c0] : memref<2xf32>
  return
}
