// TesseraReductionOps.td - reductions, softmax and normalization ops.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_REDUCTION_OPS_TD
#define TESSERA_REDUCTION_OPS_TD

include "Tessera/IR/TesseraBase.td"

class Tessera_ReduceOp<string mnemonic, string desc>
    : Tessera_PureOp<mnemonic, [Tessera_ComputesWide,
          SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = desc # " over the given axes";
  let description = [{
    Reduces `input` over `axes` (negative axes count from the back) with
    the }] # desc # [{. With `keepdims` (the default, as in ONNX) reduced
    dimensions stay as size 1; without it they are removed.

    ```mlir
    %m = tessera.}] # mnemonic # [{ %x [-1] : tensor<2x8xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Tessera_IntOrFloatTensor:$input,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Tessera_IntOrFloatTensor:$result);
  let assemblyFormat = [{
    $input $axes attr-dict `:` type($input) `->` type($result)
  }];
}

def Tessera_ReduceSumOp : Tessera_ReduceOp<"reduce_sum", "sum">;
def Tessera_ReduceMeanOp : Tessera_ReduceOp<"reduce_mean", "arithmetic mean">;
def Tessera_ReduceMaxOp : Tessera_ReduceOp<"reduce_max", "maximum">;
def Tessera_ReduceMinOp : Tessera_ReduceOp<"reduce_min", "minimum">;
def Tessera_ReduceProdOp : Tessera_ReduceOp<"reduce_prod", "product">;

class Tessera_ArgReduceOp<string mnemonic, string desc>
    : Tessera_PureOp<mnemonic, [Tessera_FollowsInputs] # Tessera_InferredResult> {
  let summary = "index of the " # desc # " along one axis";
  let description = [{
    The i64 position of the }] # desc # [{ of `input` along `axis` (ONNX
    ArgMax/ArgMin): the first one on ties, or the last with
    `select_last_index`. With `keepdims` (the default) the reduced dim stays
    as size 1.

    ```mlir
    %i = tessera.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<2x8xf32> -> tensor<2x1xi64>
    ```
  }];
  let arguments = (ins Tessera_IntOrFloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       UnitAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tessera_ArgMaxOp : Tessera_ArgReduceOp<"argmax", "maximum">;
def Tessera_ArgMinOp : Tessera_ArgReduceOp<"argmin", "minimum">;

// Pooling: reductions over a sliding window of the trailing (spatial) dims.
class Tessera_PoolOp<string mnemonic, string desc, Type tensorType,
                     dag extraArgs = (ins), Trait precision = Tessera_ComputesWide>
    : Tessera_PureOp<mnemonic, [precision,
          SameOperandsAndResultElementType] # Tessera_InferredResult> {
  let summary = desc # " over sliding windows (ONNX pooling)";
  let description = [{
    `input` is `N x C x D1 x ... x Dk` (k >= 1); each output element is the
    }] # desc # [{ of a window of `kernel_shape` input elements, `dilations`
    apart, windows `strides` apart. `pads` are ONNX's `[b1, ..., bk, e1,
    ..., ek]`: elements padded at the beginning and end of each spatial dim,
    which never win a maximum and count in an average only with
    `count_include_pad`. With `ceil_mode` the output size rounds up (a last
    partial window is kept unless it would start in the end padding, as
    PyTorch and ONNX Runtime do); elements beyond the end padding never
    count.

    ```mlir
    %p = tessera.}] # mnemonic # [{ %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x16x112x112xf32> -> tensor<1x16x56x56xf32>
    ```
  }];
  let arguments = !con((ins tensorType:$input,
                            DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides,
                            DenseI64ArrayAttr:$pads,
                            DenseI64ArrayAttr:$dilations,
                            UnitAttr:$ceil_mode), extraArgs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tessera_MaxPoolOp
    : Tessera_PoolOp<"max_pool", "maximum", Tessera_IntOrFloatTensor, (ins),
                     Tessera_FollowsInputs>;
def Tessera_AvgPoolOp
    : Tessera_PoolOp<"avg_pool", "mean", Tessera_FloatTensor,
                     (ins UnitAttr:$count_include_pad)>;

class Tessera_SoftmaxOpBase<string mnemonic, string desc>
    : Tessera_PureOp<mnemonic, [Tessera_ComputesWide, SameOperandsAndResultType]> {
  let summary = desc # " along one axis";
  let description = [{
    Computes the }] # desc # [{ of `input` along `axis` (default -1, the
    last), with the maximum subtracted first for stability (ONNX opset 13
    semantics; the importer rewrites older coerce-to-2D forms).
  }];
  let arguments = (ins Tessera_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tessera_SoftmaxOp : Tessera_SoftmaxOpBase<"softmax", "softmax">;
def Tessera_LogSoftmaxOp : Tessera_SoftmaxOpBase<"log_softmax", "log of softmax">;

def Tessera_LayerNormOp : Tessera_PureOp<"layer_norm", [Tessera_ComputesWide,
    AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over the dimensions from `axis` to the last to zero
    mean and unit variance (`(x - mean) / sqrt(var + epsilon)`), then
    multiplies by `scale` and adds `bias` when given. `scale` and `bias`
    broadcast to the normalized shape (ONNX LayerNormalization).

    ```mlir
    %y = tessera.layer_norm %x scale(%g : tensor<768xf32>) bias(%b : tensor<768xf32>) {epsilon = 1.0e-12 : f32} : tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Tessera_FloatTensor:$input,
                       Optional<Tessera_FloatTensor>:$scale,
                       Optional<Tessera_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tessera_RmsNormOp : Tessera_PureOp<"rms_norm", [Tessera_ComputesWide,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "root-mean-square normalization over the trailing dimensions";
  let description = [{
    `x / sqrt(mean(x^2) + epsilon) * scale` with the mean taken over the
    dimensions from `axis` to the last (LLaMA's RMSNorm). `scale`
    broadcasts to the normalized shape.

    ```mlir
    %y = tessera.rms_norm %x scale(%g : tensor<4096xf32>) {epsilon = 1.0e-6 : f32} : tensor<1x16x4096xf32>
    ```
  }];
  let arguments = (ins Tessera_FloatTensor:$input,
                       Optional<Tessera_FloatTensor>:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-6f">:$epsilon);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
}

#endif // TESSERA_REDUCTION_OPS_TD
