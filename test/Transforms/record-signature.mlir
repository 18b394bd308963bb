// RUN: tessera-opt --split-input-file --verify-diagnostics --tessera-record-signature %s | FileCheck %s
// RUN: tessera-opt --split-input-file --verify-diagnostics --tessera-record-signature=drop-arg-attrs %s | FileCheck %s --check-prefix=DROP

// Names, element types, static and dynamic dims with their symbolic names;
// an unnamed input gets its position as its name.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tessera.name = "tokens"
// CHECK-SAME: tessera.signature = "{\22entry\22:\22main\22,\22inputs\22:[{\22dim_params\22:[\22batch\22,\22\22],\22name\22:\22tokens\22,\22shape\22:[null,4],\22type\22:\22f32\22},{\22dim_params\22:[\22\22,\22\22],\22name\22:\22input_1\22,\22shape\22:[2,4],\22type\22:\22bf16\22}],\22outputs\22:[{\22dim_params\22:[\22\22,\22\22],\22name\22:\22out\22,\22shape\22:[null,4],\22type\22:\22f32\22}]}"
// DROP-LABEL: func.func @main(%{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<2x4xbf16>) -> tensor<?x4xf32> attributes {tessera.signature = "{\22entry\22:\22main\22
func.func @main(%x: tensor<?x4xf32> {tessera.name = "tokens", tessera.dim_params = ["batch", ""]},
                %m: tensor<2x4xbf16>) -> (tensor<?x4xf32> {tessera.name = "out"}) {
  return %x : tensor<?x4xf32>
}

// -----

// The entry is the first public function with a body: declarations and
// private helpers are not.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: tessera.signature
// CHECK-LABEL: func.func @entry
// CHECK-SAME: tessera.signature = "{\22entry\22:\22entry\22,\22inputs\22:[{\22dim_params\22:[],\22name\22:\22input_0\22,\22shape\22:[],\22type\22:\22i64\22}]
func.func private @helper(%x: tensor<i64>) -> tensor<i64> {
  return %x : tensor<i64>
}
func.func @entry(%x: tensor<i64>) -> tensor<i64> {
  %y = func.call @helper(%x) : (tensor<i64>) -> tensor<i64>
  return %y : tensor<i64>
}

// -----

// Must not fire: a function that already carries a signature keeps it,
// even when asked to drop argument attributes.
// CHECK-LABEL: func.func @recorded
// CHECK-SAME: tessera.name = "kept"
// CHECK-SAME: tessera.signature = "recorded earlier"
// DROP-LABEL: func.func @recorded
// DROP-SAME: tessera.signature = "recorded earlier"
func.func @recorded(%x: tensor<2xf32> {tessera.name = "kept"}) -> tensor<2xf32>
    attributes {tessera.signature = "recorded earlier"} {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{element type}}
func.func @complex(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  return %x : tensor<2xcomplex<f32>>
}
