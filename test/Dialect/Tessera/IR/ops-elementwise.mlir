// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @binary_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>)
func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[ADD:.*]] = tessera.add %[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %0 = tessera.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[SUB:.*]] = tessera.sub %[[ADD]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = tessera.sub %0, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[MUL:.*]] = tessera.mul %[[SUB]], %[[A]] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tessera.mul %1, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  // CHECK: %[[DIV:.*]] = tessera.div %[[MUL]], %[[B]]
  %3 = tessera.div %2, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[POW:.*]] = tessera.pow %[[DIV]], %[[B]]
  %4 = tessera.pow %3, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[MAX:.*]] = tessera.max %[[POW]], %[[B]]
  %5 = tessera.max %4, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[MIN:.*]] = tessera.min %[[MAX]], %[[B]]
  %6 = tessera.min %5, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: return %[[MIN]]
  return %6 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @dynamic_broadcast
func.func @dynamic_broadcast(%a: tensor<?x1x64xbf16>, %b: tensor<8x64xbf16>) -> tensor<?x8x64xbf16> {
  // CHECK: tessera.add %{{.*}}, %{{.*}} : tensor<?x1x64xbf16>, tensor<8x64xbf16> -> tensor<?x8x64xbf16>
  %0 = tessera.add %a, %b : tensor<?x1x64xbf16>, tensor<8x64xbf16> -> tensor<?x8x64xbf16>
  return %0 : tensor<?x8x64xbf16>
}

// -----

// CHECK-LABEL: func @integer_arith
func.func @integer_arith(%a: tensor<4xi64>, %b: tensor<i64>) -> tensor<4xi64> {
  // CHECK: tessera.mul %{{.*}}, %{{.*}} : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  %0 = tessera.mul %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  // CHECK: tessera.neg %{{.*}} : tensor<4xi64>
  %1 = tessera.neg %0 : tensor<4xi64>
  // CHECK: tessera.abs %{{.*}} : tensor<4xi64>
  %2 = tessera.abs %1 : tensor<4xi64>
  // CHECK: tessera.relu %{{.*}} : tensor<4xi64>
  %3 = tessera.relu %2 : tensor<4xi64>
  return %3 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func @unary_math
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf16>)
func.func @unary_math(%x: tensor<2x?xf16>) -> tensor<2x?xf16> {
  // CHECK: %[[V0:.*]] = tessera.neg %[[X]] : tensor<2x?xf16>
  %0 = tessera.neg %x : tensor<2x?xf16>
  // CHECK: %[[V1:.*]] = tessera.abs %[[V0]] : tensor<2x?xf16>
  %1 = tessera.abs %0 : tensor<2x?xf16>
  // CHECK: %[[V2:.*]] = tessera.exp %[[V1]] : tensor<2x?xf16>
  %2 = tessera.exp %1 : tensor<2x?xf16>
  // CHECK: %[[V3:.*]] = tessera.log %[[V2]] : tensor<2x?xf16>
  %3 = tessera.log %2 : tensor<2x?xf16>
  // CHECK: %[[V4:.*]] = tessera.sqrt %[[V3]] : tensor<2x?xf16>
  %4 = tessera.sqrt %3 : tensor<2x?xf16>
  // CHECK: %[[V5:.*]] = tessera.rsqrt %[[V4]] : tensor<2x?xf16>
  %5 = tessera.rsqrt %4 : tensor<2x?xf16>
  // CHECK: %[[V6:.*]] = tessera.reciprocal %[[V5]] : tensor<2x?xf16>
  %6 = tessera.reciprocal %5 : tensor<2x?xf16>
  // CHECK: %[[V7:.*]] = tessera.tanh %[[V6]] : tensor<2x?xf16>
  %7 = tessera.tanh %6 : tensor<2x?xf16>
  // CHECK: %[[V8:.*]] = tessera.erf %[[V7]] : tensor<2x?xf16>
  %8 = tessera.erf %7 : tensor<2x?xf16>
  // CHECK: %[[V9:.*]] = tessera.sigmoid %[[V8]] : tensor<2x?xf16>
  %9 = tessera.sigmoid %8 : tensor<2x?xf16>
  // CHECK: %[[V10:.*]] = tessera.relu %[[V9]] : tensor<2x?xf16>
  %10 = tessera.relu %9 : tensor<2x?xf16>
  // CHECK: %[[V11:.*]] = tessera.silu %[[V10]] : tensor<2x?xf16>
  %11 = tessera.silu %10 : tensor<2x?xf16>
  // CHECK: return %[[V11]]
  return %11 : tensor<2x?xf16>
}

// -----

// CHECK-LABEL: func @gelu_forms
func.func @gelu_forms(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // CHECK: tessera.gelu %{{.*}} : tensor<8xf32>
  %0 = tessera.gelu %x : tensor<8xf32>
  // CHECK: tessera.gelu %{{.*}} approximate = tanh : tensor<8xf32>
  %1 = tessera.gelu %x approximate = tanh : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func @compare_and_logic
func.func @compare_and_logic(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xi1> {
  // CHECK: %[[EQ:.*]] = tessera.compare eq, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  %eq = tessera.compare eq, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[NE:.*]] = tessera.compare ne,
  %ne = tessera.compare ne, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[LT:.*]] = tessera.compare lt,
  %lt = tessera.compare lt, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[LE:.*]] = tessera.compare le,
  %le = tessera.compare le, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[GT:.*]] = tessera.compare gt,
  %gt = tessera.compare gt, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[GE:.*]] = tessera.compare ge,
  %ge = tessera.compare ge, %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xi1>
  // CHECK: %[[AND:.*]] = tessera.and %[[EQ]], %[[NE]] : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %0 = tessera.and %eq, %ne : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // CHECK: %[[OR:.*]] = tessera.or %[[AND]], %[[LT]]
  %1 = tessera.or %0, %lt : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // CHECK: %[[XOR:.*]] = tessera.xor %[[OR]], %[[LE]]
  %2 = tessera.xor %1, %le : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // CHECK: %[[NOT:.*]] = tessera.not %[[XOR]] : tensor<4xi1>
  %3 = tessera.not %2 : tensor<4xi1>
  %4 = tessera.and %3, %gt : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %5 = tessera.or %4, %ge : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %5 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func @where_broadcast
func.func @where_broadcast(%c: tensor<1x1x4x4xi1>, %x: tensor<2x3x4x4xf32>, %y: tensor<f32>) -> tensor<2x3x4x4xf32> {
  // CHECK: tessera.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32> -> tensor<2x3x4x4xf32>
  %0 = tessera.where %c, %x, %y : tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32> -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func @casts
func.func @casts(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi8>, tensor<4xi1>) {
  // CHECK: tessera.cast %{{.*}} : tensor<4xf32> to tensor<4xbf16>
  %0 = tessera.cast %x : tensor<4xf32> to tensor<4xbf16>
  // CHECK: tessera.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = tessera.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  // CHECK: tessera.cast %{{.*}} : tensor<4xf32> to tensor<4xf8E5M2>
  %2 = tessera.cast %x : tensor<4xf32> to tensor<4xf8E5M2>
  // CHECK: tessera.cast %{{.*}} : tensor<4xf32> to tensor<4xi8>
  %3 = tessera.cast %x : tensor<4xf32> to tensor<4xi8>
  // CHECK: tessera.cast %{{.*}} : tensor<4xf32> to tensor<4xi1>
  %4 = tessera.cast %x : tensor<4xf32> to tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi8>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func @math_unary
// CHECK: %[[M0:.*]] = tessera.sin %arg0 : tensor<4xf32>
// CHECK: %[[M1:.*]] = tessera.cos %[[M0]] : tensor<4xf32>
// CHECK: %[[M2:.*]] = tessera.tan %[[M1]] : tensor<4xf32>
// CHECK: %[[M3:.*]] = tessera.asin %[[M2]] : tensor<4xf32>
// CHECK: %[[M4:.*]] = tessera.acos %[[M3]] : tensor<4xf32>
// CHECK: %[[M5:.*]] = tessera.atan %[[M4]] : tensor<4xf32>
// CHECK: %[[M6:.*]] = tessera.sinh %[[M5]] : tensor<4xf32>
// CHECK: %[[M7:.*]] = tessera.cosh %[[M6]] : tensor<4xf32>
// CHECK: %[[M8:.*]] = tessera.asinh %[[M7]] : tensor<4xf32>
// CHECK: %[[M9:.*]] = tessera.acosh %[[M8]] : tensor<4xf32>
// CHECK: %[[M10:.*]] = tessera.atanh %[[M9]] : tensor<4xf32>
// CHECK: %[[M11:.*]] = tessera.ceil %[[M10]] : tensor<4xf32>
// CHECK: %[[M12:.*]] = tessera.floor %[[M11]] : tensor<4xf32>
// CHECK: %[[M13:.*]] = tessera.round %[[M12]] : tensor<4xf32>
func.func @math_unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessera.sin %x : tensor<4xf32>
  %1 = tessera.cos %0 : tensor<4xf32>
  %2 = tessera.tan %1 : tensor<4xf32>
  %3 = tessera.asin %2 : tensor<4xf32>
  %4 = tessera.acos %3 : tensor<4xf32>
  %5 = tessera.atan %4 : tensor<4xf32>
  %6 = tessera.sinh %5 : tensor<4xf32>
  %7 = tessera.cosh %6 : tensor<4xf32>
  %8 = tessera.asinh %7 : tensor<4xf32>
  %9 = tessera.acosh %8 : tensor<4xf32>
  %10 = tessera.atanh %9 : tensor<4xf32>
  %11 = tessera.ceil %10 : tensor<4xf32>
  %12 = tessera.floor %11 : tensor<4xf32>
  %13 = tessera.round %12 : tensor<4xf32>
  return %13 : tensor<4xf32>
}
