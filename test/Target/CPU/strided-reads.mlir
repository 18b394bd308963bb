// RUN: tessera-opt %s --split-input-file --tessera-cpu-strided-reads | FileCheck %s

// Every other column of a [4, 2, 111] buffer (a depthwise convolution's
// taps at stride 2): 16 lanes read as the 32 elements from the first
// lane's on, through a 1-D view of the buffer that ends at the view's last
// element (3 * 222 + 1 * 111 + 55 * 2 + 1 = 888), masked to what is left
// of it, then lanes 0, 2, ..., 30 kept.
// CHECK-LABEL: func @every_other
// CHECK-SAME: (%[[M:.*]]: memref<4x2x111xf32>, %[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index)
// CHECK: %[[V:.*]] = memref.subview %[[M]]
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[V]]
// CHECK: %[[FIRST:.*]] = affine.apply #{{.*}}()[%[[I]], %[[J]], %[[K]]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [888], strides: [1] : memref<f32> to memref<?xf32>
// CHECK: %[[LEFT:.*]] = affine.apply #{{.*}}()[%[[I]], %[[J]], %[[K]]]
// CHECK: %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<32xi1>
// CHECK: %[[WIDE:.*]] = vector.transfer_read %[[FLAT]][%[[FIRST]]], %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<?xf32>, vector<32xf32>
// CHECK: %[[KEPT:.*]] = vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK: return %[[KEPT]]
func.func @every_other(%m: memref<4x2x111xf32>, %i: index, %j: index, %k: index) -> vector<16xf32> {
  %pad = arith.constant 0.0 : f32
  %v = memref.subview %m[0, 0, 0] [4, 2, 56] [1, 1, 2] : memref<4x2x111xf32> to memref<4x2x56xf32, strided<[222, 111, 2]>>
  %r = vector.transfer_read %v[%i, %j, %k], %pad {in_bounds = [true]} : memref<4x2x56xf32, strided<[222, 111, 2]>>, vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// A row of symbolic width at stride 3, its last step masked to %n lanes:
// the wide read keeps at most the (n - 1) * 3 + 1 elements they span (and
// no more than is left of the buffer), so a lane that was masked off
// stays the padding.
// CHECK-DAG: #[[SPAN:.*]] = affine_map<()[s0, s1, s2] -> (s0 * 3 - s1 * 3 - 2, s2 * 3 - 2)>
// CHECK-LABEL: func @masked_stride_three
// CHECK-SAME: (%[[M:.*]]: memref<?xf32>, %[[OFF:.*]]: index, %[[K:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[BASE:.*]], %[[O:.*]], %[[SIZE:.*]], %{{.*}} = memref.extract_strided_metadata
// CHECK: %[[LEFT:.*]] = affine.min #[[SPAN]]()[%[[SIZE]], %[[K]], %[[N]]]
// CHECK: %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<24xi1>
// CHECK: %[[WIDE:.*]] = vector.transfer_read %{{.*}}[%{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<?xf32>, vector<24xf32>
// CHECK: vector.shuffle %[[WIDE]], %[[WIDE]] [0, 3, 6, 9, 12, 15, 18, 21] : vector<24xf32>, vector<24xf32>
func.func @masked_stride_three(%m: memref<?xf32>, %off: index, %k: index, %n: index) -> vector<8xf32> {
  %pad = arith.constant -1.0 : f32
  %c0 = arith.constant 0 : index
  %size = memref.dim %m, %c0 : memref<?xf32>
  %v = memref.subview %m[%off] [%size] [3] : memref<?xf32> to memref<?xf32, strided<[3], offset: ?>>
  %mask = vector.create_mask %n : vector<8xi1>
  %r = vector.transfer_read %v[%k], %pad, %mask {in_bounds = [true]} : memref<?xf32, strided<[3], offset: ?>>, vector<8xf32>
  return %r : vector<8xf32>
}

// -----

// Must not fire: contiguous rows, a stride of 5 (each lane a load of its
// own costs less than reading the span), a stride known only at run time,
// a read that may run past the row, a 2-D vector, a transposed read, and
// a mask that is not the first lanes.
// CHECK-LABEL: func @kept
// CHECK-NOT: vector.shuffle
// CHECK-NOT: memref.reinterpret_cast
// CHECK-COUNT-7: vector.transfer_read
// CHECK-NOT: vector.shuffle
func.func @kept(%m: memref<8x100xf32>, %d: memref<?xf32, strided<[?]>>, %i: index, %mask: vector<16xi1>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<2x16xf32>, vector<4xf32>, vector<16xf32>) {
  %pad = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %unit = vector.transfer_read %m[%c0, %i], %pad {in_bounds = [true]} : memref<8x100xf32>, vector<16xf32>
  %v5 = memref.subview %m[0, 0] [8, 20] [1, 5] : memref<8x100xf32> to memref<8x20xf32, strided<[100, 5]>>
  %five = vector.transfer_read %v5[%c0, %c0], %pad {in_bounds = [true]} : memref<8x20xf32, strided<[100, 5]>>, vector<16xf32>
  %dynamic = vector.transfer_read %d[%i], %pad {in_bounds = [true]} : memref<?xf32, strided<[?]>>, vector<16xf32>
  %v2 = memref.subview %m[0, 0] [8, 50] [1, 2] : memref<8x100xf32> to memref<8x50xf32, strided<[100, 2]>>
  %outside = vector.transfer_read %v2[%c0, %i], %pad : memref<8x50xf32, strided<[100, 2]>>, vector<16xf32>
  %two_d = vector.transfer_read %v2[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x50xf32, strided<[100, 2]>>, vector<2x16xf32>
  %transposed = vector.transfer_read %v2[%c0, %c0], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<8x50xf32, strided<[100, 2]>>, vector<4xf32>
  %masked = vector.transfer_read %v2[%c0, %c0], %pad, %mask {in_bounds = [true]} : memref<8x50xf32, strided<[100, 2]>>, vector<16xf32>
  return %unit, %five, %dynamic, %outside, %two_d, %transposed, %masked : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<2x16xf32>, vector<4xf32>, vector<16xf32>
}
