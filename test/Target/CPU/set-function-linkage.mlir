// RUN: tessera-opt %s --tessera-cpu-set-function-linkage | FileCheck %s

// The entry point gets its C wrapper; a shared kernel is internal.
// CHECK-LABEL: func.func @main
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func private @tessera_kernel_0
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// Not fired on a declaration (a library function such as libm's).
// CHECK: func.func private @expf(f32) -> f32{{$}}
func.func @main(%x: f32) -> f32 {
  %0 = call @tessera_kernel_0(%x) : (f32) -> f32
  %1 = call @expf(%0) : (f32) -> f32
  return %1 : f32
}
func.func private @tessera_kernel_0(%x: f32) -> f32 {
  return %x : f32
}
func.func private @expf(f32) -> f32
