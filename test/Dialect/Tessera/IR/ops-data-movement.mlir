// RUN: tessera-opt %s --split-input-file | tessera-opt --split-input-file | FileCheck %s
// RUN: tessera-opt %s --split-input-file --mlir-print-op-generic | tessera-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @reshapes
func.func @reshapes(%x: tensor<1x128x768xf32>, %y: tensor<?x768xf32>, %s: tensor<3xi64>) -> (tensor<1x128x12x64xf32>, tensor<?x12x64xf32>, tensor<?x12x?xf32>) {
  // CHECK: tessera.reshape %{{.*}} : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %0 = tessera.reshape %x : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  // CHECK: tessera.reshape %{{.*}} : tensor<?x768xf32> -> tensor<?x12x64xf32>
  %1 = tessera.reshape %y : tensor<?x768xf32> -> tensor<?x12x64xf32>
  // CHECK: tessera.reshape %{{.*}} shape(%{{.*}} : tensor<3xi64>) : tensor<?x768xf32> -> tensor<?x12x?xf32>
  %2 = tessera.reshape %y shape(%s : tensor<3xi64>) : tensor<?x768xf32> -> tensor<?x12x?xf32>
  return %0, %1, %2 : tensor<1x128x12x64xf32>, tensor<?x12x64xf32>, tensor<?x12x?xf32>
}

// -----

// CHECK-LABEL: func @transpose
func.func @transpose(%x: tensor<1x?x12x64xf32>) -> tensor<1x12x?x64xf32> {
  // CHECK: tessera.transpose %{{.*}} [0, 2, 1, 3] : tensor<1x?x12x64xf32> -> tensor<1x12x?x64xf32>
  %0 = tessera.transpose %x [0, 2, 1, 3] : tensor<1x?x12x64xf32> -> tensor<1x12x?x64xf32>
  return %0 : tensor<1x12x?x64xf32>
}

// -----

// CHECK-LABEL: func @expand
func.func @expand(%x: tensor<1x768xf32>, %y: tensor<1x1xi64>, %s: tensor<2xi64>) -> (tensor<4x128x768xf32>, tensor<?x?xi64>) {
  // CHECK: tessera.expand %{{.*}} : tensor<1x768xf32> -> tensor<4x128x768xf32>
  %0 = tessera.expand %x : tensor<1x768xf32> -> tensor<4x128x768xf32>
  // CHECK: tessera.expand %{{.*}} shape(%{{.*}} : tensor<2xi64>) : tensor<1x1xi64> -> tensor<?x?xi64>
  %1 = tessera.expand %y shape(%s : tensor<2xi64>) : tensor<1x1xi64> -> tensor<?x?xi64>
  return %0, %1 : tensor<4x128x768xf32>, tensor<?x?xi64>
}

// -----

// CHECK-LABEL: func @concat
func.func @concat(%cls: tensor<1x1x768xf32>, %patches: tensor<1x196x768xf32>, %d: tensor<1x?x768xf32>) -> (tensor<1x197x768xf32>, tensor<1x?x768xf32>) {
  // CHECK: tessera.concat %{{.*}}, %{{.*}} axis 1 : tensor<1x1x768xf32>, tensor<1x196x768xf32> -> tensor<1x197x768xf32>
  %0 = tessera.concat %cls, %patches axis 1 : tensor<1x1x768xf32>, tensor<1x196x768xf32> -> tensor<1x197x768xf32>
  // CHECK: tessera.concat %{{.*}}, %{{.*}} axis -2 : tensor<1x1x768xf32>, tensor<1x?x768xf32> -> tensor<1x?x768xf32>
  %1 = tessera.concat %cls, %d axis -2 : tensor<1x1x768xf32>, tensor<1x?x768xf32> -> tensor<1x?x768xf32>
  return %0, %1 : tensor<1x197x768xf32>, tensor<1x?x768xf32>
}

// -----

// CHECK-LABEL: func @split
func.func @split(%x: tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x512xf32>, tensor<1x128x1024xf32>) {
  // CHECK: %{{.*}}:3 = tessera.split %{{.*}} axis 2 : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>
  %q, %k, %v = tessera.split %x axis 2 : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>
  // CHECK: %{{.*}}:3 = tessera.split %{{.*}} axis -1 sizes [768, 512, 1024] : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>, tensor<1x128x512xf32>, tensor<1x128x1024xf32>
  %a, %b, %c = tessera.split %x axis -1 sizes [768, 512, 1024] : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>, tensor<1x128x512xf32>, tensor<1x128x1024xf32>
  return %a, %b, %c : tensor<1x128x768xf32>, tensor<1x128x512xf32>, tensor<1x128x1024xf32>
}

// -----

// CHECK-LABEL: func @slices
func.func @slices(%x: tensor<1x128x128xf32>, %d: tensor<?x10xf32>) -> (tensor<1x128x64xf32>, tensor<1x64x128xf32>, tensor<?x5xf32>) {
  // CHECK: tessera.slice %{{.*}} starts [0] ends [64] axes [2] : tensor<1x128x128xf32> -> tensor<1x128x64xf32>
  %0 = tessera.slice %x starts [0] ends [64] axes [2] : tensor<1x128x128xf32> -> tensor<1x128x64xf32>
  // CHECK: tessera.slice %{{.*}} starts [-1] ends [-9223372036854775808] axes [1] steps [-2] : tensor<1x128x128xf32> -> tensor<1x64x128xf32>
  %1 = tessera.slice %x starts [-1] ends [-9223372036854775808] axes [1] steps [-2] : tensor<1x128x128xf32> -> tensor<1x64x128xf32>
  // CHECK: tessera.slice %{{.*}} starts [0, 0] ends [9223372036854775807, 5] : tensor<?x10xf32> -> tensor<?x5xf32>
  %2 = tessera.slice %d starts [0, 0] ends [9223372036854775807, 5] : tensor<?x10xf32> -> tensor<?x5xf32>
  return %0, %1, %2 : tensor<1x128x64xf32>, tensor<1x64x128xf32>, tensor<?x5xf32>
}

// -----

// CHECK-LABEL: func @gather
func.func @gather(%table: tensor<30522x768xf32>, %ids: tensor<?x128xi64>, %x: tensor<2x3x4xf32>, %i: tensor<i32>) -> (tensor<?x128x768xf32>, tensor<2x4xf32>) {
  // CHECK: tessera.gather %{{.*}}[%{{.*}}] axis 0 : tensor<30522x768xf32>, tensor<?x128xi64> -> tensor<?x128x768xf32>
  %0 = tessera.gather %table[%ids] axis 0 : tensor<30522x768xf32>, tensor<?x128xi64> -> tensor<?x128x768xf32>
  // CHECK: tessera.gather %{{.*}}[%{{.*}}] axis -2 : tensor<2x3x4xf32>, tensor<i32> -> tensor<2x4xf32>
  %1 = tessera.gather %x[%i] axis -2 : tensor<2x3x4xf32>, tensor<i32> -> tensor<2x4xf32>
  return %0, %1 : tensor<?x128x768xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @shape_and_range
func.func @shape_and_range(%x: tensor<?x128xf32>, %n: tensor<i64>, %f: tensor<f32>) -> (tensor<2xi64>, tensor<?xi64>, tensor<?xf32>) {
  // CHECK: tessera.shape %{{.*}} : tensor<?x128xf32> -> tensor<2xi64>
  %0 = tessera.shape %x : tensor<?x128xf32> -> tensor<2xi64>
  // CHECK: tessera.range %{{.*}}, %{{.*}}, %{{.*}} : tensor<i64> -> tensor<?xi64>
  %1 = tessera.range %n, %n, %n : tensor<i64> -> tensor<?xi64>
  // CHECK: tessera.range %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32> -> tensor<?xf32>
  %2 = tessera.range %f, %f, %f : tensor<f32> -> tensor<?xf32>
  return %0, %1, %2 : tensor<2xi64>, tensor<?xi64>, tensor<?xf32>
}

// -----

// Inserting or dropping unit dims keeps the dynamic dims in order: no shape
// operand is needed.
// CHECK-LABEL: func @unsqueeze_dynamic
func.func @unsqueeze_dynamic(%x: tensor<?x?xf32>) -> tensor<?x1x?xf32> {
  // CHECK: tessera.reshape %{{.*}} : tensor<?x?xf32> -> tensor<?x1x?xf32>
  %0 = tessera.reshape %x : tensor<?x?xf32> -> tensor<?x1x?xf32>
  return %0 : tensor<?x1x?xf32>
}

// -----

// CHECK-LABEL: func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>, %[[Y:.*]]: tensor<2x3xi64>)
func.func @pad(%x: tensor<?x3x4xf32>, %y: tensor<2x3xi64>) -> (tensor<?x5x7xf32>, tensor<2x5xi64>, tensor<?x3x6xf32>) {
  // CHECK: tessera.pad %[[X]] {pads = array<i64: 0, 1, 2, 0, 1, 1>, value = 1.500000e+00 : f64} : tensor<?x3x4xf32> -> tensor<?x5x7xf32>
  %0 = tessera.pad %x {pads = array<i64: 0, 1, 2, 0, 1, 1>, value = 1.5} : tensor<?x3x4xf32> -> tensor<?x5x7xf32>
  // CHECK: tessera.pad %[[Y]] {mode = 1 : i32, pads = array<i64: 0, 2, 0, 0>} : tensor<2x3xi64> -> tensor<2x5xi64>
  %1 = tessera.pad %y {mode = 1 : i32, pads = array<i64: 0, 2, 0, 0>} : tensor<2x3xi64> -> tensor<2x5xi64>
  // CHECK: tessera.pad %[[X]] {mode = 2 : i32, pads = array<i64: 0, 0, 1, 0, 0, 1>} : tensor<?x3x4xf32> -> tensor<?x3x6xf32>
  %2 = tessera.pad %x {mode = 2 : i32, pads = array<i64: 0, 0, 1, 0, 0, 1>} : tensor<?x3x4xf32> -> tensor<?x3x6xf32>
  return %0, %1, %2 : tensor<?x5x7xf32>, tensor<2x5xi64>, tensor<?x3x6xf32>
}
