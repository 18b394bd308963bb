// RUN: tessera-opt %s --split-input-file --tessera-cpu-strided-reads | FileCheck %s

// Every other column of a [4, 2, 111] buffer (a depthwise convolution's
// taps at stride 2): 16 lanes read as the 32 elements from the first
// lane's on (offset 0 + i * 222 + j * 111 + k * 2), through a 1-D view of
// the buffer there, masked to the 31 elements they span (the 32nd may lie
// past the buffer), then lanes 0, 2, ..., 30 kept.
// CHECK-DAG: #[[FIRST:.*]] = affine_map<()[s0, s1, s2] -> (s0 * 2 + s1 * 111 + s2 * 222)>
// CHECK-LABEL: func @every_other
// CHECK-SAME: (%[[M:.*]]: memref<4x2x111xf32>, %[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index)
// CHECK-DAG: %[[C31:.*]] = arith.constant 31 : index
// CHECK: %[[V:.*]] = memref.subview %[[M]]
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[V]]
// CHECK: %[[AT:.*]] = affine.apply #[[FIRST]]()[%[[K]], %[[J]], %[[I]]]
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[AT]]], sizes: [32], strides: [1] : memref<f32> to memref<32xf32, strided<[1], offset: ?>>
// CHECK: %[[MASK:.*]] = vector.create_mask %[[C31]] : vector<32xi1>
// CHECK: %[[WIDE:.*]] = vector.transfer_read %[[FLAT]][%{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<32xf32, strided<[1], offset: ?>>, vector<32xf32>
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
// the read starts at the view's offset + k * 3 and keeps the
// (n - 1) * 3 + 1 elements they span, at most the 22 that 8 lanes span (a
// count above the lanes, or none, is clamped), so that a lane that was
// masked off stays the padding. A dynamic stride on an outer dim is a
// symbol of the start's map.
// CHECK-DAG: #[[FIRST:.*]] = affine_map<()[s0, s1] -> (s0 + s1 * 3)>
// CHECK-DAG: #[[SPAN:.*]] = affine_map<()[s0] -> (s0 * 3 - 2, 22)>
// CHECK-DAG: #[[OUTER:.*]] = affine_map<()[s0, s1, s2, s3] -> (s0 * 2 + s1 + s2 * s3)>
// CHECK-LABEL: func @masked_stride_three
// CHECK-SAME: (%[[M:.*]]: memref<?xf32>, %[[OFF:.*]]: index, %[[K:.*]]: index, %[[N:.*]]: index, %[[D:.*]]: memref<?x?xf32, strided<[?, 2], offset: ?>>)
// CHECK: %[[BASE:.*]], %[[O:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata
// CHECK: %[[AT:.*]] = affine.apply #[[FIRST]]()[%[[O]], %[[K]]]
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[AT]]], sizes: [24], strides: [1]
// CHECK: %[[LEFT:.*]] = affine.min #[[SPAN]]()[%[[N]]]
// CHECK: %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<24xi1>
// CHECK: %[[WIDE:.*]] = vector.transfer_read %{{.*}}[%{{.*}}], %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<24xf32, strided<[1], offset: ?>>, vector<24xf32>
// CHECK: vector.shuffle %[[WIDE]], %[[WIDE]] [0, 3, 6, 9, 12, 15, 18, 21] : vector<24xf32>, vector<24xf32>
// CHECK: %[[DB:.*]], %[[DO:.*]], %{{.*}}:2, %[[DS:.*]]:2 = memref.extract_strided_metadata %[[D]]
// CHECK: affine.apply #[[OUTER]]()[%[[N]], %[[DO]], %[[K]], %[[DS]]#0]
func.func @masked_stride_three(%m: memref<?xf32>, %off: index, %k: index, %n: index, %d: memref<?x?xf32, strided<[?, 2], offset: ?>>) -> (vector<8xf32>, vector<16xf32>) {
  %pad = arith.constant -1.0 : f32
  %c0 = arith.constant 0 : index
  %size = memref.dim %m, %c0 : memref<?xf32>
  %v = memref.subview %m[%off] [%size] [3] : memref<?xf32> to memref<?xf32, strided<[3], offset: ?>>
  %mask = vector.create_mask %n : vector<8xi1>
  %r = vector.transfer_read %v[%k], %pad, %mask {in_bounds = [true]} : memref<?xf32, strided<[3], offset: ?>>, vector<8xf32>
  %outer = vector.transfer_read %d[%k, %n], %pad {in_bounds = [true]} : memref<?x?xf32, strided<[?, 2], offset: ?>>, vector<16xf32>
  return %r, %outer : vector<8xf32>, vector<16xf32>
}

// -----

// Must not fire: contiguous rows, a stride of 5 (each lane a load of its
// own costs less than reading the span), a stride known only at run time,
// a read that may run past the row, a 2-D vector, a transposed read, a
// mask that is not the first lanes, and 16-bit elements.
// CHECK-LABEL: func @kept
// CHECK-NOT: vector.shuffle
// CHECK-NOT: memref.reinterpret_cast
// CHECK-COUNT-8: vector.transfer_read
// CHECK-NOT: vector.shuffle
func.func @kept(%m: memref<8x100xf32>, %d: memref<?xf32, strided<[?]>>, %i: index, %mask: vector<16xi1>, %h: memref<8x100xf16>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<2x16xf32>, vector<4xf32>, vector<16xf32>, vector<16xf16>) {
  %pad = arith.constant 0.0 : f32
  %hpad = arith.constant 0.0 : f16
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
  %h2 = memref.subview %h[0, 0] [8, 50] [1, 2] : memref<8x100xf16> to memref<8x50xf16, strided<[100, 2]>>
  %half = vector.transfer_read %h2[%c0, %c0], %hpad {in_bounds = [true]} : memref<8x50xf16, strided<[100, 2]>>, vector<16xf16>
  return %unit, %five, %dynamic, %outside, %two_d, %transposed, %masked, %half : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<2x16xf32>, vector<4xf32>, vector<16xf32>, vector<16xf16>
}
