// RUN: tessera-opt %s --tessera-assign-precision="policy=fp8 fp8-scaling=current keep-heads=false" | FileCheck %s
// RUN: tessera-opt %s --tessera-assign-precision="policy=fp8 fp8-scaling=current keep-heads=false keep-first-layers=false" | FileCheck %s --check-prefix=QUANTIZED
// RUN: tessera-opt %s --tessera-assign-precision="policy=bf16 keep-first-layers=true" | FileCheck %s --check-prefix=BF16

// keep-first-layers (the default): under 8-bit policies a matmul whose lhs the
// function's arguments reach through elementwise ops and data movement
// only (here a scale and a reshape) stays f32, as output heads do. Not:
// a matmul behind a norm or another matmul, nor one that reads an argument
// as its rhs only.
// CHECK-LABEL: func @first
// CHECK: tessera.matmul {{.*}} {tessera.precision = "f32: a first layer stays f32 under 8-bit policies"} : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK-COUNT-3: tessera.matmul {{.*}}tessera.precision = "fp8"}
// CHECK-NOT: a first layer
// With keep-first-layers=false every one narrows.
// QUANTIZED-LABEL: func @first
// QUANTIZED-NOT: a first layer
// QUANTIZED-COUNT-4: tessera.precision = "fp8"
// Under 16-bit policies first layers narrow as the others do.
// BF16-LABEL: func @first
// BF16-NOT: a first layer
// BF16-COUNT-4: tessera.precision = "bf16"
func.func @first(%x: tensor<2x2x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %s = tessera.constant dense<0.5> : tensor<f32>
  %w = tessera.constant dense<0.25> : tensor<8x8xf32>
  %scaled = tessera.mul %x, %s : tensor<2x2x8xf32>, tensor<f32> -> tensor<2x2x8xf32>
  %flat = tessera.reshape %scaled : tensor<2x2x8xf32> -> tensor<4x8xf32>
  %a = tessera.matmul %flat, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/first/MatMul")
  %b = tessera.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/second/MatMul")
  %g = tessera.constant dense<1.0> : tensor<8xf32>
  %z = tessera.constant dense<0.0> : tensor<8xf32>
  %n = tessera.layer_norm %y scale(%g : tensor<8xf32>) bias(%z : tensor<8xf32>) : tensor<4x8xf32>
  %c = tessera.matmul %n, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/normed/MatMul")
  %yt = tessera.transpose %y [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %d = tessera.matmul %c, %yt : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32> loc("/rhs/MatMul")
  return %b, %d : tensor<4x8xf32>, tensor<4x4xf32>
}

// Must not fire: the input reaches these matmuls only through a shape (a
// reshape's target shape taken from it, as exported models with dynamic
// dims do), through a gather's indices (token ids into an embedding) and
// through a residual sum with a deeper value.
// CHECK-LABEL: func @not_first
// CHECK-NOT: a first layer
// CHECK-COUNT-4: tessera.precision = "fp8"
func.func @not_first(%x: tensor<?x8xf32>, %ids: tensor<4xi64>) -> (tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  %w = tessera.constant dense<0.25> : tensor<8x8xf32>
  %table = tessera.constant dense<0.5> : tensor<16x8xf32>
  %n = tessera.layer_norm %x : tensor<?x8xf32>
  %deep = tessera.matmul %n, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32> loc("/deep/MatMul")
  %s = tessera.shape %x : tensor<?x8xf32> -> tensor<2xi64>
  %r = tessera.reshape %deep shape(%s : tensor<2xi64>) : tensor<?x8xf32> -> tensor<?x8xf32>
  %a = tessera.matmul %r, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32> loc("/reshaped/MatMul")
  %e = tessera.gather %table[%ids] axis 0 : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %b = tessera.matmul %e, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/embedded/MatMul")
  %sum = tessera.add %x, %deep : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  %c = tessera.matmul %sum, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32> loc("/residual/MatMul")
  return %a, %b, %c : tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}
