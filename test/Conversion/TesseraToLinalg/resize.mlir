// RUN: tessera-opt %s --split-input-file --convert-tessera-to-linalg --canonicalize | FileCheck %s

// One generic per resized dim, the last first; dims with a constant scale
// of 1 get none. Nearest with asymmetric coordinates and round-half-up
// (not a whole-factor copy: 1 / 2 rounds up to 1):
// x / scale, rounded, clamped into the dim, read with tensor.extract.
// CHECK-LABEL: func @resize_nearest
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x2x3xf32>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x2x6xf32>)
// CHECK: arith.divf
// CHECK: math.floor
// CHECK: arith.cmpf oge
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %[[X]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x6xf32>)
// CHECK: tensor.extract %[[W]]
// CHECK-NOT: linalg.generic
func.func @resize_nearest(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {coordinate_mode = 4 : i32, nearest_mode = 1 : i32} : tensor<1x1x2x3xf32>, tensor<4xf32> -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// -----

// Nearest upsampling by whole factors where ONNX's rule picks input pixel
// floor(x / s) (asymmetric and floor, as PyTorch exports it; half-pixel
// and round-half-down): one copy reading (y floordiv 2, x floordiv 3), its
// dynamic sizes the input's times the factors.
// CHECK-DAG: #[[UP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 3)>
// CHECK-LABEL: func @resize_whole_factors
// CHECK-NOT: tensor.extract
// CHECK: %[[H:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[OH:.*]] = arith.muli %[[H]], %c2
// CHECK: %[[W:.*]] = tensor.dim %arg0, %c3
// CHECK: %[[OW:.*]] = arith.muli %[[W]], %c3
// CHECK: %[[E:.*]] = tensor.empty(%[[OH]], %[[OW]]) : tensor<1x4x?x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[UP]], #{{.*}}], {{.*}} ins(%arg0 : tensor<1x4x?x?xf32>) outs(%[[E]] : tensor<1x4x?x?xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK: linalg.generic {indexing_maps = [#[[UP]], #{{.*}}], {{.*}} ins(%arg1 : tensor<1x4x5x6xf32>) outs(%{{.*}} : tensor<1x4x10x18xf32>)
func.func @resize_whole_factors(%x: tensor<1x4x?x?xf32>, %y: tensor<1x4x5x6xf32>) -> (tensor<1x4x?x?xf32>, tensor<1x4x10x18xf32>) {
  %s = tessera.constant dense<[1.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %0 = tessera.resize %x, %s {coordinate_mode = 4 : i32, nearest_mode = 2 : i32} : tensor<1x4x?x?xf32>, tensor<4xf32> -> tensor<1x4x?x?xf32>
  %1 = tessera.resize %y, %s {coordinate_mode = 0 : i32, nearest_mode = 0 : i32} : tensor<1x4x5x6xf32>, tensor<4xf32> -> tensor<1x4x10x18xf32>
  return %0, %1 : tensor<1x4x?x?xf32>, tensor<1x4x10x18xf32>
}

// -----

// Runtime scales are read once per dim outside the generics; linear
// weights two clamped neighbours in f64.
// CHECK-LABEL: func @resize_linear_runtime
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<2xf32>)
// CHECK: %[[S1:.*]] = tensor.extract %[[S]][%{{.*}}] : tensor<2xf32>
// CHECK: arith.extf %[[S1]] : f32 to f64
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6xf32>)
// CHECK-COUNT-2: tensor.extract %[[X]]
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: tensor.extract %[[S]][%{{.*}}] : tensor<2xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x6xf32>)
func.func @resize_linear_runtime(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<4x6xf32> {
  %0 = tessera.resize %x, %s {mode = 1 : i32} : tensor<2x3xf32>, tensor<2xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// With sizes (known at run time), the dynamic output dims are the sizes'
// entries, and each dim's scale is size / input size in f64; the f32
// ratios in `scales` are not read, and nearest by whole factors does not
// take the affine copy (the factors are not known). Without sizes (above),
// a dynamic output dim is floor(input size * scale).
// CHECK-LABEL: func @resize_sizes
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x?x?xf32>, %[[S:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<4xi64>)
// CHECK-NOT: floordiv
// CHECK: %[[W:.*]] = tensor.extract %[[N]][%c3] : tensor<4xi64>
// CHECK: %[[OW:.*]] = arith.index_cast %[[W]] : i64 to index
// CHECK-NOT: math.floor
// CHECK: tensor.empty(%{{.*}}, %[[OW]]) : tensor<1x2x?x?xf32>
// CHECK: %[[H:.*]] = tensor.extract %[[N]][%c2] : tensor<4xi64>
// CHECK: %[[OH:.*]] = arith.index_cast %[[H]] : i64 to index
// CHECK: tensor.empty(%[[OH]], %{{.*}}) : tensor<1x2x?x?xf32>
func.func @resize_sizes(%x: tensor<1x2x?x?xf32>, %s: tensor<4xf32>, %n: tensor<4xi64>) -> tensor<1x2x?x?xf32> {
  %0 = tessera.resize %x, %s sizes(%n : tensor<4xi64>) {coordinate_mode = 4 : i32, nearest_mode = 2 : i32} : tensor<1x2x?x?xf32>, tensor<4xf32> -> tensor<1x2x?x?xf32>
  return %0 : tensor<1x2x?x?xf32>
}

// -----

// Cubic reads four neighbours; tf_crop_and_resize selects the
// extrapolation value outside the input.
// CHECK-LABEL: func @resize_cubic_crop
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: arith.select
// CHECK: linalg.yield
func.func @resize_cubic_crop(%x: tensor<4xf32>, %s: tensor<1xf32>, %r: tensor<2xf32>) -> tensor<3xf32> {
  %0 = tessera.resize %x, %s roi(%r : tensor<2xf32>) {mode = 2 : i32, coordinate_mode = 6 : i32, extrapolation_value = 10.0} : tensor<4xf32>, tensor<1xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
