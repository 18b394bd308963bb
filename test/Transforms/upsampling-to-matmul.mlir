// RUN: tessera-opt %s --split-input-file --tessera-upsampling-to-matmul | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-upsampling-to-matmul --tessera-fold-constants | FileCheck %s --check-prefix=FOLD

// ConvTranspose(kernel 2, stride 2) as the importer writes it (the input
// spread with zeros, a convolution with the transposed, flipped filter)
// becomes one matmul of the pixels [N, H, W, C] by the filter as
// [C, 2*2*F] (columns in the order (b, a, f), so that each output row is
// a row of the product's blocks [N, H, W*2, 2, F]), interleaved into 2 x 2
// blocks by a transpose of whole elements, plus the bias per filter; no
// zero is multiplied.
// CHECK-LABEL: func @upsample
// CHECK-NOT: tessera.pad
// The importer's transpose and flip of the filter are undone by reading
// the ConvTranspose's filter itself; they go with the convolution.
// CHECK: %[[CT:.*]] = tessera.constant dense<{{.*}}> : tensor<3x2x2x2xf32>
// CHECK-NOT: tessera.slice
// CHECK: %[[BAF:.*]] = tessera.transpose %[[CT]] [0, 3, 2, 1] : tensor<3x2x2x2xf32> -> tensor<3x2x2x2xf32>
// CHECK: %[[W:.*]] = tessera.reshape %[[BAF]] : tensor<3x2x2x2xf32> -> tensor<3x8xf32>
// CHECK: %[[PIX:.*]] = tessera.transpose %arg0 [0, 2, 3, 1] : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
// CHECK: %[[P:.*]] = tessera.matmul %[[PIX]], %[[W]] : tensor<1x4x5x3xf32>, tensor<3x8xf32> -> tensor<1x4x5x8xf32>
// CHECK: %[[B:.*]] = tessera.reshape %[[P]] : tensor<1x4x5x8xf32> -> tensor<1x4x10x2x2xf32>
// CHECK: %[[T:.*]] = tessera.transpose %[[B]] [0, 4, 1, 3, 2] : tensor<1x4x10x2x2xf32> -> tensor<1x2x4x2x10xf32>
// CHECK: %[[Y:.*]] = tessera.reshape %[[T]] : tensor<1x2x4x2x10xf32> -> tensor<1x2x8x10xf32>
// CHECK: %[[BIAS:.*]] = tessera.reshape %{{.*}} : tensor<2xf32> -> tensor<1x2x1x1xf32>
// CHECK: %[[OUT:.*]] = tessera.add %[[Y]], %[[BIAS]]
// CHECK-NOT: tessera.conv2d
// CHECK: return %[[OUT]]
// A filter in another form is unflipped and transposed back, which folds
// for a constant: w[c, f, a, b] is column b*4 + a*2 + f of row c.
// FOLD-LABEL: func @upsample_filter
// FOLD: tessera.constant dense<{{\[}}[0.000000e+00, 4.000000e+00, 2.000000e+00, 6.000000e+00, 1.000000e+00, 5.000000e+00, 3.000000e+00, 7.000000e+00], [8.000000e+00
// FOLD-NOT: tessera.slice
// FOLD: return
func.func @upsample(%arg0: tensor<1x3x4x5xf32>) -> tensor<1x2x8x10xf32> {
  %0 = tessera.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]], [[[8.0, 9.0], [10.0, 11.0]], [[12.0, 13.0], [14.0, 15.0]]], [[[16.0, 17.0], [18.0, 19.0]], [[20.0, 21.0], [22.0, 23.0]]]]> : tensor<3x2x2x2xf32>
  %1 = tessera.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
  %2 = tessera.reshape %arg0 : tensor<1x3x4x5xf32> -> tensor<1x3x4x1x5x1xf32>
  %3 = tessera.pad %2 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<1x3x4x1x5x1xf32> -> tensor<1x3x4x2x5x2xf32>
  %4 = tessera.reshape %3 : tensor<1x3x4x2x5x2xf32> -> tensor<1x3x8x10xf32>
  %5 = tessera.transpose %0 [1, 0, 2, 3] : tensor<3x2x2x2xf32> -> tensor<2x3x2x2xf32>
  %6 = tessera.slice %5 starts [-1, -1] ends [-3, -3] axes [2, 3] steps [-1, -1] : tensor<2x3x2x2xf32> -> tensor<2x3x2x2xf32>
  %7 = tessera.conv2d %4, %6 bias(%1 : tensor<2xf32>) {pads = array<i64: 1, 1, 0, 0>} : tensor<1x3x8x10xf32>, tensor<2x3x2x2xf32> -> tensor<1x2x8x10xf32>
  return %7 : tensor<1x2x8x10xf32>
}

// -----

// CHECK-LABEL: func @upsample_filter
// CHECK: %[[UNFLIP:.*]] = tessera.slice %{{.*}} starts [-1, -1] ends [-3, -3] axes [2, 3] steps [-1, -1] : tensor<2x3x2x2xf32> -> tensor<2x3x2x2xf32>
// CHECK: %[[CF:.*]] = tessera.transpose %[[UNFLIP]] [1, 0, 2, 3] : tensor<2x3x2x2xf32> -> tensor<3x2x2x2xf32>
// CHECK: %[[BAF:.*]] = tessera.transpose %[[CF]] [0, 3, 2, 1] : tensor<3x2x2x2xf32> -> tensor<3x2x2x2xf32>
// CHECK: tessera.reshape %[[BAF]] : tensor<3x2x2x2xf32> -> tensor<3x8xf32>
// CHECK-NOT: tessera.conv2d
func.func @upsample_filter(%arg0: tensor<1x3x4x5xf32>) -> tensor<1x2x8x10xf32> {
  // The flipped, transposed filter of @upsample, as a constant.
  %0 = tessera.constant dense<[[[[3.0, 2.0], [1.0, 0.0]], [[11.0, 10.0], [9.0, 8.0]], [[19.0, 18.0], [17.0, 16.0]]], [[[7.0, 6.0], [5.0, 4.0]], [[15.0, 14.0], [13.0, 12.0]], [[23.0, 22.0], [21.0, 20.0]]]]> : tensor<2x3x2x2xf32>
  %2 = tessera.reshape %arg0 : tensor<1x3x4x5xf32> -> tensor<1x3x4x1x5x1xf32>
  %3 = tessera.pad %2 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<1x3x4x1x5x1xf32> -> tensor<1x3x4x2x5x2xf32>
  %4 = tessera.reshape %3 : tensor<1x3x4x2x5x2xf32> -> tensor<1x3x8x10xf32>
  %7 = tessera.conv2d %4, %0 {pads = array<i64: 1, 1, 0, 0>} : tensor<1x3x8x10xf32>, tensor<2x3x2x2xf32> -> tensor<1x2x8x10xf32>
  return %7 : tensor<1x2x8x10xf32>
}

// -----

// Dynamic batch and image size: the product's dims carry over (ONNX's 0 in
// the reshape's shape, -1 for W*2), and the output's shape is the input's
// times [1, 0, 2, 2] plus [0, F, 0, 0].
// CHECK-LABEL: func @upsample_dynamic
// CHECK: %[[P:.*]] = tessera.matmul %{{.*}}, %{{.*}} : tensor<?x?x?x3xf32>, tensor<3x8xf32> -> tensor<?x?x?x8xf32>
// CHECK: %[[S5:.*]] = tessera.constant dense<[0, 0, -1, 2, 2]> : tensor<5xi64>
// CHECK: tessera.reshape %[[P]] shape(%[[S5]] : tensor<5xi64>) : tensor<?x?x?x8xf32> -> tensor<?x?x?x2x2xf32>
// CHECK: %[[SHAPE:.*]] = tessera.shape %arg0
// CHECK: %[[SCALE:.*]] = tessera.constant dense<[1, 0, 2, 2]>
// CHECK: %[[MUL:.*]] = tessera.mul %[[SHAPE]], %[[SCALE]]
// CHECK: %[[PLUS:.*]] = tessera.constant dense<[0, 2, 0, 0]>
// CHECK: %[[OUTSHAPE:.*]] = tessera.add %[[MUL]], %[[PLUS]]
// CHECK: tessera.reshape %{{.*}} shape(%[[OUTSHAPE]] : tensor<4xi64>) : tensor<?x2x?x2x?xf32> -> tensor<?x2x?x?xf32>
// CHECK-NOT: tessera.conv2d
func.func @upsample_dynamic(%arg0: tensor<?x3x?x?xf32>, %w: tensor<3x2x2x2xf32>, %b: tensor<2xf32>) -> tensor<?x2x?x?xf32> {
  %2 = tessera.reshape %arg0 : tensor<?x3x?x?xf32> -> tensor<?x3x?x1x?x1xf32>
  %3 = tessera.pad %2 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<?x3x?x1x?x1xf32> -> tensor<?x3x?x2x?x2xf32>
  %4 = tessera.shape %arg0 : tensor<?x3x?x?xf32> -> tensor<4xi64>
  %5 = tessera.constant dense<[1, 1, 2, 2]> : tensor<4xi64>
  %6 = tessera.mul %4, %5 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %7 = tessera.reshape %3 shape(%6 : tensor<4xi64>) : tensor<?x3x?x2x?x2xf32> -> tensor<?x3x?x?xf32>
  %8 = tessera.transpose %w [1, 0, 2, 3] : tensor<3x2x2x2xf32> -> tensor<2x3x2x2xf32>
  %9 = tessera.slice %8 starts [-1, -1] ends [-3, -3] axes [2, 3] steps [-1, -1] : tensor<2x3x2x2xf32> -> tensor<2x3x2x2xf32>
  %10 = tessera.conv2d %7, %9 bias(%b : tensor<2xf32>) {pads = array<i64: 1, 1, 0, 0>} : tensor<?x3x?x?xf32>, tensor<2x3x2x2xf32> -> tensor<?x2x?x?xf32>
  return %10 : tensor<?x2x?x?xf32>
}

// -----

// Must not fire: a kernel of 3 at stride 2 (the windows overlap).
// CHECK-LABEL: func @overlapping
// CHECK: tessera.pad
// CHECK: tessera.conv2d
// CHECK-NOT: tessera.matmul
func.func @overlapping(%arg0: tensor<1x3x4x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x9x11xf32> {
  %2 = tessera.reshape %arg0 : tensor<1x3x4x5xf32> -> tensor<1x3x4x1x5x1xf32>
  %3 = tessera.pad %2 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<1x3x4x1x5x1xf32> -> tensor<1x3x4x2x5x2xf32>
  %4 = tessera.reshape %3 : tensor<1x3x4x2x5x2xf32> -> tensor<1x3x8x10xf32>
  %5 = tessera.transpose %w [1, 0, 2, 3] : tensor<3x2x3x3xf32> -> tensor<2x3x3x3xf32>
  %6 = tessera.slice %5 starts [-1, -1] ends [-4, -4] axes [2, 3] steps [-1, -1] : tensor<2x3x3x3xf32> -> tensor<2x3x3x3xf32>
  %7 = tessera.conv2d %4, %6 {pads = array<i64: 2, 2, 1, 1>} : tensor<1x3x8x10xf32>, tensor<2x3x3x3xf32> -> tensor<1x2x9x11xf32>
  return %7 : tensor<1x2x9x11xf32>
}

// -----

// Must not fire: the spread's run-time shape is not the input's times the
// strides (it would regroup the elements).
// CHECK-LABEL: func @regrouped
// CHECK: tessera.conv2d
// CHECK-NOT: tessera.matmul
func.func @regrouped(%arg0: tensor<?x3x?x?xf32>, %w: tensor<2x3x2x2xf32>) -> tensor<?x2x?x?xf32> {
  %2 = tessera.reshape %arg0 : tensor<?x3x?x?xf32> -> tensor<?x3x?x1x?x1xf32>
  %3 = tessera.pad %2 {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1>} : tensor<?x3x?x1x?x1xf32> -> tensor<?x3x?x2x?x2xf32>
  %4 = tessera.shape %arg0 : tensor<?x3x?x?xf32> -> tensor<4xi64>
  %5 = tessera.constant dense<[1, 1, 4, 1]> : tensor<4xi64>
  %6 = tessera.mul %4, %5 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %7 = tessera.reshape %3 shape(%6 : tensor<4xi64>) : tensor<?x3x?x2x?x2xf32> -> tensor<?x3x?x?xf32>
  %10 = tessera.conv2d %7, %w {pads = array<i64: 1, 1, 0, 0>} : tensor<?x3x?x?xf32>, tensor<2x3x2x2xf32> -> tensor<?x2x?x?xf32>
  return %10 : tensor<?x2x?x?xf32>
}
