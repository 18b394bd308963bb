// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// Every packed rhs panel of a tiled matmul (128 rows: 16 row tiles read
// each panel, so it is copied) is freed inside the thread's loop body:
// one allocation and one free in the matmul's OpenMP region. Before it,
// the packed lhs and the result buffer (owned by the caller) are
// allocated; packing the lhs is too little work to fork threads for, so
// it runs on the calling thread (loops as blocks), and the matmul's is the
// only parallel region. Allocations go through the runtime's block cache.
// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK-NOT: omp.parallel
// CHECK: llvm.br
// CHECK-NOT: omp.parallel
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK-NEXT: llvm.mlir.zero
// CHECK: omp.parallel
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.return
func.func @main(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  %0 = tessera.matmul %a, %b : tensor<128x64xf32>, tensor<64x96xf32> -> tensor<128x96xf32>
  return %0 : tensor<128x96xf32>
}
