// TesseraStructureOps.td - constants and the fusion region that groups ops into one kernel.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_STRUCTURE_OPS_TD
#define TESSERA_STRUCTURE_OPS_TD

include "Tessera/IR/TesseraBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Tessera_ConstantOp : Tessera_Op<"constant", [
    ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor known at compile time: model weights (usually as
    `dense_resource` blobs, which print elided) and small constants.

    ```mlir
    %c = tessera.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Tessera_FusionOp : Tessera_Op<"fusion", [
    SingleBlock, RecursiveMemoryEffects]> {
  let summary = "a group of ops compiled as one kernel";
  let description = [{
    The body computes the results from values defined above and yields them
    with `tessera.yield`. Fusion passes form these regions; each backend
    compiles one region as one kernel. `kind` says which kernel template
    applies: `elementwise` chains, a contraction with its `epilogue`, a
    `reduction` with its prologue and epilogue, or fused `attention`.

    ```mlir
    %y = tessera.fusion epilogue {
      %0 = tessera.matmul %x, %w : tensor<128x768xf32>, tensor<768x3072xf32> -> tensor<128x3072xf32>
      %1 = tessera.gelu %0 : tensor<128x3072xf32>
      tessera.yield %1 : tensor<128x3072xf32>
    } : tensor<128x3072xf32>
    ```
  }];
  let arguments = (ins Tessera_FusionKind:$kind);
  let results = (outs Variadic<Tessera_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind attr-dict-with-keyword $body `:` type($results)";
  let hasVerifier = 1;
}

def Tessera_YieldOp : Tessera_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"FusionOp">]> {
  let summary = "the values a fusion region produces";
  let arguments = (ins Variadic<Tessera_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // TESSERA_STRUCTURE_OPS_TD
