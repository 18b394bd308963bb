// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @matmul_contracting_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{'tessera.matmul' op contracting dimensions differ: lhs [4, 8] has 8, rhs [7, 16] has 7}}
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_transposed_contracting_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'tessera.matmul' op contracting dimensions differ: lhs [4, 8] has 8, rhs [8, 16] has 16}}
  %0 = tessera.matmul %a, %b {transpose_b} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error @+1 {{'tessera.matmul' op batch dimensions: shapes [2] and [3] do not broadcast (dimension 2 vs 3)}}
  %0 = tessera.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x4x16xf32>
  return
}

// -----

func.func @matmul_scalar_operand(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.matmul' op operands must have rank >= 1, got [] and [4]}}
  %0 = tessera.matmul %a, %b : tensor<f32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

func.func @matmul_transposed_vector(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'tessera.matmul' op a transposed operand must have rank >= 2}}
  %0 = tessera.matmul %a, %b {transpose_a} : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  return
}

// -----

func.func @matmul_wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'tessera.matmul' op result shape [4, 8] does not match the product's shape [4, 16]}}
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_operand_types_differ(%a: tensor<4x8xf32>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{'tessera.matmul' op operand element types differ: 'f32' vs 'bf16'}}
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xbf16> -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_float_to_int(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'tessera.matmul' op a float product must produce floats, not 'i32'}}
  %0 = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_int8_to_i64(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) {
  // expected-error @+1 {{'tessera.matmul' op an integer product must produce 'i8' or i32, not 'i64'}}
  %0 = tessera.matmul %a, %b : tensor<4x8xi8>, tensor<8x16xi8> -> tensor<4x16xi64>
  return
}

// -----

func.func @matmul_bool(%a: tensor<4x8xi1>, %b: tensor<8x16xi1>) {
  // expected-error @+1 {{'tessera.matmul' op operand #0 must be ranked tensor of Tessera floating-point or Tessera integer values, but got 'tensor<4x8xi1>'}}
  %0 = tessera.matmul %a, %b : tensor<4x8xi1>, tensor<8x16xi1> -> tensor<4x16xi1>
  return
}

// -----

func.func @conv2d_rank(%x: tensor<3x32x32xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op expects 4-D input (NCHW) and filter (FCHW), got ranks 3 and 4}}
  %0 = tessera.conv2d %x, %w : tensor<3x32x32xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x30x30xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf16>) {
  // expected-error @+1 {{'tessera.conv2d' op input and filter element types differ}}
  %0 = tessera.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf16> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op strides must be 2 positive values}}
  %0 = tessera.conv2d %x, %w {strides = array<i64: 0, 1>} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_dilations(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op dilations must be 2 positive values}}
  %0 = tessera.conv2d %x, %w {dilations = array<i64: 1>} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op pads must be 4 non-negative values [top, left, bottom, right]}}
  %0 = tessera.conv2d %x, %w {pads = array<i64: 1, 1, -1, 1>} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_group_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op group must be positive}}
  %0 = tessera.conv2d %x, %w {group = 0} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_channels_not_divisible(%x: tensor<1x3x8x8xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op 3 input channels do not divide into 2 groups}}
  %0 = tessera.conv2d %x, %w {group = 2} : tensor<1x3x8x8xf32>, tensor<8x1x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_filters_not_divisible(%x: tensor<1x4x8x8xf32>, %w: tensor<7x2x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op 7 filters do not divide into 2 groups}}
  %0 = tessera.conv2d %x, %w {group = 2} : tensor<1x4x8x8xf32>, tensor<7x2x3x3xf32> -> tensor<1x7x6x6xf32>
  return
}

// -----

func.func @conv2d_channel_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op filter has 3 channels per group, input has 4}}
  %0 = tessera.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op bias must be 1-D with one value per filter ([8]), got [4]}}
  %0 = tessera.conv2d %x, %w bias(%b : tensor<4xf32>) : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_window_too_large(%x: tensor<1x3x2x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op the kernel window does not fit in spatial dimension 2 of the input}}
  %0 = tessera.conv2d %x, %w : tensor<1x3x2x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x1x6xf32>
  return
}

// -----

func.func @conv2d_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op result type 'tensor<1x8x8x8xf32>' differs from the inferred type 'tensor<1x8x6x6xf32>'}}
  %0 = tessera.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @attention_ranks(%q: tensor<2x8x4xf32>, %k: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{'tessera.attention' op query, key and value must have the same rank >= 2, got 3, 4 and 4}}
  %0 = tessera.attention %q, %k, %k : tensor<2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<8x4xf32>, %k: tensor<8x4xbf16>) {
  // expected-error @+1 {{'tessera.attention' op query, key and value element types differ}}
  %0 = tessera.attention %q, %k, %k : tensor<8x4xf32>, tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<8x4xf32>, %k: tensor<8x8xf32>) {
  // expected-error @+1 {{'tessera.attention' op query head dim 4 differs from key head dim 8}}
  %0 = tessera.attention %q, %k, %k : tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @attention_key_value_length(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<6x4xf32>) {
  // expected-error @+1 {{'tessera.attention' op key length 8 differs from value length 6}}
  %0 = tessera.attention %q, %k, %v : tensor<8x4xf32>, tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x8x4xf32>, %k: tensor<3x8x4xf32>) {
  // expected-error @+1 {{'tessera.attention' op batch dimensions: shapes [2] and [3] do not broadcast (dimension 2 vs 3)}}
  %0 = tessera.attention %q, %k, %k : tensor<2x8x4xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32> -> tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<2x8x4xf32>, %m: tensor<2x8x7xf32>) {
  // expected-error @+1 {{'tessera.attention' op mask [2, 8, 7] does not broadcast to the scores [2, 8, 8]}}
  %0 = tessera.attention %q, %q, %q mask(%m : tensor<2x8x7xf32>) : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<8x4xf32>) {
  // expected-error @+1 {{'tessera.attention' op scale must be positive}}
  %0 = tessera.attention %q, %q, %q {scale = -1.0 : f32} : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @conv2d_absurd_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'tessera.conv2d' op the kernel window does not fit in spatial dimension 2 of the input}}
  %0 = tessera.conv2d %x, %w {dilations = array<i64: 9223372036854775807, 1>} : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x6x6xf32>
  return
}
