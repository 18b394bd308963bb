// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// A matmul with symbolic rows whose lhs is computed in the function (a
// ViT's classifier head after the class token is gathered) and whose 40
// columns split into a 32- and an 8-column contraction. Bufferization
// leaves trivial deallocations in the row loops; they are canonicalized
// away before the deallocation simplification, whose buffer-origin
// analysis crashed on the erased values. The two parts start from the
// fill in registers: no parallel region fills the whole result. Three
// parallel regions are left, the product's lhs and the two parts' blocks
// of 256 rows, and each forks the threads only when it has the work for
// it (`if`): the lhs when its rows make enough elements, a part when its
// rows make two blocks or more.
// CHECK-LABEL: llvm.func @head
// CHECK-COUNT-3: omp.parallel if(
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
func.func @head(%x: tensor<?x64xf32>, %w: tensor<64x40xf32>) -> tensor<?x40xf32> {
  %y = tessera.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %z = tessera.matmul %y, %w : tensor<?x64xf32>, tensor<64x40xf32> -> tensor<?x40xf32>
  return %z : tensor<?x40xf32>
}
