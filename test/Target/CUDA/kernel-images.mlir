// The PTX objects of a gpu.binary become one kernel image holding a cubin
// (assembled by ptxas) and the PTX for each architecture.
// RUN: rm -rf %t && split-file %s %t
// RUN: tessera-opt --tessera-cuda-kernel-images %t/good.mlir | FileCheck %s
// RUN: tessera-opt --tessera-cuda-kernel-images="assemble=false" %t/good.mlir | FileCheck %s --check-prefix=PTXONLY
// A toolkit without ptxas is an error naming where it looked.
// RUN: not tessera-opt --tessera-cuda-kernel-images="cuda-path=%t/nowhere" %t/good.mlir 2>&1 | FileCheck %s --check-prefix=NOPTXAS
// PTX that ptxas rejects is an error with ptxas's message.
// RUN: not tessera-opt --tessera-cuda-kernel-images %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "TSRKIMG1\02\00\00\00\00\00\00\00sm_80
// CHECK-SAME: \01\00\00\00sm_80
// CHECK-SAME: .entry k(
// CHECK-NOT: #gpu.object
// PTXONLY: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "TSRKIMG1\01\00\00\00\01\00\00\00sm_80
// NOPTXAS: error: no ptxas at {{.*}}nowhere/bin/ptxas
// BAD: error: ptxas failed for sm_80: {{.*}}not_an_instruction

//--- good.mlir
gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry k()\0A{\0Aret;\0A}\0A">]

//--- bad.mlir
gpu.binary @broken [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry k()\0A{\0Anot_an_instruction;\0A}\0A">]
