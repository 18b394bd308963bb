// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s
// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg=fp8-operands | FileCheck %s --check-prefix=FP8OPS

// CHECK-LABEL: func @transpose_reshape
func.func @transpose_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  // CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  %0 = tessera.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // Static shapes: a collapse into the groups of dims both shapes share
  // (no copy of a strided input, where tensor.reshape would make one).
  // CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
  // CHECK-NOT: tensor.reshape
  %1 = tessera.reshape %0 : tensor<4x2x3xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// Groups that neither collapse nor expand alone: both, through their
// common size (197x1x768 -> 197x12x64, through 197x768).
// CHECK-LABEL: func @reshape_regroup
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<197x1x768xf32> into tensor<197x768xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [197, 12, 64] : tensor<197x768xf32> into tensor<197x12x64xf32>
func.func @reshape_regroup(%x: tensor<197x1x768xf32>) -> tensor<197x12x64xf32> {
  %0 = tessera.reshape %x : tensor<197x1x768xf32> -> tensor<197x12x64xf32>
  return %0 : tensor<197x12x64xf32>
}

// -----

// A runtime shape operand: 0 copies the input dim, -1 is inferred.
// CHECK-LABEL: func @reshape_dynamic
func.func @reshape_dynamic(%x: tensor<?x64xf32>, %s: tensor<3xi64>) -> tensor<?x?x16xf32> {
  // CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<3xi64>
  // CHECK: arith.select
  // CHECK: arith.divui
  // CHECK: tensor.from_elements
  // CHECK: tensor.reshape
  %0 = tessera.reshape %x shape(%s : tensor<3xi64>) : tensor<?x64xf32> -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// CHECK-LABEL: func @concat_split_slice
func.func @concat_split_slice(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2xf32>) {
  // CHECK: tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %c = tessera.concat %a, %b axis 1 : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
  // CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}] [2, 4] [1, 1]
  // CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}] [2, 4] [1, 1]
  %p:2 = tessera.split %c axis 1 : tensor<2x8xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  // CHECK: tensor.extract_slice %{{.*}}[0, 1] [2, 2] [1, 3]
  %s = tessera.slice %c starts [1] ends [7] axes [1] steps [3] : tensor<2x8xf32> -> tensor<2x2xf32>
  return %p#0, %p#1, %s : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2xf32>
}

// -----

// Negative indices count from the back of the gathered axis.
// CHECK-LABEL: func @gather
func.func @gather(%table: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  // CHECK: linalg.generic
  // CHECK: arith.index_cast
  // CHECK: arith.cmpi slt
  // CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x4xf32>
  %0 = tessera.gather %table[%ids] axis 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// One constant index is a slice (a view, no copy): a scalar index drops
// the axis (`qkv[0]` after a transpose), a one-element vector keeps it, a
// negative one counts from the back.
// CHECK-LABEL: func @gather_constant_index
func.func @gather_constant_index(%qkv: tensor<3x2x5x8xf32>, %x: tensor<?x7x4xf32>) -> (tensor<2x5x8xf32>, tensor<?x1x4xf32>) {
  // CHECK-NOT: linalg.generic
  // CHECK: tensor.extract_slice %{{.*}}[1, 0, 0, 0] [1, 2, 5, 8] [1, 1, 1, 1] : tensor<3x2x5x8xf32> to tensor<2x5x8xf32>
  // CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0
  // CHECK: tensor.extract_slice %{{.*}}[0, 6, 0] [%[[N]], 1, 4] [1, 1, 1] : tensor<?x7x4xf32> to tensor<?x1x4xf32>
  // CHECK-NOT: linalg.generic
  %one = tessera.constant dense<1> : tensor<i64>
  %0 = tessera.gather %qkv[%one] axis 0 : tensor<3x2x5x8xf32>, tensor<i64> -> tensor<2x5x8xf32>
  %last = tessera.constant dense<[-1]> : tensor<1xi64>
  %1 = tessera.gather %x[%last] axis 1 : tensor<?x7x4xf32>, tensor<1xi64> -> tensor<?x1x4xf32>
  return %0, %1 : tensor<2x5x8xf32>, tensor<?x1x4xf32>
}

// -----

// Not a slice: an index out of the axis's range (left to the run time, as
// ONNX leaves it), an axis of dynamic size, several indices.
// CHECK-LABEL: func @gather_not_a_slice
func.func @gather_not_a_slice(%x: tensor<3x4xf32>, %y: tensor<?x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
  // CHECK-NOT: tensor.extract_slice
  // CHECK-COUNT-3: linalg.generic
  // CHECK-NOT: tensor.extract_slice
  %big = tessera.constant dense<3> : tensor<i64>
  %0 = tessera.gather %x[%big] axis 0 : tensor<3x4xf32>, tensor<i64> -> tensor<4xf32>
  %zero = tessera.constant dense<0> : tensor<i64>
  %1 = tessera.gather %y[%zero] axis 0 : tensor<?x4xf32>, tensor<i64> -> tensor<4xf32>
  %two = tessera.constant dense<[0, 2]> : tensor<2xi64>
  %2 = tessera.gather %x[%two] axis 0 : tensor<3x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @constant_and_fusion
func.func @constant_and_fusion(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: arith.constant dense<2.000000e+00> : tensor<4xf32>
  // CHECK-NOT: tessera.fusion
  // CHECK: linalg.generic
  // CHECK: arith.mulf
  %c = tessera.constant dense<2.0> : tensor<4xf32>
  %0 = tessera.fusion elementwise {
    %1 = tessera.mul %x, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    tessera.yield %1 : tensor<4xf32>
  } : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// fp8 with integer arithmetic (LLVM has no fp8 types): quantize divides by
// the scale and encodes (the f32 mantissa rounded to 3 bits, ties to even,
// saturated at 448, subnormals by a scaled round-to-even, NaN to 0x7F);
// dequantize decodes (fields into an f32 bit pattern; subnormals as
// mantissa * 2^-9) and multiplies by the scale.
// CHECK-LABEL: func @fp8_quantize
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK: math.roundeven
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.mulf
func.func @fp8_quantize(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = tessera.constant dense<0.02> : tensor<f32>
  %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
  %y = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<4x8xf8E4M3FN> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A matmul on fp8 operands reads them decoded to bf16 (exact). With
// fp8-operands (a backend whose tensor cores read fp8) the contraction
// reads them as they are and widens them with arith.extf.
// FP8OPS-LABEL: func @fp8_matmul
// FP8OPS-NOT: bf16
// FP8OPS: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf8E4M3FN>, tensor<8x2xf8E4M3FN>) outs(%{{.*}} : tensor<4x2xf32>)
// FP8OPS: arith.extf %{{.*}} : f8E4M3FN to f32
// FP8OPS: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK-LABEL: func @fp8_matmul
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf8E4M3FN>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<8x2xf8E4M3FN>) outs(%{{.*}} : tensor<8x2xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
func.func @fp8_matmul(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x2xf8E4M3FN>) -> tensor<4x2xf32> {
  %y = tessera.matmul %a, %b : tensor<4x8xf8E4M3FN>, tensor<8x2xf8E4M3FN> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A cast to fp8 saturates (ONNX Cast's default); with saturate = false a
// value past the tie above the largest finite value (464 in E4M3FN; 61440
// and above in E5M2), an infinity too, becomes NaN (0x7F) in E4M3FN and
// infinity (0x7C) in E5M2. Must not fire on a saturating cast.
// CHECK-LABEL: func @fp8_cast_no_saturate
// CHECK: linalg.generic
// CHECK: %[[OVER:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[OVER]], %c127_i32
// CHECK: linalg.generic
// CHECK: %[[OVER2:.*]] = arith.cmpf oge, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[OVER2]], %c124_i32
// CHECK: linalg.generic
// CHECK-NOT: arith.cmpf og
// CHECK: return
func.func @fp8_cast_no_saturate(%x: tensor<4xf32>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E4M3FN>) {
  %a = tessera.cast %x {saturate = false} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %b = tessera.cast %x {saturate = false} : tensor<4xf32> to tensor<4xf8E5M2>
  %c = tessera.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %a, %b, %c : tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E4M3FN>
}

// -----

// A constant fp8 operand (a quantized weight) is decoded to a bf16
// constant when compiling, exactly (E4M3FN 0x7E is 448, 0x01 the smallest
// subnormal 2^-9, 0x80 -0, 0x7F NaN; E5M2 0x7C is +inf), so the backend
// packs it as any bf16 weight; the activation is still decoded at run
// time. A splat stays a splat. Must not fire with fp8-operands.
// CHECK-LABEL: func @fp8_constant_weight
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[4.480000e+02], [1.953130e-03], [-0.000000e+00], [0x7F{{[C-F][0-9A-F]}}]]> : tensor<4x1xbf16>
// CHECK: ins(%{{.*}}, %[[W]] : tensor<2x4xbf16>, tensor<4x1xbf16>)
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<2x2xf8E5M2>) outs(%{{.*}} : tensor<2x2xbf16>)
// CHECK: %[[Z:.*]] = arith.constant dense<{{\[}}[0x7F80], [-1.000000e+00]]> : tensor<2x1xbf16>
// CHECK: ins(%{{.*}}, %[[Z]] : tensor<2x2xbf16>, tensor<2x1xbf16>)
// CHECK: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<4x2xbf16>
// CHECK: ins(%{{.*}}, %[[S]] : tensor<2x4xbf16>, tensor<4x2xbf16>)
// CHECK-NOT: ins(%cst{{.*}}f8E
// FP8OPS-LABEL: func @fp8_constant_weight
// FP8OPS-NOT: bf16
func.func @fp8_constant_weight(%a: tensor<2x4xf8E4M3FN>, %a2: tensor<2x2xf8E5M2>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x2xf32>) {
  %w8 = tessera.constant dense<"0x7E01807F"> : tensor<4x1xf8E4M3FN>
  %y = tessera.matmul %a, %w8 : tensor<2x4xf8E4M3FN>, tensor<4x1xf8E4M3FN> -> tensor<2x1xf32>
  %z8 = tessera.constant dense<"0x7CBC"> : tensor<2x1xf8E5M2>
  %y2 = tessera.matmul %a2, %z8 : tensor<2x2xf8E5M2>, tensor<2x1xf8E5M2> -> tensor<2x1xf32>
  %s = tessera.constant dense<2.0> : tensor<4x2xf8E4M3FN>
  %y3 = tessera.matmul %a, %s : tensor<2x4xf8E4M3FN>, tensor<4x2xf8E4M3FN> -> tensor<2x2xf32>
  return %y, %y2, %y3 : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x2xf32>
}

// -----

// An fp8 result accumulates in f32 and is rounded once (encoded by integer
// arithmetic), as bf16 and f16 results are.
// CHECK-LABEL: func @fp8_result
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xf8E4M3FN>)
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// FP8OPS-LABEL: func @fp8_result
// FP8OPS-NOT: arith.extf
// FP8OPS: outs(%{{.*}} : tensor<4x2xf8E4M3FN>)
func.func @fp8_result(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf8E4M3FN> {
  %y = tessera.matmul %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf8E4M3FN>
  return %y : tensor<4x2xf8E4M3FN>
}
