// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @add_shapes_do_not_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tessera.add' op shapes [2, 3] and [4] do not broadcast (dimension 3 vs 4)}}
  %0 = tessera.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @add_wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'tessera.add' op result type 'tensor<3xf32>' differs from the inferred type 'tensor<2x3xf32>'}}
  %0 = tessera.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @mul_element_types_differ(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'tessera.mul' op requires the same element type for all operands and results}}
  %0 = tessera.mul %a, %b : tensor<3xf32>, tensor<3xf16> -> tensor<3xf32>
  return
}

// -----

func.func @unsupported_element_type(%a: tensor<3xf64>) {
  // expected-error @+1 {{'tessera.exp' op operand #0 must be ranked tensor of Tessera floating-point values, but got 'tensor<3xf64>'}}
  %0 = tessera.exp %a : tensor<3xf64>
  return
}

// -----

func.func @unranked_operand(%a: tensor<*xf32>) {
  // expected-error @+1 {{'tessera.sub' op operand #0 must be ranked tensor of Tessera floating-point or Tessera integer values, but got 'tensor<*xf32>'}}
  %0 = "tessera.sub"(%a, %a) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @logic_needs_i1(%a: tensor<3xi8>) {
  // expected-error @+1 {{'tessera.and' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<3xi8>'}}
  %0 = tessera.and %a, %a : tensor<3xi8>, tensor<3xi8> -> tensor<3xi8>
  return
}

// -----

func.func @compare_element_types_differ(%a: tensor<3xf32>, %b: tensor<3xbf16>) {
  // expected-error @+1 {{'tessera.compare' op requires the same element type for all operands}}
  %0 = tessera.compare lt, %a, %b : tensor<3xf32>, tensor<3xbf16> -> tensor<3xi1>
  return
}

// -----

func.func @compare_bad_predicate(%a: tensor<3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = tessera.compare slt, %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xi1>
  return
}

// -----

func.func @where_branches_differ(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'tessera.where' op on_true and on_false element types differ}}
  %0 = tessera.where %c, %a, %b : tensor<3xi1>, tensor<3xf32>, tensor<3xf16> -> tensor<3xf32>
  return
}

// -----

func.func @where_shapes_do_not_broadcast(%c: tensor<2xi1>, %a: tensor<3xf32>) {
  // expected-error @+1 {{'tessera.where' op shapes [2] and [3] do not broadcast (dimension 2 vs 3)}}
  %0 = tessera.where %c, %a, %a : tensor<2xi1>, tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @gelu_bad_approximation(%a: tensor<3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'approximate' [erf, tanh]}}
  %0 = tessera.gelu %a approximate = sigmoid : tensor<3xf32>
  return
}

// -----

func.func @cast_changes_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tessera.cast' op requires the same shape for all operands and results}}
  %0 = tessera.cast %a : tensor<3xf32> to tensor<4xbf16>
  return
}

// -----

func.func @sin_of_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'tessera.sin' op operand #0 must be}}
  %0 = tessera.sin %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}
