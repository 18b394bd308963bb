// mulf_shapes.mlir - partial (smaller static) tile shapes verify: 4x8 bf16 x 4x16 bf16 -> 4x8 f32.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
func.func @a(%x: !amx.tile<4x8xbf16>, %y: !amx.tile<4x16xbf16>, %c: !amx.tile<4x8xf32>) -> !amx.tile<4x8xf32> {
  %r = amx.tile_mulf %x, %y, %c : !amx.tile<4x8xbf16>, !amx.tile<4x16xbf16>, !amx.tile<4x8xf32>
  return %r : !amx.tile<4x8xf32>
}
