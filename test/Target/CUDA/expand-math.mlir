// RUN: tessera-opt --tessera-cuda-expand-math %s | FileCheck %s

// exp, erf, tanh and rsqrt become arithmetic; sqrt, absf and floor, single
// PTX instructions, stay.
// CHECK-LABEL: func.func @f
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.rsqrt
// CHECK: math.sqrt
// CHECK: math.absf
// CHECK: return
func.func @f(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
  %a = math.exp %x : f32
  %b = math.erf %x : f32
  %c = math.tanh %x : f32
  %d = math.rsqrt %x : f32
  %e = math.sqrt %x : f32
  %f = math.absf %x : f32
  return %a, %b, %c, %d, %e, %f : f32, f32, f32, f32, f32, f32
}
