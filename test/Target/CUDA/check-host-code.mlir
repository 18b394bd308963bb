// RUN: tessera-opt --split-input-file --verify-diagnostics --tessera-cuda-check-host-code %s | FileCheck %s

// Host code that only launches kernels, allocates, views and reads its own
// stack buffers passes.
// CHECK-LABEL: func.func @clean
func.func @clean(%a: memref<4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %s = memref.alloca() : memref<2xindex>
  memref.store %c2, %s[%c0] : memref<2xindex>
  %v = memref.load %s[%c0] : memref<2xindex>
  %t = memref.alloc() : memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return %v : index
}

// -----

func.func @reads_device(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' reads or writes GPU memory from host code}}
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @unmapped(%a: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{a parallel loop nest was left on the host}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %v, %a[%i] : memref<4xf32>
  }
  return
}
