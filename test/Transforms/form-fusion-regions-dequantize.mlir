// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions="target=systolic" | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions | FileCheck %s --check-prefix=CPU

// On the systolic target an int8 matmul's product dequantized per column
// starts its epilogue: the scales and the ReLU after them join the
// matmul's region (the array applies them to the product on chip, before
// its one store). The cpu target keeps the dequantization out (its tiles
// take epilogues of the product's own type), and with it the ReLU.
// CPU-LABEL: func.func @int8_epilogue
// CPU-NOT: tessera.fusion
// CPU: tessera.matmul
// CPU-NEXT: tessera.dequantize
// CPU-NEXT: tessera.relu
// CHECK-LABEL: func.func @int8_epilogue
// CHECK: tessera.fusion epilogue {
// CHECK-NEXT: tessera.matmul
// CHECK-NEXT: tessera.dequantize
// CHECK-NEXT: tessera.relu
// CHECK-NEXT: tessera.yield
func.func @int8_epilogue(%x: tensor<32x256xi8>, %w: tensor<256x512xi8>, %s: tensor<512xf32>) -> tensor<32x512xf32> {
  %p = tessera.matmul %x, %w : tensor<32x256xi8>, tensor<256x512xi8> -> tensor<32x512xi32>
  %d = tessera.dequantize %p scale(%s : tensor<512xf32>) {axis = 1 : i64} : tensor<32x512xi32> -> tensor<32x512xf32>
  %r = tessera.relu %d : tensor<32x512xf32>
  return %r : tensor<32x512xf32>
}

// -----

// A dequantize of anything else (an int8 model input) is no epilogue step,
// and the exponential after it has no producer to join.
// CPU-LABEL: func.func @dequantized_input
// CPU-NOT: tessera.fusion
// CHECK-LABEL: func.func @dequantized_input
// CHECK-NOT: tessera.fusion
// CHECK: tessera.dequantize
// CHECK-NEXT: tessera.exp
func.func @dequantized_input(%x: tensor<32x512xi8>, %s: tensor<f32>) -> tensor<32x512xf32> {
  %d = tessera.dequantize %x scale(%s : tensor<f32>) : tensor<32x512xi8> -> tensor<32x512xf32>
  %e = tessera.exp %d : tensor<32x512xf32>
  return %e : tensor<32x512xf32>
}

// -----

// Only the dequantization changes the element type inside an epilogue: a
// comparison after a matmul (an i1 result) stays out.
// CHECK-LABEL: func.func @compare_after_matmul
// CHECK-NOT: tessera.fusion
// CPU-LABEL: func.func @compare_after_matmul
// CPU-NOT: tessera.fusion
func.func @compare_after_matmul(%x: tensor<32x256xf32>, %w: tensor<256x512xf32>, %t: tensor<32x512xf32>) -> tensor<32x512xi1> {
  %p = tessera.matmul %x, %w : tensor<32x256xf32>, tensor<256x512xf32> -> tensor<32x512xf32>
  %c = tessera.compare gt, %p, %t : tensor<32x512xf32>, tensor<32x512xf32> -> tensor<32x512xi1>
  return %c : tensor<32x512xi1>
}
