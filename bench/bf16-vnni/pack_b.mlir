// pack_b.mlir - B [K][N] bf16 to the VNNI panels [N/32][K/2][32][2] as a linalg.pack
// (verifies in mlir-opt 22; run.sh checks it).
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
func.func @pk(%B: tensor<1024x1024xbf16>) -> tensor<32x512x32x2xbf16> {
  %e = tensor.empty() : tensor<32x512x32x2xbf16>
  %p = linalg.pack %B outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 2] into %e : tensor<1024x1024xbf16> -> tensor<32x512x32x2xbf16>
  return %p : tensor<32x512x32x2xbf16>
}
