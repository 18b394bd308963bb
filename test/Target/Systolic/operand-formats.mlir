// RUN: tessera-opt %s --split-input-file --tessera-systolic-operand-formats | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-systolic-operand-formats=format=f16 | FileCheck %s --check-prefix=F16
// RUN: not tessera-opt %s --split-input-file --tessera-systolic-operand-formats=format=i8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// The array has no fp32 operands: what the precision policy leaves fp32
// reads the array's 16-bit format, written into the IR as casts; the
// lowering reads it from there.

// BAD: error: 'i8' is not a float operand format (bf16, f16, f8E4M3FN or f8E5M2)

// CHECK-LABEL: func.func @dense
// CHECK: %[[X:.*]] = tessera.cast %arg0 : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK: %[[W:.*]] = tessera.cast %{{.*}} : tensor<16x4xf32> to tensor<16x4xbf16>
// CHECK: tessera.matmul %[[X]], %[[W]] : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
// F16-LABEL: func.func @dense
// F16: tessera.matmul %{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16> -> tensor<8x4xf32>
func.func @dense(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %w = tessera.constant dense<0.5> : tensor<16x4xf32>
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A matmul in a fusion region gets its casts before the region.
// CHECK-LABEL: func.func @fused
// CHECK: tessera.cast %arg0 : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK: tessera.cast
// CHECK-NEXT: tessera.fusion epilogue
// CHECK-NEXT: tessera.matmul {{.*}} : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
// CHECK-NEXT: tessera.relu
func.func @fused(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %w = tessera.constant dense<0.5> : tensor<16x4xf32>
  %0 = tessera.fusion epilogue {
    %1 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
    %2 = tessera.relu %1 : tensor<8x4xf32>
    tessera.yield %2 : tensor<8x4xf32>
  } : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A convolution's result has its input's type: it is cast back to fp32.
// CHECK-LABEL: func.func @conv
// CHECK: %[[I:.*]] = tessera.cast %arg0 : tensor<1x2x4x4xf32> to tensor<1x2x4x4xbf16>
// CHECK: %[[F:.*]] = tessera.cast %{{.*}} : tensor<3x2x2x2xf32> to tensor<3x2x2x2xbf16>
// CHECK: %[[C:.*]] = tessera.conv2d %[[I]], %[[F]] {{.*}} -> tensor<1x3x2x2xbf16>
// CHECK: %[[R:.*]] = tessera.cast %[[C]] : tensor<1x3x2x2xbf16> to tensor<1x3x2x2xf32>
// CHECK: return %[[R]]
func.func @conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32> {
  %w = tessera.constant dense<0.5> : tensor<3x2x2x2xf32>
  %0 = tessera.conv2d %x, %w {strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// Must not fire: a matmul in QDQ form carries its format (fp8) already,
// and one whose operands are not fp32 is left as it is.
// CHECK-LABEL: func.func @quantized
// CHECK-NOT: tessera.cast
// CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x4xf32>
// CHECK-NOT: tessera.cast
// CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<8x16xf16>, tensor<16x4xf16>
// CHECK-NOT: tessera.cast
func.func @quantized(%x: tensor<8x16xf32>, %h: tensor<8x16xf16>, %g: tensor<16x4xf16>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %sw = tessera.constant dense<0.25> : tensor<f32>
  %w = tessera.constant dense<1.0> : tensor<16x4xf8E4M3FN>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x16xf32> -> tensor<8x16xf8E4M3FN>
  %dq = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<8x16xf8E4M3FN> -> tensor<8x16xf32>
  %dw = tessera.dequantize %w scale(%sw : tensor<f32>) : tensor<16x4xf8E4M3FN> -> tensor<16x4xf32>
  %0 = tessera.matmul %dq, %dw : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %1 = tessera.matmul %h, %g : tensor<8x16xf16>, tensor<16x4xf16> -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Must not fire: matmuls the precision policy quantized (int8's i32
// product, fp8 with alpha) or narrowed (bf16) carry their formats.
// CHECK-LABEL: func.func @narrowed
// CHECK-NOT: tessera.cast
// CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<8x16xi8>, tensor<16x4xi8> -> tensor<8x4xi32>
// CHECK: tessera.matmul %{{.*}}, %{{.*}} {alpha = 1.250000e-01 : f32} : tensor<8x16xf8E4M3FN>, tensor<16x4xf8E4M3FN>
// CHECK: tessera.matmul %{{.*}}, %{{.*}} : tensor<8x16xbf16>, tensor<16x4xbf16>
// CHECK-NOT: tessera.cast
func.func @narrowed(%q: tensor<8x16xi8>, %f: tensor<8x16xf8E4M3FN>, %b: tensor<8x16xbf16>) -> (tensor<8x4xi32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %w = tessera.constant dense<3> : tensor<16x4xi8>
  %v = tessera.constant dense<1.5> : tensor<16x4xf8E4M3FN>
  %u = tessera.constant dense<1.5> : tensor<16x4xbf16>
  %0 = tessera.matmul %q, %w : tensor<8x16xi8>, tensor<16x4xi8> -> tensor<8x4xi32>
  %1 = tessera.matmul %f, %v {alpha = 0.125 : f32} : tensor<8x16xf8E4M3FN>, tensor<16x4xf8E4M3FN> -> tensor<8x4xf32>
  %2 = tessera.matmul %b, %u : tensor<8x16xbf16>, tensor<16x4xbf16> -> tensor<8x4xf32>
  return %0, %1, %2 : tensor<8x4xi32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A matmul the precision policy kept fp32 on purpose (its decision
// recorded: beyond fp16's range in calibration) reads bf16, fp32's range,
// even where the array's format is f16; one without a decision reads f16.
// F16-LABEL: func.func @kept_wide
// F16: tessera.cast %arg0 : tensor<8x16xf32> to tensor<8x16xbf16>
// F16: tessera.matmul {{.*}} : tensor<8x16xbf16>, tensor<16x4xbf16>
// F16: tessera.cast %arg0 : tensor<8x16xf32> to tensor<8x16xf16>
// F16: tessera.matmul {{.*}} : tensor<8x16xf16>, tensor<16x4xf16>
// CHECK-LABEL: func.func @kept_wide
func.func @kept_wide(%x: tensor<8x16xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %w = tessera.constant dense<1.0> : tensor<16x4xf32>
  %0 = tessera.matmul %x, %w {tessera.precision = "f32: its lhs reaches 1.4e+05 in calibration, beyond fp16's range"} : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %1 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}
