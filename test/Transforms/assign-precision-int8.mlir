// RUN: rm -rf %t && split-file %s %t
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json" | FileCheck %s
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false" | FileCheck %s --check-prefix=UNCALIBRATED
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false calibration=%t/cache.json" | FileCheck %s --check-prefix=FP8
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-format=e5m2 calibration=%t/cache.json" | FileCheck %s --check-prefix=E5M2
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-scaling=current" | FileCheck %s --check-prefix=CURRENT
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-scaling=current target=systolic" | FileCheck %s --check-prefix=CURRENT-SYSTOLIC
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false calibration=%t/cache.json target=cuda" | FileCheck %s --check-prefix=FP8-CUDA
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=fp8 keep-first-layers=false fp8-scaling=current target=cuda" | FileCheck %s --check-prefix=CURRENT-CUDA
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json target=cuda" | FileCheck %s --check-prefix=INT8-CUDA
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json keep-heads=false" | FileCheck %s --check-prefix=HEADS
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json smooth-quant=0.5" | FileCheck %s --check-prefix=SMOOTH
// RUN: tessera-opt %t/input.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json smooth-quant=auto" | FileCheck %s --check-prefix=AUTO
// A constant weight whose values the pass cannot read (here an elided
// resource): the cuda target, which reads int8 weights stored [n][k], keeps
// the matmul f32 and says why; the cpu target quantizes the weight on
// each run instead (must not refuse).
// RUN: tessera-opt %t/unreadable.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json target=cuda keep-heads=false remarks=true" 2>&1 | FileCheck %s --check-prefix=UNREADABLE-CUDA
// RUN: tessera-opt %t/unreadable.mlir --tessera-assign-precision="policy=int8 keep-first-layers=false calibration=%t/cache.json keep-heads=false" | FileCheck %s --check-prefix=UNREADABLE-CPU
// UNREADABLE-CUDA: remark: loc("/w/MatMul"): precision int8: f32: its weight's values cannot be read at compile time to be stored [n][k], as the target reads int8 weights
// UNREADABLE-CUDA-NOT: tessera.quantize
// UNREADABLE-CPU: %[[W:.*]] = tessera.constant dense_resource<__elided__> : tensor<4x2xf32>
// UNREADABLE-CPU: tessera.quantize %[[W]] scale
// UNREADABLE-CPU: tessera.matmul {{.*}} {tessera.precision = "int8"} : tensor<8x4xi8>, tensor<4x2xi8> -> tensor<8x2xi32>

//--- cache.json
{
  "format": "tessera-calibration",
  "method": "max",
  "samples": 8,
  "tensors": {
    "/fc1/MatMul:lhs": { "amax": 2.54, "channel_amax": [2.54, 0.01], "channel_mean_square": [4.0, 0.0001] },
    "/fc2/MatMul:lhs": { "amax": 12.7 },
    "/fc2/MatMul:rhs": { "amax": 1.27 },
    "/w/MatMul:lhs": { "amax": 2.54 },
    "/w/MatMul:rhs": { "amax": 1.0 },
    "/ta/MatMul:lhs": { "amax": 2.0, "channel_amax": [2.0, 0.01, 1.0, 1.0], "channel_mean_square": [1.0, 0.0001, 1.0, 1.0] }
  },
  "version": 1
}

//--- input.mlir
// /fc1: the lhs per tensor (2.54 / 127 = 0.02), the constant weight per
// output column (amax 1 and 0.5: scales 1/127 and 0.5/127), quantized now
// (1.0 -> 127, 0.5 -> 127 in its column); the i32 product dequantized by
// both scales times alpha 2 (0.02 * 2 / 127 = 3.1496e-4 and half that).
// /fc2: two activations, each per tensor (0.1 and 0.01), the transposed
// operand too. /head: its result is returned through a relu only: an
// output head stays f32.
// CHECK-LABEL: func @mlp
// CHECK-DAG: %[[W:.*]] = tessera.constant dense<{{\[\[}}127, 127], [-127, 64]]> : tensor<2x2xi8>
// CHECK-DAG: %[[S:.*]] = tessera.constant dense<2.000000e-02> : tensor<f32>
// CHECK: %[[Q:.*]] = tessera.quantize %arg0 scale(%[[S]] : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xi8>
// CHECK: %[[P:.*]] = tessera.matmul %[[Q]], %[[W]] {tessera.precision = "int8"} : tensor<4x2xi8>, tensor<2x2xi8> -> tensor<4x2xi32>
// CHECK: %[[D:.*]] = tessera.constant dense<[3.14960635E-4, 1.57480317E-4]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = tessera.dequantize %[[P]] scale(%[[D]] : tensor<2xf32>) {axis = 1 : i64} : tensor<4x2xi32> -> tensor<4x2xf32>
// CHECK: %[[K:.*]] = tessera.quantize %arg1 scale(%{{.*}} : tensor<f32>) : tensor<3x2xf32> -> tensor<3x2xi8>
// CHECK: %[[H:.*]] = tessera.quantize %[[Y]] scale(%{{.*}} : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xi8>
// CHECK: tessera.matmul %[[H]], %[[K]] {tessera.precision = "int8", transpose_b} : tensor<4x2xi8>, tensor<3x2xi8> -> tensor<4x3xi32>
// CHECK: %[[E:.*]] = tessera.constant dense<1.000000e-03> : tensor<f32>
// CHECK: tessera.dequantize {{.*}} scale(%[[E]] : tensor<f32>) : tensor<4x3xi32> -> tensor<4x3xf32>
// CHECK: tessera.matmul {{.*}} {tessera.precision = "f32: an output head stays f32 under 8-bit policies"} : tensor<4x3xf32>, tensor<3x5xf32>
// Without calibration the activations' ranges are unknown: nothing is
// quantized, and each matmul says why.
// UNCALIBRATED-LABEL: func @mlp
// UNCALIBRATED-NOT: tessera.quantize
// UNCALIBRATED: tessera.matmul {{.*}} {alpha = 2.000000e+00 : f32, tessera.precision = "f32: int8 needs the range of its lhs (--calibrate)"}
// fp8: per-tensor scales amax / 448 (2.54 / 448 for /fc1's lhs, 1 / 448
// for its weight, quantized now: 1.0 -> 448), their product times alpha 2
// as the matmul's alpha (2 * 2.54 / 448^2 = 2.5311e-5).
// FP8-LABEL: func @mlp
// FP8-DAG: %[[W:.*]] = tessera.constant dense<{{\[\[}}4.480000e+02, 2.240000e+02], [-4.480000e+02, 1.120000e+02]]> : tensor<2x2xf8E4M3FN>
// FP8-DAG: %[[Q:.*]] = tessera.quantize %arg0 scale(%{{.*}} : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xf8E4M3FN>
// FP8: tessera.matmul %[[Q]], %[[W]] {alpha = 2.53109{{[0-9]*}}E-5 : f32, tessera.precision = "fp8"} : tensor<4x2xf8E4M3FN>, tensor<2x2xf8E4M3FN> -> tensor<4x2xf32>
// FP8: tessera.matmul {{.*}} {alpha = {{.*}} : f32, tessera.precision = "fp8", transpose_b} : tensor<4x2xf8E4M3FN>, tensor<3x2xf8E4M3FN> -> tensor<4x3xf32>
// FP8: tessera.matmul {{.*}} {tessera.precision = "f32: an output head stays f32 under 8-bit policies"}
// fp8 in E5M2 (fp8-format=e5m2): scales amax / 57344, E5M2's largest
// value (1.0 -> 57344, 0.5 -> 28672, 0.25 -> 14336), their product times
// alpha 2 as the matmul's alpha (2 * 2.54 / 57344^2 = 1.5448e-9).
// E5M2-LABEL: func @mlp
// E5M2-DAG: %[[W:.*]] = tessera.constant dense<{{\[\[}}5.734400e+04, 2.867200e+04], [-5.734400e+04, 1.433600e+04]]> : tensor<2x2xf8E5M2>
// E5M2-DAG: %[[Q:.*]] = tessera.quantize %arg0 scale(%{{.*}} : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xf8E5M2>
// E5M2: tessera.matmul %[[Q]], %[[W]] {alpha = 1.5448{{[0-9]*}}E-9 : f32, tessera.precision = "fp8"} : tensor<4x2xf8E5M2>, tensor<2x2xf8E5M2> -> tensor<4x2xf32>
// fp8 with current scaling needs no calibration: each activation's scale
// is max(amax(|x|), 2^-100) / 448, computed by the program (abs,
// reduce_max over every dim, max, div), the matmul's alpha keeps the
// static scales only (2 / 448 for /fc1's constant weight), and the result
// is multiplied by the current scales (two of them for /fc2, whose
// operands are both activations). The constant weight is quantized as
// under static scaling; the head stays f32 as ever.
// CURRENT-LABEL: func @mlp
// CURRENT: %[[ABS:.*]] = tessera.abs %arg0 : tensor<4x2xf32>
// CURRENT: %[[AMAX:.*]] = tessera.reduce_max %[[ABS]] [0, 1] {keepdims = false} : tensor<4x2xf32> -> tensor<f32>
// CURRENT: %[[FLOOR:.*]] = tessera.constant dense<7.88860905E-31> : tensor<f32>
// CURRENT: %[[M:.*]] = tessera.max %[[AMAX]], %[[FLOOR]]
// CURRENT: %[[MAX:.*]] = tessera.constant dense<4.480000e+02> : tensor<f32>
// CURRENT: %[[S:.*]] = tessera.div %[[M]], %[[MAX]]
// CURRENT: %[[Q:.*]] = tessera.quantize %arg0 scale(%[[S]] : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xf8E4M3FN>
// CURRENT: %[[W:.*]] = tessera.constant dense<{{\[\[}}4.480000e+02, 2.240000e+02], [-4.480000e+02, 1.120000e+02]]> : tensor<2x2xf8E4M3FN>
// CURRENT: %[[P:.*]] = tessera.matmul %[[Q]], %[[W]] {alpha = 0.00446428{{[0-9]*}} : f32, tessera.precision = "fp8"}
// CURRENT: %[[H:.*]] = tessera.mul %[[P]], %[[S]] : tensor<4x2xf32>, tensor<f32> -> tensor<4x2xf32>
// CURRENT: tessera.quantize %[[H]] scale
// CURRENT: tessera.quantize %arg1 scale
// CURRENT: %[[P2:.*]] = tessera.matmul {{.*}} {tessera.precision = "fp8", transpose_b}
// CURRENT: %[[R:.*]] = tessera.mul %[[P2]], %{{.*}} : tensor<4x3xf32>, tensor<f32>
// CURRENT: tessera.mul %[[R]], %{{.*}} : tensor<4x3xf32>, tensor<f32>
// CURRENT: tessera.matmul {{.*}} {tessera.precision = "f32: an output head stays f32 under 8-bit policies"}
// The systolic array takes only scales fixed at compile time.
// The cuda target stores the quantized constant weight transposed
// ([n][k], read with transpose_b: sm_90a's fp8 wgmma reads both operands
// along K); /fc2's activation is read as it is, transposed or not.
// FP8-CUDA-LABEL: func @mlp
// FP8-CUDA-DAG: %[[W:.*]] = tessera.constant dense<{{\[\[}}4.480000e+02, -4.480000e+02], [2.240000e+02, 1.120000e+02]]> : tensor<2x2xf8E4M3FN>
// FP8-CUDA-DAG: %[[Q:.*]] = tessera.quantize %arg0 scale(%{{.*}} : tensor<f32>) : tensor<4x2xf32> -> tensor<4x2xf8E4M3FN>
// FP8-CUDA: tessera.matmul %[[Q]], %[[W]] {alpha = 2.53109{{[0-9]*}}E-5 : f32, tessera.precision = "fp8", transpose_b} : tensor<4x2xf8E4M3FN>, tensor<2x2xf8E4M3FN> -> tensor<4x2xf32>
// FP8-CUDA: tessera.matmul {{.*}} {alpha = {{.*}} : f32, tessera.precision = "fp8", transpose_b} : tensor<4x2xf8E4M3FN>, tensor<3x2xf8E4M3FN> -> tensor<4x3xf32>
// Current scaling on the cuda target: the activation's amax each run, the
// weight stored [n][k] as under static scaling.
// CURRENT-CUDA-LABEL: func @mlp
// CURRENT-CUDA: tessera.reduce_max
// CURRENT-CUDA: tessera.quantize %arg0
// CURRENT-CUDA: tessera.matmul {{.*}} {alpha = {{.*}} : f32, tessera.precision = "fp8", transpose_b} : tensor<4x2xf8E4M3FN>, tensor<2x2xf8E4M3FN> -> tensor<4x2xf32>
// int8 on the cuda target: the weight quantized per output column as on
// the CPU, then stored [n][k] and read with transpose_b; /fc2's B is
// already read transposed, so it is quantized too.
// INT8-CUDA-LABEL: func @mlp
// INT8-CUDA-DAG: %[[W:.*]] = tessera.constant dense<{{\[\[}}127, -127], [127, 64]]> : tensor<2x2xi8>
// INT8-CUDA: tessera.matmul %{{.*}}, %[[W]] {tessera.precision = "int8", transpose_b} : tensor<4x2xi8>, tensor<2x2xi8> -> tensor<4x2xi32>
// INT8-CUDA: tessera.matmul {{.*}} {tessera.precision = "int8", transpose_b} : tensor<4x2xi8>, tensor<3x2xi8> -> tensor<4x3xi32>
// CURRENT-SYSTOLIC-LABEL: func @mlp
// CURRENT-SYSTOLIC-NOT: tessera.quantize
// CURRENT-SYSTOLIC: tessera.matmul {{.*}} {alpha = 2.000000e+00 : f32, tessera.precision = "f32: the systolic array takes fp8 scales fixed at compile time (--fp8-scaling=static)"}
// With keep-heads=false the head narrows too when its ranges are known;
// /head's lhs has no calibrated range, so it says so.
// HEADS-LABEL: func @mlp
// HEADS: tessera.matmul {{.*}} {tessera.precision = "f32: int8 needs the range of its lhs (--calibrate)"} : tensor<4x3xf32>, tensor<3x5xf32>
// SmoothQuant with alpha 0.5 on /fc1 (the only matmul with a constant
// weight and per-channel statistics): s = sqrt(amax_x / amax_w) per
// channel, sqrt(2.54 / 1) = 1.5937 and sqrt(0.01 / 1) = 0.1; x is divided
// by s before it is quantized (a mul by 1/s), the weight rows are scaled
// by s before they are. "auto" compares the expected noise of the
// product for alpha = 0, 0.05, ..., 1 and none, and picks 0.5 here. /fc2
// (no constant weight) is never smoothed.
// SMOOTH-LABEL: func @mlp
// SMOOTH: %[[INV:.*]] = tessera.constant dense<[0.627455{{[0-9]*}}, 1.000000e+01]> : tensor<2xf32>
// SMOOTH: %[[X:.*]] = tessera.mul %arg0, %[[INV]] : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
// SMOOTH: tessera.quantize %[[X]]
// SMOOTH: tessera.matmul {{.*}} {tessera.precision = "int8 (SmoothQuant alpha 0.50)"}
// AUTO-LABEL: func @mlp
// AUTO: tessera.matmul {{.*}} {tessera.precision = "int8 (SmoothQuant alpha 0.50)"}
// AUTO: tessera.matmul {{.*}} {tessera.precision = "int8", transpose_b}
// Under transpose_a the lhs's last dim is not the contracted one: no
// smoothing.
// AUTO-LABEL: func @transposed_lhs
// AUTO: tessera.matmul {{.*}} {tessera.precision = "int8", transpose_a}

func.func @mlp(%x: tensor<4x2xf32>, %k: tensor<3x2xf32>, %w3: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %w = tessera.constant dense<[[1.0, 0.5], [-1.0, 0.25]]> : tensor<2x2xf32>
  %h = tessera.matmul %x, %w {alpha = 2.0 : f32} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32> loc("/fc1/MatMul")
  %s = tessera.matmul %h, %k {transpose_b} : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32> loc("/fc2/MatMul")
  %y = tessera.matmul %s, %w3 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32> loc("/head/MatMul")
  %r = tessera.relu %y : tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

func.func @transposed_lhs(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %w = tessera.constant dense<[[1.0, 0.5], [-1.0, 0.25]]> : tensor<2x2xf32>
  %y = tessera.matmul %x, %w {transpose_a} : tensor<2x4xf32>, tensor<2x2xf32> -> tensor<4x2xf32> loc("/ta/MatMul")
  %r = tessera.softmax %y : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

//--- unreadable.mlir
func.func @unreadable(%x: tensor<8x4xf32>) -> tensor<8x2xf32> {
  %w = tessera.constant dense_resource<__elided__> : tensor<4x2xf32> loc("/w/MatMul")
  %y = tessera.matmul %x, %w : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32> loc("/w/MatMul")
  return %y : tensor<8x2xf32>
}
