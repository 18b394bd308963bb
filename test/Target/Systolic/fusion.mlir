// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=cpu | FileCheck %s --check-prefix=CPU

// What the graph phase fuses for the systolic accelerator (its TargetInfo,
// for the default preset's 128 x 128 array).

// Attention's scores: the product stays in the accumulators while the
// vector unit scales it, adds the mask and takes the softmax of each row
// (16 columns fit the array), so all four are one epilogue. The CPU's
// epilogues stop at the row reduction.
// CHECK-LABEL: func.func @scores
// CHECK: tessera.fusion epilogue
// CHECK-NEXT: tessera.matmul
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.softmax
// CHECK-NEXT: tessera.yield
// CPU-LABEL: func.func @scores
// CPU: tessera.fusion epilogue
// CPU-NEXT: tessera.matmul
// CPU-NEXT: tessera.mul
// CPU-NEXT: tessera.add
// CPU-NEXT: tessera.yield
func.func @scores(%q: tensor<16x8xf32>, %k: tensor<8x16xf32>, %mask: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %s = tessera.constant dense<0.125> : tensor<f32>
  %0 = tessera.matmul %q, %k : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  %1 = tessera.mul %0, %s : tensor<16x16xf32>, tensor<f32> -> tensor<16x16xf32>
  %2 = tessera.add %1, %mask : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %3 = tessera.softmax %2 {axis = -1 : i64} : tensor<16x16xf32>
  return %3 : tensor<16x16xf32>
}

// -----

// Must not fire: rows of 256 do not fit the array's 128 columns, so the
// softmax is a step of its own.
// CHECK-LABEL: func.func @wide
// CHECK: tessera.fusion epilogue
// CHECK-NEXT: tessera.matmul
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.yield
// CHECK: tessera.softmax
func.func @wide(%q: tensor<16x8xf32>, %k: tensor<8x256xf32>) -> tensor<16x256xf32> {
  %s = tessera.constant dense<0.125> : tensor<f32>
  %0 = tessera.matmul %q, %k : tensor<16x8xf32>, tensor<8x256xf32> -> tensor<16x256xf32>
  %1 = tessera.mul %0, %s : tensor<16x256xf32>, tensor<f32> -> tensor<16x256xf32>
  %2 = tessera.softmax %1 {axis = -1 : i64} : tensor<16x256xf32>
  return %2 : tensor<16x256xf32>
}

// -----

// Comparisons and selects run on the vector unit (booleans as 0.0 and
// 1.0): the comparison, the select and the add are one region; the exp,
// read twice, stays out.
// CHECK-LABEL: func.func @select
// CHECK: tessera.exp
// CHECK-NEXT: tessera.fusion elementwise
// CHECK-NEXT: tessera.compare
// CHECK-NEXT: tessera.where
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.yield
// CPU-LABEL: func.func @select
// CPU: tessera.fusion elementwise
func.func @select(%x: tensor<32xf32>, %y: tensor<32xf32>) -> tensor<32xf32> {
  %0 = tessera.exp %x : tensor<32xf32>
  %1 = tessera.compare gt, %0, %y : tensor<32xf32>, tensor<32xf32> -> tensor<32xi1>
  %2 = tessera.where %1, %0, %y : tensor<32xi1>, tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %3 = tessera.add %2, %y : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  return %3 : tensor<32xf32>
}

// -----

// A chain of vector ops: a residual add, its layer norm and GELU are one
// region (one step on the vector unit).
// CHECK-LABEL: func.func @norm
// CHECK: tessera.fusion reduction
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.layer_norm
// CHECK-NEXT: tessera.gelu
func.func @norm(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %0 = tessera.add %x, %r : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %1 = tessera.layer_norm %0 scale(%g : tensor<64xf32>) bias(%b : tensor<64xf32>) : tensor<8x64xf32>
  %2 = tessera.gelu %1 : tensor<8x64xf32>
  return %2 : tensor<8x64xf32>
}
