// RUN: tessera-opt --tessera-cuda-device-globals %s | FileCheck %s

// A weight's address taken by host code becomes its device copy.
// CHECK-LABEL: llvm.func @host
// CHECK: %[[HOST:.*]] = llvm.mlir.addressof @weight : !llvm.ptr
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(24 : i64) : i64
// CHECK: %[[DEV:.*]] = llvm.call @tessera_cuda_device_global(%[[HOST]], %[[BYTES]])
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[DEV]] : i64 to !llvm.ptr
// CHECK: llvm.return %[[PTR]]
// The address of a mutable global, or of one without a value, is kept.
// CHECK-LABEL: llvm.func @mutable
// CHECK-NOT: tessera_cuda_device_global
// CHECK: llvm.return
// CHECK: llvm.func @tessera_cuda_device_global(!llvm.ptr, i64) -> i64
module {
  llvm.mlir.global private constant @weight(dense<1.0> : tensor<6xf32>) {addr_space = 0 : i32} : !llvm.array<6 x f32>
  llvm.mlir.global private @state(dense<0.0> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.func @host() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @weight : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
  llvm.func @mutable() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @state : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}
