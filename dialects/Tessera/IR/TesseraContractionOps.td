// TesseraContractionOps.td - matmul, conv2d and attention: the ops that carry the FLOPs.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_CONTRACTION_OPS_TD
#define TESSERA_CONTRACTION_OPS_TD

include "Tessera/IR/TesseraBase.td"

def Tessera_MatmulOp : Tessera_PureOp<"matmul", [Tessera_ComputesNarrow]> {
  let summary = "batched matrix product with ONNX MatMul/Gemm semantics";
  let description = [{
    Multiplies the last two dimensions of `lhs` and `rhs`; leading (batch)
    dimensions broadcast numpy-style. A rank-1 `lhs` is a row vector and a
    rank-1 `rhs` a column vector, and the unit dimension is dropped from the
    result, as in numpy and ONNX MatMul. `transpose_a` / `transpose_b`
    transpose the last two dimensions of an operand first, and `alpha`
    scales the product (ONNX Gemm's `transA`, `transB` and `alpha`; Gemm's
    `beta * C` is a separate `tessera.mul` and `tessera.add`).

    The result element type may differ from the operands' to express the
    accumulation type: a float product may produce any float type, an
    integer product `i32` (for example `i8 x i8 -> i32`).

    ```mlir
    %c = tessera.matmul %a, %b {transpose_b} : tensor<?x128x64xbf16>, tensor<256x64xbf16> -> tensor<?x128x256xf32>
    ```
  }];
  let arguments = (ins Tessera_IntOrFloatTensor:$lhs,
                       Tessera_IntOrFloatTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha);
  let results = (outs Tessera_IntOrFloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessera_Conv2dOp : Tessera_PureOp<"conv2d",
    [Tessera_ComputesNarrow] # Tessera_InferredResult> {
  let summary = "2-D convolution in NCHW layout (patch embeddings)";
  let description = [{
    ONNX Conv on 4-D tensors: `input` is `N x C x H x W`, `filter` is
    `F x C/group x KH x KW`, the optional `bias` is `F`. `pads` are
    `[top, left, bottom, right]`.

    ```mlir
    %p = tessera.conv2d %img, %w bias(%b : tensor<768xf32>) {strides = array<i64: 16, 16>} : tensor<1x3x224x224xf32>, tensor<768x3x16x16xf32> -> tensor<1x768x14x14xf32>
    ```
  }];
  let arguments = (ins Tessera_FloatTensor:$input, Tessera_FloatTensor:$filter,
                       Optional<Tessera_FloatTensor>:$bias,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$pads,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:`
    type($input) `,` type($filter) `->` type($result)
  }];
}

def Tessera_AttentionOp : Tessera_PureOp<"attention",
    [Tessera_ComputesNarrow] # Tessera_InferredResult> {
  let summary = "scaled dot-product attention";
  let description = [{
    `softmax(scale * q @ k^T + mask) @ v` over the last two dimensions;
    leading dimensions (batch, heads) broadcast. `q` is `[..., Sq, D]`, `k`
    `[..., Sk, D]`, `v` `[..., Sk, Dv]`, the result `[..., Sq, Dv]`. The
    optional additive `mask` broadcasts to `[..., Sq, Sk]`. `scale` defaults
    to `1/sqrt(D)`. With `causal`, position `i` attends only to positions
    `j <= i + (Sk - Sq)` (the mask is aligned to the bottom right so that a
    decoder with a key cache works).

    ```mlir
    %o = tessera.attention %q, %k, %v {causal} : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Tessera_FloatTensor:$query, Tessera_FloatTensor:$key,
                       Tessera_FloatTensor:$value,
                       Optional<Tessera_FloatTensor>:$mask,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result)
  }];
}

#endif // TESSERA_CONTRACTION_OPS_TD
