// RUN: rm -rf %t && split-file %s %t
// RUN: tessera-opt %t/ops.mlir --tessera-assign-precision="policy=bf16 target=cuda report=local" | FileCheck %s --check-prefix=LOCAL
// RUN: tessera-opt %t/ops.mlir --tessera-assign-precision="policy=bf16 target=cuda report=accumulated" | FileCheck %s --check-prefix=ACCUMULATED
// RUN: tessera-opt %t/ops.mlir --tessera-assign-precision="policy=bf16 target=cuda" | FileCheck %s --check-prefix=PLAIN
// RUN: tessera-opt %t/ops.mlir --tessera-assign-precision="report=local" | FileCheck %s --check-prefix=PLAIN
// RUN: tessera-opt %t/kept.mlir --tessera-assign-precision="policy=bf16 target=cpu report=local" | FileCheck %s --check-prefix=KEPT-LOCAL
// RUN: tessera-opt %t/kept.mlir --tessera-assign-precision="policy=bf16 target=cpu report=accumulated" | FileCheck %s --check-prefix=KEPT
// RUN: tessera-opt %t/kept.mlir --tessera-assign-precision="policy=bf16 target=cpu" | FileCheck %s --check-prefix=KEPT
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json report=local" | FileCheck %s --check-prefix=SCALES
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-scaling=current report=local" | FileCheck %s --check-prefix=CURRENT
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json report=accumulated" | FileCheck %s --check-prefix=ACC-INT8

// The precision report's programs (report=local|accumulated): every op
// the policy narrows returns extra results named
// "tessera.report:<role>:<op>:<key>", attention and convolutions as
// matmuls. report=local keeps the program f32 and adds a narrow copy fed
// the same f32 operands: the f32 result (reference) and the copy's
// (local). report=accumulated narrows the op itself and returns its
// result. An attention the target keeps f32 (a head dim of 40 on cuda)
// and the policy fp32 add nothing, nor does a compile without report.

// LOCAL-LABEL: func @ops
// LOCAL-SAME: {tessera.name = "tessera.report:reference:attention:/attn/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:local:attention:/attn/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:reference:conv:/patch/Conv"}
// LOCAL-SAME: {tessera.name = "tessera.report:local:conv:/patch/Conv"}
// LOCAL-NOT: tessera.report:{{.*}}/wide/Attention
// LOCAL: %[[Q:.*]] = tessera.cast %arg0 : tensor<1x2x8x64xf32> to tensor<1x2x8x64xbf16>
// LOCAL: %[[COPY:.*]] = tessera.attention %[[Q]], {{.*}} {tessera.precision = "bf16"} : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
// LOCAL: %[[LOCAL:.*]] = tessera.cast %[[COPY]] : tensor<1x2x8x64xbf16> to tensor<1x2x8x64xf32>
// LOCAL: %[[REF:.*]] = tessera.attention %arg0, %arg0, %arg0 : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
// LOCAL: tessera.conv2d {{.*}} : tensor<1x4x8x8xbf16>, tensor<8x4x3x3xbf16> -> tensor<1x8x6x6xbf16>
// LOCAL: %[[CONV:.*]] = tessera.conv2d %arg2, %{{[0-9]+}} : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x6x6xf32>
// LOCAL: return %[[REF]], %{{[0-9]+}}, %[[CONV]], %[[REF]], %[[LOCAL]], %[[CONV]], %{{[0-9]+}} :

// ACCUMULATED-LABEL: func @ops
// ACCUMULATED-SAME: {tessera.name = "tessera.report:accumulated:attention:/attn/Attention"}
// ACCUMULATED-SAME: {tessera.name = "tessera.report:accumulated:conv:/patch/Conv"}
// ACCUMULATED-NOT: tessera.report:reference
// ACCUMULATED: %[[A:.*]] = tessera.attention {{.*}} -> tensor<1x2x8x64xbf16>
// ACCUMULATED: %[[AF:.*]] = tessera.cast %[[A]] : tensor<1x2x8x64xbf16> to tensor<1x2x8x64xf32>
// ACCUMULATED: return %[[AF]], {{.*}}, %[[AF]],

// PLAIN-LABEL: func @ops
// PLAIN-NOT: tessera.report

//--- ops.mlir
func.func @ops(%q: tensor<1x2x8x64xf32>, %q40: tensor<1x2x8x40xf32>, %img: tensor<1x4x8x8xf32>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x40xf32>, tensor<1x8x6x6xf32>) {
  %0 = tessera.attention %q, %q, %q : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32> loc(#attn)
  %1 = tessera.attention %q40, %q40, %q40 : tensor<1x2x8x40xf32>, tensor<1x2x8x40xf32>, tensor<1x2x8x40xf32> -> tensor<1x2x8x40xf32> loc(#wide)
  %f = tessera.constant dense<0.5> : tensor<8x4x3x3xf32>
  %2 = tessera.conv2d %img, %f : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x6x6xf32> loc(#conv)
  return %0, %1, %2 : tensor<1x2x8x64xf32>, tensor<1x2x8x40xf32>, tensor<1x8x6x6xf32>
}
#attn = loc("/attn/Attention")
#wide = loc("/wide/Attention")
#conv = loc("/patch/Conv")

// An attention the CPU keeps f32 takes bf16 products where it is lowered
// (tessera.narrow_products), in the compiled program and under
// report=accumulated; report=local's program keeps them f32, so that the
// references it compares the narrow copies with are all f32.
// KEPT-LOCAL-LABEL: func @kept
// KEPT-LOCAL-NOT: narrow_products
// KEPT-LOCAL: tessera.attention {{.*}}tessera.precision = "f32: {{.*}}its products bf16 when lowered as matmuls"
// KEPT-LOCAL-NOT: narrow_products
// KEPT-LABEL: func @kept
// KEPT: tessera.attention {{.*}}{tessera.narrow_products = bf16

//--- kept.mlir
func.func @kept(%q: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %0 = tessera.attention %q, %q, %q : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
  return %0 : tensor<1x2x8x64xf32>
}

// int8 and fp8 matmuls also return the scales their operands were divided
// by (ONNX's convention): the input's per tensor (its range 2.54 / 127 =
// 0.02), the constant weight's per output column (amax 1 and 0.5 / 127).
// Under fp8's current scaling the program computes the input's scale each
// run: only the weight's (1 / 448) is returned.
// SCALES-LABEL: func @fc
// SCALES-SAME: tensor<1xf32> {tessera.name = "tessera.report:scale_lhs:matmul:/fc/MatMul"}
// SCALES-SAME: tensor<2xf32> {tessera.name = "tessera.report:scale_rhs:matmul:/fc/MatMul"}
// SCALES-DAG: %[[L:.*]] = tessera.constant dense<2.000000e-02> : tensor<1xf32>
// SCALES-DAG: %[[R:.*]] = tessera.constant dense<[0.00787401571, 0.00393700786]> : tensor<2xf32>
// SCALES: return {{.*}}, %[[L]], %[[R]] :
// CURRENT-LABEL: func @fc
// CURRENT-NOT: scale_lhs
// CURRENT-SAME: tensor<1xf32> {tessera.name = "tessera.report:scale_rhs:matmul:/fc/MatMul"}
// CURRENT: %[[R:.*]] = tessera.constant dense<0.00223214296> : tensor<1xf32>
// CURRENT: return {{.*}}, %[[R]] :
// report=accumulated narrows the matmul itself (the quantized program):
// its dequantized result is returned, no scales.
// ACC-INT8-LABEL: func @fc
// ACC-INT8-SAME: -> (tensor<4x2xf32>, tensor<4x2xf32> {tessera.name = "tessera.report:accumulated:matmul:/fc/MatMul"})
// ACC-INT8: %[[D:.*]] = tessera.dequantize
// ACC-INT8: %[[S:.*]] = tessera.softmax %[[D]]
// ACC-INT8: return %[[S]], %[[D]] :

//--- int8.mlir
func.func @fc(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = tessera.constant dense<[[1.0, 0.5], [-1.0, 0.25]]> : tensor<2x2xf32>
  %0 = tessera.matmul %x, %w : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32> loc(#fc)
  %1 = tessera.softmax %0 : tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}
#fc = loc("/fc/MatMul")

//--- cache.json
{
  "format": "tessera-calibration",
  "method": "max",
  "samples": 8,
  "tensors": {
    "/fc/MatMul:lhs": { "amax": 2.54 }
  },
  "version": 1
}
