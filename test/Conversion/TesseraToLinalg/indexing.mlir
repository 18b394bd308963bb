// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg --canonicalize | FileCheck %s

// gather_elements: a generic over the indices reading the input with the
// index (counted from the back when negative) in place of the axis.
// CHECK-LABEL: func @gather_elements
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<3x2xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<3x2xi64>)
// CHECK: ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[RAW:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[RAW]]
// CHECK: %[[IDX:.*]] = arith.select %[[NEG]]
// CHECK: tensor.extract %[[X]][%[[ROW]], %[[IDX]]] : tensor<3x4xf32>
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = tessera.gather_elements %x[%i] axis 1 : tensor<3x4xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// gather_nd: each result element reads its index tuple, then the input.
// CHECK-LABEL: func @gather_nd
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<2x2xi64>)
// CHECK: linalg.generic
// CHECK-COUNT-2: tensor.extract %[[I]]
// CHECK: tensor.extract %[[X]]
func.func @gather_nd(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>) -> tensor<2xf32> {
  %0 = tessera.gather_nd %x[%i] : tensor<3x4xf32>, tensor<2x2xi64> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// scatter_nd with add: a loop over the index tuples threading the data;
// each tuple's row is combined with its update slice and written back.
// CHECK-LABEL: func @scatter_nd_add
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>, %[[I:.*]]: tensor<2x1xi64>, %[[U:.*]]: tensor<2x5xf32>)
// CHECK: scf.for %[[T:.*]] = %{{.*}} iter_args(%[[CUR:.*]] = %[[X]]) -> (tensor<4x5xf32>)
// CHECK: tensor.extract %[[I]][%[[T]], %{{.*}}]
// CHECK: %[[UPD:.*]] = tensor.extract_slice %[[U]][%[[T]], 0] [1, 5] [1, 1] : tensor<2x5xf32> to tensor<5xf32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[CUR]]
// CHECK: linalg.generic {{.*}} ins(%[[OLD]], %[[UPD]]
// CHECK: arith.addf
// CHECK: tensor.insert_slice %{{.*}} into %[[CUR]]
func.func @scatter_nd_add(%x: tensor<4x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %0 = tessera.scatter_nd %x[%i], %u {reduction = 1 : i32} : tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// scatter_nd without a reduction writes the update slice as it is.
// CHECK-LABEL: func @scatter_nd
// CHECK: scf.for
// CHECK-NOT: linalg.generic
// CHECK: tensor.insert_slice
func.func @scatter_nd(%x: tensor<4x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x5xf32>) -> tensor<4x5xf32> {
  %0 = tessera.scatter_nd %x[%i], %u : tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// scatter_elements: a loop nest over the indices, one tensor.insert each.
// CHECK-LABEL: func @scatter_elements
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<3x2xi64>, %[[U:.*]]: tensor<3x2xf32>)
// CHECK: scf.for %[[R:.*]] = {{.*}} iter_args(%{{.*}} = %[[X]])
// CHECK: scf.for %[[C:.*]] = {{.*}} iter_args(%[[CUR:.*]] = %{{.*}})
// CHECK: %[[V:.*]] = tensor.extract %[[U]][%[[R]], %[[C]]]
// CHECK: tensor.insert %[[V]] into %[[CUR]][%[[R]], %{{.*}}] : tensor<3x4xf32>
func.func @scatter_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %0 = tessera.scatter_elements %x[%i], %u axis 1 : tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
