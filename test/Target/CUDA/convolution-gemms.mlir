// RUN: tessera-opt %s --split-input-file --tessera-cuda-convolution-gemms | FileCheck %s

// The patch map: column k = (c, kh, kw) of pixel p = (oh, ow) reads
// input[n, c, oh + kh, ow + kw].
// CHECK: #[[PATCH_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 9, d2 floordiv 6 + (d1 mod 9) floordiv 3, d2 mod 6 + d1 mod 3)>

// A bf16 convolution accumulated in f32 (what the bf16 policy lowers to):
// a gather of the patches, [N, C*KH*KW, OH*OW] in bf16, then a contraction
// of the filter as [F, C*KH*KW] with them into [N, F, OH*OW] f32, the
// form the tensor-core kernel takes (the image dim in B and the result
// only). The result is the original shape again.
// CHECK-LABEL: func @narrow
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<16x8x3x3xbf16> into tensor<16x72xbf16>
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0], [1], [2, 3]] : tensor<2x16x6x6xf32> into tensor<2x16x36xf32>
// CHECK: %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[PATCH_MAP]], #{{.*}}], {{.*}} ins(%arg0 : tensor<2x8x8x8xbf16>) outs(%{{.*}} : tensor<2x72x36xbf16>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[A:.*]], #[[B:.*]], #[[C:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[F]], %[[COLS]] : tensor<16x72xbf16>, tensor<2x72x36xbf16>) outs(%[[OUT]] : tensor<2x16x36xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 16, 6, 6] : tensor<2x16x36xf32> into tensor<2x16x6x6xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @narrow(%x: tensor<2x8x8x8xbf16>, %f: tensor<16x8x3x3xbf16>, %o: tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<2x8x8x8xbf16>, tensor<16x8x3x3xbf16>) outs(%o : tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  return %0 : tensor<2x16x6x6xf32>
}

// -----

// Must not fire: an f32 convolution (no tensor core without tf32), a
// dynamic image, narrow operands accumulated in their own type, and a
// dilated one (no im2col form): each stays a direct convolution.
// CHECK-LABEL: func @kept
// CHECK-COUNT-4: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.generic
func.func @kept(%x: tensor<1x8x8x8xf32>, %f: tensor<16x8x3x3xf32>, %o: tensor<1x16x6x6xf32>,
                %dx: tensor<1x8x?x?xbf16>, %df: tensor<16x8x3x3xbf16>, %do: tensor<1x16x?x?xf32>,
                %nx: tensor<1x8x8x8xbf16>, %no: tensor<1x16x6x6xbf16>, %lo: tensor<1x16x4x4xf32>)
    -> (tensor<1x16x6x6xf32>, tensor<1x16x?x?xf32>, tensor<1x16x6x6xbf16>, tensor<1x16x4x4xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>) outs(%o : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%dx, %df : tensor<1x8x?x?xbf16>, tensor<16x8x3x3xbf16>) outs(%do : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%nx, %df : tensor<1x8x8x8xbf16>, tensor<16x8x3x3xbf16>) outs(%no : tensor<1x16x6x6xbf16>) -> tensor<1x16x6x6xbf16>
  %3 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%nx, %df : tensor<1x8x8x8xbf16>, tensor<16x8x3x3xbf16>) outs(%lo : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0, %1, %2, %3 : tensor<1x16x6x6xf32>, tensor<1x16x?x?xf32>, tensor<1x16x6x6xbf16>, tensor<1x16x4x4xf32>
}

// -----

// What reads the convolution: its zero start becomes a fill of the GEMM's
// own [N, F, OH*OW] shape right before it (not a fill of the result,
// collapsed, before the gather), and its elementwise consumers (the bias,
// then a rounding) are collapsed to [N, F, OH*OW] in turn, reading the
// GEMM's result as it is, with one expansion at the end: the tensor-core
// kernel takes them as its epilogue once fused. A reduction over the
// result (a mean per channel) still reads the expansion.
// CHECK-LABEL: func @consumers
// CHECK: %[[COLS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x72x36xbf16>)
// CHECK-NEXT: ^bb
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<1x72x36xbf16>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x16x36xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x16x36xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[COLS]] : tensor<16x72xbf16>, tensor<1x72x36xbf16>) outs(%[[Z]] : tensor<1x16x36xf32>)
// CHECK: %[[MEAN_IN:.*]] = tensor.expand_shape %[[P]]
// CHECK: %[[BIASED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]], %arg2 : tensor<1x16x36xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[BIASED]] : tensor<1x16x36xf32>)
// CHECK: arith.truncf
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[ROUNDED]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 16, 6, 6]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[MEAN_IN]] : tensor<1x16x6x6xf32>)
// CHECK: return %[[OUT]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
#sum = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @consumers(%x: tensor<1x8x8x8xbf16>, %f: tensor<16x8x3x3xbf16>, %bias: tensor<16xf32>) -> (tensor<1x16x6x6xbf16>, tensor<1x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x6x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<1x8x8x8xbf16>, tensor<16x8x3x3xbf16>) outs(%z : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %e1 = tensor.empty() : tensor<1x16x6x6xf32>
  %1 = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %bias : tensor<1x16x6x6xf32>, tensor<16xf32>) outs(%e1 : tensor<1x16x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x16x6x6xf32>
  %e2 = tensor.empty() : tensor<1x16x6x6xbf16>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<1x16x6x6xf32>) outs(%e2 : tensor<1x16x6x6xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x16x6x6xbf16>
  %e3 = tensor.empty() : tensor<1x16xf32>
  %m = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%0 : tensor<1x16x6x6xf32>) outs(%m : tensor<1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  return %2, %3 : tensor<1x16x6x6xbf16>, tensor<1x16xf32>
}
