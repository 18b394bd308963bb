// RUN: tessera-opt --tessera-cuda-decode-fp8 %s | FileCheck %s

// An fp8 widening that no tensor core took (a contraction's SIMT form) is
// decoded by integer arithmetic: the byte's exponent and mantissa fields
// placed in an f32 (E4M3FN's bias 7 rebased by 120), subnormals as the
// mantissa times 2^-9, and E4M3FN's one NaN pattern (S.1111.111).
// CHECK-LABEL: func @e4m3
// CHECK-NOT: f8E4M3FN to f32
// CHECK: %[[BYTE:.*]] = arith.bitcast %arg0 : f8E4M3FN to i8
// CHECK: %[[W:.*]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK: arith.addi %{{.*}}, %c120_i32
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.cmpi eq, %{{.*}}, %c15_i32{{.*}}
// CHECK: return %{{.*}} : f32
func.func @e4m3(%x: f8E4M3FN) -> f32 {
  %0 = arith.extf %x : f8E4M3FN to f32
  return %0 : f32
}

// E5M2 (bias 15, rebased by 112; infinities and NaNs in the top exponent),
// widened to bf16 through f32.
// CHECK-LABEL: func @e5m2_to_bf16
// CHECK-NOT: f8E5M2 to f32
// CHECK-NOT: f8E5M2 to bf16
// CHECK: arith.addi %{{.*}}, %c112_i32
// CHECK: arith.cmpi eq, %{{.*}}, %c31_i32{{.*}}
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @e5m2_to_bf16(%x: f8E5M2) -> bf16 {
  %0 = arith.extf %x : f8E5M2 to bf16
  return %0 : bf16
}

// Must not fire: other widenings stay.
// CHECK-LABEL: func @bf16
// CHECK-NEXT: arith.extf %arg0 : bf16 to f32
func.func @bf16(%x: bf16) -> f32 {
  %0 = arith.extf %x : bf16 to f32
  return %0 : f32
}
