// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @quantize_shape(%x: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'tessera.quantize' op input shape [4, 8] and result shape [8, 4] differ}}
  %0 = tessera.quantize %x scale(%s : tensor<f32>) : tensor<4x8xf32> -> tensor<8x4xi8>
  return
}

// -----

func.func @quantize_to_float(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'tessera.quantize' op result #0 must be ranked tensor of 8-bit signless integer or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xbf16>'}}
  %0 = tessera.quantize %x scale(%s : tensor<f32>) : tensor<4xf32> -> tensor<4xbf16>
  return
}

// -----

func.func @quantize_axis(%x: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.quantize' op axis 2 is out of range for rank 2}}
  %0 = tessera.quantize %x scale(%s : tensor<8xf32>) {axis = 2} : tensor<4x8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_per_channel_scale(%x: tensor<4x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.quantize' op a per-channel scale must be 1-D with 8 entries (dimension 1), got [4]}}
  %0 = tessera.quantize %x scale(%s : tensor<4xf32>) {axis = 1} : tensor<4x8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_per_tensor_scale(%x: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.quantize' op a per-tensor scale must have one element, got shape [8]; set axis for a per-channel scale}}
  %0 = tessera.quantize %x scale(%s : tensor<8xf32>) : tensor<4x8xf32> -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_fp8_zero_point(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) {
  // expected-error @+1 {{'tessera.quantize' op a zero point needs an i8 quantized type, not 'f8E4M3FN'}}
  %0 = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<f8E4M3FN>) : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @quantize_zero_point_type(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E5M2>) {
  // expected-error @+1 {{'tessera.quantize' op zero point element type 'f8E5M2' differs from the quantized type 'i8'}}
  %0 = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<f8E5M2>) : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @quantize_zero_point_shape(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<1xi8>) {
  // expected-error @+1 {{'tessera.quantize' op zero point shape [1] differs from scale shape []}}
  %0 = tessera.quantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<1xi8>) : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @dequantize_int32_zero_point(%x: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{'tessera.dequantize' op a zero point needs an i8 quantized type, not 'i32'}}
  %0 = tessera.dequantize %x scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @dequantize_shape(%x: tensor<4xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{'tessera.dequantize' op input shape [4] and result shape [2, 2] differ}}
  %0 = tessera.dequantize %x scale(%s : tensor<f32>) : tensor<4xi8> -> tensor<2x2xf32>
  return
}

// -----

func.func @dequantize_from_float(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'tessera.dequantize' op operand #0 must be ranked tensor of 8-bit signless integer or 32-bit signless integer or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xf32>'}}
  %0 = tessera.dequantize %x scale(%s : tensor<f32>) : tensor<4xf32> -> tensor<4xf32>
  return
}
