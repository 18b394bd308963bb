// RUN: tessera-opt %s --split-input-file --tessera-cpu-copy-strided-results | FileCheck %s

// The real rows of an output padded to whole blocks: the slice's dim-0
// stride is known only at run time, so the function returns a copy.
// CHECK-LABEL: func @padded_rows
func.func @padded_rows(%padded: tensor<4x?x16xf32>, %rows: index) -> tensor<4x?x16xf32> {
  // CHECK: %[[SLICE:.*]] = tensor.extract_slice
  // CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[SLICE]]) : tensor<4x?x16xf32>
  // CHECK: return %[[COPY]]
  %0 = tensor.extract_slice %padded[0, 0, 0] [4, %rows, 16] [1, 1, 1] : tensor<4x?x16xf32> to tensor<4x?x16xf32>
  return %0 : tensor<4x?x16xf32>
}

// -----

// A column slice of a static matrix is strided too.
// CHECK-LABEL: func @columns
func.func @columns(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  // CHECK: bufferization.alloc_tensor() copy(
  %0 = tensor.extract_slice %x[0, 2] [8, 4] [1, 1] : tensor<8x16xf32> to tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Contiguous slices stay views: rows of a matrix (the outer dim cut, the
// inner ones whole), a unit-sized leading dim then a cut, and results that
// are not slices.
// CHECK-LABEL: func @contiguous
// CHECK-NOT: bufferization.alloc_tensor
func.func @contiguous(%x: tensor<?x16xf32>, %y: tensor<4x8x16xf32>, %n: index) -> (tensor<?x16xf32>, tensor<1x3x16xf32>, tensor<?x16xf32>) {
  %0 = tensor.extract_slice %x[2, 0] [%n, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
  %1 = tensor.extract_slice %y[1, 2, 0] [1, 3, 16] [1, 1, 1] : tensor<4x8x16xf32> to tensor<1x3x16xf32>
  return %0, %1, %x : tensor<?x16xf32>, tensor<1x3x16xf32>, tensor<?x16xf32>
}
