// RUN: tessera-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func @add_zero
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @add_zero(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = tessera.constant dense<0.0> : tensor<3xf32>
  %0 = tessera.add %x, %zero : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // A constant on the left moves right, then folds.
  %1 = tessera.add %zero, %x : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK-NOT: tessera.add
  // CHECK: return %[[X]], %[[X]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Adding a zero of a larger shape broadcasts x: the add must stay.
// CHECK-LABEL: func @add_zero_broadcast_kept
func.func @add_zero_broadcast_kept(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = tessera.constant dense<0.0> : tensor<2x3xf32>
  // CHECK: %[[R:.*]] = tessera.add
  %0 = tessera.add %x, %zero : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: return %[[R]]
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @constant_fold_arith
func.func @constant_fold_arith() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>) {
  %a = tessera.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = tessera.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %i = tessera.constant dense<[7, -8]> : tensor<2xi64>
  %j = tessera.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK-DAG: %[[ADD:.*]] = tessera.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
  %0 = tessera.add %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  // CHECK-DAG: %[[SUB:.*]] = tessera.constant dense<-2.000000e+00> : tensor<2xf32>
  %1 = tessera.sub %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  // CHECK-DAG: %[[DIV:.*]] = tessera.constant dense<[3, -2]> : tensor<2xi64>
  %2 = tessera.div %i, %j : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  // CHECK-DAG: %[[MAX:.*]] = tessera.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>
  %3 = tessera.max %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  // CHECK-DAG: %[[MUL:.*]] = tessera.constant dense<[3.000000e+00, 8.000000e+00]> : tensor<2xf32>
  %4 = tessera.mul %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  // CHECK: return %[[ADD]], %[[SUB]], %[[DIV]], %[[MAX]], %[[MUL]]
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Integer division by zero is left for run time.
// CHECK-LABEL: func @int_div_by_zero_kept
func.func @int_div_by_zero_kept() -> tensor<2xi32> {
  %a = tessera.constant dense<[4, 5]> : tensor<2xi32>
  %b = tessera.constant dense<[2, 0]> : tensor<2xi32>
  // CHECK: tessera.div
  %0 = tessera.div %a, %b : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>)
func.func @identities(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %zero = tessera.constant dense<0.0> : tensor<4xbf16>
  %one = tessera.constant dense<1.0> : tensor<4xbf16>
  %0 = tessera.sub %x, %zero : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %1 = tessera.mul %one, %x : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %2 = tessera.div %x, %one : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %3 = tessera.pow %x, %one : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %4 = tessera.max %x, %x : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %5 = tessera.min %x, %x : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  // CHECK-NOT: tessera.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4, %5 : tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

// -----

// x - 1, x * 0 and x ^ 2 are not identities.
// CHECK-LABEL: func @non_identities_kept
func.func @non_identities_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = tessera.constant dense<1.0> : tensor<4xf32>
  %zero = tessera.constant dense<0.0> : tensor<4xf32>
  %two = tessera.constant dense<2.0> : tensor<4xf32>
  // CHECK: tessera.sub
  %0 = tessera.sub %x, %one : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: tessera.mul
  %1 = tessera.mul %x, %zero : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: tessera.pow
  %2 = tessera.pow %x, %two : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @logic
// CHECK-SAME: (%[[C:.*]]: tensor<4xi1>, %[[D:.*]]: tensor<4xi1>)
func.func @logic(%c: tensor<4xi1>, %d: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %t = tessera.constant dense<true> : tensor<4xi1>
  %f = tessera.constant dense<false> : tensor<4xi1>
  %0 = tessera.and %c, %t : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %1 = tessera.or %c, %f : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %2 = tessera.xor %c, %f : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %3 = tessera.and %c, %c : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %n = tessera.not %c : tensor<4xi1>
  %4 = tessera.not %n : tensor<4xi1>
  // CHECK: %[[AND:.*]] = tessera.and %[[C]], %[[D]]
  %5 = tessera.and %c, %d : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // CHECK-NOT: tessera.not
  // CHECK: return %[[C]], %[[C]], %[[C]], %[[C]], %[[C]], %[[AND]]
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @constant_fold_logic
func.func @constant_fold_logic() -> tensor<2xi1> {
  %a = tessera.constant dense<[true, false]> : tensor<2xi1>
  %b = tessera.constant dense<[true, true]> : tensor<2xi1>
  // CHECK: %[[C:.*]] = tessera.constant dense<[false, true]> : tensor<2xi1>
  %0 = tessera.xor %a, %b : tensor<2xi1>, tensor<2xi1> -> tensor<2xi1>
  // CHECK: return %[[C]]
  return %0 : tensor<2xi1>
}

// -----

// CHECK-LABEL: func @neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @neg_neg(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[N:.*]] = tessera.neg %[[X]]
  %0 = tessera.neg %x : tensor<4xf32>
  %1 = tessera.neg %0 : tensor<4xf32>
  // CHECK: return %[[X]], %[[N]]
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @where_folds
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xi1>)
func.func @where_folds(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = tessera.constant dense<true> : tensor<4xi1>
  %f = tessera.constant dense<false> : tensor<4xi1>
  %0 = tessera.where %t, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = tessera.where %f, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = tessera.where %c, %x, %x : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: %[[W:.*]] = tessera.where %[[C]], %[[X]], %[[Y]]
  %3 = tessera.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: return %[[X]], %[[Y]], %[[X]], %[[W]]
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @cast_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @cast_same_type(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %0 = tessera.cast %x : tensor<4xf32> to tensor<4xf32>
  // CHECK: %[[C:.*]] = tessera.cast %[[X]] : tensor<4xf32> to tensor<4xbf16>
  %1 = tessera.cast %x : tensor<4xf32> to tensor<4xbf16>
  // CHECK: return %[[X]], %[[C]]
  return %0, %1 : tensor<4xf32>, tensor<4xbf16>
}

// -----

// bf16 -> f32 -> bf16 is the bf16 value itself; f32 -> bf16 -> f32 rounds,
// so it stays.
// CHECK-LABEL: func @cast_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>, %[[Y:.*]]: tensor<4xf32>)
func.func @cast_round_trip(%x: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %0 = tessera.cast %x : tensor<4xbf16> to tensor<4xf32>
  %1 = tessera.cast %0 : tensor<4xf32> to tensor<4xbf16>
  // CHECK: %[[N:.*]] = tessera.cast %[[Y]] : tensor<4xf32> to tensor<4xbf16>
  // CHECK: %[[W:.*]] = tessera.cast %[[N]] : tensor<4xbf16> to tensor<4xf32>
  %2 = tessera.cast %y : tensor<4xf32> to tensor<4xbf16>
  %3 = tessera.cast %2 : tensor<4xbf16> to tensor<4xf32>
  // CHECK: return %[[X]], %[[W]]
  return %1, %3 : tensor<4xbf16>, tensor<4xf32>
}

// -----

// f32 constants narrow to bf16 and f16 at compile time, rounding to
// nearest even (1.00390625 is halfway between two bf16 values and rounds
// to 1.0; 1.01171875 rounds up to 1.015625); 70000 is beyond f16 and
// becomes infinity. A narrowing to an integer type is not folded.
// CHECK-LABEL: func @cast_constant
func.func @cast_constant() -> (tensor<2xbf16>, tensor<2xf16>, tensor<bf16>, tensor<2xi32>) {
  %c = tessera.constant dense<[1.00390625, 1.01171875]> : tensor<2xf32>
  %h = tessera.constant dense<[0.5, 70000.0]> : tensor<2xf32>
  %s = tessera.constant dense<3.0> : tensor<f32>
  // CHECK-DAG: tessera.constant dense<[1.000000e+00, 1.015630e+00]> : tensor<2xbf16>
  // CHECK-DAG: tessera.constant dense<[5.000000e-01, 0x7C00]> : tensor<2xf16>
  // CHECK-DAG: tessera.constant dense<3.000000e+00> : tensor<bf16>
  // CHECK-DAG: tessera.cast %{{.*}} : tensor<2xf32> to tensor<2xi32>
  %0 = tessera.cast %c : tensor<2xf32> to tensor<2xbf16>
  %1 = tessera.cast %h : tensor<2xf32> to tensor<2xf16>
  %2 = tessera.cast %s : tensor<f32> to tensor<bf16>
  %3 = tessera.cast %c : tensor<2xf32> to tensor<2xi32>
  return %0, %1, %2, %3 : tensor<2xbf16>, tensor<2xf16>, tensor<bf16>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func @reshape_folds
// CHECK-SAME: (%[[X:.*]]: tensor<2x6xf32>)
func.func @reshape_folds(%x: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x3xi64>) {
  %0 = tessera.reshape %x : tensor<2x6xf32> -> tensor<2x6xf32>
  // CHECK-DAG: %[[R:.*]] = tessera.reshape %[[X]] : tensor<2x6xf32> -> tensor<3x4xf32>
  %1 = tessera.reshape %x : tensor<2x6xf32> -> tensor<12xf32>
  %2 = tessera.reshape %1 : tensor<12xf32> -> tensor<3x4xf32>
  // CHECK-DAG: %[[C:.*]] = tessera.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %c = tessera.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %3 = tessera.reshape %c : tensor<6xi64> -> tensor<2x3xi64>
  // CHECK: return %[[X]], %[[R]], %[[C]]
  return %0, %2, %3 : tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func @transpose_folds
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @transpose_folds(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = tessera.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: %[[T:.*]] = tessera.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = tessera.transpose %x [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %2 = tessera.transpose %1 [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  // A transpose followed by its inverse cancels.
  %3 = tessera.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %4 = tessera.transpose %3 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  // CHECK: return %[[X]], %[[T]], %[[X]]
  return %0, %2, %4 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// A transpose that moves only unit dims is a reshape (sequence-first
// exports write [S, 1, E] -> [1, S, E] around every layer), dynamic dims
// included; one that reorders two other dims stays (must not fire).
// CHECK-LABEL: func @unit_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<197x1x768xf32>, %[[D:.*]]: tensor<?x1x?xf32>)
// CHECK: %[[R:.*]] = tessera.reshape %[[X]] : tensor<197x1x768xf32> -> tensor<1x197x768xf32>
// CHECK: %[[RD:.*]] = tessera.reshape %[[D]] : tensor<?x1x?xf32> -> tensor<1x?x?xf32>
// CHECK: %[[T:.*]] = tessera.transpose %[[X]] [2, 1, 0]
// CHECK: return %[[R]], %[[RD]], %[[T]]
func.func @unit_transpose(%x: tensor<197x1x768xf32>, %d: tensor<?x1x?xf32>) -> (tensor<1x197x768xf32>, tensor<1x?x?xf32>, tensor<768x1x197xf32>) {
  %0 = tessera.transpose %x [1, 0, 2] : tensor<197x1x768xf32> -> tensor<1x197x768xf32>
  %1 = tessera.transpose %d [1, 0, 2] : tensor<?x1x?xf32> -> tensor<1x?x?xf32>
  %2 = tessera.transpose %x [2, 1, 0] : tensor<197x1x768xf32> -> tensor<768x1x197xf32>
  return %0, %1, %2 : tensor<1x197x768xf32>, tensor<1x?x?xf32>, tensor<768x1x197xf32>
}

// -----

// A residual add of a product (plus its bias) seen through a reshape that
// only moves unit dims adds in the product's shape, the reshape after it,
// so that it can join the matmul's epilogue. Must not fire: the same add
// of a value that is not a product, and of an operand that broadcasts.
// CHECK-LABEL: func @residual_through_reshape
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<32xf32>, %[[Y:.*]]: tensor<1x8x32xf32>, %[[Z:.*]]: tensor<8x32xf32>)
// CHECK: %[[M:.*]] = tessera.matmul %[[A]], %[[W]]
// CHECK: %[[P:.*]] = tessera.add %[[M]], %[[B]]
// CHECK: %[[PR:.*]] = tessera.reshape %[[P]] : tensor<8x32xf32> -> tensor<1x8x32xf32>
// CHECK: %[[YR:.*]] = tessera.reshape %[[Y]] : tensor<1x8x32xf32> -> tensor<8x32xf32>
// CHECK: %[[S:.*]] = tessera.add %[[P]], %[[YR]] : tensor<8x32xf32>, tensor<8x32xf32>
// CHECK: %[[R:.*]] = tessera.reshape %[[S]] : tensor<8x32xf32> -> tensor<1x8x32xf32>
// CHECK: %[[ZR:.*]] = tessera.reshape %[[Z]] : tensor<8x32xf32> -> tensor<1x8x32xf32>
// CHECK: %[[N:.*]] = tessera.add %[[ZR]], %[[Y]] : tensor<1x8x32xf32>, tensor<1x8x32xf32>
// CHECK: %[[BC:.*]] = tessera.add %[[PR]], %[[B]] : tensor<1x8x32xf32>, tensor<32xf32>
// CHECK: return %[[R]], %[[N]], %[[BC]]
func.func @residual_through_reshape(%a: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %y: tensor<1x8x32xf32>, %z: tensor<8x32xf32>) -> (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>) {
  %m = tessera.matmul %a, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %p = tessera.add %m, %b : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %r = tessera.reshape %p : tensor<8x32xf32> -> tensor<1x8x32xf32>
  %0 = tessera.add %r, %y : tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  %zr = tessera.reshape %z : tensor<8x32xf32> -> tensor<1x8x32xf32>
  %1 = tessera.add %zr, %y : tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  %2 = tessera.add %r, %b : tensor<1x8x32xf32>, tensor<32xf32> -> tensor<1x8x32xf32>
  return %0, %1, %2 : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32>
}

// -----

// Must not fire: an add of two products stays as it is (moving the reshape
// to either side would move it back), and so does one whose reshaped
// product broadcasts (1x32 against ?x32).
// CHECK-LABEL: func @residual_not_moved
// CHECK: %[[R:.*]] = tessera.reshape %{{.*}} : tensor<8x32xf32> -> tensor<1x8x32xf32>
// CHECK: %[[S:.*]] = tessera.add %[[R]], %{{.*}} : tensor<1x8x32xf32>, tensor<1x8x32xf32>
// CHECK: %[[V:.*]] = tessera.reshape %{{.*}} : tensor<32xf32> -> tensor<1x32xf32>
// CHECK: %[[B:.*]] = tessera.add %[[V]], %{{.*}} : tensor<1x32xf32>, tensor<?x32xf32>
// CHECK: return %[[S]], %[[B]]
func.func @residual_not_moved(%a: tensor<8x16xf32>, %w: tensor<16x32xf32>, %c: tensor<1x8x16xf32>, %v: tensor<16xf32>, %y: tensor<?x32xf32>) -> (tensor<1x8x32xf32>, tensor<?x32xf32>) {
  %m = tessera.matmul %a, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %r = tessera.reshape %m : tensor<8x32xf32> -> tensor<1x8x32xf32>
  %n = tessera.matmul %c, %w : tensor<1x8x16xf32>, tensor<16x32xf32> -> tensor<1x8x32xf32>
  %0 = tessera.add %r, %n : tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  %mv = tessera.matmul %v, %w : tensor<16xf32>, tensor<16x32xf32> -> tensor<32xf32>
  %rv = tessera.reshape %mv : tensor<32xf32> -> tensor<1x32xf32>
  %1 = tessera.add %rv, %y : tensor<1x32xf32>, tensor<?x32xf32> -> tensor<?x32xf32>
  return %0, %1 : tensor<1x8x32xf32>, tensor<?x32xf32>
}

// -----

// Must not fold: a reshape without a shape operand and two dynamic dims
// (moving unit dims only) of one whose shape operand regroups the dims:
// the two are not one reshape that moves unit dims (6x4 -> 2x1x12 -> 1x2x12,
// not 1x6x4). Of a reshape that moves unit dims too, it folds.
// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[Z:.*]]: tensor<?x?xf32>, %[[S:.*]]: tensor<3xi64>, %[[U:.*]]: tensor<?x1x?xf32>)
// CHECK: %[[I:.*]] = tessera.reshape %[[Z]] shape(%[[S]] : tensor<3xi64>) : tensor<?x?xf32> -> tensor<?x1x?xf32>
// CHECK: %[[O:.*]] = tessera.reshape %[[I]] : tensor<?x1x?xf32> -> tensor<1x?x?xf32>
// CHECK: %[[F:.*]] = tessera.reshape %[[U]] : tensor<?x1x?xf32> -> tensor<1x1x?x?xf32>
// CHECK: return %[[O]], %[[F]]
func.func @reshape_chain(%z: tensor<?x?xf32>, %s: tensor<3xi64>, %u: tensor<?x1x?xf32>) -> (tensor<1x?x?xf32>, tensor<1x1x?x?xf32>) {
  %i = tessera.reshape %z shape(%s : tensor<3xi64>) : tensor<?x?xf32> -> tensor<?x1x?xf32>
  %o = tessera.transpose %i [1, 0, 2] : tensor<?x1x?xf32> -> tensor<1x?x?xf32>
  %t = tessera.reshape %u : tensor<?x1x?xf32> -> tensor<?x?xf32>
  %f = tessera.reshape %t : tensor<?x?xf32> -> tensor<1x1x?x?xf32>
  return %o, %f : tensor<1x?x?xf32>, tensor<1x1x?x?xf32>
}

// -----

// CHECK-LABEL: func @movement_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
func.func @movement_identities(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tessera.expand %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = tessera.concat %x axis 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = tessera.slice %x starts [0] ends [9223372036854775807] axes [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  // Reversing keeps the shape but not the data: it must stay.
  // CHECK: %[[REV:.*]] = tessera.slice %[[X]] starts [-1] ends [-9223372036854775808] axes [1] steps [-1]
  %3 = tessera.slice %x starts [-1] ends [-9223372036854775808] axes [1] steps [-1] : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[REV]]
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Broadcasting expands and real concatenations stay.
// CHECK-LABEL: func @movement_kept
func.func @movement_kept(%x: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  // CHECK: tessera.expand
  %0 = tessera.expand %x : tensor<1x8xf32> -> tensor<4x8xf32>
  // CHECK: tessera.concat
  %1 = tessera.concat %x, %x axis 0 : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<2x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @shape_folds
func.func @shape_folds(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  // CHECK-DAG: %[[C:.*]] = tessera.constant dense<[2, 3]> : tensor<2xi64>
  %0 = tessera.shape %x : tensor<2x3xf32> -> tensor<2xi64>
  // A dynamic dimension keeps the op.
  // CHECK-DAG: %[[S:.*]] = tessera.shape %{{.*}} : tensor<?x3xf32> -> tensor<2xi64>
  %1 = tessera.shape %y : tensor<?x3xf32> -> tensor<2xi64>
  // CHECK: return %[[C]], %[[S]]
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Equal dynamic types do not prove equal shapes: these must stay.
// CHECK-LABEL: func @dynamic_movement_kept
func.func @dynamic_movement_kept(%x: tensor<?x?xf32>, %s: tensor<2xi64>, %y: tensor<?x4xf32>) -> (tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x?xf32>) {
  // CHECK: tessera.reshape %{{.*}} shape
  %0 = tessera.reshape %x shape(%s : tensor<2xi64>) : tensor<?x?xf32> -> tensor<?x?xf32>
  // CHECK: tessera.expand %{{.*}} shape
  %1 = tessera.expand %y shape(%s : tensor<2xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  // The outer shape operand may copy dims of the inner result (0 entries).
  // CHECK: %[[INNER:.*]] = tessera.reshape %{{.*}} : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: tessera.reshape %[[INNER]] shape
  %2 = tessera.reshape %x : tensor<?x?xf32> -> tensor<?xf32>
  %3 = tessera.reshape %2 shape(%s : tensor<2xi64>) : tensor<?xf32> -> tensor<?x?xf32>
  return %0, %1, %3 : tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x?xf32>
}

// -----

// One unknown dim follows from the element count: this reshape is a no-op.
// CHECK-LABEL: func @dynamic_reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>)
func.func @dynamic_reshape_identity(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // CHECK-NOT: tessera.reshape
  %0 = tessera.reshape %x : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: return %[[X]]
  return %0 : tensor<?x64xf32>
}

// -----

// A pad by zero on every side is its input (a shifted-window transformer
// pads images that are already whole windows); any other pad stays.
// CHECK-LABEL: func @pad_by_zero
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4xf32>)
func.func @pad_by_zero(%x: tensor<1x4x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x5xf32>) {
  // CHECK-NOT: pads = array<i64: 0, 0, 0, 0, 0, 0>
  %0 = tessera.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0>} : tensor<1x4x4xf32> -> tensor<1x4x4xf32>
  // CHECK: %[[P:.*]] = tessera.pad %[[X]] {pads = array<i64: 0, 0, 0, 0, 0, 1>}
  %1 = tessera.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 1>} : tensor<1x4x4xf32> -> tensor<1x4x5xf32>
  // CHECK: return %[[X]], %[[P]]
  return %0, %1 : tensor<1x4x4xf32>, tensor<1x4x5xf32>
}
