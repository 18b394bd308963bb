// RUN: tessera-opt %s --split-input-file --tessera-cpu-parallel-copies | FileCheck %s

// An image inserted into the interior of its padded buffer (a pad before
// a depthwise convolution over an image of symbolic size): a parallel
// loop over the rows, each row in masked steps of 16.
// CHECK-LABEL: func @pad_interior
// CHECK-SAME: (%[[SRC:.*]]: memref<?x16x?x?xf32>, %[[DST:.*]]: memref<?x16x?x?xf32>
func.func @pad_interior(%src: memref<?x16x?x?xf32>, %dst: memref<?x16x?x?xf32>, %h: index, %w: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %src, %c0 : memref<?x16x?x?xf32>
  %interior = memref.subview %dst[0, 0, 1, 1] [%n, 16, %h, %w] [1, 1, 1, 1] : memref<?x16x?x?xf32> to memref<?x16x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
  // CHECK: %[[VIEW:.*]] = memref.subview %[[DST]]
  // CHECK-DAG: %[[N:.*]] = memref.dim %[[SRC]], %c0
  // CHECK-DAG: %[[H:.*]] = memref.dim %[[SRC]], %c2
  // CHECK-DAG: %[[W:.*]] = memref.dim %[[SRC]], %c3
  // CHECK: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = (%c0{{.*}}, %c0{{.*}}, %c0{{.*}}) to (%[[N]], %c16{{.*}}, %[[H]])
  // CHECK: scf.for %[[COL:.*]] = %c0{{.*}} to %[[W]] step %c16
  // CHECK: %[[COUNT:.*]] = affine.min {{.*}}(%[[COL]])[%[[W]]]
  // CHECK: %[[MASK:.*]] = vector.create_mask %[[COUNT]] : vector<16xi1>
  // CHECK: %[[ROW:.*]] = vector.transfer_read %[[SRC]][%[[I]], %[[J]], %[[K]], %[[COL]]], %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<?x16x?x?xf32>, vector<16xf32>
  // CHECK: vector.transfer_write %[[ROW]], %[[VIEW]][%[[I]], %[[J]], %[[K]], %[[COL]]], %[[MASK]] {in_bounds = [true]}
  // CHECK-NOT: memref.copy
  memref.copy %src, %interior : memref<?x16x?x?xf32> to memref<?x16x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
  return
}

// -----

// A concatenation's slot along the channels, static: the same loop.
// CHECK-LABEL: func @concat_slot
func.func @concat_slot(%src: memref<2x24x40xf32>, %dst: memref<2x96x40xf32>) {
  %slot = memref.subview %dst[0, 24, 0] [2, 24, 40] [1, 1, 1] : memref<2x96x40xf32> to memref<2x24x40xf32, strided<[3840, 40, 1], offset: 960>>
  // CHECK: scf.parallel
  // CHECK: vector.transfer_read {{.*}} : memref<2x24x40xf32>, vector<16xf32>
  // CHECK-NOT: memref.copy
  memref.copy %src, %slot : memref<2x24x40xf32> to memref<2x24x40xf32, strided<[3840, 40, 1], offset: 960>>
  return
}

// -----

// Left alone: contiguous buffers (one memcpy), a rank-1 copy, a last dim
// strided on one side, i1 elements (bytes in memory, bits in vectors) and
// a copy inside a loop (the last two into strided slots, which would
// otherwise be rewritten).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: scf.parallel
// CHECK-COUNT-5: memref.copy
// CHECK-NOT: scf.parallel
func.func @left_alone(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                      %row: memref<?xf32, strided<[1], offset: ?>>, %row2: memref<?xf32>,
                      %t: memref<8x4xf32>, %m: memref<4x4xi1>, %m2: memref<4x8xi1>,
                      %q: memref<4x4xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %row, %row2 : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32>
  %columns = memref.transpose %t (i, j) -> (j, i) : memref<8x4xf32> to memref<4x8xf32, strided<[1, 4]>>
  memref.copy %a, %columns : memref<4x8xf32> to memref<4x8xf32, strided<[1, 4]>>
  %half = memref.subview %m2[0, 0] [4, 4] [1, 1] : memref<4x8xi1> to memref<4x4xi1, strided<[8, 1]>>
  memref.copy %m, %half : memref<4x4xi1> to memref<4x4xi1, strided<[8, 1]>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %big = memref.alloc() : memref<4x8xf32>
    %part = memref.subview %big[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
    memref.copy %q, %part : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1]>>
    memref.dealloc %big : memref<4x8xf32>
  }
  return
}

// -----

// The same strided slots outside a loop, of f32, are rewritten (what the
// i1 and loop cases above would be without their rules).
// CHECK-LABEL: func @strided_slot
// CHECK: scf.parallel
// CHECK-NOT: memref.copy
func.func @strided_slot(%q: memref<4x4xf32>, %big: memref<4x8xf32>) {
  %part = memref.subview %big[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %q, %part : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1]>>
  return
}
