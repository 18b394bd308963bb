// RUN: tessera-opt %s --split-input-file --tessera-raise-attention | FileCheck %s

// Causal masks built on every call from a symbolic sequence length, as
// exporters write torch.triu(ones(t, t)) with t read from the input's
// shape: the ranges' sizes are followed back to the query's sequence dim,
// and the mask (-inf where column - row >= 1) becomes the causal flag.
// CHECK-LABEL: func @trilu_from_shape
// CHECK-NOT: tessera.where
// CHECK: tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32}
func.func @trilu_from_shape(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %shape = tessera.shape %q : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %cols = tessera.range %zero, %t, %one : tensor<i64> -> tensor<?xi64>
  %rows = tessera.reshape %cols : tensor<?xi64> -> tensor<?x1xi64>
  %diff = tessera.sub %cols, %rows : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %above = tessera.compare ge, %diff, %one : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %mask = tessera.where %above, %ninf, %fzero : tensor<?x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x?xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.add %d, %mask : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// minGPT's form: a tril buffer sliced to the sequence by a range (its end
// normalized as Slice exporters write it), compared with 0 and applied
// with masked_fill: the buffer is causal over its whole extent, so every
// sequence that fits it gets the causal flag.
// CHECK-LABEL: func @sliced_buffer
// CHECK: tessera.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32}
func.func @sliced_buffer(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %four = tessera.constant dense<4> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %tril = tessera.constant dense<[[[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]]> : tensor<1x4x4xf32>
  %shape = tessera.shape %q : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %neg = tessera.compare lt, %t, %zero : tensor<i64>, tensor<i64> -> tensor<i1>
  %wrapped = tessera.add %t, %four : tensor<i64>, tensor<i64> -> tensor<i64>
  %end0 = tessera.where %neg, %wrapped, %t : tensor<i1>, tensor<i64>, tensor<i64> -> tensor<i64>
  %end1 = tessera.max %end0, %zero : tensor<i64>, tensor<i64> -> tensor<i64>
  %end = tessera.min %end1, %four : tensor<i64>, tensor<i64> -> tensor<i64>
  %r = tessera.range %zero, %end, %one : tensor<i64> -> tensor<?xi64>
  %g0 = tessera.gather %tril[%r] axis 1 : tensor<1x4x4xf32>, tensor<?xi64> -> tensor<1x?x4xf32>
  %g1 = tessera.gather %g0[%r] axis 2 : tensor<1x?x4xf32>, tensor<?xi64> -> tensor<1x?x?xf32>
  %hidden = tessera.compare eq, %g1, %fzero : tensor<1x?x?xf32>, tensor<f32> -> tensor<1x?x?xi1>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.where %hidden, %ninf, %d : tensor<1x?x?xi1>, tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}

// -----

// Must not fire: with column - row >= 0 the diagonal is hidden too (not
// causal); with ranges as long as the keys (another tensor's dim, which
// need not be the queries') the mask stays; a buffer that is upper
// triangular stays a select.
// CHECK-LABEL: func @diagonal_hidden
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<?x?xf32>) {scale = 5.000000e-01 : f32}
// CHECK-LABEL: func @keys_length
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<?x?xf32>) {scale = 5.000000e-01 : f32}
// CHECK-LABEL: func @upper_buffer
// CHECK-NOT: causal
// CHECK: return
// A sliding window (keys at most 100 behind) is causal on sequences up to
// 100 only: every offset up to the window's is checked, and it stays a
// mask.
// CHECK-LABEL: func @sliding_window
// CHECK: tessera.attention %arg0, %arg1, %arg2 mask(%{{.*}} : tensor<?x?xf32>) {scale = 5.000000e-01 : f32}
func.func @diagonal_hidden(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %shape = tessera.shape %q : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %cols = tessera.range %zero, %t, %one : tensor<i64> -> tensor<?xi64>
  %rows = tessera.reshape %cols : tensor<?xi64> -> tensor<?x1xi64>
  %diff = tessera.sub %cols, %rows : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %above = tessera.compare ge, %diff, %zero : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %mask = tessera.where %above, %ninf, %fzero : tensor<?x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x?xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.add %d, %mask : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @keys_length(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %shape = tessera.shape %k : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %cols = tessera.range %zero, %t, %one : tensor<i64> -> tensor<?xi64>
  %rows = tessera.reshape %cols : tensor<?xi64> -> tensor<?x1xi64>
  %diff = tessera.sub %cols, %rows : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %above = tessera.compare ge, %diff, %one : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %mask = tessera.where %above, %ninf, %fzero : tensor<?x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x?xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.add %d, %mask : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @upper_buffer(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %triu = tessera.constant dense<[[[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]]> : tensor<1x3x3xf32>
  %shape = tessera.shape %q : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %r = tessera.range %zero, %t, %one : tensor<i64> -> tensor<?xi64>
  %g0 = tessera.gather %triu[%r] axis 1 : tensor<1x3x3xf32>, tensor<?xi64> -> tensor<1x?x3xf32>
  %g1 = tessera.gather %g0[%r] axis 2 : tensor<1x?x3xf32>, tensor<?xi64> -> tensor<1x?x?xf32>
  %hidden = tessera.compare eq, %g1, %fzero : tensor<1x?x?xf32>, tensor<f32> -> tensor<1x?x?xi1>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.where %hidden, %ninf, %d : tensor<1x?x?xi1>, tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
func.func @sliding_window(%q: tensor<?x?x8xf32>, %k: tensor<?x?x8xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %c = tessera.constant dense<0.5> : tensor<f32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %one = tessera.constant dense<1> : tensor<i64>
  %window = tessera.constant dense<100> : tensor<i64>
  %ninf = tessera.constant dense<0xFF800000> : tensor<f32>
  %fzero = tessera.constant dense<0.0> : tensor<f32>
  %shape = tessera.shape %q : tensor<?x?x8xf32> -> tensor<3xi64>
  %t = tessera.gather %shape[%one] axis 0 : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %cols = tessera.range %zero, %t, %one : tensor<i64> -> tensor<?xi64>
  %rows = tessera.reshape %cols : tensor<?xi64> -> tensor<?x1xi64>
  %diff = tessera.sub %cols, %rows : tensor<?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %past = tessera.sub %rows, %cols : tensor<?x1xi64>, tensor<?xi64> -> tensor<?x?xi64>
  %above = tessera.compare ge, %diff, %one : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %far = tessera.compare gt, %past, %window : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %hidden = tessera.or %above, %far : tensor<?x?xi1>, tensor<?x?xi1> -> tensor<?x?xi1>
  %mask = tessera.where %hidden, %ninf, %fzero : tensor<?x?xi1>, tensor<f32>, tensor<f32> -> tensor<?x?xf32>
  %s = tessera.matmul %q, %k {transpose_b} : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x?xf32>
  %d = tessera.mul %s, %c : tensor<?x?x?xf32>, tensor<f32> -> tensor<?x?x?xf32>
  %m = tessera.add %d, %mask : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  %p = tessera.softmax %m : tensor<?x?x?xf32>
  %o = tessera.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
