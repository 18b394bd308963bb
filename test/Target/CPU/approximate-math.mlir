// RUN: tessera-opt %s --split-input-file --tessera-cpu-approximate-math | FileCheck %s

// erf, tanh and exp on f32 become arithmetic.
// CHECK-LABEL: func @gelu_softmax
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: return
func.func @gelu_softmax(%x: f32) -> (f32, f32, f32) {
  %0 = math.erf %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %x : f32
  return %0, %1, %2 : f32, f32, f32
}

// -----

// Vectors of f32 too.
// CHECK-LABEL: func @vector
// CHECK-NOT: math.erf
// CHECK: math.fma %{{.*}} : vector<16xf32>
func.func @vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.erf %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// Must not fire: sqrt (an LLVM intrinsic that vectorizes), pow, and the
// functions of other element types stay as they are.
// CHECK-LABEL: func @untouched
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: math.powf %{{.*}} : f32
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f64
func.func @untouched(%x: f32, %y: f64) -> (f32, f32, f64, f64) {
  %0 = math.sqrt %x : f32
  %1 = math.powf %x, %x : f32
  %2 = math.erf %y : f64
  %3 = math.exp %y : f64
  return %0, %1, %2, %3 : f32, f32, f64, f64
}
