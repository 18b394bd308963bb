// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// Every packed rhs panel of a tiled matmul is freed inside the thread's
// loop body: one malloc and one free in the OpenMP region, and the result
// buffer (owned by the caller) is the only other allocation.
// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @malloc
// CHECK: omp.parallel
// CHECK: llvm.call @malloc
// CHECK: llvm.call @free
// CHECK: omp.terminator
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.return
func.func @main(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %0 = tessera.matmul %a, %b : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
