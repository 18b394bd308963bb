// mulf_bad.mlir - tile_mulf with inconsistent shapes (rhs 32x16): the verifier rejects it (bad row height: 32).
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
func.func @a(%x: !amx.tile<16x32xbf16>, %y: !amx.tile<32x16xbf16>, %c: !amx.tile<16x16xf32>) -> !amx.tile<16x16xf32> {
  %r = amx.tile_mulf %x, %y, %c : !amx.tile<16x32xbf16>, !amx.tile<32x16xbf16>, !amx.tile<16x16xf32>
  return %r : !amx.tile<16x16xf32>
}
