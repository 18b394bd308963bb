// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg | FileCheck %s
// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg="max-window-stride=4" | FileCheck %s --check-prefix=STRIDED

// max_pool: padded with -inf (1 before and after each spatial dim), then
// one elementwise generic over the output whose operands are the padded
// input shifted by each of the 3x3 taps (views strided along the rows),
// its columns computed at stride 1 (5 of them) and every second taken
// after; the batch dim stays dynamic.
// CHECK-LABEL: func @max_pool
func.func @max_pool(%x: tensor<?x3x5x5xf32>) -> tensor<?x3x3x3xf32> {
  // CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
  // CHECK: tensor.yield %[[NEGINF]]
  // CHECK-NOT: linalg.fill
  // CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
  // CHECK: %[[T0:.*]] = tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [%[[N]], 3, 3, 5] [1, 1, 2, 1] : tensor<?x3x7x7xf32> to tensor<?x3x3x5xf32>
  // CHECK: tensor.extract_slice %[[PADDED]][0, 0, 0, 1] [%[[N]], 3, 3, 5] [1, 1, 2, 1]
  // CHECK: %[[T8:.*]] = tensor.extract_slice %[[PADDED]][0, 0, 2, 2] [%[[N]], 3, 3, 5] [1, 1, 2, 1]
  // CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[T0]], {{.*}}, %[[T8]] : {{.*}}) outs(%{{.*}} : tensor<?x3x3x5xf32>)
  // CHECK-COUNT-8: arith.maximumf
  // CHECK: tensor.extract_slice %[[WIDE]][0, 0, 0, 0] [%[[N]], 3, 3, 3] [1, 1, 1, 2] : tensor<?x3x3x5xf32> to tensor<?x3x3x3xf32>
  // With a stride of at most max-window-stride, the taps read their rows at the stride: 3
  // columns for 3 outputs, and nothing is copied out.
  // STRIDED-LABEL: func @max_pool
  // STRIDED: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
  // STRIDED: tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [%{{.*}}, 3, 3, 3] [1, 1, 2, 2] : tensor<?x3x7x7xf32> to tensor<?x3x3x3xf32>
  // STRIDED: tensor.extract_slice %[[PADDED]][0, 0, 2, 2] [%{{.*}}, 3, 3, 3] [1, 1, 2, 2]
  // STRIDED: %[[POOLED:.*]] = linalg.generic
  // STRIDED: } -> tensor<?x3x3x3xf32>
  // STRIDED-NOT: tensor.extract_slice
  // STRIDED-NOT: linalg.copy
  // STRIDED: return %[[POOLED]]
  // CHECK-NOT: reduction
  // CHECK-NOT: arith.divf
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<?x3x5x5xf32> -> tensor<?x3x3x3xf32>
  return %0 : tensor<?x3x3x3xf32>
}

// -----

// Dynamic height and width at stride 2 (an OCR model's pool): the columns
// at stride 1 are max((OW - 1) * 2 + 1, 0), none when the input is
// smaller than the window. At stride 1 nothing is copied out.
// CHECK-LABEL: func @max_pool_dynamic
func.func @max_pool_dynamic(%x: tensor<1x4x?x?xf32>, %y: tensor<1x4x8x8xf32>) -> (tensor<1x4x?x?xf32>, tensor<1x4x6x6xf32>) {
  // CHECK: %[[SPREAD:.*]] = arith.muli %{{.*}}, %c2
  // CHECK: %[[WIDE:.*]] = arith.addi %[[SPREAD]], %c1
  // CHECK: %[[COLS:.*]] = arith.maxsi %[[WIDE]], %c0
  // CHECK: tensor.extract_slice %{{.*}}[0, 0, 2, 2] [1, 4, %{{.*}}, %[[COLS]]] [1, 1, 2, 1]
  // CHECK: linalg.generic
  // CHECK-COUNT-8: arith.maximumf
  // CHECK: %[[TAKEN:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, %{{.*}}, %{{.*}}] [1, 1, 1, 2]
  // CHECK: linalg.copy ins(%[[TAKEN]] : tensor<1x4x?x?xf32>)
  // CHECK: tensor.extract_slice %arg1[0, 0, 2, 2] [1, 4, 6, 6] [1, 1, 1, 1]
  // CHECK: %[[STRIDE1:.*]] = linalg.generic
  // CHECK-COUNT-8: arith.maximumf
  // CHECK-NOT: linalg.copy
  // CHECK: return %{{.*}}, %[[STRIDE1]]
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %1 = tessera.max_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<1x4x?x?xf32>, tensor<1x4x6x6xf32>
}

// -----

// A window of more than 49 taps (8x8) keeps the generic over the window
// (no pad here: the windows tile the input): its last two loops walk the
// window, an empty tensor carrying its sizes.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 8 + d4, d3 * 8 + d5)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @max_pool_large_window
func.func @max_pool_large_window(%x: tensor<1x3x16x16xf32>) -> tensor<1x3x2x2xf32> {
  // CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<8x8xf32>
  // CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<1x3x2x2xf32>)
  // CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %[[WINDOW]] : tensor<1x3x16x16xf32>, tensor<8x8xf32>) outs(%[[INIT]] : tensor<1x3x2x2xf32>)
  // CHECK: arith.maximumf
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 8, 8>, strides = array<i64: 8, 8>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x16x16xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

// Without pads, and windows that end inside the input: no tensor.pad. A 1-D
// integer pool with a dilated window.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3 * 2)>
// CHECK-LABEL: func @max_pool_unpadded
func.func @max_pool_unpadded(%x: tensor<1x2x9xi8>) -> tensor<1x2x5xi8> {
  // CHECK-NOT: tensor.pad
  // CHECK: %[[LOWEST:.*]] = arith.constant -128 : i8
  // CHECK: linalg.generic {indexing_maps = [#[[IN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %{{.*}} : tensor<1x2x9xi8>, tensor<3xi8>)
  // CHECK: arith.maxsi
  %0 = tessera.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 2>} : tensor<1x2x9xi8> -> tensor<1x2x5xi8>
  return %0 : tensor<1x2x5xi8>
}

// -----

// avg_pool with ceil_mode: the last window overhangs the 4x4 input by one,
// so the input is padded by one at the end; the overhang never counts, so
// the divisors are 9, 6, 6 and 4.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SPATIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func @avg_pool_ceil
func.func @avg_pool_ceil(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
  // CHECK: %[[SUM:.*]] = linalg.generic
  // CHECK: arith.addf
  // CHECK: %[[COUNTS:.*]] = arith.constant dense<{{\[}}[9.000000e+00, 6.000000e+00], [6.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SPATIAL]], #[[ID]]], {{.*}}} ins(%[[SUM]], %[[COUNTS]] :
  // CHECK: arith.divf
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// count_include_pad counts the explicit pads (every 3-window of the padded
// 1-D input is full) but without it the edge windows count 2.
// CHECK-LABEL: func @avg_pool_count_include_pad
func.func @avg_pool_count_include_pad(%x: tensor<1x1x3xf32>) -> (tensor<1x1x3xf32>, tensor<1x1x3xf32>) {
  // CHECK: arith.constant dense<3.000000e+00> : tensor<3xf32>
  // CHECK: arith.constant dense<[2.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<3xf32>
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, pads = array<i64: 1, 1>, dilations = array<i64: 1>, count_include_pad} : tensor<1x1x3xf32> -> tensor<1x1x3xf32>
  %1 = tessera.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : tensor<1x1x3xf32> -> tensor<1x1x3xf32>
  return %0, %1 : tensor<1x1x3xf32>, tensor<1x1x3xf32>
}

// -----

// Dynamic spatial dims: the output's size at run time (ceil mode: one more
// window when the last is partial and starts inside the input), the input
// padded by the end pad and a stride less one, and an average's divisor
// computed per element from its window's position (pads not counted).
// CHECK-LABEL: func @avg_pool_dynamic
func.func @avg_pool_dynamic(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  // CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 2, 2]
  // CHECK: %[[H:.*]] = tensor.dim %arg0, %c2
  // CHECK: %[[ROOM:.*]] = arith.addi %[[H]], %c-1
  // CHECK: arith.remsi %[[ROOM]]
  // CHECK: arith.cmpi slt
  // CHECK: %[[SUM:.*]] = linalg.generic
  // CHECK: arith.addf
  // CHECK: %[[IN_H:.*]] = tensor.dim %arg0, %c2
  // CHECK: linalg.generic {{.*}} ins(%[[SUM]] :
  // CHECK: linalg.index 2
  // CHECK: arith.maxsi
  // CHECK: arith.minsi %{{.*}}, %[[IN_H]]
  // CHECK: linalg.index 3
  // CHECK: arith.sitofp
  // CHECK: arith.divf
  %0 = tessera.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  return %0 : tensor<1x2x?x?xf32>
}
