// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'tessera.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "tessera.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_f64() {
  // expected-error @+1 {{'tessera.constant' op result #0 must be ranked tensor of Tessera element type values, but got 'tensor<2xf64>'}}
  %0 = tessera.constant dense<1.0> : tensor<2xf64>
  return
}

// -----

func.func @fusion_yield_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.fusion' op yields 1 values of types 'tensor<4xf32>' but the region has 1 results of types 'tensor<4xbf16>'}}
  %0 = tessera.fusion elementwise {
    %1 = tessera.exp %x : tensor<4xf32>
    tessera.yield %1 : tensor<4xf32>
  } : tensor<4xbf16>
  return
}

// -----

func.func @fusion_empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.fusion' op body has no ops to fuse}}
  %0 = tessera.fusion elementwise {
    tessera.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  return
}

// -----

func.func @fusion_no_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.fusion' op body must end with tessera.yield}}
  %0 = tessera.fusion elementwise {
    %1 = tessera.exp %x : tensor<4xf32>
  } : tensor<4xf32>
  return
}

// -----

func.func @fusion_block_arguments(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.fusion' op body must not have block arguments}}
  %0 = "tessera.fusion"() ({
  ^bb0(%a: tensor<4xf32>):
    %1 = tessera.exp %a : tensor<4xf32>
    tessera.yield %1 : tensor<4xf32>
  }) {kind = 0 : i32} : () -> tensor<4xf32>
  return
}

// -----

func.func @fusion_nested(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.fusion' op must not contain another tessera.fusion}}
  %0 = tessera.fusion elementwise {
    %1 = tessera.fusion elementwise {
      %2 = tessera.exp %x : tensor<4xf32>
      tessera.yield %2 : tensor<4xf32>
    } : tensor<4xf32>
    tessera.yield %1 : tensor<4xf32>
  } : tensor<4xf32>
  return
}

// -----

func.func @fusion_bad_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [elementwise, epilogue, reduction, attention]}}
  %0 = tessera.fusion matmul {
    %1 = tessera.exp %x : tensor<4xf32>
    tessera.yield %1 : tensor<4xf32>
  } : tensor<4xf32>
  return
}

// -----

func.func @yield_outside_fusion(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.yield' op expects parent op 'tessera.fusion'}}
  tessera.yield %x : tensor<4xf32>
}
