// RUN: tessera-opt %s --split-input-file --tessera-cpu-guard-allocation-sizes | FileCheck %s

// The dynamic sizes' product is checked for overflow (and against 2^62
// bytes: 2^62 / (4 x 4 bytes) = 2^58); on overflow the sizes become 2^58
// and 1, so the byte size cannot wrap and the allocator refuses it.
// CHECK-LABEL: func @dynamic
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[M:.*]] = arith.index_castui %[[A:.*]] : index to i64
// CHECK-NEXT: %[[L1:.*]], %[[H1:.*]] = arith.mului_extended %[[ONE]], %[[M]] : i64
// CHECK-NEXT: %[[O1:.*]] = arith.cmpi ne, %[[H1]], %[[ZERO]] : i64
// CHECK: %[[N:.*]] = arith.index_castui %[[B:.*]] : index to i64
// CHECK-NEXT: %[[L2:.*]], %[[H2:.*]] = arith.mului_extended %[[L1]], %[[N]] : i64
// CHECK: arith.constant 288230376151711744 : i64
// CHECK: %[[BIG:.*]] = arith.cmpi ugt, %[[L2]]
// CHECK: %[[OVER:.*]] = arith.ori %{{.*}}, %[[BIG]] : i1
// CHECK: %[[S0:.*]] = arith.select %[[OVER]], %{{.*}}, %[[A]] : index
// CHECK: %[[S1:.*]] = arith.select %[[OVER]], %{{.*}}, %[[B]] : index
// CHECK: memref.alloc(%[[S0]], %[[S1]]) : memref<?x4x?xf32>
func.func @dynamic(%a: index, %b: index) -> memref<?x4x?xf32> {
  %m = memref.alloc(%a, %b) : memref<?x4x?xf32>
  return %m : memref<?x4x?xf32>
}

// -----

// Must not fire: a static allocation is left alone.
// CHECK-LABEL: func @static
// CHECK-NEXT: memref.alloc() : memref<4x8xf32>
// CHECK-NEXT: return
func.func @static() -> memref<4x8xf32> {
  %m = memref.alloc() : memref<4x8xf32>
  return %m : memref<4x8xf32>
}
