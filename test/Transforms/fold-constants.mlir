// RUN: tessera-opt %s --split-input-file --tessera-fold-constants | FileCheck %s

// A shifted-window transformer's window mask, built from constants: the
// regions scattered into an image, windows compared pairwise, then a
// select of -100 and 0. Every step folds (with broadcasting), and so does
// the scale q is multiplied by (32 ** -0.5).
// CHECK-LABEL: func @window_mask
// CHECK-NEXT: %[[M:.*]] = tessera.constant dense<{{\[\[}}[0.000000e+00, -1.000000e+02], [-1.000000e+02, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK-NEXT: %[[S:.*]] = tessera.constant dense<0.176776{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT: return %[[M]], %[[S]]
func.func @window_mask() -> (tensor<2x2x2xf32>, tensor<f32>) {
  %zero = tessera.constant dense<0.0> : tensor<2x2xf32>
  %idx = tessera.constant dense<[[0, 1]]> : tensor<1x2xi64>
  %upd = tessera.constant dense<[1.0]> : tensor<1xf32>
  %img = tessera.scatter_nd %zero[%idx], %upd : tensor<2x2xf32>, tensor<1x2xi64>, tensor<1xf32> -> tensor<2x2xf32>
  %a = tessera.reshape %img : tensor<2x2xf32> -> tensor<2x1x2xf32>
  %b = tessera.reshape %img : tensor<2x2xf32> -> tensor<2x2x1xf32>
  %d = tessera.sub %a, %b : tensor<2x1x2xf32>, tensor<2x2x1xf32> -> tensor<2x2x2xf32>
  %z = tessera.constant dense<0.0> : tensor<f32>
  %same = tessera.compare eq, %d, %z : tensor<2x2x2xf32>, tensor<f32> -> tensor<2x2x2xi1>
  %differ = tessera.not %same : tensor<2x2x2xi1>
  %fill = tessera.constant dense<-100.0> : tensor<f32>
  %m = tessera.where %differ, %fill, %z : tensor<2x2x2xi1>, tensor<f32>, tensor<f32> -> tensor<2x2x2xf32>
  %base = tessera.constant dense<32.0> : tensor<f32>
  %exp = tessera.constant dense<-0.5> : tensor<f32>
  %s = tessera.pow %base, %exp : tensor<f32>, tensor<f32> -> tensor<f32>
  return %m, %s : tensor<2x2x2xf32>, tensor<f32>
}

// -----

// A relative position bias: a table gathered by constant indices,
// transposed and sliced (step -1), then integer arithmetic, casts and a
// concatenation of index vectors.
// CHECK-LABEL: func @bias
// CHECK-NEXT: %[[B:.*]] = tessera.constant dense<{{\[\[}}4.000000e+00, 2.000000e+00], [3.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT: %[[I:.*]] = tessera.constant dense<[2, 0, 6, 4]> : tensor<4xi32>
// CHECK-NEXT: return %[[B]], %[[I]]
func.func @bias() -> (tensor<2x2xf32>, tensor<4xi32>) {
  %table = tessera.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %index = tessera.constant dense<[1, -3]> : tensor<2xi64>
  %g = tessera.gather %table[%index] axis 0 : tensor<3x2xf32>, tensor<2xi64> -> tensor<2x2xf32>
  %t = tessera.transpose %g [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %r = tessera.slice %t starts [-1] ends [-9223372036854775807] axes [0] steps [-1] : tensor<2x2xf32> -> tensor<2x2xf32>
  %a = tessera.constant dense<[5, 1]> : tensor<2xi64>
  %b = tessera.constant dense<[2]> : tensor<1xi64>
  %q = tessera.div %a, %b : tensor<2xi64>, tensor<1xi64> -> tensor<2xi64>
  %c = tessera.constant dense<[3.5, -2.7]> : tensor<2xf32>
  %ci = tessera.cast %c : tensor<2xf32> to tensor<2xi64>
  %k = tessera.mul %ci, %ci : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %kk = tessera.sub %ci, %ci : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %l = tessera.add %k, %kk : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %m = tessera.sub %l, %ci : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %n = tessera.min %m, %l : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %cat = tessera.concat %q, %n axis 0 : tensor<2xi64>, tensor<2xi64> -> tensor<4xi64>
  %cast = tessera.cast %cat : tensor<4xi64> to tensor<4xi32>
  return %r, %cast : tensor<2x2xf32>, tensor<4xi32>
}

// -----

// Must not fold: a runtime operand, an integer division by zero, a gather
// index out of range, a float weight broadcast to more than 4096 elements
// (a bias stays a row), and a scatter with a reduction.
// CHECK-LABEL: func @left_alone
// CHECK: tessera.add %arg0
// CHECK: tessera.div
// CHECK: tessera.gather
// CHECK: tessera.expand
// CHECK: tessera.scatter_nd
func.func @left_alone(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi64>, tensor<1x2xf32>, tensor<128x768xf32>, tensor<2xf32>) {
  %one = tessera.constant dense<1.0> : tensor<2xf32>
  %0 = tessera.add %x, %one : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %a = tessera.constant dense<[4, 5]> : tensor<2xi64>
  %z = tessera.constant dense<[2, 0]> : tensor<2xi64>
  %1 = tessera.div %a, %z : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %table = tessera.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %i = tessera.constant dense<[3]> : tensor<1xi64>
  %2 = tessera.gather %table[%i] axis 0 : tensor<1x2xf32>, tensor<1xi64> -> tensor<1x2xf32>
  %bias = tessera.constant dense<0.5> : tensor<768xf32>
  %3 = tessera.expand %bias : tensor<768xf32> -> tensor<128x768xf32>
  %data = tessera.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %si = tessera.constant dense<[[0]]> : tensor<1x1xi64>
  %su = tessera.constant dense<[3.0]> : tensor<1xf32>
  %4 = tessera.scatter_nd %data[%si], %su {reduction = 1 : i32} : tensor<2xf32>, tensor<1x1xi64>, tensor<1xf32> -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xi64>, tensor<1x2xf32>, tensor<128x768xf32>, tensor<2xf32>
}

// -----

// Gather along a later axis with a negative index, concatenation along the
// last axis, integer comparisons and logic, an expand of a small float, a
// cast to i1 and one to i8 in range, and a reverse slice of an empty dim.
// CHECK-LABEL: func @more
// CHECK-NEXT: %[[G:.*]] = tessera.constant dense<{{\[\[}}3, 1], [6, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: %[[C:.*]] = tessera.constant dense<{{\[\[}}1, 2, 3, 3, 1], [4, 5, 6, 6, 4]]> : tensor<2x5xi64>
// CHECK-NEXT: %[[L:.*]] = tessera.constant dense<true> : tensor<3xi1>
// CHECK-NEXT: %[[E:.*]] = tessera.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-NEXT: %[[B:.*]] = tessera.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT: %[[I:.*]] = tessera.constant dense<[-128, 127, 3]> : tensor<3xi8>
// CHECK-NEXT: %[[S:.*]] = tessera.constant dense<> : tensor<0xf32>
// CHECK-NEXT: return %[[G]], %[[C]], %[[L]], %[[E]], %[[B]], %[[I]], %[[S]]
func.func @more() -> (tensor<2x2xi64>, tensor<2x5xi64>, tensor<3xi1>, tensor<2x3xf32>, tensor<3xi1>, tensor<3xi8>, tensor<0xf32>) {
  %t = tessera.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %i = tessera.constant dense<[-1, 0]> : tensor<2xi64>
  %g = tessera.gather %t[%i] axis 1 : tensor<2x3xi64>, tensor<2xi64> -> tensor<2x2xi64>
  %c = tessera.concat %t, %g axis -1 : tensor<2x3xi64>, tensor<2x2xi64> -> tensor<2x5xi64>
  %a = tessera.constant dense<[1, 5, 7]> : tensor<3xi64>
  %b = tessera.constant dense<[3]> : tensor<1xi64>
  %lt = tessera.compare lt, %a, %b : tensor<3xi64>, tensor<1xi64> -> tensor<3xi1>
  %gt = tessera.compare gt, %a, %b : tensor<3xi64>, tensor<1xi64> -> tensor<3xi1>
  %ge = tessera.compare ge, %a, %a : tensor<3xi64>, tensor<3xi64> -> tensor<3xi1>
  %x = tessera.xor %lt, %gt : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  %y = tessera.and %x, %ge : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  %five = tessera.compare eq, %a, %a : tensor<3xi64>, tensor<3xi64> -> tensor<3xi1>
  %nf = tessera.not %five : tensor<3xi1>
  %cmp5 = tessera.compare ne, %a, %b : tensor<3xi64>, tensor<1xi64> -> tensor<3xi1>
  %ny = tessera.or %nf, %cmp5 : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  %l = tessera.and %y, %ny : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  %h = tessera.constant dense<2.5> : tensor<1xf32>
  %e = tessera.expand %h : tensor<1xf32> -> tensor<2x3xf32>
  %f = tessera.constant dense<[0.5, 0.0, -2.0]> : tensor<3xf32>
  %bf = tessera.cast %f : tensor<3xf32> to tensor<3xi1>
  %n = tessera.constant dense<[-128.9, 127.5, 3.2]> : tensor<3xf32>
  %i8 = tessera.cast %n : tensor<3xf32> to tensor<3xi8>
  %z = tessera.constant dense<> : tensor<0xf32>
  %r = tessera.slice %z starts [0] ends [-9223372036854775807] axes [0] steps [-1] : tensor<0xf32> -> tensor<0xf32>
  return %g, %c, %l, %e, %bf, %i8, %r : tensor<2x2xi64>, tensor<2x5xi64>, tensor<3xi1>, tensor<2x3xf32>, tensor<3xi1>, tensor<3xi8>, tensor<0xf32>
}

// -----

// Must not fold: a float cast out of the target's range (300 in i8).
// CHECK-LABEL: func @cast_out_of_range
// CHECK: tessera.cast
func.func @cast_out_of_range() -> tensor<2xi8> {
  %n = tessera.constant dense<[300.0, 1.0]> : tensor<2xf32>
  %i8 = tessera.cast %n : tensor<2xf32> to tensor<2xi8>
  return %i8 : tensor<2xi8>
}

// -----

// A scale computed from the head dim (1 / sqrt(32)) and other float math.
// CHECK-LABEL: func @scale
// CHECK-NEXT: %[[A:.*]] = tessera.constant dense<0.176776{{[0-9]*}}> : tensor<f32>
// CHECK-NEXT: %[[B:.*]] = tessera.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-NEXT: %[[C:.*]] = tessera.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @scale() -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
  %d = tessera.constant dense<32.0> : tensor<f32>
  %s = tessera.sqrt %d : tensor<f32>
  %r = tessera.reciprocal %s : tensor<f32>
  %x = tessera.constant dense<[4.0, 16.0]> : tensor<2xf32>
  %q = tessera.rsqrt %x : tensor<2xf32>
  %y = tessera.constant dense<[-2.0, 3.0]> : tensor<2xf32>
  %a = tessera.abs %y : tensor<2xf32>
  return %r, %q, %a : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A constant cast to fp8 folds as tessera.cast computes it: saturating by
// default (past the largest finite value, an infinity too, that value),
// NaN (E4M3FN) or infinity (E5M2) with saturate = false; 464 ties to 448.
// CHECK-LABEL: func @fp8_casts
// CHECK-DAG: tessera.constant dense<[4.480000e+02, 4.480000e+02, -4.480000e+02, 0x7F, 1.000000e+00, 4.480000e+02]> : tensor<6xf8E4M3FN>
// CHECK-DAG: tessera.constant dense<[0x7F, 0x7F, 0xFF, 0x7F, 1.000000e+00, 4.480000e+02]> : tensor<6xf8E4M3FN>
// CHECK-DAG: tessera.constant dense<[5.734400e+04, 0x7C, 0xFC, 0x7E, 1.000000e+00, 4.480000e+02]> : tensor<6xf8E5M2>
// CHECK-NOT: tessera.cast
func.func @fp8_casts() -> (tensor<6xf8E4M3FN>, tensor<6xf8E4M3FN>, tensor<6xf8E5M2>) {
  %x = tessera.constant dense<[500.0, 0x7F800000, -1.0e9, 0x7FC00000, 1.0, 464.0]> : tensor<6xf32>
  %s = tessera.cast %x : tensor<6xf32> to tensor<6xf8E4M3FN>
  %n = tessera.cast %x {saturate = false} : tensor<6xf32> to tensor<6xf8E4M3FN>
  %y = tessera.constant dense<[6.0e4, 0x7F800000, -1.0e9, 0x7FC00000, 1.0, 448.0]> : tensor<6xf32>
  %e = tessera.cast %y {saturate = false} : tensor<6xf32> to tensor<6xf8E5M2>
  return %s, %n, %e : tensor<6xf8E4M3FN>, tensor<6xf8E4M3FN>, tensor<6xf8E5M2>
}
