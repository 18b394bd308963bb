// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s
// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg="max-window-stride=4" | FileCheck %s --check-prefix=STRIDED

// A batched matmul with broadcast batch dims and a transposed rhs: the rhs
// is transposed first (a linalg.transpose), then one contraction generic
// reads it row-major, its loops ordered [batch, rows, k, columns]; the
// accumulator widens bf16 products to f32.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d3, d4)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func @batched_transposed
func.func @batched_transposed(%q: tensor<2x4x8x16xbf16>, %k: tensor<1x4x8x16xbf16>) -> tensor<2x4x8x8xf32> {
  // CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<1x4x8x16xbf16>) outs(%{{.*}} : tensor<1x4x16x8xbf16>) permutation = [0, 1, 3, 2]
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32)
  // CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%arg0, %[[KT]] :
  // CHECK: arith.extf
  // CHECK: arith.mulf
  // CHECK: arith.addf
  %0 = tessera.matmul %q, %k {transpose_b} : tensor<2x4x8x16xbf16>, tensor<1x4x8x16xbf16> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// alpha scales the product afterwards.
// CHECK-LABEL: func @alpha
func.func @alpha(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // CHECK: linalg.generic {{.*}}"reduction"
  // CHECK: linalg.generic
  // CHECK: %[[S:.*]] = arith.constant 5.000000e-01 : f32
  // CHECK: arith.mulf %{{.*}}, %[[S]]
  // CHECK-NOT: arith.truncf
  // CHECK: return
  %0 = tessera.matmul %a, %b {alpha = 0.5 : f32} : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A vector lhs is one row: [K] x [B, K, N] becomes [1, K] x [B, K, N] ->
// [B, 1, N] (a contraction with rows, which the backends tile) and is
// reshaped back. A vector rhs stays a product per row of the lhs (the
// contracted dim innermost), as it was.
// CHECK-LABEL: func @vector_lhs
// CHECK: %[[ROW:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [1, %{{.*}}] : tensor<?xf32> into tensor<1x?xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[ROW]], %arg1 : tensor<1x?xf32>, tensor<3x?x5xf32>) outs(%{{.*}} : tensor<3x1x5xf32>)
// CHECK: tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<3x1x5xf32> into tensor<3x5xf32>
func.func @vector_lhs(%x: tensor<?xf32>, %w: tensor<3x?x5xf32>) -> tensor<3x5xf32> {
  %0 = tessera.matmul %x, %w : tensor<?xf32>, tensor<3x?x5xf32> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
// CHECK-LABEL: func @vector_rhs
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NOT: tensor.collapse_shape
func.func @vector_rhs(%a: tensor<4x8xf32>, %x: tensor<8xf32>) -> tensor<4xf32> {
  %0 = tessera.matmul %a, %x : tensor<4x8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A matmul with an f16 (or bf16) result accumulates in f32 and rounds once
// at the end (after alpha): never in the narrow type. An f32 result (the
// alpha case above) has no rounding step.
// CHECK-LABEL: func @narrow_result
func.func @narrow_result(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>) -> tensor<4x2xf16> {
  // CHECK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x2xf32>)
  // CHECK: %[[P:.*]] = linalg.generic {{.*}}"reduction"{{.*}} ins(%arg0, %arg1 : tensor<4x8xf16>, tensor<8x2xf16>) outs(%[[ACC]] : tensor<4x2xf32>)
  // CHECK: arith.extf %{{.*}} : f16 to f32
  // CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
  // CHECK: arith.mulf
  // CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xf16>)
  // CHECK: arith.truncf %{{.*}} : f32 to f16
  %0 = tessera.matmul %a, %b {alpha = 0.5 : f32} : tensor<4x8xf16>, tensor<8x2xf16> -> tensor<4x2xf16>
  return %0 : tensor<4x2xf16>
}

// -----

// CHECK-LABEL: func @conv_padded
func.func @conv_padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
  // CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
  // CHECK: linalg.generic
  // CHECK: arith.addf
  %0 = tessera.conv2d %x, %w bias(%b : tensor<4xf32>) {pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// Causal attention whose query broadcasts over the keys' heads (the tiled
// form in attention-flash.mlir does not apply): scaled scores, the mask
// j > i + (Sk - Sq) to -inf, softmax, then the product with v.
// CHECK-LABEL: func @attention_causal
func.func @attention_causal(%q: tensor<1x1x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  // CHECK: linalg.generic {{.*}}"reduction"
  // CHECK: arith.constant 0.353553385 : f32
  // CHECK: linalg.index 2
  // CHECK: linalg.index 3
  // CHECK: arith.cmpi sgt
  // CHECK: arith.select
  // CHECK: math.exp
  // CHECK: linalg.generic {{.*}}"reduction"
  // CHECK-NOT: tessera.
  %0 = tessera.attention %q, %k, %v {causal} : tensor<1x1x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// A grouped conv2d: the channels split into groups (expand_shape), one
// linalg.conv_2d_ngchw_gfchw, the groups folded back into the filters.
// CHECK-LABEL: func @grouped_conv
func.func @grouped_conv(%x: tensor<?x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<?x6x3x3xf32> {
  // CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 2, 8, 8] : tensor<?x4x8x8xf32> into tensor<?x2x2x8x8xf32>
  // CHECK: %[[W:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
  // CHECK: %[[CONV:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[W]] : {{.*}}) outs(%{{.*}} : tensor<?x2x3x3x3xf32>)
  // CHECK: tensor.collapse_shape %[[CONV]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x3x3x3xf32> into tensor<?x6x3x3xf32>
  %0 = tessera.conv2d %x, %w {group = 2, strides = array<i64: 2, 2>} : tensor<?x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x3x3xf32>
  return %0 : tensor<?x6x3x3xf32>
}

// -----

// Without groups the conv stays linalg.conv_2d_nchw_fchw (no reshapes).
// CHECK-LABEL: func @ungrouped_conv
func.func @ungrouped_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // CHECK-NOT: tensor.expand_shape
  // CHECK: linalg.conv_2d_nchw_fchw
  // CHECK-NOT: tensor.collapse_shape
  %0 = tessera.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// Depthwise (one channel and one filter per group): one elementwise op over
// the output whose operands are, per tap (i, j), the input shifted by the
// tap (a slice at [0, 0, i * dh, j * dw] with the rows' stride) and the
// tap's weight per channel. No convolution op, no window loop.
// CHECK-LABEL: func @depthwise_conv
// CHECK-NOT: linalg.conv
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2, 3]] : tensor<4x1x3x2xf32> into tensor<4x6xf32>
// CHECK-DAG: tensor.extract_slice %arg0[0, 0, 0, 0] [%[[N]], 4, 3, 6] [1, 1, 2, 1]
// CHECK-DAG: tensor.extract_slice %arg0[0, 0, 4, 3] [%[[N]], 4, 3, 6] [1, 1, 2, 1]
// CHECK-DAG: tensor.extract_slice %[[W]][0, 0] [4, 1] [1, 1] : tensor<4x6xf32> to tensor<4xf32>
// CHECK-DAG: tensor.extract_slice %[[W]][0, 5] [4, 1] [1, 1] : tensor<4x6xf32> to tensor<4xf32>
// Six shifted inputs read at the output's position, six weights per
// channel (d1); tap t's input times tap t's weight, summed, each product
// and sum allowed to contract into one fused multiply-add.
// CHECK: linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[CH:map[0-9]*]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[I0:.*]]: f32, %[[I1:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[I5:.*]]: f32, %[[W0:.*]]: f32, %[[W1:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[W5:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[I0]], %[[W0]] fastmath<contract>
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[I1]], %[[W1]] fastmath<contract>
// CHECK-NEXT: arith.addf %[[P0]], %[[P1]] fastmath<contract>
// CHECK: %[[P5:.*]] = arith.mulf %[[I5]], %[[W5]] fastmath<contract>
// CHECK-NEXT: %[[S:.*]] = arith.addf %{{.*}}, %[[P5]] fastmath<contract>
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: } -> tensor<?x4x3x6xf32>
// CHECK-NOT: linalg.conv
func.func @depthwise_conv(%x: tensor<?x4x10x9xf32>, %w: tensor<4x1x3x2xf32>) -> tensor<?x4x3x6xf32> {
  %0 = tessera.conv2d %x, %w {group = 4, strides = array<i64: 2, 1>, dilations = array<i64: 2, 3>} : tensor<?x4x10x9xf32>, tensor<4x1x3x2xf32> -> tensor<?x4x3x6xf32>
  return %0 : tensor<?x4x3x6xf32>
}

// -----

// A stride along the rows: the columns at stride 1 (contiguous reads; 7
// columns for 4 outputs at stride 2), then every second one.
// CHECK-LABEL: func @depthwise_row_stride
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 4, 7] [1, 1, 1, 1]
// CHECK: %[[FULL:.*]] = linalg.generic
// CHECK: } -> tensor<1x2x4x7xf32>
// CHECK: tensor.extract_slice %[[FULL]][0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 2] : tensor<1x2x4x7xf32> to tensor<1x2x4x4xf32>
// With a stride of at most max-window-stride, each tap reads its row at the stride: 4 columns
// computed for 4 outputs, nothing taken afterwards.
// STRIDED-LABEL: func @depthwise_row_stride
// STRIDED: tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 2] : tensor<1x2x6x9xf32> to tensor<1x2x4x4xf32>
// STRIDED: tensor.extract_slice %arg0[0, 0, 2, 2] [1, 2, 4, 4] [1, 1, 1, 2] : tensor<1x2x6x9xf32> to tensor<1x2x4x4xf32>
// STRIDED: %[[OUT:.*]] = linalg.generic
// STRIDED: } -> tensor<1x2x4x4xf32>
// STRIDED-NOT: tensor.extract_slice
// STRIDED: return %[[OUT]]
func.func @depthwise_row_stride(%x: tensor<1x2x6x9xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tessera.conv2d %x, %w {group = 2, strides = array<i64: 1, 2>} : tensor<1x2x6x9xf32>, tensor<2x1x3x3xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A stride of 5 along the rows, wider than max-window-stride: the columns
// are still computed at stride 1 (16 for 4 outputs) and every fifth taken.
// STRIDED-LABEL: func @depthwise_wide_stride
// STRIDED: tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 4, 16] [1, 1, 1, 1]
// STRIDED: %[[FULL:.*]] = linalg.generic
// STRIDED: tensor.extract_slice %[[FULL]][0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 5] : tensor<1x2x4x16xf32> to tensor<1x2x4x4xf32>
func.func @depthwise_wide_stride(%x: tensor<1x2x6x18xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tessera.conv2d %x, %w {group = 2, strides = array<i64: 1, 5>} : tensor<1x2x6x18xf32>, tensor<2x1x3x3xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Must not take the depthwise form: a channel multiplier of 2 (two filters
// per group) stays a grouped convolution.
// CHECK-LABEL: func @depthwise_multiplier
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @depthwise_multiplier(%x: tensor<1x2x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = tessera.conv2d %x, %w {group = 2} : tensor<1x2x6x6xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Dynamic height and width: the result's sizes are computed at run time,
// floor((in + pads - span) / stride) + 1, or 0 when the padded input is
// shorter than the window; the padded input keeps its dynamic dims.
// CHECK-LABEL: func @conv2d_dynamic_spatial
func.func @conv2d_dynamic_spatial(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  // CHECK: %[[H:.*]] = tensor.dim %arg0, %c2
  // CHECK: %[[ROOM:.*]] = arith.addi %[[H]], %c-1
  // CHECK: %[[STEPS:.*]] = arith.divsi %[[ROOM]], %c2
  // CHECK: %[[SIZE:.*]] = arith.addi %[[STEPS]], %c1
  // CHECK: %[[FITS:.*]] = arith.cmpi sge, %[[ROOM]], %c0
  // CHECK: %[[OH:.*]] = arith.select %[[FITS]], %[[SIZE]], %c0
  // CHECK: %[[W:.*]] = tensor.dim %arg0, %c3
  // CHECK: %[[OW:.*]] = arith.select
  // CHECK: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
  // CHECK: } : tensor<?x3x?x?xf32> to tensor<?x3x?x?xf32>
  // CHECK: tensor.empty(%{{.*}}, %[[OH]], %[[OW]]) : tensor<?x8x?x?xf32>
  // CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %arg1
  %0 = tessera.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32> -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// A depthwise convolution with a stride along dynamic columns: the columns
// are computed at stride 1, max((out - 1) * 2 + 1, 0) of them (none when
// there are no outputs), and every second one taken afterwards.
// CHECK-LABEL: func @depthwise_dynamic_column_stride
func.func @depthwise_dynamic_column_stride(%x: tensor<1x4x6x?xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x?xf32> {
  // CHECK: %[[OW:.*]] = arith.select
  // CHECK: %[[LESS:.*]] = arith.subi %[[OW]], %c1
  // CHECK: %[[SPREAD:.*]] = arith.muli %[[LESS]], %c2
  // CHECK: %[[WIDE:.*]] = arith.addi %[[SPREAD]], %c1
  // CHECK: %[[COLS:.*]] = arith.maxsi %[[WIDE]], %c0
  // CHECK: tensor.extract_slice %padded[0, 0, 0, 0] [1, 4, 6, %[[COLS]]] [1, 1, 1, 1]
  // CHECK: tensor.empty(%[[COLS]]) : tensor<1x4x6x?xf32>
  // CHECK: %[[DW:.*]] = linalg.generic
  // CHECK: tensor.extract_slice %[[DW]][0, 0, 0, 0] [1, 4, 6, %[[OW]]] [1, 1, 1, 2]
  %0 = tessera.conv2d %x, %w {group = 4, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 2>} : tensor<1x4x6x?xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x6x?xf32>
  return %0 : tensor<1x4x6x?xf32>
}

// -----

// A bf16 convolution (a model exported in bf16) accumulates in f32: the
// padded input stays bf16, the named conv reads bf16 into an f32 zero fill,
// the bias is added in f32, and the result is rounded to bf16 once.
// CHECK-LABEL: func @bf16_conv
// CHECK: } : tensor<1x3x8x8xbf16> to tensor<1x3x10x10xbf16>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x8x8xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x3x10x10xbf16>, tensor<4x3x3x3xbf16>) outs(%[[FILL]] : tensor<1x4x8x8xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %{{.*}} : tensor<1x4x8x8xbf16>
func.func @bf16_conv(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %b: tensor<4xbf16>) -> tensor<1x4x8x8xbf16> {
  %0 = tessera.conv2d %x, %w bias(%b : tensor<4xbf16>) {pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x8x8xbf16>
  return %0 : tensor<1x4x8x8xbf16>
}

// -----

// An f16 depthwise convolution widens its input and filter to f32 first
// (its taps are memory-bound) and rounds the result once.
// CHECK-LABEL: func @f16_depthwise
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_depthwise(%x: tensor<1x4x8x8xf16>, %w: tensor<4x1x3x3xf16>) -> tensor<1x4x6x6xf16> {
  %0 = tessera.conv2d %x, %w {group = 4} : tensor<1x4x8x8xf16>, tensor<4x1x3x3xf16> -> tensor<1x4x6x6xf16>
  return %0 : tensor<1x4x6x6xf16>
}
