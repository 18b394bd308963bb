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
    one kernel). An op this pass cannot lower (for example a slice with
    dynamic bounds) is reported at its location and fails the pass.
  }];
  let options = [
    Option<"keepReductionRegions", "keep-reduction-regions", "bool",
           /*default=*/"false",
           "Leave reduction fusion regions in place, their bodies lowered">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ConvertTesseraToSystolicPass
    : Pass<"convert-tessera-to-systolic", "::mlir::ModuleOp"> {
  let summary = "Schedule a model on the systolic accelerator";
  let description = [{
    Replaces the module's function by a `systolic.program` for the
    accelerator `accel` (a preset or a JSON configuration). Each
    tessera.matmul with a constant rhs (transposed at compile time for
    `transpose_b`) becomes a weight-stationary schedule of double-buffered
    loads, matmuls, drains and stores, its bias add (a constant row of the
    columns) and ReLU run by the drain. Elementwise ops, softmax (last
    axis), layer_norm and rms_norm run on the vector unit over their result
    viewed as rows x columns, in chunks of rows that fit the unified
    buffer. Values only matmuls read are kept in `format` (bf16 by
    default); others are fp32, converted on the vector unit for a matmul
    that reads them; results the function returns are fp32 outputs. Each
    step starts behind the earlier ones' stores (a fence on its first
    load), since it may read their results and reuses their on-chip
    buffers. Reshapes are views. Any other op, and a broadcast the vector
    unit does not take, is reported at its location (its ONNX node).
  }];
  let options = [
    Option<"accel", "accel", "std::string", "\"default\"",
           "The accelerator: tpu-v1, default, small or a JSON file">,
    Option<"format", "format", "std::string", "\"bf16\"",
           "The operand format: bf16, f16, f8E4M3FN or f8E5M2">
  ];
  let dependentDialects = ["::mlir::systolic::SystolicDialect"];
}

#endif // TESSERA_CONVERSION_PASSES_TD
