// RUN: tessera-opt %s --split-input-file --tessera-hoist-casts | FileCheck %s

// A narrowing cast moves above the reshapes and transposes that only it
// reads, to the value they move: the movements then move bf16 (the two
// reshapes that undo each other fold on the way).
// CHECK-LABEL: func @hoist
// CHECK-NEXT: %[[C:.*]] = tessera.cast %arg0 : tensor<2x8x4xf32> to tensor<2x8x4xbf16>
// CHECK-NEXT: %[[T:.*]] = tessera.transpose %[[C]] [0, 2, 1] : tensor<2x8x4xbf16> -> tensor<2x4x8xbf16>
// CHECK-NEXT: return %[[T]]
func.func @hoist(%x: tensor<2x8x4xf32>) -> tensor<2x4x8xbf16> {
  %0 = tessera.reshape %x : tensor<2x8x4xf32> -> tensor<2x32xf32>
  %1 = tessera.reshape %0 : tensor<2x32xf32> -> tensor<2x8x4xf32>
  %2 = tessera.transpose %1 [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %3 = tessera.cast %2 : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
  return %3 : tensor<2x4x8xbf16>
}

// -----

// A reshape with a runtime shape keeps it; f16 as bf16.
// CHECK-LABEL: func @dynamic
// CHECK-NEXT: %[[C:.*]] = tessera.cast %arg0 : tensor<?x768xf32> to tensor<?x768xf16>
// CHECK-NEXT: tessera.reshape %[[C]] shape(%arg1 : tensor<3xi64>) : tensor<?x768xf16> -> tensor<?x12x64xf16>
func.func @dynamic(%x: tensor<?x768xf32>, %s: tensor<3xi64>) -> tensor<?x12x64xf16> {
  %0 = tessera.reshape %x shape(%s : tensor<3xi64>) : tensor<?x768xf32> -> tensor<?x12x64xf32>
  %1 = tessera.cast %0 : tensor<?x12x64xf32> to tensor<?x12x64xf16>
  return %1 : tensor<?x12x64xf16>
}

// -----

// A widening cast that only movements read moves below each of them.
// CHECK-LABEL: func @sink
// CHECK-NEXT: %[[T:.*]] = tessera.transpose %arg0 [0, 2, 1] : tensor<2x8x4xbf16> -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[A:.*]] = tessera.cast %[[T]] : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = tessera.reshape %arg0 : tensor<2x8x4xbf16> -> tensor<64xbf16>
// CHECK-NEXT: %[[B:.*]] = tessera.cast %[[R]] : tensor<64xbf16> to tensor<64xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @sink(%x: tensor<2x8x4xbf16>) -> (tensor<2x4x8xf32>, tensor<64xf32>) {
  %0 = tessera.cast %x : tensor<2x8x4xbf16> to tensor<2x8x4xf32>
  %1 = tessera.transpose %0 [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %2 = tessera.reshape %0 : tensor<2x8x4xf32> -> tensor<64xf32>
  return %1, %2 : tensor<2x4x8xf32>, tensor<64xf32>
}

// -----

// Must not move: a movement something else reads too (the f32 transpose
// is needed anyway), a widening cast another op reads, a cast to an
// integer, a cast to fp8, and a slice (which reads fewer elements than it
// would cast).
// CHECK-LABEL: func @kept
// CHECK-NEXT: %[[T:.*]] = tessera.transpose %arg0 [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT: tessera.cast %[[T]] : tensor<8x2xf32> to tensor<8x2xbf16>
// CHECK-NEXT: %[[W:.*]] = tessera.cast %arg1 : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK-NEXT: tessera.transpose %[[W]] [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT: tessera.relu %[[W]]
// CHECK-NEXT: %[[R:.*]] = tessera.transpose %arg0 [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT: tessera.cast %[[R]] : tensor<8x2xf32> to tensor<8x2xi32>
// CHECK-NEXT: %[[E:.*]] = tessera.transpose %arg0 [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT: tessera.cast %[[E]] : tensor<8x2xf32> to tensor<8x2xf8E4M3FN>
// CHECK-NEXT: %[[S:.*]] = tessera.slice %arg0
// CHECK-NEXT: tessera.cast %[[S]]
func.func @kept(%x: tensor<2x8xf32>, %y: tensor<2x8xbf16>) -> (tensor<8x2xbf16>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x8xf32>, tensor<8x2xi32>, tensor<8x2xf8E4M3FN>, tensor<2x4xbf16>) {
  %0 = tessera.transpose %x [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %1 = tessera.cast %0 : tensor<8x2xf32> to tensor<8x2xbf16>
  %2 = tessera.cast %y : tensor<2x8xbf16> to tensor<2x8xf32>
  %3 = tessera.transpose %2 [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %4 = tessera.relu %2 : tensor<2x8xf32>
  %5 = tessera.transpose %x [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %6 = tessera.cast %5 : tensor<8x2xf32> to tensor<8x2xi32>
  %7 = tessera.transpose %x [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %8 = tessera.cast %7 : tensor<8x2xf32> to tensor<8x2xf8E4M3FN>
  %9 = tessera.slice %x starts [0] ends [4] axes [1] steps [1] : tensor<2x8xf32> -> tensor<2x4xf32>
  %10 = tessera.cast %9 : tensor<2x4xf32> to tensor<2x4xbf16>
  return %1, %0, %3, %4, %6, %8, %10 : tensor<8x2xbf16>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2x8xf32>, tensor<8x2xi32>, tensor<8x2xf8E4M3FN>, tensor<2x4xbf16>
}

// -----

// A narrowing cast that a matmul reads stays below a transpose (a backend
// folds the transpose into the cast's kernel; next to the product it
// would change the product's operand layout); above a reshape it still
// moves.
// CHECK-LABEL: func @product
// CHECK-NEXT: %[[T:.*]] = tessera.transpose %arg0 [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
// CHECK-NEXT: %[[C:.*]] = tessera.cast %[[T]] : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
// CHECK-NEXT: tessera.matmul %[[C]], %arg1
// CHECK-NEXT: %[[N:.*]] = tessera.cast %arg2 : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NEXT: %[[R:.*]] = tessera.reshape %[[N]] : tensor<8x8xbf16> -> tensor<1x2x8x4xbf16>
// CHECK-NEXT: tessera.matmul %[[R]], %arg1
func.func @product(%x: tensor<1x8x2x4xf32>, %w: tensor<4x4xbf16>, %y: tensor<8x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = tessera.transpose %x [0, 2, 1, 3] : tensor<1x8x2x4xf32> -> tensor<1x2x8x4xf32>
  %1 = tessera.cast %0 : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
  %2 = tessera.matmul %1, %w : tensor<1x2x8x4xbf16>, tensor<4x4xbf16> -> tensor<1x2x8x4xf32>
  %3 = tessera.reshape %y : tensor<8x8xf32> -> tensor<1x2x8x4xf32>
  %4 = tessera.cast %3 : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
  %5 = tessera.matmul %4, %w : tensor<1x2x8x4xbf16>, tensor<4x4xbf16> -> tensor<1x2x8x4xf32>
  return %2, %5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
