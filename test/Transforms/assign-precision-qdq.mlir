// A model its exporter quantized (QuantizeLinear/DequantizeLinear around a
// product) keeps the precision it chose under every policy: the pass
// neither quantizes the dequantized operands again nor casts them, and
// says why. The plain f32 product beside it narrows as usual.
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-scaling=current keep-heads=false" | FileCheck %s --check-prefix=FP8
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16" | FileCheck %s --check-prefix=BF16
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 remarks" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// FP8-LABEL: func @qdq
// The activation's Q -> DQ, and the weight's DQ through a transpose.
// FP8: %[[Q:.*]] = tessera.quantize %arg0
// FP8: %[[X:.*]] = tessera.dequantize %[[Q]]
// FP8: %[[W:.*]] = tessera.dequantize
// FP8: %[[WT:.*]] = tessera.transpose %[[W]]
// FP8-NOT: tessera.quantize %[[X]]
// FP8: %[[Y:.*]] = tessera.matmul %[[X]], %[[WT]] {tessera.precision = "f32: the model dequantizes its operands itself (DequantizeLinear): kept as exported"} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// The plain product narrows, its lhs quantized to fp8 here.
// FP8: %[[YQ:.*]] = tessera.quantize %[[Y]] scale
// FP8: tessera.matmul %[[YQ]], %{{.*}} {alpha = {{.*}}, tessera.precision = "fp8"} : tensor<4x16xf8E4M3FN>, tensor<16x2xf8E4M3FN> -> tensor<4x2xf32>
// BF16-LABEL: func @qdq
// BF16-NOT: tessera.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
// BF16: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "f32: the model dequantizes its operands itself (DequantizeLinear): kept as exported"} : tensor<4x8xf32>, tensor<8x16xf32>
// BF16: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "bf16"} : tensor<4x16xbf16>, tensor<16x2xbf16> -> tensor<4x2xf32>
// REMARK: remark: loc("/fc1/MatMul"): precision bf16: f32: the model dequantizes its operands itself (DequantizeLinear): kept as exported
// REMARK: remark: loc("/fc2/MatMul"): precision bf16: bf16
func.func @qdq(%arg0: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %s = tessera.constant dense<0.02> : tensor<f32>
  %z = tessera.constant dense<0> : tensor<i8>
  %q = tessera.quantize %arg0 scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<4x8xf32> -> tensor<4x8xi8> loc("/x/QuantizeLinear")
  %x = tessera.dequantize %q scale(%s : tensor<f32>) zero_point(%z : tensor<i8>) : tensor<4x8xi8> -> tensor<4x8xf32> loc("/x/DequantizeLinear")
  %wq = tessera.constant dense<3> : tensor<16x8xi8>
  %ws = tessera.constant dense<0.01> : tensor<f32>
  %w = tessera.dequantize %wq scale(%ws : tensor<f32>) : tensor<16x8xi8> -> tensor<16x8xf32> loc("/w/DequantizeLinear")
  %wt = tessera.transpose %w [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tessera.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("/fc1/MatMul")
  %w2 = tessera.constant dense<0.5> : tensor<16x2xf32>
  %r = tessera.matmul %y, %w2 : tensor<4x16xf32>, tensor<16x2xf32> -> tensor<4x2xf32> loc("/fc2/MatMul")
  return %r : tensor<4x2xf32>
}

// -----

// Must not fire: a dequantized i32 accumulator (what the int8 policy makes
// of a product, as a plan's earlier policy may have) is no model
// quantization, so the product reading it narrows.
// BF16-LABEL: func @own_dequantization
// BF16-NOT: kept as exported
// BF16: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "bf16"} : tensor<4x8xbf16>, tensor<8x2xbf16> -> tensor<4x2xf32>
func.func @own_dequantization(%acc: tensor<8x4xi32>) -> tensor<4x2xf32> {
  %s = tessera.constant dense<0.001> : tensor<f32>
  %d = tessera.dequantize %acc scale(%s : tensor<f32>) : tensor<8x4xi32> -> tensor<8x4xf32>
  %t = tessera.transpose %d [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %w = tessera.constant dense<0.5> : tensor<8x2xf32>
  %r = tessera.matmul %t, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32> loc("/next/MatMul")
  return %r : tensor<4x2xf32>
}
