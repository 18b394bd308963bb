// RUN: tessera-opt --tessera-cuda-merge-kernel-modules %s | FileCheck %s

// Every kernel moves into the first module under its module's name, and
// each launch follows it; a module with more than kernels stays.
// Workgroup buffers get a 16-byte alignment; one that has its own keeps
// it.
// CHECK: gpu.module @k0 {
// CHECK:   gpu.func @k0_fn() workgroup(%{{.*}} : memref<3xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}) kernel
// CHECK:   gpu.func @k1() kernel
// CHECK: }
// CHECK-NOT: gpu.module @k1
// CHECK: gpu.module @with_global
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @k0::@k0_fn
// CHECK: gpu.launch_func @k0::@k1
// CHECK: gpu.launch_func @with_global::@g
module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k0_fn() workgroup(%a : memref<3xf16, #gpu.address_space<workgroup>>, %b : memref<8xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}) kernel {
      gpu.return
    }
  }
  gpu.module @k1 {
    gpu.func @k1_fn() kernel {
      gpu.return
    }
  }
  gpu.module @with_global {
    memref.global "private" @buffer : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.func @g() kernel {
      gpu.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@k0_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @k1::@k1_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @with_global::@g blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
