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
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=int8 calibration=%t/cache.json report=local" | FileCheck %s --check-prefix=FIRST
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=int8 calibration=%t/cache.json report=accumulated" | FileCheck %s --check-prefix=FIRST-ACC
// RUN: tessera-opt %t/int8.mlir --tessera-assign-precision="policy=int8 calibration=%t/cache.json" | FileCheck %s --check-prefix=FIRST-PLAIN

// The precision report's programs (report=local|accumulated): every op
// the policy narrows returns extra results named
// "tessera.report:<role>:<op>:<key>", attention and convolutions as
// matmuls. report=local keeps the program f32 and adds a narrow copy fed
// the same f32 operands: the f32 result (reference) and the copy's
// (local). report=accumulated narrows the op itself and returns its
// result. An attention the target keeps f32 whose products it narrows (a
// head dim of 40 on cuda: tessera.narrow_products) is reported the same
// way, its copy taking the narrow products. The policy fp32 adds nothing,
// nor does a compile without report.

// LOCAL-LABEL: func @ops
// LOCAL-SAME: {tessera.name = "tessera.report:reference:attention:/attn/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:local:attention:/attn/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:reference:attention:/wide/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:local:attention:/wide/Attention"}
// LOCAL-SAME: {tessera.name = "tessera.report:reference:conv:/patch/Conv"}
// LOCAL-SAME: {tessera.name = "tessera.report:local:conv:/patch/Conv"}
// LOCAL: %[[Q:.*]] = tessera.cast %arg0 : tensor<1x2x8x64xf32> to tensor<1x2x8x64xbf16>
// LOCAL: %[[COPY:.*]] = tessera.attention %[[Q]], {{.*}} {tessera.precision = "bf16"} : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
// LOCAL: %[[LOCAL:.*]] = tessera.cast %[[COPY]] : tensor<1x2x8x64xbf16> to tensor<1x2x8x64xf32>
// LOCAL: %[[REF:.*]] = tessera.attention %arg0, %arg0, %arg0 : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
// LOCAL: %[[WCOPY:.*]] = tessera.attention %arg1, %arg1, %arg1 {tessera.narrow_products = bf16
// LOCAL: %[[WREF:.*]] = tessera.attention %arg1, %arg1, %arg1 {tessera.precision = "f32: {{.*}}"}
// LOCAL: tessera.conv2d {{.*}} : tensor<1x4x8x8xbf16>, tensor<8x4x3x3xbf16> -> tensor<1x8x6x6xbf16>
// LOCAL: %[[CONV:.*]] = tessera.conv2d %arg2, %{{[0-9]+}} : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x6x6xf32>
// LOCAL: return %[[REF]], %[[WREF]], %[[CONV]], %[[REF]], %[[LOCAL]], %[[WREF]], %[[WCOPY]], %[[CONV]], %{{[0-9]+}} :

// ACCUMULATED-LABEL: func @ops
// ACCUMULATED-SAME: {tessera.name = "tessera.report:accumulated:attention:/attn/Attention"}
// ACCUMULATED-SAME: {tessera.name = "tessera.report:accumulated:attention:/wide/Attention"}
// ACCUMULATED-SAME: {tessera.name = "tessera.report:accumulated:conv:/patch/Conv"}
// ACCUMULATED-NOT: tessera.report:reference
// ACCUMULATED: %[[A:.*]] = tessera.attention {{.*}} -> tensor<1x2x8x64xbf16>
// ACCUMULATED: %[[AF:.*]] = tessera.cast %[[A]] : tensor<1x2x8x64xbf16> to tensor<1x2x8x64xf32>
// ACCUMULATED: %[[W:.*]] = tessera.attention %arg1, %arg1, %arg1 {tessera.narrow_products = bf16
// ACCUMULATED: return %[[AF]], %[[W]], {{.*}}, %[[AF]], %[[W]],

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
// report=accumulated, where it is reported as it is; report=local's
// program keeps it f32 (so that the references it compares the narrow
// copies with are all f32) beside a copy with the narrow products.
// KEPT-LOCAL-LABEL: func @kept
// KEPT-LOCAL-SAME: {tessera.name = "tessera.report:reference:attention:#attention0"}
// KEPT-LOCAL-SAME: {tessera.name = "tessera.report:local:attention:#attention0"}
// KEPT-LOCAL: %[[COPY:.*]] = tessera.attention {{.*}}{tessera.narrow_products = bf16
// KEPT-LOCAL: %[[F32:.*]] = tessera.attention {{.*}}{tessera.precision = "f32: {{.*}}its products bf16 when lowered as matmuls"}
// KEPT-LOCAL: return %[[F32]], %[[F32]], %[[COPY]] :
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
// SCALES: return {{.*}}, %[[L]], %[[R]], %{{[0-9]+}}, %{{[0-9]+}} :
// CURRENT-LABEL: func @fc
// CURRENT-NOT: scale_lhs
// CURRENT-SAME: tensor<1xf32> {tessera.name = "tessera.report:scale_rhs:matmul:/fc/MatMul"}
// CURRENT: %[[R:.*]] = tessera.constant dense<0.00223214296> : tensor<1xf32>
// CURRENT: return {{.*}}, %[[R]], %{{[0-9]+}}, %{{[0-9]+}} :
// A matmul the policy keeps f32 (here a first layer, by default under
// 8-bit policies) is reported too: under report=local its result as the
// reference and as "kept" (its own error is none), under
// report=accumulated as it is, with what the narrowed ops before it pass
// on. So are normalizations and softmax (f32 under every policy; an
// unnamed one by its kind and position). None without a report.
// FIRST-LABEL: func @fc
// FIRST-SAME: {tessera.name = "tessera.report:reference:matmul:/fc/MatMul"}
// FIRST-SAME: {tessera.name = "tessera.report:kept:matmul:/fc/MatMul"}
// FIRST-SAME: {tessera.name = "tessera.report:reference:softmax:#softmax0"}
// FIRST-SAME: {tessera.name = "tessera.report:kept:softmax:#softmax0"}
// FIRST: %[[M:.*]] = tessera.matmul {{.*}}tessera.precision = "f32: a first layer stays f32 under 8-bit policies"
// FIRST: %[[S:.*]] = tessera.softmax %[[M]]
// FIRST: return %[[S]], %[[M]], %[[M]], %[[S]], %[[S]] :
// FIRST-ACC-LABEL: func @fc
// FIRST-ACC-SAME: {tessera.name = "tessera.report:accumulated:matmul:/fc/MatMul"}
// FIRST-ACC-NOT: tessera.report:kept
// FIRST-PLAIN-LABEL: func @fc
// FIRST-PLAIN-NOT: tessera.report
// report=accumulated narrows the matmul itself (the quantized program):
// its dequantized result is returned, no scales.
// ACC-INT8-LABEL: func @fc
// ACC-INT8-SAME: -> (tensor<4x2xf32>, tensor<4x2xf32> {tessera.name = "tessera.report:accumulated:matmul:/fc/MatMul"}, tensor<4x2xf32> {tessera.name = "tessera.report:accumulated:softmax:#softmax0"})
// ACC-INT8: %[[D:.*]] = tessera.dequantize
// ACC-INT8: %[[S:.*]] = tessera.softmax %[[D]]
// ACC-INT8: return %[[S]], %[[D]], %[[S]] :

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
