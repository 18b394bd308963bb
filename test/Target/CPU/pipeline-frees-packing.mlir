// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// Every packed rhs panel of a tiled matmul is freed inside the thread's
// loop body: one allocation and one free in the matmul's OpenMP region
// (after the one that zero-fills the result), and the result buffer (owned
// by the caller) is the only other allocation. Allocations go through the
// runtime's block cache.
// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: omp.parallel
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: omp.terminator
// CHECK: omp.parallel
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: omp.terminator
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.return
func.func @main(%a: tensor<16x64xf32>, %b: tensor<64x96xf32>) -> tensor<16x96xf32> {
  %0 = tessera.matmul %a, %b : tensor<16x64xf32>, tensor<64x96xf32> -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}
