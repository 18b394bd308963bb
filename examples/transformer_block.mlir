// transformer_block.mlir - a BERT-style encoder layer (hidden 64, 4 heads, FFN 256) in the tessera dialect.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Weights are function arguments here; the ONNX importer turns a model's
// initializers into constants. Run:
//   build/bin/tessera-opt --canonicalize --cse examples/transformer_block.mlir
// Canonicalization folds the redundant reshape pair and the multiply by one.
func.func @encoder_layer(%x: tensor<1x16x64xf32>, %mask: tensor<1x1x1x16xf32>,
                         %wqkv: tensor<64x192xf32>, %bqkv: tensor<192xf32>,
                         %wo: tensor<64x64xf32>, %bo: tensor<64xf32>,
                         %g1: tensor<64xf32>, %b1: tensor<64xf32>,
                         %w1: tensor<64x256xf32>, %c1: tensor<256xf32>,
                         %w2: tensor<256x64xf32>, %c2: tensor<64xf32>,
                         %g2: tensor<64xf32>, %b2: tensor<64xf32>) -> tensor<1x16x64xf32> {
  // Self-attention: one fused QKV projection, split into heads.
  %qkv = tessera.matmul %x, %wqkv : tensor<1x16x64xf32>, tensor<64x192xf32> -> tensor<1x16x192xf32>
  %qkvb = tessera.add %qkv, %bqkv : tensor<1x16x192xf32>, tensor<192xf32> -> tensor<1x16x192xf32>
  %q, %k, %v = tessera.split %qkvb axis 2 : tensor<1x16x192xf32> -> tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>
  %q4 = tessera.reshape %q : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %k4 = tessera.reshape %k : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %v4 = tessera.reshape %v : tensor<1x16x64xf32> -> tensor<1x16x4x16xf32>
  %qh = tessera.transpose %q4 [0, 2, 1, 3] : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %kh = tessera.transpose %k4 [0, 2, 1, 3] : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %vh = tessera.transpose %v4 [0, 2, 1, 3] : tensor<1x16x4x16xf32> -> tensor<1x4x16x16xf32>
  %att = tessera.attention %qh, %kh, %vh mask(%mask : tensor<1x1x1x16xf32>) {scale = 0.25 : f32} : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %merged = tessera.transpose %att [0, 2, 1, 3] : tensor<1x4x16x16xf32> -> tensor<1x16x4x16xf32>
  %flat = tessera.reshape %merged : tensor<1x16x4x16xf32> -> tensor<16x64xf32>
  %back = tessera.reshape %flat : tensor<16x64xf32> -> tensor<1x16x64xf32>
  %proj = tessera.matmul %back, %wo : tensor<1x16x64xf32>, tensor<64x64xf32> -> tensor<1x16x64xf32>
  %projb = tessera.add %proj, %bo : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %res1 = tessera.add %projb, %x : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %ln1 = tessera.layer_norm %res1 scale(%g1 : tensor<64xf32>) bias(%b1 : tensor<64xf32>) {epsilon = 9.99999996E-13 : f32} : tensor<1x16x64xf32>
  // Feed-forward network with erf GELU.
  %h = tessera.matmul %ln1, %w1 : tensor<1x16x64xf32>, tensor<64x256xf32> -> tensor<1x16x256xf32>
  %hb = tessera.add %h, %c1 : tensor<1x16x256xf32>, tensor<256xf32> -> tensor<1x16x256xf32>
  %act = tessera.gelu %hb : tensor<1x16x256xf32>
  %o = tessera.matmul %act, %w2 : tensor<1x16x256xf32>, tensor<256x64xf32> -> tensor<1x16x64xf32>
  %ob = tessera.add %o, %c2 : tensor<1x16x64xf32>, tensor<64xf32> -> tensor<1x16x64xf32>
  %one = tessera.constant dense<1.0> : tensor<1x16x64xf32>
  %scaled = tessera.mul %ob, %one : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %res2 = tessera.add %scaled, %ln1 : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  %ln2 = tessera.layer_norm %res2 scale(%g2 : tensor<64xf32>) bias(%b2 : tensor<64xf32>) {epsilon = 9.99999996E-13 : f32} : tensor<1x16x64xf32>
  return %ln2 : tensor<1x16x64xf32>
}
