// RUN: tessera-opt %s --split-input-file --verify-diagnostics --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" -o /dev/null

// An op the accelerator cannot run yet is reported where it is.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tessera.reduce_prod' cannot run on the systolic target yet: its lowering handles matmuls, convolutions, pooling, constant pads, resizes, elementwise ops, softmax, layer_norm, rms_norm, sums, means and maxima over trailing axes, transposes, slices, splits, concatenations, broadcasts and gathers of one constant index}}
  %0 = tessera.reduce_prod %x [1] {keepdims = false} : tensor<8x16xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A sum over a leading axis (the vector unit reduces rows).
func.func @main(%x: tensor<8x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tessera.reduce_sum' reduces on the vector unit over trailing axes only}}
  %0 = tessera.reduce_sum %x [0] {keepdims = false} : tensor<8x16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// A gather of several indices.
func.func @main(%x: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %i = tessera.constant dense<[1, 3]> : tensor<2xi64>
  // expected-error @+1 {{'tessera.gather' gathers only one constant index on the systolic target}}
  %0 = tessera.gather %x[%i] axis 0 : tensor<8x16xf32>, tensor<2xi64> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// A convolution whose filter is computed at run time.
func.func @main(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{the systolic target needs a constant filter and static shapes}}
  %0 = tessera.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// Pooling over three spatial dims.
func.func @main(%x: tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32> {
  // expected-error @+1 {{'tessera.max_pool' runs on the systolic target over static f32 [N, C, H, W] tensors only}}
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : tensor<1x2x4x4x4xf32> -> tensor<1x2x2x2x2xf32>
  return %0 : tensor<1x2x2x2x2xf32>
}

// -----

// A pad that mirrors the input.
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error @+1 {{'tessera.pad' pads with a constant only on the systolic target (not 'reflect')}}
  %0 = tessera.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = 1 : i32} : tensor<1x2x4x4xf32> -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// A softmax along another axis than the last.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'tessera.softmax' runs on the vector unit along the last axis only}}
  %0 = tessera.softmax %x {axis = 0 : i64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Broadcasts the vector unit does not take: an outer sum of a row and a
// column.
func.func @main(%x: tensor<8x1xf32>, %y: tensor<1x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'tessera.add' needs an operand of the result's shape on the vector unit}}
  %0 = tessera.add %x, %y : tensor<8x1xf32>, tensor<1x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A broadcast base of a power.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %two = tessera.constant dense<2.0> : tensor<f32>
  // expected-error @+1 {{'tessera.pow' with a broadcast base is not supported on the vector unit}}
  %0 = tessera.pow %two, %x : tensor<f32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A layer norm whose scale broadcasts one value over the normalized dims.
func.func @main(%x: tensor<8x16xf32>, %g: tensor<1xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'tessera.layer_norm' needs its scale and bias shaped like the normalized dims on the vector unit}}
  %0 = tessera.layer_norm %x scale(%g : tensor<1xf32>) : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Computed operands whose batch dims broadcast partly.
func.func @main(%x: tensor<2x3x8x16xf32>, %w: tensor<3x16x4xf32>) -> tensor<2x3x8x4xf32> {
  // expected-error @+1 {{broadcasts batch dims the systolic target does not (each operand has all of them or none)}}
  %0 = tessera.matmul %x, %w : tensor<2x3x8x16xf32>, tensor<3x16x4xf32> -> tensor<2x3x8x4xf32>
  return %0 : tensor<2x3x8x4xf32>
}

// -----

// Dynamic inputs.
// expected-error @+1 {{input 0 must be a static f32 or boolean tensor (or integer indices that only gathers read) on the systolic target}}
func.func @main(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  return %x : tensor<?x16xf32>
}

// -----

// A resize whose scales are computed is not lowered: the copies need
// the index maps at compile time.
func.func @main(%x: tensor<1x2x3x4xf32>, %s: tensor<4xf32>) -> tensor<1x2x6x8xf32> {
  // expected-error @+1 {{'tessera.resize' needs constant scales, one per dim, on the systolic target}}
  %0 = tessera.resize %x, %s : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Linear resizing outside a tf_crop_and_resize roi with a non-zero
// extrapolation value is not lowered (nearest resizing is).
func.func @main(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %r = tessera.constant dense<[0.0, 0.0, -0.5, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>
  // expected-error @+1 {{'tessera.resize' extrapolates with a non-zero value outside the roi, which the systolic target does only for nearest resizing}}
  %0 = tessera.resize %x, %s roi(%r : tensor<8xf32>) {mode = 1 : i32, coordinate_mode = 6 : i32, extrapolation_value = 1.0 : f64} : tensor<1x2x3x4xf32>, tensor<4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// transpose_a of a matmul of quantized operands is not lowered (the
// float matmul's is: a transposing copy of the lhs).
func.func @main(%x: tensor<16x8xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %w = tessera.constant dense<1.5> : tensor<16x4xf8E4M3FN>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<16x8xf32> -> tensor<16x8xf8E4M3FN>
  %dq = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<16x8xf8E4M3FN> -> tensor<16x8xf32>
  %dw = tessera.dequantize %w scale(%s : tensor<f32>) : tensor<16x4xf8E4M3FN> -> tensor<16x4xf32>
  // expected-error @+1 {{transpose_a of a quantized matmul is not supported on the systolic target yet}}
  %0 = tessera.matmul %dq, %dw {transpose_a} : tensor<16x8xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A result both returned and used again.
func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x4xf32>) {
  %w = tessera.constant dense<1.0> : tensor<16x16xf32>
  %v = tessera.constant dense<1.0> : tensor<16x4xf32>
  // expected-error @+1 {{a result returned and also used by another op is not supported on the systolic target yet}}
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %1 = tessera.matmul %0, %v : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x4xf32>
}

// -----

// An input returned as it is.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{each result must be computed on the accelerator (an input or constant returned as it is is not supported)}}
  return %x : tensor<8x16xf32>
}

// -----

// expected-error @+1 {{the systolic target compiles a module with one function, not 2}}
module {
  func.func @a(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    return %x : tensor<8x16xf32>
  }
  func.func @b(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    return %x : tensor<8x16xf32>
  }
}

// -----

// An integer input that is not only gather indices.
// expected-error @+1 {{input 0 must be a static f32 or boolean tensor (or integer indices that only gathers read) on the systolic target}}
func.func @main(%ids: tensor<4xi64>) -> tensor<4xi64> {
  return %ids : tensor<4xi64>
}

// -----

// Must not take the quantized path: a quantize whose scale differs from
// the dequantize's is an error at the quantize op (no lowering for a lone
// quantize).
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %t = tessera.constant dense<0.25> : tensor<f32>
  %w = tessera.constant dense<1.5> : tensor<16x4xf8E4M3FN>
  // expected-error @+1 {{'tessera.quantize' cannot run on the systolic target yet}}
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xf8E4M3FN>
  %dq = tessera.dequantize %q scale(%t : tensor<f32>) : tensor<8x16xf8E4M3FN> -> tensor<8x16xf32>
  %dw = tessera.dequantize %w scale(%t : tensor<f32>) : tensor<16x4xf8E4M3FN> -> tensor<16x4xf32>
  %0 = tessera.matmul %dq, %dw : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Must not take the quantized path: weight scales per row of the weights
// (axis 0, along K) are not per output column.
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %t = tessera.constant dense<0.25> : tensor<16xf32>
  %w = tessera.constant dense<3> : tensor<16x4xi8>
  %z = tessera.constant dense<0> : tensor<i8>
  // expected-error @+1 {{'tessera.quantize' cannot run on the systolic target yet}}
  %q = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<8x16xf32> -> tensor<8x16xi8>
  %dq = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<8x16xi8> -> tensor<8x16xf32>
  %dw = tessera.dequantize %w scale(%t : tensor<16xf32>) {axis = 0} : tensor<16x4xi8> -> tensor<16x4xf32>
  %0 = tessera.matmul %dq, %dw : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A reshape of a value that is not in memory (a cast that its users read
// in their own format) and not constant.
func.func @main(%x: tensor<4x4xf32>) -> tensor<1x4x4xbf16> {
  %c = tessera.cast %x : tensor<4x4xf32> to tensor<4x4xbf16>
  // expected-error @+1 {{'tessera.reshape' reshapes only what is already in memory}}
  %u = tessera.reshape %c : tensor<4x4xbf16> -> tensor<1x4x4xbf16>
  return %u : tensor<1x4x4xbf16>
}

// -----

// A sum over an empty dim (the vector unit needs at least one value).
func.func @main(%x: tensor<8x0xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tessera.reduce_sum' has no elements (the vector unit needs at least one)}}
  %0 = tessera.reduce_sum %x [1] {keepdims = false} : tensor<8x0xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A comparison of integers (not constant-folded: the lowering evaluates
// only fp32 and boolean constants) has no place on the vector unit.
func.func @main(%s: tensor<4xf32>) -> tensor<4xf32> {
  %a = tessera.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %b = tessera.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'tessera.compare' reads an operand that is neither f32 nor boolean on the systolic target}}
  %c = tessera.compare lt, %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %m = tessera.where %c, %s, %zero : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// One value returned twice, once as a view of the other result.
func.func @main(%x: tensor<2x8x1x1xf32>) -> (tensor<2x8x1x1xf32> {tessera.name = "pooled"}, tensor<2x8xf32> {tessera.name = "logits"}) {
  %0 = tessera.add %x, %x : tensor<2x8x1x1xf32>, tensor<2x8x1x1xf32> -> tensor<2x8x1x1xf32>
  // expected-error @+1 {{'tessera.reshape' returns a view of another of the model's results; return it once}}
  %1 = tessera.reshape %0 : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
  return %0, %1 : tensor<2x8x1x1xf32>, tensor<2x8xf32>
}
