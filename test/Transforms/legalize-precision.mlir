// RUN: tessera-opt %s --split-input-file --tessera-legalize-precision | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-legalize-precision="target=cuda" | FileCheck %s --check-prefix=CUDA
// RUN: tessera-opt %s --split-input-file --tessera-legalize-precision="target=systolic" | FileCheck %s --check-prefix=SYSTOLIC
// RUN: not tessera-opt %s --split-input-file --tessera-legalize-precision="target=nowhere" 2>&1 | FileCheck %s --check-prefix=TARGET

// The CPU computes bf16 matmuls (accumulating in f32) but elementwise ops
// and norms only in f32: the add and the norm are computed in f32 between
// casts, and say why; the program's types stay bf16 at their boundaries.
// CHECK-LABEL: func @mixed
// CHECK: %[[Y:.*]] = tessera.matmul %arg0, %arg1 : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[A:.*]] = tessera.cast %arg0 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[B:.*]] = tessera.cast %arg0 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[S:.*]] = tessera.add %[[A]], %[[B]] {tessera.precision = "f32: bf16 elementwise op not supported by the cpu target"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[N:.*]] = tessera.cast %[[S]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[W:.*]] = tessera.cast %[[N]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[R:.*]] = tessera.rms_norm %[[W]] {{.*}}tessera.precision = "f32: bf16 wide-computing op not supported by the cpu target"{{.*}} : tensor<4x8xf32>
// CHECK: %[[O:.*]] = tessera.cast %[[R]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: tessera.reshape %[[O]] : tensor<4x8xbf16> -> tensor<32xbf16>
// The CUDA target computes bf16 contractions (tensor cores) and bf16
// elementwise ops; its norms compute in f32.
// CUDA-LABEL: func @mixed
// CUDA: tessera.matmul %arg0, %arg1 : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// CUDA: %[[S:.*]] = tessera.add %arg0, %arg0 : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
// CUDA: %[[W:.*]] = tessera.cast %[[S]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CUDA: tessera.rms_norm %[[W]] {tessera.precision = "f32: bf16 wide-computing op not supported by the cuda target"}
// The accelerator's array takes bf16 operands (and has no f32 for its own
// lowering to convert to): the matmul stays; its vector unit computes in
// f32, so the add widens as on the CPU.
// SYSTOLIC-LABEL: func @mixed
// SYSTOLIC: tessera.matmul %arg0, %arg1 : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// SYSTOLIC: tessera.add {{.*}} {tessera.precision = "f32: bf16 elementwise op not supported by the systolic target"}
func.func @mixed(%x: tensor<4x8xbf16>, %w: tensor<8x8xbf16>) -> (tensor<4x8xf32>, tensor<32xbf16>) {
  %y = tessera.matmul %x, %w : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
  %s = tessera.add %x, %x : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  %r = tessera.rms_norm %s : tensor<4x8xbf16>
  %f = tessera.reshape %r : tensor<4x8xbf16> -> tensor<32xbf16>
  return %y, %f : tensor<4x8xf32>, tensor<32xbf16>
}

// -----

// Must not fire: everything in f32, integers, and a cast.
// CHECK-LABEL: func @legal
// CHECK-NOT: tessera.precision
// CHECK: return
func.func @legal(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xbf16>) {
  %0 = tessera.exp %x : tensor<4xf32>
  %1 = tessera.add %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %2 = tessera.cast %0 : tensor<4xf32> to tensor<4xbf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi64>, tensor<4xbf16>
}

// TARGET: error: no target named 'nowhere'

// -----

// A convolution's result takes its inputs' type. The CPU accumulates a
// static dense bf16 one whose GEMM has whole tiles in f32 (its im2col GEMM
// reads bf16): must not fire. A depthwise one, which the CPU keeps f32,
// computes in f32, its result cast back.
// CHECK-LABEL: func @narrow_conv
// CHECK-NEXT: tessera.conv2d %arg0, %arg1 : tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16> -> tensor<1x16x4x4xbf16>
// CHECK: %[[I:.*]] = tessera.cast %arg0 : tensor<1x8x6x6xbf16> to tensor<1x8x6x6xf32>
// CHECK: %[[F:.*]] = tessera.cast %arg2 : tensor<8x1x3x3xbf16> to tensor<8x1x3x3xf32>
// CHECK: %[[C:.*]] = tessera.conv2d %[[I]], %[[F]] {group = 8 : i64, tessera.precision = "f32: {{.*}}"} : tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32> -> tensor<1x8x4x4xf32>
// CHECK: tessera.cast %[[C]] : tensor<1x8x4x4xf32> to tensor<1x8x4x4xbf16>
func.func @narrow_conv(%x: tensor<1x8x6x6xbf16>, %f: tensor<16x8x3x3xbf16>, %d: tensor<8x1x3x3xbf16>) -> (tensor<1x16x4x4xbf16>, tensor<1x8x4x4xbf16>) {
  %0 = tessera.conv2d %x, %f : tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16> -> tensor<1x16x4x4xbf16>
  %1 = tessera.conv2d %x, %d {group = 8} : tensor<1x8x6x6xbf16>, tensor<8x1x3x3xbf16> -> tensor<1x8x4x4xbf16>
  return %0, %1 : tensor<1x16x4x4xbf16>, tensor<1x8x4x4xbf16>
}

// -----

// The CUDA target takes fp8 contractions (wgmma on sm_90a, tiles decoded
// to bf16 for mma.sync elsewhere): must not fire.
// CUDA-LABEL: func @fp8_matmul
// CUDA-NEXT: tessera.matmul %arg0, %arg1 : tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN> -> tensor<4x8xf32>
func.func @fp8_matmul(%x: tensor<4x8xf8E4M3FN>, %w: tensor<8x8xf8E4M3FN>) -> tensor<4x8xf32> {
  %y = tessera.matmul %x, %w : tensor<4x8xf8E4M3FN>, tensor<8x8xf8E4M3FN> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// bf16 attention (a model's own, or narrowed for the CUDA target): the
// CUDA target's fused kernel accumulates it in f32 and it stays bf16 there;
// with a head dim the kernel does not take (40), and on the CPU, it would
// accumulate in bf16 and computes in f32.
// CHECK-LABEL: func @bf16_attention
// CHECK: tessera.attention {{.*}} {tessera.precision = "f32: tessera.attention would accumulate in bf16"} : tensor<1x2x8x64xf32>
// CUDA-LABEL: func @bf16_attention
// CUDA: tessera.attention %arg0, %arg0, %arg0 : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
// CUDA: tessera.attention {{.*}} {tessera.precision = "f32: tessera.attention would accumulate in bf16"} : tensor<1x2x8x40xf32>
func.func @bf16_attention(%q: tensor<1x2x8x64xbf16>, %q40: tensor<1x2x8x40xbf16>) -> (tensor<1x2x8x64xbf16>, tensor<1x2x8x40xbf16>) {
  %0 = tessera.attention %q, %q, %q : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
  %1 = tessera.attention %q40, %q40, %q40 : tensor<1x2x8x40xbf16>, tensor<1x2x8x40xbf16>, tensor<1x2x8x40xbf16> -> tensor<1x2x8x40xbf16>
  return %0, %1 : tensor<1x2x8x64xbf16>, tensor<1x2x8x40xbf16>
}
