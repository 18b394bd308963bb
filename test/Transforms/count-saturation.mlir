// RUN: tessera-opt %s --split-input-file --tessera-count-saturation --verify-diagnostics | FileCheck %s

// An int8 quantize with a calibrated (constant) scale, made for a matmul's
// lhs: the count of round_even(x / s) + zero point beyond [-128, 127] and
// the number of values, named by the matmul's operand. The count is one
// chain of single-use ops (it fuses into one reduction).
// CHECK-LABEL: func.func @int8_lhs
// CHECK-SAME: -> (tensor<8x32xi32>, tensor<2xi64> {tessera.name = "tessera.saturated:/fc/MatMul:lhs"})
// CHECK: %[[Q:.*]] = tessera.quantize %[[X:[^ ]*]] scale
// CHECK: %[[D:.*]] = tessera.div %[[X]], %{{.*}} : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
// CHECK: %[[R:.*]] = tessera.round %[[D]]
// CHECK: %[[ZP:.*]] = tessera.cast %{{.*}} : tensor<i8> to tensor<f32>
// CHECK: %[[S:.*]] = tessera.add %[[R]], %[[ZP]]
// Outside [-128, 127] is |q + 0.5| > 127.5 for an integer q.
// CHECK: %[[MID:.*]] = tessera.constant dense<-5.000000e-01>
// CHECK: %[[C:.*]] = tessera.sub %[[S]], %[[MID]]
// CHECK: %[[A:.*]] = tessera.abs %[[C]]
// CHECK: %[[HALF:.*]] = tessera.constant dense<1.275000e+02>
// CHECK: %[[GT:.*]] = tessera.compare gt, %[[A]], %[[HALF]]
// CHECK: %[[ONES:.*]] = tessera.cast %[[GT]] : tensor<8x64xi1> to tensor<8x64xi64>
// CHECK: %[[N:.*]] = tessera.reduce_sum %[[ONES]] [0, 1] {keepdims = false} : tensor<8x64xi64> -> tensor<i64>
// CHECK: %[[N1:.*]] = tessera.reshape %[[N]] : tensor<i64> -> tensor<1xi64>
// CHECK: %[[SHAPE:.*]] = tessera.shape %[[X]]
// CHECK: %[[T:.*]] = tessera.reduce_prod %[[SHAPE]] [0] : tensor<2xi64> -> tensor<1xi64>
// CHECK: %[[C:.*]] = tessera.concat %[[N1]], %[[T]] axis 0
// CHECK: return %{{.*}}, %[[C]]
func.func @int8_lhs(%x: tensor<8x64xf32>) -> tensor<8x32xi32> {
  %s = tessera.constant dense<0.05> : tensor<f32>
  %z = tessera.constant dense<3> : tensor<i8>
  %q = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<8x64xf32> -> tensor<8x64xi8> loc(#fc)
  %w = tessera.constant dense<1> : tensor<64x32xi8>
  %y = tessera.matmul %q, %w : tensor<8x64xi8>, tensor<64x32xi8> -> tensor<8x32xi32> loc(#fc)
  return %y : tensor<8x32xi32>
}
#fc = loc("/fc/MatMul")

// -----

// fp8 with a per-channel scale along axis 0: the scale is reshaped to
// broadcast, and the bound is E5M2's largest finite value. A symbolic dim
// takes the count of values from the run's shape. The quantize has a
// node name of its own (a model's QuantizeLinear): its count takes it.
// CHECK-LABEL: func.func @fp8_per_channel
// CHECK-SAME: tensor<2xi64> {tessera.name = "tessera.saturated:/x/QuantizeLinear"}
// CHECK: %[[SC:.*]] = tessera.reshape %{{.*}} : tensor<4xf32> -> tensor<4x1xf32>
// CHECK: %[[D:.*]] = tessera.div %{{.*}}, %[[SC]] : tensor<4x?xf32>, tensor<4x1xf32> -> tensor<4x?xf32>
// CHECK: %[[A:.*]] = tessera.abs %[[D]]
// CHECK: %[[B:.*]] = tessera.constant dense<5.734400e+04>
// CHECK: tessera.compare gt, %[[A]], %[[B]]
// CHECK-NOT: tessera.round
// CHECK: tessera.shape %{{.*}} : tensor<4x?xf32> -> tensor<2xi64>
func.func @fp8_per_channel(%x: tensor<4x?xf32>) -> tensor<4x?xf8E5M2> {
  %s = tessera.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %q = tessera.quantize %x scale(%s : tensor<4xf32>) {axis = 0 : i64} : tensor<4x?xf32> -> tensor<4x?xf8E5M2> loc("/x/QuantizeLinear")
  return %q : tensor<4x?xf8E5M2>
}

// -----

// A bf16 activation is widened to f32 first; E4M3FN's bound is 448. Two
// quantizes of one node get distinct names.
// CHECK-LABEL: func.func @bf16_input
// CHECK-SAME: {tessera.name = "tessera.saturated:/q/QuantizeLinear"}
// CHECK-SAME: {tessera.name = "tessera.saturated:/q/QuantizeLinear#2"}
// CHECK: tessera.cast %{{.*}} : tensor<16xbf16> to tensor<16xf32>
// CHECK: tessera.constant dense<4.480000e+02>
func.func @bf16_input(%x: tensor<16xbf16>) -> (tensor<16xf8E4M3FN>, tensor<16xf8E4M3FN>) {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %t = tessera.constant dense<0.25> : tensor<f32>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<16xbf16> -> tensor<16xf8E4M3FN> loc("/q/QuantizeLinear")
  %r = tessera.quantize %x scale(%t : tensor<f32>) : tensor<16xbf16> -> tensor<16xf8E4M3FN> loc("/q/QuantizeLinear")
  return %q, %r : tensor<16xf8E4M3FN>, tensor<16xf8E4M3FN>
}

// -----

// Must not fire: a constant's quantize (its values are known when
// compiling) and a quantize whose scale the program computes (fp8 current
// scaling: the scale follows the values' own amax, so nothing saturates).
// With nothing to count, the pass says so.
// CHECK-LABEL: func.func @nothing_to_count
// CHECK-SAME: -> (tensor<16xf8E4M3FN>, tensor<16xi8>)
// CHECK-NOT: tessera.compare
// CHECK-NOT: tessera.saturated
// expected-warning @+1 {{no quantize with a fixed scale to count saturation at}}
func.func @nothing_to_count(%x: tensor<16xf32>) -> (tensor<16xf8E4M3FN>, tensor<16xi8>) {
  %a = tessera.abs %x : tensor<16xf32>
  %m = tessera.reduce_max %a [0] {keepdims = false} : tensor<16xf32> -> tensor<f32>
  %c = tessera.constant dense<448.0> : tensor<f32>
  %s = tessera.div %m, %c : tensor<f32>, tensor<f32> -> tensor<f32>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<16xf32> -> tensor<16xf8E4M3FN>
  %w = tessera.constant dense<2.0> : tensor<16xf32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %r = tessera.quantize %w scale(%one : tensor<f32>) : tensor<16xf32> -> tensor<16xi8>
  return %q, %r : tensor<16xf8E4M3FN>, tensor<16xi8>
}

// -----

// A 0-D activation with a one-element scale [1]: the scale is read as 0-D
// (a [1] would broadcast the count's operands to [1]), and the 0-D
// comparison is its own count (no reduction over no axes).
// CHECK-LABEL: func.func @scalar
// CHECK: %[[S:.*]] = tessera.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>
// CHECK: tessera.div %{{.*}}, %[[S]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK: %[[ONE:.*]] = tessera.cast %{{.*}} : tensor<i1> to tensor<i64>
// CHECK-NOT: tessera.reduce_sum
// CHECK: tessera.reshape %[[ONE]] : tensor<i64> -> tensor<1xi64>
// CHECK: tessera.constant dense<1> : tensor<1xi64>
func.func @scalar(%x: tensor<f32>) -> tensor<i8> {
  %s = tessera.constant dense<[0.5]> : tensor<1xf32>
  %q = tessera.quantize %x scale(%s : tensor<1xf32>) : tensor<f32> -> tensor<i8>
  return %q : tensor<i8>
}

// -----

// Must not fire: a weight behind a reshape (known when compiling), and a
// quantize inside a fusion region (after fusion: its count could not be
// returned). The activation's quantize at the top level is counted.
// CHECK-LABEL: func.func @weight_and_region
// CHECK-SAME: -> (tensor<4x16xi8>, tensor<8x16xi8>, tensor<8xi8>, tensor<2xi64> {tessera.name = "tessera.saturated:/act/QuantizeLinear"})
// CHECK-COUNT-1: tessera.reduce_sum
// CHECK-NOT: tessera.reduce_sum
func.func @weight_and_region(%x: tensor<4x16xf32>, %y: tensor<8xf32>) -> (tensor<4x16xi8>, tensor<8x16xi8>, tensor<8xi8>) {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<4x16xf32> -> tensor<4x16xi8> loc("/act/QuantizeLinear")
  %w = tessera.constant dense<1.0> : tensor<128xf32>
  %r = tessera.reshape %w : tensor<128xf32> -> tensor<8x16xf32>
  %qw = tessera.quantize %r scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xi8>
  %f = tessera.fusion elementwise {
    %a = tessera.abs %y : tensor<8xf32>
    %qa = tessera.quantize %a scale(%s : tensor<f32>) : tensor<8xf32> -> tensor<8xi8>
    tessera.yield %qa : tensor<8xi8>
  } : tensor<8xi8>
  return %q, %qw, %f : tensor<4x16xi8>, tensor<8x16xi8>, tensor<8xi8>
}
