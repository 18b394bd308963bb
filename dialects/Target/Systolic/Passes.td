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
    buffer. Matmul and convolution operands come in the format the IR
    gives them: a `tessera.cast` to bf16, f16 or fp8 (see
    tessera-systolic-operand-formats), or a quantize/dequantize pair (i8,
    fp8). A value whose only uses are such casts for matmuls is kept in
    that format; others are fp32, converted on the vector unit for a matmul
    that reads them; results the function returns are fp32 outputs. Each
    step starts behind the earlier ones' stores (a fence on its first
    load), since it may read their results and reuses their on-chip
    buffers. Reshapes are views. Any other op, and a broadcast the vector
    unit does not take, is reported at its location (its ONNX node).
  }];
  let options = [
    Option<"accel", "accel", "std::string", "\"default\"",
           "The accelerator: tpu-v1, default, small or a JSON file">
  ];
  let dependentDialects = ["::mlir::systolic::SystolicDialect"];
}

def SystolicOperandFormatsPass
    : Pass<"tessera-systolic-operand-formats", "::mlir::ModuleOp"> {
  let summary = "Cast float matmul and convolution operands to the array's format";
  let description = [{
    The array has no fp32 operands: what the precision policy
    (`--precision`, tessera-assign-precision) leaves fp32, all of it under
    the fp32 policy, reads them in `format` (bf16 by default, f16 under
    `--precision=fp16`; f8E4M3FN and f8E5M2 as plain casts, for tests).
    Each tessera.matmul with fp32 operands gets them through a
    `tessera.cast` to `format` (to bf16, which has fp32's range, when the
    policy kept it wide on purpose: an fp32 matmul with a
    `tessera.precision` decision, beyond fp16's range in calibration, a
    `--keep-fp32` pattern, an output head), its result staying fp32 (the array
    accumulates in fp32); a tessera.conv2d, whose result has its input's
    type, also gets a cast of its result back to fp32. The casts go right
    before the op, or before the fusion region that holds it. Matmuls the
    policy narrowed (bf16 or f16 operands) or quantized (int8 or fp8, as
    the policy writes them or in ONNX's QDQ form) already carry their
    format and are left as they are, as are operands that are not fp32.
  }];
  let options = [
    Option<"format", "format", "std::string", "\"bf16\"",
           "The format of fp32 operands: bf16, f16, f8E4M3FN or f8E5M2">
  ];
  let dependentDialects = ["::mlir::tessera::TesseraDialect"];
}

#endif // TESSERA_TARGET_SYSTOLIC_PASSES_TD
