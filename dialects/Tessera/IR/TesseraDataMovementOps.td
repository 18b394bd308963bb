// TesseraDataMovementOps.td - reshape, transpose, expand, concat, split, slice, gather, pad.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DATA_MOVEMENT_OPS_TD
#define TESSERA_DATA_MOVEMENT_OPS_TD

include "Tessera/IR/TesseraBase.td"

def Tessera_ReshapeOp : Tessera_PureOp<"reshape", [Tessera_MovesData,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reinterpret a tensor with a new shape";
  let description = [{
    Returns the elements of `input`, in row-major order, with the result's
    shape. When the result has dynamic dimensions, the optional 1-D `shape`
    operand gives the runtime shape, one entry per result dimension, with
    ONNX Reshape's conventions: 0 copies the input's dimension at the same
    position and -1 is inferred from the element count. Without it, a result
    may have one dynamic dim (implied by the element count), or several when
    the reshape only inserts or drops unit dims (they carry over in order).

    ```mlir
    %r = tessera.reshape %x : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
    %d = tessera.reshape %y shape(%s : tensor<3xi64>) : tensor<?x768xf32> -> tensor<?x12x64xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input,
                       Optional<Tessera_IndexTensor>:$shape);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input (`shape` `(` $shape^ `:` type($shape) `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tessera_TransposeOp : Tessera_PureOp<"transpose", [Tessera_MovesData,
    SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]` (ONNX Transpose).

    ```mlir
    %t = tessera.transpose %x [0, 2, 1, 3] : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let hasCanonicalizeMethod = 1;
}

def Tessera_ExpandOp : Tessera_PureOp<"expand", [Tessera_MovesData,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "broadcast a tensor to a larger shape";
  let description = [{
    Broadcasts `input` numpy-style to the result's shape (ONNX Expand, with
    the result shape already resolved). When the result has dynamic
    dimensions, the optional `shape` operand gives them at run time as in
    ONNX: the result's shape is the broadcast of the input's and `shape`.

    ```mlir
    %e = tessera.expand %x : tensor<1x768xf32> -> tensor<128x768xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input,
                       Optional<Tessera_IndexTensor>:$shape);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input (`shape` `(` $shape^ `:` type($shape) `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tessera_ConcatOp : Tessera_PureOp<"concat", [Tessera_MovesData,
    SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = "join tensors along one axis";
  let description = [{
    Concatenates `inputs` along `axis` (negative counts from the back); all
    other dimensions must agree.

    ```mlir
    %c = tessera.concat %a, %b axis 1 : tensor<1x1x768xf32>, tensor<1x196x768xf32> -> tensor<1x197x768xf32>
    ```
  }];
  let arguments = (ins Variadic<Tessera_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Tessera_SplitOp : Tessera_PureOp<"split", [Tessera_MovesData]> {
  let summary = "cut a tensor into pieces along one axis";
  let description = [{
    Splits `input` along `axis` into one result per entry of `sizes`, or
    into equal pieces, one per result, when `sizes` is absent (ONNX Split).

    ```mlir
    %q, %k, %v = tessera.split %qkv axis 2 : tensor<1x128x2304xf32> -> tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, I64Attr:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes);
  let results = (outs Variadic<Tessera_Tensor>:$results);
  let assemblyFormat = [{
    $input `axis` $axis (`sizes` $sizes^)? attr-dict `:` type($input) `->`
    type($results)
  }];
  let hasVerifier = 1;
}

def Tessera_SliceOp : Tessera_PureOp<"slice", [Tessera_MovesData,
    SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = "strided slice along chosen axes";
  let description = [{
    ONNX Slice with constant bounds: for each `axes[i]` (all axes in order
    when `axes` is absent) take `starts[i]` up to but excluding `ends[i]`
    with stride `steps[i]` (default 1). Negative starts and ends count from
    the back and out-of-range values clamp, as in ONNX; a negative step
    walks backwards.

    ```mlir
    %s = tessera.slice %x starts [0] ends [64] axes [2] : tensor<1x128x128xf32> -> tensor<1x128x64xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       OptionalAttr<DenseI64ArrayAttr>:$steps);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` $starts `ends` $ends (`axes` $axes^)? (`steps` $steps^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Tessera_GatherOp : Tessera_PureOp<"gather",
    [Tessera_MovesData] # Tessera_InferredResult> {
  let summary = "index along one axis (embedding lookup)";
  let description = [{
    ONNX Gather: the result is `input[:axis] + indices.shape +
    input[axis+1:]`, taking the `input` slices that `indices` name along
    `axis`. Negative indices count from the back; an index out of range is
    undefined behaviour at run time, as in ONNX.

    ```mlir
    %e = tessera.gather %table[%ids] axis 0 : tensor<30522x768xf32>, tensor<1x128xi64> -> tensor<1x128x768xf32>
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

def Tessera_ShapeOp : Tessera_PureOp<"shape", [Tessera_MovesData]> {
  let summary = "the dimensions of a tensor, as a 1-D i64 tensor";
  let description = [{
    ONNX Shape: one entry per dimension of `input`. Folds to a constant
    when the input's shape is static; with dynamic dims it carries the
    sizes into shape computations (gather, concat, reshape's shape operand).

    ```mlir
    %s = tessera.shape %x : tensor<?x128xf32> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tessera_RangeOp : Tessera_PureOp<"range", [Tessera_MovesData,
    AllTypesMatch<["start", "limit", "delta"]>]> {
  let summary = "an arithmetic sequence";
  let description = [{
    ONNX Range: `start, start + delta, ...` up to but excluding `limit`,
    `max(ceil((limit - start) / delta), 0)` elements. The operands are
    scalars (0-D); the result's length is static only when they are known.

    ```mlir
    %r = tessera.range %zero, %n, %one : tensor<i64> -> tensor<?xi64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[Tessera_Float, Tessera_Int]>:$start,
                       0DTensorOf<[Tessera_Float, Tessera_Int]>:$limit,
                       0DTensorOf<[Tessera_Float, Tessera_Int]>:$delta);
  let results = (outs 1DTensorOf<[Tessera_Float, Tessera_Int]>:$result);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` type($start) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessera_PadOp : Tessera_PureOp<"pad", [Tessera_MovesData,
    SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = "pad a tensor with a constant, its mirror image or its edge";
  let description = [{
    ONNX Pad: `pads` are `[b1, ..., bn, e1, ..., en]`, the non-negative
    number of elements added before and after each dimension. `mode`
    `constant` fills them with `value`; `reflect` mirrors the input without
    repeating its edge (each pad must be smaller than its dim); `edge`
    repeats the edge element.

    ```mlir
    %p = tessera.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = 1 : i32} : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
    ```
  }];
  let arguments = (ins Tessera_Tensor:$input, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<Tessera_PadMode,
                                         "::mlir::tessera::PadMode::constant">:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

#endif // TESSERA_DATA_MOVEMENT_OPS_TD
