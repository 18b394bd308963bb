// RUN: tessera-opt --tessera-cuda-merge-kernel-modules %s | FileCheck %s
// RUN: tessera-opt --tessera-cuda-merge-kernel-modules --tessera-cuda-attach-targets="chips=sm_80,sm_90a link-libs=/cuda/libdevice.bc" %s | FileCheck %s --check-prefix=TARGETS
// RUN: not tessera-opt --tessera-cuda-merge-kernel-modules --tessera-cuda-attach-targets="chips=sm_80" %s 2>&1 | FileCheck %s --check-prefix=NOTARGET

// Kernels that use wgmma (sm_90a's own instructions) merge into a module
// of their own, marked for sm_90a; the others merge as before.
// CHECK: gpu.module @k0 {
// CHECK:   gpu.func @k0_fn() kernel
// CHECK:   gpu.func @k2() kernel
// CHECK: }
// CHECK: gpu.module @w1 attributes {tessera.cuda.arch = "sm_90a"} {
// CHECK:   gpu.func @w1_fn() kernel
// CHECK:   gpu.func @w3() kernel
// CHECK: }
// CHECK-NOT: gpu.module @k2
// CHECK-NOT: gpu.module @w3
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @k0::@k0_fn
// CHECK: gpu.launch_func @w1::@w1_fn
// CHECK: gpu.launch_func @k0::@k2
// CHECK: gpu.launch_func @w1::@w3

// Every chip's target on the portable module (PTX 8.0), sm_90a's alone on
// the marked one (sm_80's verifier would reject wgmma; PTX 8.3 for the
// tensor-map proxy fence).
// TARGETS: gpu.module @k0 [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80", link = ["/cuda/libdevice.bc"]>, #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80", link = ["/cuda/libdevice.bc"]>]
// TARGETS: gpu.module @w1 [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx83", link = ["/cuda/libdevice.bc"]>] attributes {tessera.cuda.arch = "sm_90a"}
// A module of sm_90a kernels with no sm_90a among the chips is an error,
// not a module compiled for nothing.
// NOTARGET: error: kernels for sm_90a but no target for it (the architectures: sm_80)
module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k0_fn() kernel {
      gpu.return
    }
  }
  gpu.module @w1 {
    gpu.func @w1_fn() kernel {
      nvvm.wgmma.fence.aligned
      gpu.return
    }
  }
  gpu.module @k2 {
    gpu.func @k2_fn() kernel {
      gpu.return
    }
  }
  gpu.module @w3 {
    gpu.func @w3_fn() kernel {
      nvvm.wgmma.commit.group.sync.aligned
      gpu.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@k0_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @w1::@w1_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @k2::@k2_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @w3::@w3_fn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
