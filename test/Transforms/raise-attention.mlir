// RUN: tessera-opt %s --split-input-file --tessera-raise-attention | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-raise-attention | FileCheck %s --check-prefix=REASON

// softmax(q @ k^T / 8 + mask) @ v with k^T a transpose of the last two
// dims and a runtime mask: one attention op reading k itself.
// CHECK-LABEL: func @masked
// CHECK-NEXT: %[[A:.*]] = tessera.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x1x1x16xf32>) {scale = 1.250000e-01 : f32} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @masked(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %mask: tensor<1x1x1x16xf32>) -> tensor<1x2x16x8xf32> {
  %c = tessera.constant dense<8.0> : tensor<f32>
  %kt = tessera.transpose %k [0, 1, 3, 2] : tensor<1x2x16x8xf32> -> tensor<1x2x8x16xf32>
  %s = tessera.matmul %q, %kt : tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x16x16xf32>
  %d = tessera.div %s, %c : tensor<1x2x16x16xf32>, tensor<f32> -> tensor<1x2x16x16xf32>
  %m = tessera.add %d, %mask : tensor<1x2x16x16xf32>, tensor<1x1x1x16xf32> -> tensor<1x2x16x16xf32>
  %p = tessera.softmax %m {axis = 3 : i64} : tensor<1x2x16x16xf32>
  %o = tessera.matmul %p, %v : tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// A constant causal mask (0 on and below the diagonal, -inf above) becomes
// the causal flag; the scale is a product, and k^T comes from transpose_b.
// CHECK-LABEL: func @causal
// CHECK-NEXT: %[[A:.*]] = tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %mask = tessera.constant dense<[[0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %d = tessera.mul %c, %s : tensor<f32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %m = tessera.add %mask, %d : tensor<4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %p = tessera.softmax %m : tensor<2x4x4xf32>
  %o = tessera.matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A causal mask computed as exporters write it, where(column > row, -inf,
// 0) from two index constants (too large to fold into a constant at real
// sizes), becomes the flag too. With >= the diagonal is hidden: not causal,
// the mask stays.
// CHECK-LABEL: func @causal_from_indices
// CHECK-NEXT: %[[A:.*]] = tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32}
// A boolean splat is 1 (x <= true holds everywhere: every key hidden), so
// this is not the causal flag (every key visible) either.
// CHECK-LABEL: func @bool_splat
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<1x4xf32>) {scale = 5.000000e-01 : f32}
// CHECK-LABEL: func @diagonal_hidden
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<4x4xf32>) {scale = 5.000000e-01 : f32}
func.func @causal_from_indices(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %cols = tessera.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %rows = tessera.constant dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %above = tessera.compare gt, %cols, %rows : tensor<1x4xi64>, tensor<4x1xi64> -> tensor<4x4xi1>
  %mask = tessera.where %above, %ninf, %zero : tensor<4x4xi1>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %d = tessera.mul %c, %s : tensor<f32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %m = tessera.add %d, %mask : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  %p = tessera.softmax %m : tensor<2x4x4xf32>
  %o = tessera.matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
func.func @bool_splat(%q: tensor<2x1x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x1x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %x = tessera.constant dense<[[true, false, true, false]]> : tensor<1x4xi1>
  %t = tessera.constant dense<true> : tensor<i1>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %le = tessera.compare le, %x, %t : tensor<1x4xi1>, tensor<i1> -> tensor<1x4xi1>
  %mask = tessera.where %le, %ninf, %zero : tensor<1x4xi1>, tensor<f32>, tensor<f32> -> tensor<1x4xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<2x1x8xf32>, tensor<2x4x8xf32> -> tensor<2x1x4xf32>
  %d = tessera.mul %c, %s : tensor<f32>, tensor<2x1x4xf32> -> tensor<2x1x4xf32>
  %m = tessera.add %d, %mask : tensor<2x1x4xf32>, tensor<1x4xf32> -> tensor<2x1x4xf32>
  %p = tessera.softmax %m : tensor<2x1x4xf32>
  %o = tessera.matmul %p, %v : tensor<2x1x4xf32>, tensor<2x4x8xf32> -> tensor<2x1x8xf32>
  return %o : tensor<2x1x8xf32>
}
func.func @diagonal_hidden(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %cols = tessera.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %rows = tessera.constant dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %above = tessera.compare ge, %cols, %rows : tensor<1x4xi64>, tensor<4x1xi64> -> tensor<4x4xi1>
  %mask = tessera.where %above, %ninf, %zero : tensor<4x4xi1>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %d = tessera.mul %c, %s : tensor<f32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %m = tessera.add %d, %mask : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  %p = tessera.softmax %m : tensor<2x4x4xf32>
  %o = tessera.matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A causal constant and a padding mask added one after the other: the
// causal flag and the padding mask.
// CHECK-LABEL: func @causal_and_padding
// CHECK-NEXT: %[[A:.*]] = tessera.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<2x1x1x4xf32>) {causal, scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[A]]
func.func @causal_and_padding(%q: tensor<2x1x4x8xf32>, %k: tensor<2x1x4x8xf32>, %v: tensor<2x1x4x8xf32>, %pad: tensor<2x1x1x4xf32>) -> tensor<2x1x4x8xf32> {
  %c = tessera.constant dense<2.0> : tensor<f32>
  %mask = tessera.constant dense<[[0.000000e+00, -1.000000e+09, -1.000000e+09, -1.000000e+09], [0.000000e+00, 0.000000e+00, -1.000000e+09, -1.000000e+09], [0.000000e+00, 0.000000e+00, 0.000000e+00, -1.000000e+09], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
  %kt = tessera.transpose %k [0, 1, 3, 2] : tensor<2x1x4x8xf32> -> tensor<2x1x8x4xf32>
  %s = tessera.matmul %q, %kt : tensor<2x1x4x8xf32>, tensor<2x1x8x4xf32> -> tensor<2x1x4x4xf32>
  %d = tessera.div %s, %c : tensor<2x1x4x4xf32>, tensor<f32> -> tensor<2x1x4x4xf32>
  %m = tessera.add %d, %mask : tensor<2x1x4x4xf32>, tensor<4x4xf32> -> tensor<2x1x4x4xf32>
  %n = tessera.add %m, %pad : tensor<2x1x4x4xf32>, tensor<2x1x1x4xf32> -> tensor<2x1x4x4xf32>
  %p = tessera.softmax %n : tensor<2x1x4x4xf32>
  %o = tessera.matmul %p, %v : tensor<2x1x4x4xf32>, tensor<2x1x4x8xf32> -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// A constant mask that is not causal (the diagonal masked) stays a mask;
// without a scale op the scale is 1, and k^T that is not a transpose gets
// one.
// CHECK-LABEL: func @not_causal
// CHECK: %[[K:.*]] = tessera.transpose %arg1 [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK: tessera.attention %arg0, %[[K]], %arg2 mask(%{{.*}} : tensor<4x4xf32>) {scale = 1.000000e+00 : f32}
func.func @not_causal(%q: tensor<4x8xf32>, %kt: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mask = tessera.constant dense<[[0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000]]> : tensor<4x4xf32>
  %s = tessera.matmul %q, %kt : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %m = tessera.add %s, %mask : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Must not fire: the probabilities are also returned, the softmax is over
// another axis, the scores are used twice, and the mask broadcasts the
// scores to a larger shape.
// CHECK-LABEL: func @negative
// CHECK-NOT: tessera.attention %
// CHECK-COUNT-4: tessera.softmax
// CHECK-NOT: tessera.attention %
// Each product of a softmax left says why (for the fusion report).
// REASON-LABEL: func @negative
// REASON: tessera.matmul {{.*}}tessera.attention_not_raised = "the softmax's result has other users"
// REASON: tessera.matmul {{.*}}tessera.attention_not_raised = "the softmax is not along the last axis"
// REASON: tessera.matmul {{.*}}tessera.attention_not_raised = "the scores have other users"
// REASON: tessera.matmul {{.*}}tessera.attention_not_raised = "the scores are not q @ k^T, times a constant scale, with additive or select masks"
func.func @negative(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %big: tensor<3x4x4xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<3x4x8xf32>) {
  %s0 = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %p0 = tessera.softmax %s0 : tensor<4x4xf32>
  %o0 = tessera.matmul %p0, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s1 = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %p1 = tessera.softmax %s1 {axis = 0 : i64} : tensor<4x4xf32>
  %o1 = tessera.matmul %p1, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s2 = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %p2 = tessera.softmax %s2 : tensor<4x4xf32>
  %o2 = tessera.matmul %p2, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s3 = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %m3 = tessera.add %s3, %big : tensor<4x4xf32>, tensor<3x4x4xf32> -> tensor<3x4x4xf32>
  %p3 = tessera.softmax %m3 : tensor<3x4x4xf32>
  %o3 = tessera.matmul %p3, %v : tensor<3x4x4xf32>, tensor<4x8xf32> -> tensor<3x4x8xf32>
  return %o0, %p0, %o1, %o2, %s2, %o3 : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<3x4x8xf32>
}

// -----

// A boolean mask applied with a select (masked_fill) becomes an additive
// mask: 0 where the scores are kept, the fill elsewhere; a raised
// attention carries no reason.
// CHECK-LABEL: func @select_mask
// CHECK: %[[Z:.*]] = tessera.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[F:.*]] = tessera.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[M:.*]] = tessera.where %arg3, %[[Z]], %[[F]] : tensor<4x4xi1>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%[[M]] : tensor<4x4xf32>)
// REASON-LABEL: func @select_mask
// REASON-NOT: attention_not_raised
func.func @select_mask(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<4x8xf32> {
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %m = tessera.where %keep, %s, %inf : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// More queries than keys (3 x 2): the first row sees no key. A finite
// causal mask (-1e4) gives that row a uniform softmax, which the causal
// flag would not: it stays a mask. With -inf both agree, and it is the
// flag.
// CHECK-LABEL: func @causal_rows_without_keys
// CHECK: %[[A:.*]] = tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<3x2xf32>) {scale = 5.000000e-01 : f32}
// CHECK: %[[B:.*]] = tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32}
func.func @causal_rows_without_keys(%q: tensor<3x8xf32>, %k: tensor<2x8xf32>, %v: tensor<2x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %finite = tessera.constant dense<[[-1.0e4, -1.0e4], [0.0, -1.0e4], [0.0, 0.0]]> : tensor<3x2xf32>
  %inf = tessera.constant dense<[[0xFF800000, 0xFF800000], [0.0, 0xFF800000], [0.0, 0.0]]> : tensor<3x2xf32>
  %half = tessera.constant dense<0.5> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<3x8xf32>, tensor<2x8xf32> -> tensor<3x2xf32>
  %c = tessera.mul %s, %half : tensor<3x2xf32>, tensor<f32> -> tensor<3x2xf32>
  %m1 = tessera.add %c, %finite : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %p1 = tessera.softmax %m1 : tensor<3x2xf32>
  %o1 = tessera.matmul %p1, %v : tensor<3x2xf32>, tensor<2x8xf32> -> tensor<3x8xf32>
  %s2 = tessera.matmul %q, %k {transpose_b} : tensor<3x8xf32>, tensor<2x8xf32> -> tensor<3x2xf32>
  %c2 = tessera.mul %s2, %half : tensor<3x2xf32>, tensor<f32> -> tensor<3x2xf32>
  %m2 = tessera.add %c2, %inf : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %p2 = tessera.softmax %m2 : tensor<3x2xf32>
  %o2 = tessera.matmul %p2, %v : tensor<3x2xf32>, tensor<2x8xf32> -> tensor<3x8xf32>
  return %o1, %o2 : tensor<3x8xf32>, tensor<3x8xf32>
}

// -----

// masked_fill(mask, -inf) with a constant upper-triangular mask (the fill
// where it holds) is the causal flag, after the scale.
// CHECK-LABEL: func @masked_fill_causal
// CHECK: tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32}
func.func @masked_fill_causal(%q: tensor<2x3x8xf32>, %k: tensor<2x3x8xf32>, %v: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %above = tessera.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %half = tessera.constant dense<0.5> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x3xf32>
  %c = tessera.mul %s, %half : tensor<2x3x3xf32>, tensor<f32> -> tensor<2x3x3xf32>
  %m = tessera.where %above, %inf, %c : tensor<3x3xi1>, tensor<f32>, tensor<2x3x3xf32> -> tensor<2x3x3xf32>
  %p = tessera.softmax %m : tensor<2x3x3xf32>
  %o = tessera.matmul %p, %v : tensor<2x3x3xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  return %o : tensor<2x3x8xf32>
}

// -----

// Must not fire: a select whose other value is not a large negative
// constant is no mask; the reason says so.
// CHECK-LABEL: func @select_zero
// CHECK-NOT: tessera.attention %
// REASON-LABEL: func @select_zero
// REASON: tessera.matmul {{.*}}tessera.attention_not_raised = "the scores are masked with a select whose other value is not a constant at most -1e4"
func.func @select_zero(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<4x8xf32> {
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %m = tessera.where %keep, %s, %zero : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// A shifted-window transformer's attention (torchvision's Swin): a
// relative position bias added to the scores, then the scores viewed as
// [batch, windows, heads, N, N] for the window mask and viewed back. The
// view only puts a unit dim in front, so the window mask loses that dim
// and still broadcasts; the two masks are summed into one.
// CHECK-LABEL: func @window_mask
// CHECK: %[[W:.*]] = tessera.reshape %arg4 : tensor<1x4x1x8x8xf32> -> tensor<4x1x8x8xf32>
// CHECK: %[[M:.*]] = tessera.add %[[W]], %arg3 : tensor<4x1x8x8xf32>, tensor<2x8x8xf32> -> tensor<4x2x8x8xf32>
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%[[M]] : tensor<4x2x8x8xf32>) {scale = 1.000000e+00 : f32}
// CHECK-NOT: tessera.softmax
// REASON-LABEL: func @window_mask
// REASON-NOT: attention_not_raised
func.func @window_mask(%q: tensor<4x2x8x16xf32>, %k: tensor<4x2x8x16xf32>, %v: tensor<4x2x8x16xf32>, %bias: tensor<2x8x8xf32>, %window: tensor<1x4x1x8x8xf32>) -> tensor<4x2x8x16xf32> {
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x2x8x16xf32>, tensor<4x2x8x16xf32> -> tensor<4x2x8x8xf32>
  %b = tessera.add %s, %bias : tensor<4x2x8x8xf32>, tensor<2x8x8xf32> -> tensor<4x2x8x8xf32>
  %r = tessera.reshape %b : tensor<4x2x8x8xf32> -> tensor<1x4x2x8x8xf32>
  %w = tessera.add %r, %window : tensor<1x4x2x8x8xf32>, tensor<1x4x1x8x8xf32> -> tensor<1x4x2x8x8xf32>
  %back = tessera.reshape %w : tensor<1x4x2x8x8xf32> -> tensor<4x2x8x8xf32>
  %p = tessera.softmax %back {axis = 3 : i64} : tensor<4x2x8x8xf32>
  %o = tessera.matmul %p, %v : tensor<4x2x8x8xf32>, tensor<4x2x8x16xf32> -> tensor<4x2x8x16xf32>
  return %o : tensor<4x2x8x16xf32>
}

// -----

// The same with two images ([8 windows of 2 images, ...] viewed as [2, 4,
// ...]): the window mask is broadcast to the view and viewed back as the
// scores are, element for element.
// CHECK-LABEL: func @window_mask_batch
// CHECK: %[[E:.*]] = tessera.expand %arg3 : tensor<1x4x1x8x8xf32> -> tensor<2x4x2x8x8xf32>
// CHECK: %[[M:.*]] = tessera.reshape %[[E]] : tensor<2x4x2x8x8xf32> -> tensor<8x2x8x8xf32>
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%[[M]] : tensor<8x2x8x8xf32>)
func.func @window_mask_batch(%q: tensor<8x2x8x16xf32>, %k: tensor<8x2x8x16xf32>, %v: tensor<8x2x8x16xf32>, %window: tensor<1x4x1x8x8xf32>) -> tensor<8x2x8x16xf32> {
  %s = tessera.matmul %q, %k {transpose_b} : tensor<8x2x8x16xf32>, tensor<8x2x8x16xf32> -> tensor<8x2x8x8xf32>
  %r = tessera.reshape %s : tensor<8x2x8x8xf32> -> tensor<2x4x2x8x8xf32>
  %w = tessera.add %r, %window : tensor<2x4x2x8x8xf32>, tensor<1x4x1x8x8xf32> -> tensor<2x4x2x8x8xf32>
  %back = tessera.reshape %w : tensor<2x4x2x8x8xf32> -> tensor<8x2x8x8xf32>
  %p = tessera.softmax %back {axis = 3 : i64} : tensor<8x2x8x8xf32>
  %o = tessera.matmul %p, %v : tensor<8x2x8x8xf32>, tensor<8x2x8x16xf32> -> tensor<8x2x8x16xf32>
  return %o : tensor<8x2x8x16xf32>
}

// -----

// Must not fire: the view of the scores has another user, and the scores
// are viewed back in another shape than the product's.
// CHECK-LABEL: func @window_negative
// CHECK-NOT: tessera.attention %
// REASON-LABEL: func @window_negative
// REASON: attention_not_raised = "the scores are not q @ k^T, times a constant scale, with additive or select masks"
// REASON: attention_not_raised = "the scores are not q @ k^T, times a constant scale, with additive or select masks"
func.func @window_negative(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>, %window: tensor<1x4x8x8xf32>) -> (tensor<4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<2x2x8x16xf32>) {
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<4x8x8xf32>
  %r = tessera.reshape %s : tensor<4x8x8xf32> -> tensor<1x4x8x8xf32>
  %w = tessera.add %r, %window : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %back = tessera.reshape %w : tensor<1x4x8x8xf32> -> tensor<4x8x8xf32>
  %p = tessera.softmax %back : tensor<4x8x8xf32>
  %o = tessera.matmul %p, %v : tensor<4x8x8xf32>, tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  %s2 = tessera.matmul %q, %k {transpose_b} : tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<4x8x8xf32>
  %r2 = tessera.reshape %s2 : tensor<4x8x8xf32> -> tensor<1x4x8x8xf32>
  %w2 = tessera.add %r2, %window : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %back2 = tessera.reshape %w2 : tensor<1x4x8x8xf32> -> tensor<2x2x8x8xf32>
  %p2 = tessera.softmax %back2 : tensor<2x2x8x8xf32>
  %v2 = tessera.reshape %v : tensor<4x8x16xf32> -> tensor<2x2x8x16xf32>
  %o2 = tessera.matmul %p2, %v2 : tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  return %o, %r, %o2 : tensor<4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<2x2x8x16xf32>
}

// -----

// A select whose fill is finite, with another mask: summed, the other
// mask would be added to the fill (a fully masked row would no longer be
// uniform), so it is not raised. With a fill of -inf both agree, and the
// select and the mask become one mask.
// CHECK-LABEL: func @select_and_mask
// CHECK-DAG: %[[F:.*]] = tessera.constant dense<0xFF800000> : tensor<f32>
// CHECK-DAG: %[[Z:.*]] = tessera.constant dense<0.000000e+00> : tensor<f32>
// CHECK: tessera.softmax
// CHECK: %[[W:.*]] = tessera.where %arg3, %[[Z]], %[[F]]
// CHECK: %[[M:.*]] = tessera.add %arg4, %[[W]] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%[[M]] : tensor<4x4xf32>)
// REASON-LABEL: func @select_and_mask
// REASON: attention_not_raised = "a select with a finite fill and other masks"
func.func @select_and_mask(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>, %bias: tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %min = tessera.constant dense<-3.40282347E+38> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %b = tessera.add %s, %bias : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %m = tessera.where %keep, %b, %min : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %s2 = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %b2 = tessera.add %s2, %bias : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %m2 = tessera.where %keep, %b2, %inf : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p2 = tessera.softmax %m2 : tensor<4x4xf32>
  %o2 = tessera.matmul %p2, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o, %o2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Must not fire: two masks on scores of a symbolic size.
// CHECK-LABEL: func @two_masks_dynamic
// CHECK-NOT: tessera.attention %
// REASON-LABEL: func @two_masks_dynamic
// REASON: attention_not_raised = "more than one mask besides a causal constant, with dynamic scores"
func.func @two_masks_dynamic(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x8xf32>, %a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x?xf32>
  %m1 = tessera.add %s, %a : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %m2 = tessera.add %m1, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %p = tessera.softmax %m2 : tensor<?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Must not fire: a select whose fill (-1e9) does not swallow the scores:
// as an additive mask, a row masked everywhere would no longer be uniform.
// CHECK-LABEL: func @select_finite_fill
// CHECK-NOT: tessera.attention %
// REASON-LABEL: func @select_finite_fill
// REASON: attention_not_raised = "the scores are masked with a select whose fill is above -1e30 (a fully masked row would change)"
func.func @select_finite_fill(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<4x8xf32> {
  %fill = tessera.constant dense<-1.0e9> : tensor<f32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %m = tessera.where %keep, %s, %fill : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  %p = tessera.softmax %m : tensor<4x4xf32>
  %o = tessera.matmul %p, %v : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
