// Passes.td - the systolic backend's passes.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_SYSTOLIC_PASSES_TD
#define TESSERA_TARGET_SYSTOLIC_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // TESSERA_TARGET_SYSTOLIC_PASSES_TD
