// RUN: tessera-opt %s --tessera-cpu-pipeline | FileCheck %s

// Row sums lower to LLVM's vector reduction with reassoc, which LLVM
// compiles as a tree of vector adds; in order it would be one dependent
// scalar add per element (128 for this row). The row maximum has no order
// to keep.
// CHECK-LABEL: llvm.func @softmax_rows
// CHECK: llvm.intr.vector.reduce.fmaximum(%{{.*}}) {fastmathFlags = #llvm.fastmath<reassoc>} : (vector<128xf32>) -> f32
// CHECK: "llvm.intr.vector.reduce.fadd"(%{{.*}}, %{{.*}}) <{fastmathFlags = #llvm.fastmath<reassoc>}> : (f32, vector<128xf32>) -> f32
// CHECK-NOT: fastmathFlags = #llvm.fastmath<none>
func.func @softmax_rows(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %p = tessera.softmax %x : tensor<64x128xf32>
  return %p : tensor<64x128xf32>
}
