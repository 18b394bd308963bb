// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @reshape_element_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reshape' op cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)}}
  %0 = tessera.reshape %x : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_needs_shape(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{'tessera.reshape' op a result with 2 dynamic dimensions needs a shape operand}}
  %0 = tessera.reshape %x : tensor<?x64xf32> -> tensor<?x?x8xf32>
  return
}

// -----

func.func @reshape_shape_operand(%x: tensor<?x64xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'tessera.reshape' op shape operand must be 1-D with 3 entries, got [2]}}
  %0 = tessera.reshape %x shape(%s : tensor<2xi64>) : tensor<?x64xf32> -> tensor<?x?x8xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.reshape' op failed to verify that all of {input, result} have same element type}}
  %0 = tessera.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.transpose' op permutation has 3 entries for an input of rank 2}}
  %0 = tessera.transpose %x [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_not_a_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.transpose' op permutation [1, 1] is not a permutation of [0, 2)}}
  %0 = tessera.transpose %x [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.transpose' op result type 'tensor<2x3xf32>' differs from the inferred type 'tensor<3x2xf32>'}}
  %0 = tessera.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_not_broadcastable(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.expand' op input shape [2, 3] does not broadcast to [4, 3]}}
  %0 = tessera.expand %x : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @expand_shape_operand(%x: tensor<1xf32>, %s: tensor<2x1xi64>) {
  // expected-error @+1 {{'tessera.expand' op shape operand must be 1-D with 2 entries, got [2, 1]}}
  %0 = tessera.expand %x shape(%s : tensor<2x1xi64>) : tensor<1xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{'tessera.concat' op expected 1 or more operands, but found 0}}
  %0 = "tessera.concat"() {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.concat' op axis 2 is out of range for rank 2}}
  %0 = tessera.concat %a, %a axis 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'tessera.concat' op inputs have different ranks}}
  %0 = tessera.concat %a, %b axis 0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'tessera.concat' op inputs differ in dimension 1 (3 vs 4), which is not the axis}}
  %0 = tessera.concat %a, %b axis 0 : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @split_axis(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op axis 2 is out of range for rank 2}}
  %0:2 = tessera.split %x axis 2 : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_no_results(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op expects at least one result}}
  "tessera.split"(%x) {axis = 1 : i64} : (tensor<4x6xf32>) -> ()
  return
}

// -----

func.func @split_sizes_count(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op has 3 sizes for 2 results}}
  %0:2 = tessera.split %x axis 1 sizes [2, 2, 2] : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_negative_size(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op sizes must be non-negative}}
  %0:2 = tessera.split %x axis 1 sizes [-1, 7] : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_sizes_sum(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op sizes add up to 5 but dimension 1 has 6}}
  %0:2 = tessera.split %x axis 1 sizes [2, 3] : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_uneven(%x: tensor<4x7xf32>) {
  // expected-error @+1 {{'tessera.split' op dimension 1 of size 7 does not split into 2 equal pieces}}
  %0:2 = tessera.split %x axis 1 : tensor<4x7xf32> -> tensor<4x3xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @split_result_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op result 1 has type 'tensor<4x2xf32>', expected shape [4, 3] of 'f32'}}
  %0:2 = tessera.split %x axis 1 : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @slice_starts_ends(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.slice' op has 1 starts but 2 ends}}
  %0 = tessera.slice %x starts [0] ends [4, 4] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_axes_count(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'tessera.slice' op has 2 axes for 1 starts}}
  %0 = tessera.slice %x starts [0] ends [4] axes [0, 1] : tensor<8x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_axis_range(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'tessera.slice' op axis 5 is out of range for rank 2}}
  %0 = tessera.slice %x starts [0] ends [4] axes [5] : tensor<8x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_too_many_starts(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.slice' op has 2 starts for an input of rank 1}}
  %0 = tessera.slice %x starts [0, 0] ends [4, 4] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_steps_count(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.slice' op has 2 steps for 1 starts}}
  %0 = tessera.slice %x starts [0] ends [4] steps [1, 1] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_zero_step(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.slice' op steps must be non-zero}}
  %0 = tessera.slice %x starts [0] ends [4] steps [0] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_wrong_result(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tessera.slice' op result type 'tensor<4xf32>' differs from the inferred type 'tensor<2xf32>'}}
  %0 = tessera.slice %x starts [0] ends [4] steps [2] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<8x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'tessera.gather' op axis 2 is out of range for rank 2}}
  %0 = tessera.gather %x[%i] axis 2 : tensor<8x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
  return
}

// -----

func.func @gather_float_indices(%x: tensor<8x4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'tessera.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = tessera.gather %x[%i] axis 0 : tensor<8x4xf32>, tensor<2xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @split_sizes_overflow(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'tessera.split' op sizes overflow when added}}
  %0:2 = tessera.split %x axis 1 sizes [9223372036854775807, 7] : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @shape_length(%x: tensor<?x128xf32>) {
  // expected-error @+1 {{'tessera.shape' op result has 3 entries for an input of rank 2}}
  %0 = tessera.shape %x : tensor<?x128xf32> -> tensor<3xi64>
  return
}

// -----

func.func @range_element_type(%n: tensor<i64>) {
  // expected-error @+1 {{'tessera.range' op result element type 'i32' differs from the operands' 'i64'}}
  %0 = tessera.range %n, %n, %n : tensor<i64> -> tensor<?xi32>
  return
}

// -----

func.func @range_operands_differ(%n: tensor<i64>, %m: tensor<i32>) {
  // expected-error @+1 {{'tessera.range' op failed to verify that all of {start, limit, delta} have same type}}
  %0 = "tessera.range"(%n, %m, %n) : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<?xi64>
  return
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.pad' op pads must be 4 non-negative values (begins, then ends)}}
  %0 = tessera.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.pad' op pads must be 4 non-negative values (begins, then ends)}}
  %0 = tessera.pad %x {pads = array<i64: 0, -1, 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @pad_reflect_too_far(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.pad' op reflect pads of dim 1 (0, 3) must be smaller than its size 3}}
  %0 = tessera.pad %x {mode = 1 : i32, pads = array<i64: 0, 0, 0, 3>} : tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @pad_edge_empty(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{'tessera.pad' op edge padding of dim 1, which is empty}}
  %0 = tessera.pad %x {mode = 2 : i32, pads = array<i64: 0, 1, 0, 0>} : tensor<2x0xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @pad_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tessera.pad' op result type 'tensor<2x3xf32>' differs from the inferred type 'tensor<4x3xf32>'}}
  %0 = tessera.pad %x {pads = array<i64: 1, 0, 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
