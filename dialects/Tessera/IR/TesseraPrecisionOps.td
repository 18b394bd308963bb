// TesseraPrecisionOps.td - quantize and dequantize with per-tensor or per-channel scales.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_PRECISION_OPS_TD
#define TESSERA_PRECISION_OPS_TD

include "Tessera/IR/TesseraBase.td"

def Tessera_QuantizeOp : Tessera_PureOp<"quantize"> {
  let summary = "scale a float tensor into i8, f8E4M3FN or f8E5M2";
  let description = [{
    `saturate(round_half_even(input / scale) + zero_point)` (ONNX
    QuantizeLinear). `scale` is a scalar (0-D or one element) for a
    per-tensor scale, or a 1-D tensor with one entry per slice of `axis`
    for a per-channel scale. `zero_point` (integers only) has the shape of
    `scale` and the result's element type.

    ```mlir
    %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<128x768xf32> -> tensor<128x768xf8E4M3FN>
    %w = tessera.quantize %y scale(%c : tensor<768xf32>) zero_point(%z : tensor<768xi8>) {axis = 1 : i64} : tensor<128x768xf32> -> tensor<128x768xi8>
    ```
  }];
  let arguments = (ins Tessera_WideFloatTensor:$input,
                       Tessera_WideFloatTensor:$scale,
                       Optional<Tessera_QuantizedTensor>:$zero_point,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs Tessera_QuantizedTensor:$result);
  let assemblyFormat = [{
    $input `scale` `(` $scale `:` type($scale) `)`
    (`zero_point` `(` $zero_point^ `:` type($zero_point) `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessera_DequantizeOp : Tessera_PureOp<"dequantize"> {
  let summary = "map i8, i32, f8E4M3FN or f8E5M2 values back to floats";
  let description = [{
    `(input - zero_point) * scale` (ONNX DequantizeLinear), with `scale`
    and `zero_point` laid out as for `tessera.quantize`. An `i32` input
    (an integer matmul's accumulator) takes a scale without zero point.

    ```mlir
    %y = tessera.dequantize %q scale(%s : tensor<f32>) : tensor<128x768xf8E4M3FN> -> tensor<128x768xbf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8, I32, F8E4M3FN, F8E5M2]>:$input,
                       Tessera_WideFloatTensor:$scale,
                       Optional<Tessera_QuantizedTensor>:$zero_point,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs Tessera_WideFloatTensor:$result);
  let assemblyFormat = [{
    $input `scale` `(` $scale `:` type($scale) `)`
    (`zero_point` `(` $zero_point^ `:` type($zero_point) `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TESSERA_PRECISION_OPS_TD
