// Passes.td - Tessera's conversions between dialects.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_CONVERSION_PASSES_TD
#define TESSERA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTesseraToLinalgPass
    : Pass<"convert-tessera-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Lower tessera ops to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tessera op into destination-passing linalg ops on
    tensors (linalg.generic for elementwise ops, broadcasts, reductions and
    contractions, linalg.transpose, linalg.conv_2d_nchw_fchw), tensor ops for
    data movement and arith constants, ready for one-shot bufferization.
    Composite ops (softmax, layer_norm, rms_norm, attention, gelu, silu)
    decompose into several generics; fusion regions are inlined (with
    `keep-reduction-regions`, reduction regions with one ranked result
    stay, their bodies lowered, for a backend that compiles each as
    one kernel). The tiled attention's block sizes are options, as the
    best sizes depend on the register tile the backend compiles the
    blocks' products with. An op this pass cannot lower (for example a slice with
    dynamic bounds) is reported at its location with the reasons its
    patterns gave (their `notifyMatchFailure` messages) and fails the pass.
  }];
  let options = [
    Option<"keepReductionRegions", "keep-reduction-regions", "bool",
           /*default=*/"false",
           "Leave reduction fusion regions in place, their bodies lowered">,
    Option<"tiledAttention", "tiled-attention", "bool", /*default=*/"true",
           "Lower attention to one tiled loop nest with an online softmax "
           "where its shapes allow (false: always to its products and "
           "softmax)">,
    Option<"reportSlowPaths", "report-slow-paths", "bool", /*default=*/"false",
           "With tiled-attention, a remark at each attention the tiled loop "
           "nest does not take ('attention stays decomposed ...: why')">,
    Option<"fp8Operands", "fp8-operands", "bool", /*default=*/"false",
           "Keep a matmul's fp8 operands in its contraction, widened by "
           "arith.extf in the body, for a backend whose tensor cores read "
           "fp8 (false: they are decoded to bf16 first, exactly; constant "
           "ones when compiling)">,
    Option<"attentionQueryBlock", "attention-query-block", "int64_t",
           /*default=*/"64",
           "Queries per block of the tiled attention with a static "
           "sequence (half of it where only that divides the sequence)">,
    Option<"attentionKeyBlock", "attention-key-block", "int64_t",
           /*default=*/"128",
           "Keys per block of the tiled attention with a static sequence "
           "(half of it where only that divides the sequence)">,
    Option<"maxWindowStride", "max-window-stride", "int64_t",
           /*default=*/"1",
           "Depthwise convolutions and max pools whose stride along the rows "
           "is at most this read each tap's row at the stride, for a "
           "backend that reads every stride-th element in vector steps; a "
           "wider stride computes every column at stride 1, with "
           "contiguous reads, and takes every stride-th one afterwards">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // TESSERA_CONVERSION_PASSES_TD
