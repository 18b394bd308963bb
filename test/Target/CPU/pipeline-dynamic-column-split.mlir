// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// A matmul with symbolic rows whose lhs is computed in the function (a
// ViT's classifier head after the class token is gathered) and whose 40
// columns split into a 32- and an 8-column contraction. Bufferization
// leaves trivial deallocations in the row loops; they are canonicalized
// away before the deallocation simplification, whose buffer-origin
// analysis crashed on the erased values. The two parts start from the
// fill in registers: the only parallel region left is the product's lhs
// (a panel loop of one iteration runs on the calling thread), not a fill
// of the whole result.
// CHECK-LABEL: llvm.func @head
// CHECK-COUNT-1: omp.parallel
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
func.func @head(%x: tensor<?x64xf32>, %w: tensor<64x40xf32>) -> tensor<?x40xf32> {
  %y = tessera.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %z = tessera.matmul %y, %w : tensor<?x64xf32>, tensor<64x40xf32> -> tensor<?x40xf32>
  return %z : tensor<?x40xf32>
}
