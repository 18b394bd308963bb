// TesseraIndexingOps.td - gathers and scatters through index tensors, and resize.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_INDEXING_OPS_TD
#define TESSERA_INDEXING_OPS_TD

include "Tessera/IR/TesseraBase.td"

def Tessera_GatherElementsOp : Tessera_PureOp<"gather_elements",
    [Tessera_MovesData] # Tessera_InferredResult> {
  let summary = "pick elements along one axis, one index per result element";
  let description = [{
    ONNX GatherElements: the result has the shape of `indices`, and
    `result[i_0, ..., i_n] = input[i_0, ..., indices[i_0, ..., i_n], ...,
    i_n]` with the index replacing coordinate `axis`. Negative indices
    count from the back; an index out of range is undefined behaviour at
    run time, as in ONNX. Every dim but `axis` of `indices` must be at most
    the input's.

    ```mlir
    %g = tessera.gather_elements %x[%i] axis 1 : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, Tessera_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` `axis` $axis attr-dict `:` type($input) `,`
    type($indices) `->` type($result)
  }];
}

def Tessera_GatherNDOp : Tessera_PureOp<"gather_nd",
    [Tessera_MovesData] # Tessera_InferredResult> {
  let summary = "gather slices addressed by index tuples";
  let description = [{
    ONNX GatherND: the last dim of `indices` (size `k`) holds index tuples
    into the input's dims `batch_dims ..< batch_dims + k`; the first
    `batch_dims` dims are shared by `input` and `indices`. The result is
    `indices.shape[:-1] + input.shape[batch_dims + k:]`. Negative indices
    count from the back.

    ```mlir
    %g = tessera.gather_nd %x[%i] : tensor<2x2xf32>, tensor<2x2xi64> -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, Tessera_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` attr-dict `:` type($input) `,` type($indices)
    `->` type($result)
  }];
}

def Tessera_ScatterNDOp : Tessera_PureOp<"scatter_nd", [Tessera_MovesData,
    AllTypesMatch<["data", "result"]>]> {
  let summary = "write slices addressed by index tuples into a copy";
  let description = [{
    ONNX ScatterND: a copy of `data` where, for each index tuple in the last
    dim of `indices` (size `k`), the slice `data[tuple]` is replaced by (or,
    with a `reduction`, combined with) the matching slice of `updates`,
    whose shape is `indices.shape[:-1] + data.shape[k:]`. Updates apply in
    row-major order of `indices`, so with `none` the last of repeated
    indices wins. Negative indices count from the back.

    ```mlir
    %s = tessera.scatter_nd %data[%i], %u : tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$data, Tessera_IndexTensor:$indices,
                       Tessera_Tensor:$updates,
                       DefaultValuedAttr<Tessera_ScatterReduction,
                           "::mlir::tessera::ScatterReduction::none">:$reduction);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` `,` $updates attr-dict `:` type($data) `,`
    type($indices) `,` type($updates) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessera_ScatterElementsOp : Tessera_PureOp<"scatter_elements", [
    Tessera_MovesData,
    AllTypesMatch<["data", "result"]>]> {
  let summary = "write elements along one axis into a copy";
  let description = [{
    ONNX ScatterElements: a copy of `data` where, for each position `p` of
    `indices` (and of `updates`, which has its shape), the element at `p`
    with coordinate `axis` replaced by `indices[p]` becomes (or, with a
    `reduction`, is combined with) `updates[p]`. Updates apply in row-major
    order. Negative indices count from the back.

    ```mlir
    %s = tessera.scatter_elements %data[%i], %u axis 1 : tensor<3x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$data, Tessera_IndexTensor:$indices,
                       Tessera_Tensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<Tessera_ScatterReduction,
                           "::mlir::tessera::ScatterReduction::none">:$reduction);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` `,` $updates `axis` $axis attr-dict `:`
    type($data) `,` type($indices) `,` type($updates) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessera_ResizeOp : Tessera_PureOp<"resize", [Tessera_FollowsInputs,
    AllElementTypesMatch<["input", "result"]>, AttrSizedOperandSegments]> {
  let summary = "resample a tensor to a new size (ONNX Resize)";
  let description = [{
    Resamples every dim of `input` to the result's size. `scales` (one f32
    per dim) drives the coordinate mapping: output coordinate `x` of a dim
    maps to input coordinate `x_in` by `coordinate_mode`, as ONNX's
    `coordinate_transformation_mode` defines (`half_pixel`:
    `(x + 0.5) / scale - 0.5`; `asymmetric`: `x / scale`; `align_corners`:
    `x * (in - 1) / (out - 1)`; ...). `tf_crop_and_resize` reads the region
    from `roi` (`[starts..., ends...]`, normalized) and yields
    `extrapolation_value` outside the input.

    `mode` `nearest` takes the element at `x_in` rounded by `nearest_mode`;
    `linear` interpolates between the two neighbours, `cubic` over four
    with the Keys kernel of parameter `cubic_coeff_a` (with
    `exclude_outside`, weights of neighbours beyond the edge are dropped and
    the rest renormalized). Neighbours beyond the edge repeat the edge. The
    interpolation is separable: each dim is resampled in turn.

    `sizes` (one i64 per dim), when given, is the result's shape known only
    at run time (ONNX Resize's `sizes` input computed from the model's own
    shapes, as `interpolate(size=x.shape[-2:])` exports): the result's
    dynamic dims take it, and the coordinate mapping uses size / input size
    in f64 instead of `scales` (which must then hold those ratios, for
    targets that read them once they are constants).

    ```mlir
    %r = tessera.resize %x, %scales {mode = 1 : i32} : tensor<1x3x8x8xf32>, tensor<4xf32> -> tensor<1x3x16x16xf32>
    %s = tessera.resize %y, %ratios sizes(%n : tensor<4xi64>) {mode = 1 : i32} : tensor<1x3x?x?xf32>, tensor<4xf32> -> tensor<1x3x?x?xf32>
    ```
  }];
  let arguments = (ins Tessera_IntOrFloatTensor:$input,
                       1DTensorOf<[F32]>:$scales,
                       Optional<1DTensorOf<[F32]>>:$roi,
                       Optional<1DTensorOf<[I64]>>:$sizes,
                       DefaultValuedAttr<Tessera_ResizeMode,
                           "::mlir::tessera::ResizeMode::nearest">:$mode,
                       DefaultValuedAttr<Tessera_ResizeCoordinateMode,
                           "::mlir::tessera::ResizeCoordinateMode::half_pixel">:$coordinate_mode,
                       DefaultValuedAttr<Tessera_ResizeNearestMode,
                           "::mlir::tessera::ResizeNearestMode::round_prefer_floor">:$nearest_mode,
                       DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                       UnitAttr:$exclude_outside,
                       DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value);
  let results = (outs Tessera_IntOrFloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scales (`roi` `(` $roi^ `:` type($roi) `)`)?
    (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:`
    type($input) `,` type($scales) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TESSERA_INDEXING_OPS_TD
