// RUN: tessera-opt %s --split-input-file --tessera-raise-composites | FileCheck %s

// GELU, erf form, as PyTorch exports it: (x * (1 + erf(x / sqrt 2))) * 0.5.
// CHECK-LABEL: func @gelu_erf
// CHECK-NEXT: %[[G:.*]] = tessera.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = tessera.constant dense<1.41421354> : tensor<f32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %half = tessera.constant dense<0.5> : tensor<f32>
  %0 = tessera.div %x, %sqrt2 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %1 = tessera.erf %0 : tensor<2x8xf32>
  %2 = tessera.add %1, %one : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %3 = tessera.mul %x, %2 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %4 = tessera.mul %3, %half : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// The erf form in another order: 0.5 * x first, erf of x * (1 / sqrt 2).
// CHECK-LABEL: func @gelu_erf_reordered
// CHECK-NEXT: tessera.gelu %arg0 : tensor<8xf32>
func.func @gelu_erf_reordered(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = tessera.constant dense<0.707106769> : tensor<f32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %half = tessera.constant dense<0.5> : tensor<f32>
  %h = tessera.mul %half, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %0 = tessera.mul %x, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = tessera.erf %0 : tensor<8xf32>
  %2 = tessera.add %one, %1 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %3 = tessera.mul %h, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// GELU, tanh form, with the cube as products (GPT-2's export).
// CHECK-LABEL: func @gelu_tanh
// CHECK-NEXT: %[[G:.*]] = tessera.gelu %arg0 approximate = tanh : tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %half = tessera.constant dense<5.000000e-01> : tensor<f32>
  %one = tessera.constant dense<1.000000e+00> : tensor<f32>
  %k = tessera.constant dense<0.797884583> : tensor<f32>
  %a = tessera.constant dense<4.471500e-02> : tensor<f32>
  %0 = tessera.mul %x, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %1 = tessera.mul %x, %0 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = tessera.mul %1, %a : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %3 = tessera.add %x, %2 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %4 = tessera.mul %3, %k : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %5 = tessera.tanh %4 : tensor<4x16xf32>
  %6 = tessera.add %5, %one : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %7 = tessera.mul %x, %6 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %8 = tessera.mul %7, %half : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  return %8 : tensor<4x16xf32>
}

// -----

// The tanh form with pow(x, 3).
// CHECK-LABEL: func @gelu_tanh_pow
// CHECK: tessera.gelu %arg0 approximate = tanh
// CHECK-NOT: tessera.tanh
func.func @gelu_tanh_pow(%x: tensor<16xf32>) -> tensor<16xf32> {
  %half = tessera.constant dense<5.000000e-01> : tensor<f32>
  %one = tessera.constant dense<1.000000e+00> : tensor<f32>
  %three = tessera.constant dense<3.000000e+00> : tensor<f32>
  %k = tessera.constant dense<0.797884583> : tensor<f32>
  %a = tessera.constant dense<4.471500e-02> : tensor<f32>
  %0 = tessera.pow %x, %three : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %1 = tessera.mul %a, %0 : tensor<f32>, tensor<16xf32> -> tensor<16xf32>
  %2 = tessera.add %1, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %3 = tessera.mul %k, %2 : tensor<f32>, tensor<16xf32> -> tensor<16xf32>
  %4 = tessera.tanh %3 : tensor<16xf32>
  %5 = tessera.add %one, %4 : tensor<f32>, tensor<16xf32> -> tensor<16xf32>
  %6 = tessera.mul %half, %x : tensor<f32>, tensor<16xf32> -> tensor<16xf32>
  %7 = tessera.mul %6, %5 : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %7 : tensor<16xf32>
}

// -----

// Must not fire: a wrong constant (0.6 instead of 0.5), an erf argument
// that is also returned (another user), and a GELU of a different value
// than the one multiplied.
// CHECK-LABEL: func @gelu_negative
// CHECK-NOT: tessera.gelu
// CHECK-COUNT-3: tessera.erf
func.func @gelu_negative(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = tessera.constant dense<1.41421354> : tensor<f32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %half = tessera.constant dense<0.5> : tensor<f32>
  %bad = tessera.constant dense<0.6> : tensor<f32>
  %0 = tessera.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = tessera.erf %0 : tensor<8xf32>
  %2 = tessera.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = tessera.mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = tessera.mul %3, %bad : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %10 = tessera.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %11 = tessera.erf %10 : tensor<8xf32>
  %12 = tessera.add %11, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %13 = tessera.mul %x, %12 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %14 = tessera.mul %13, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %20 = tessera.div %y, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %21 = tessera.erf %20 : tensor<8xf32>
  %22 = tessera.add %21, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %23 = tessera.mul %x, %22 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %24 = tessera.mul %23, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4, %14, %10, %24 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// SiLU; must not fire when the sigmoid is of another value or is used
// again.
// CHECK-LABEL: func @silu
// CHECK: %[[S:.*]] = tessera.silu %arg0 : tensor<4x8xf32>
// CHECK: tessera.sigmoid %arg1
// CHECK: tessera.mul %arg0,
// CHECK: %[[G:.*]] = tessera.sigmoid %arg0
// CHECK: tessera.mul %[[G]], %arg0
func.func @silu(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tessera.sigmoid %x : tensor<4x8xf32>
  %1 = tessera.mul %x, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = tessera.sigmoid %y : tensor<4x8xf32>
  %3 = tessera.mul %x, %2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = tessera.sigmoid %x : tensor<4x8xf32>
  %5 = tessera.mul %4, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %1, %3, %5, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// LayerNorm as exported before opset 17, with its scale and bias.
// CHECK-LABEL: func @layer_norm
// CHECK-NEXT: %[[N:.*]] = tessera.layer_norm %arg0 scale(%arg1 : tensor<8xf32>) bias(%arg2 : tensor<8xf32>) : tensor<2x8xf32>
// CHECK-NEXT: return %[[N]]
func.func @layer_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %two = tessera.constant dense<2.0> : tensor<f32>
  %eps = tessera.constant dense<1.0e-5> : tensor<f32>
  %m = tessera.reduce_mean %x [-1] : tensor<2x8xf32> -> tensor<2x1xf32>
  %d = tessera.sub %x, %m : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %p = tessera.pow %d, %two : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %v = tessera.reduce_mean %p [-1] : tensor<2x8xf32> -> tensor<2x1xf32>
  %a = tessera.add %v, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %s = tessera.sqrt %a : tensor<2x1xf32>
  %n = tessera.div %d, %s : tensor<2x8xf32>, tensor<2x1xf32> -> tensor<2x8xf32>
  %y = tessera.mul %n, %g : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %z = tessera.add %y, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return %z : tensor<2x8xf32>
}

// -----

// LayerNorm with d * d, rsqrt and no affine part.
// CHECK-LABEL: func @layer_norm_rsqrt
// CHECK-NEXT: tessera.layer_norm %arg0 {epsilon = 9.99999996E-13 : f32} : tensor<3x16xf32>
func.func @layer_norm_rsqrt(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %eps = tessera.constant dense<1.0e-12> : tensor<f32>
  %m = tessera.reduce_mean %x [1] : tensor<3x16xf32> -> tensor<3x1xf32>
  %d = tessera.sub %x, %m : tensor<3x16xf32>, tensor<3x1xf32> -> tensor<3x16xf32>
  %p = tessera.mul %d, %d : tensor<3x16xf32>, tensor<3x16xf32> -> tensor<3x16xf32>
  %v = tessera.reduce_mean %p [1] : tensor<3x16xf32> -> tensor<3x1xf32>
  %a = tessera.add %eps, %v : tensor<f32>, tensor<3x1xf32> -> tensor<3x1xf32>
  %r = tessera.rsqrt %a : tensor<3x1xf32>
  %n = tessera.mul %d, %r : tensor<3x16xf32>, tensor<3x1xf32> -> tensor<3x16xf32>
  return %n : tensor<3x16xf32>
}

// -----

// Must not fire: the mean over another axis, and the variance of something
// else than the centered input. A centered value used elsewhere is
// computed anyway, so only its normalization is raised (an RMSNorm of it).
// CHECK-LABEL: func @layer_norm_negative
// CHECK-NOT: tessera.layer_norm
// CHECK-NOT: tessera.rms_norm
// CHECK: tessera.pow %arg1
// CHECK-NOT: tessera.rms_norm
// CHECK: %[[D:.*]] = tessera.sub %arg0
// CHECK-NOT: tessera.layer_norm
// CHECK: tessera.rms_norm %[[D]]
// CHECK-NOT: tessera.layer_norm
func.func @layer_norm_negative(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = tessera.constant dense<2.0> : tensor<f32>
  %eps = tessera.constant dense<1.0e-5> : tensor<f32>
  %m0 = tessera.reduce_mean %x [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %d0 = tessera.sub %x, %m0 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %p0 = tessera.pow %d0, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v0 = tessera.reduce_mean %p0 [0] : tensor<4x8xf32> -> tensor<1x8xf32>
  %a0 = tessera.add %v0, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %s0 = tessera.sqrt %a0 : tensor<1x8xf32>
  %n0 = tessera.div %d0, %s0 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %m1 = tessera.reduce_mean %x [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d1 = tessera.sub %x, %m1 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p1 = tessera.pow %w, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v1 = tessera.reduce_mean %p1 [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %a1 = tessera.add %v1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s1 = tessera.sqrt %a1 : tensor<4x1xf32>
  %n1 = tessera.div %d1, %s1 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %m2 = tessera.reduce_mean %x [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %d2 = tessera.sub %x, %m2 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %p2 = tessera.pow %d2, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %v2 = tessera.reduce_mean %p2 [-1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %a2 = tessera.add %v2, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s2 = tessera.sqrt %a2 : tensor<4x1xf32>
  %n2 = tessera.div %d2, %s2 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %n0, %n1, %n2, %d2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// RMSNorm as LLaMA exports it: x * (1 / sqrt(mean(x^2) + eps)) * weight.
// CHECK-LABEL: func @rms_norm
// CHECK-NEXT: %[[N:.*]] = tessera.rms_norm %arg0 scale(%arg1 : tensor<64xf32>) : tensor<1x16x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm(%x: tensor<1x16x64xf32>, %g: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %two = tessera.constant dense<2.0> : tensor<f32>
  %eps = tessera.constant dense<1.0e-6> : tensor<f32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %p = tessera.pow %x, %two : tensor<1x16x64xf32>, tensor<f32> -> tensor<1x16x64xf32>
  %m = tessera.reduce_mean %p [-1] : tensor<1x16x64xf32> -> tensor<1x16x1xf32>
  %a = tessera.add %m, %eps : tensor<1x16x1xf32>, tensor<f32> -> tensor<1x16x1xf32>
  %s = tessera.sqrt %a : tensor<1x16x1xf32>
  %r = tessera.div %one, %s : tensor<f32>, tensor<1x16x1xf32> -> tensor<1x16x1xf32>
  %n = tessera.mul %x, %r : tensor<1x16x64xf32>, tensor<1x16x1xf32> -> tensor<1x16x64xf32>
  %y = tessera.mul %n, %g : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// RMSNorm as a division, no weight; must not fire with keepdims off or
// when the squared input is not the normalized one.
// CHECK-LABEL: func @rms_norm_forms
// CHECK: tessera.rms_norm %arg0 {epsilon = 9.99999974E-6 : f32} : tensor<2x32xf32>
// CHECK-NOT: tessera.rms_norm
func.func @rms_norm_forms(%x: tensor<2x32xf32>, %w: tensor<2x32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>) {
  %eps = tessera.constant dense<1.0e-5> : tensor<f32>
  %p = tessera.mul %x, %x : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %m = tessera.reduce_mean %p [-1] : tensor<2x32xf32> -> tensor<2x1xf32>
  %a = tessera.add %m, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %s = tessera.sqrt %a : tensor<2x1xf32>
  %n = tessera.div %x, %s : tensor<2x32xf32>, tensor<2x1xf32> -> tensor<2x32xf32>
  %p1 = tessera.mul %w, %w : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %m1 = tessera.reduce_mean %p1 [-1] : tensor<2x32xf32> -> tensor<2x1xf32>
  %a1 = tessera.add %m1, %eps : tensor<2x1xf32>, tensor<f32> -> tensor<2x1xf32>
  %s1 = tessera.sqrt %a1 : tensor<2x1xf32>
  %n1 = tessera.div %x, %s1 : tensor<2x32xf32>, tensor<2x1xf32> -> tensor<2x32xf32>
  return %n, %n1 : tensor<2x32xf32>, tensor<2x32xf32>
}

// -----

// Transposes of the last two dims become matmul flags (a transpose of an
// operand already read transposed toggles the flag off); scalar scales
// become alpha.
// CHECK-LABEL: func @fold_into_matmul
// CHECK-NEXT: %[[M:.*]] = tessera.matmul %arg0, %arg1 {alpha = 2.500000e-01 : f32, transpose_a, transpose_b} : tensor<2x8x4xf32>, tensor<2x6x8xf32> -> tensor<2x4x6xf32>
// CHECK-NEXT: %[[N:.*]] = tessera.matmul %arg2, %arg3 {alpha = 3.000000e+00 : f32} : tensor<2x4x8xf32>, tensor<2x8x6xf32> -> tensor<2x4x6xf32>
// CHECK-NEXT: return %[[M]], %[[N]]
func.func @fold_into_matmul(%a: tensor<2x8x4xf32>, %b: tensor<2x6x8xf32>, %c: tensor<2x4x8xf32>, %d: tensor<2x8x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x4x6xf32>) {
  %four = tessera.constant dense<4.0> : tensor<f32>
  %three = tessera.constant dense<3.0> : tensor<f32>
  %at = tessera.transpose %a [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %bt = tessera.transpose %b [0, 2, 1] : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  %0 = tessera.matmul %at, %bt : tensor<2x4x8xf32>, tensor<2x8x6xf32> -> tensor<2x4x6xf32>
  %1 = tessera.div %0, %four : tensor<2x4x6xf32>, tensor<f32> -> tensor<2x4x6xf32>
  %dt = tessera.transpose %d [0, 2, 1] : tensor<2x8x6xf32> -> tensor<2x6x8xf32>
  %2 = tessera.matmul %c, %dt {transpose_b} : tensor<2x4x8xf32>, tensor<2x6x8xf32> -> tensor<2x4x6xf32>
  %3 = tessera.mul %three, %2 : tensor<f32>, tensor<2x4x6xf32> -> tensor<2x4x6xf32>
  return %1, %3 : tensor<2x4x6xf32>, tensor<2x4x6xf32>
}

// -----

// Must not fire: a transpose that is also returned (its matmul still takes
// the other, single-use one), a transpose of other dims, a scale that
// broadcasts the result, a product used twice, a constant divided by the
// product.
// CHECK-LABEL: func @fold_into_matmul_negative
// CHECK: %[[AT:.*]] = tessera.transpose %arg0 [1, 0]
// CHECK: tessera.matmul %arg1, %[[AT]] {transpose_a} : tensor<8x6xf32>, tensor<8x4xf32>
// CHECK: tessera.transpose %arg2 [1, 0, 2]
// CHECK-NOT: alpha
// CHECK: return
func.func @fold_into_matmul_negative(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %x: tensor<2x4x8xf32>, %big: tensor<3x4x6xf32>) -> (tensor<6x4xf32>, tensor<8x4xf32>, tensor<4x6xf32>, tensor<4x2x8xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %two = tessera.constant dense<2.0> : tensor<f32>
  %at = tessera.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %bt = tessera.transpose %b [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  %0 = tessera.matmul %bt, %at : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
  %xt = tessera.transpose %x [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  %1 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %2 = tessera.mul %1, %big : tensor<4x6xf32>, tensor<3x4x6xf32> -> tensor<3x4x6xf32>
  %3 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %4 = tessera.mul %3, %two : tensor<4x6xf32>, tensor<f32> -> tensor<4x6xf32>
  %5 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %6 = tessera.div %two, %5 : tensor<f32>, tensor<4x6xf32> -> tensor<4x6xf32>
  return %0, %at, %3, %xt, %2, %4, %6, %1 : tensor<6x4xf32>, tensor<8x4xf32>, tensor<4x6xf32>, tensor<4x2x8xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
