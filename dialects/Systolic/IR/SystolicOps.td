// SystolicOps.td - the systolic accelerator's program as IR: one op per instruction.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_SYSTOLIC_OPS_TD
#define TESSERA_SYSTOLIC_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Systolic_Dialect : Dialect {
  let name = "systolic";
  let cppNamespace = "::mlir::systolic";
  let summary = "Programs for Tessera's systolic accelerator";
  let description = [{
    A `systolic.program` holds what the accelerator runs: the tensors of
    its DRAM image (`systolic.tensor`) and its instructions in program
    order, one op each (`systolic.load`, `systolic.matmul`,
    `systolic.drain`, `systolic.store`), with the fields and dependency
    token masks of the instruction set in docs/Systolic.md. Addresses and
    sizes are in bytes. The program emitter writes it as a `.tsp` file,
    which is validated against the accelerator's configuration.
  }];
}

class Systolic_Op<string mnemonic, list<Trait> traits = []>
    : Op<Systolic_Dialect, mnemonic,
         !listconcat(traits, [HasParent<"ProgramOp">])>;

def Systolic_ProgramOp : Op<Systolic_Dialect, "program",
                            [SingleBlock, NoTerminator]> {
  let summary = "a program for one accelerator";
  let description = [{
    The program's tensors and instructions, for the accelerator named by
    `accel` (a preset or a configuration file), with a DRAM image of
    `dram_bytes` bytes.

    ```mlir
    systolic.program {accel = "small", dram_bytes = 4096 : i64} {
      systolic.tensor "A" input bf16 [64, 32] at 0
      systolic.load weights dram 0 sram 0 rows 32 row_bytes 32 stride 32 signal 1
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$accel, I64Attr:$dram_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
}

def Systolic_TensorOp : Systolic_Op<"tensor"> {
  let summary = "a tensor in the DRAM image";
  let description = [{
    A named tensor at byte `offset` of the DRAM image in `format` (`f32`,
    `bf16`, `f16`, `f8E4M3FN`, `f8E5M2`, `i8`). `role` is `input` (the host
    writes it), `output` (the host reads it), `constant` (its `value` is
    part of the image, converted to `format`) or `scratch` (an
    intermediate result the program writes and reads).
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$role, StrAttr:$format,
                       DenseI64ArrayAttr:$shape, I64Attr:$offset,
                       OptionalAttr<ElementsAttr>:$value);
  let assemblyFormat = [{
    $name $role $format $shape `at` $offset (`value` $value^)? attr-dict
  }];
  let hasVerifier = 1;
}

class Systolic_TransferOp<string mnemonic, string what>
    : Systolic_Op<mnemonic> {
  let summary = what;
}

def Systolic_LoadOp : Systolic_TransferOp<"load",
    "DRAM rows to the unified or the weight buffer (load queue)"> {
  let arguments = (ins StrAttr:$buffer, I64Attr:$dram, I64Attr:$sram,
                       I64Attr:$rows, I64Attr:$row_bytes, I64Attr:$stride,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal,
                       UnitAttr:$fence);
  let assemblyFormat = [{
    $buffer `dram` $dram `sram` $sram `rows` $rows `row_bytes` $row_bytes
    `stride` $stride attr-dict
  }];
}

def Systolic_StoreOp : Systolic_TransferOp<"store",
    "unified-buffer rows to DRAM (store queue)"> {
  let arguments = (ins I64Attr:$dram, I64Attr:$sram, I64Attr:$rows,
                       I64Attr:$row_bytes, I64Attr:$stride,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal);
  let assemblyFormat = [{
    `dram` $dram `sram` $sram `rows` $rows `row_bytes` $row_bytes
    `stride` $stride attr-dict
  }];
}

def Systolic_MatmulOp : Systolic_Op<"matmul"> {
  let summary = "weights times activations into the accumulators (matrix queue)";
  let arguments = (ins StrAttr:$format, I64Attr:$weights,
                       I64Attr:$activations, I64Attr:$acc_row, I64Attr:$rows,
                       I64Attr:$depth, I64Attr:$cols, UnitAttr:$accumulate,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal);
  let assemblyFormat = [{
    $format `weights` $weights `activations` $activations `acc` $acc_row
    `rows` $rows `depth` $depth `cols` $cols attr-dict
  }];
}

def Systolic_DrainOp : Systolic_Op<"drain"> {
  let summary = "accumulators to the unified buffer, with the epilogue (vector queue)";
  let description = [{
    Accumulator rows from `acc_row` (`rows` x `cols`) converted to `format`
    into the unified buffer at `sram`: with `int32`, the accumulators hold
    an int8 matmul's int32 sums, converted to fp32; with `scale` (and a
    float format), each value is first multiplied by it (a
    dequantization; for an i8 format `scale` is the requantization scale);
    with `bias`, an fp32 row of `cols` values at that unified-buffer
    address is added; with `relu`, negative values become 0.
  }];
  let arguments = (ins StrAttr:$format, I64Attr:$acc_row, I64Attr:$sram,
                       I64Attr:$rows, I64Attr:$cols,
                       OptionalAttr<I64Attr>:$bias, UnitAttr:$relu,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$int32,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal);
  let assemblyFormat = [{
    $format `acc` $acc_row `sram` $sram `rows` $rows `cols` $cols attr-dict
  }];
}

def Systolic_VectorOp : Systolic_Op<"vector"> {
  let summary = "an elementwise operation or row reduction (vector queue)";
  let description = [{
    `fn` on `rows` x `cols` fp32 values in the unified buffer at `src`,
    written at `dst` in `format` (f32, bf16 or f16; a row reduction,
    `row_sum` or `row_max`, writes `rows` f32 values). Unary functions:
    copy, exp, tanh, erf, sigmoid, relu, gelu, gelu_tanh, silu, sqrt,
    rsqrt, reciprocal, neg, abs, log; quantize (x / `imm` converted to
    `format`, which may be i8 or fp8, saturating). Binary functions (add, sub, mul,
    div, max, min, pow) take a second operand by `mode`: `full` (a rows x
    cols block at `src2`), `row` (one row of cols values at `src2` for
    every row), `column` (one value per row at `src2`) or `immediate`
    (`imm`).
  }];
  let arguments = (ins StrAttr:$fn, StrAttr:$format, I64Attr:$src,
                       I64Attr:$dst, I64Attr:$rows, I64Attr:$cols,
                       OptionalAttr<StrAttr>:$mode,
                       OptionalAttr<I64Attr>:$src2,
                       OptionalAttr<F32Attr>:$imm,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal);
  let assemblyFormat = [{
    $fn $format `src` $src `dst` $dst `rows` $rows `cols` $cols attr-dict
  }];
}

def Systolic_GatherOp : Systolic_Op<"gather"> {
  let summary = "table rows picked by indices, DRAM to the unified buffer (load queue)";
  let description = [{
    `rows` rows of `row_bytes` bytes from the table at `dram` (`table_rows`
    rows of `row_bytes`) to the unified buffer at `sram`: row r is the
    table row whose index is the fp32 value at unified-buffer address
    `indices + 4 r`. An index that is not an integer row of the table
    stops the run with an error. `fence` waits for every earlier store.
  }];
  let arguments = (ins I64Attr:$dram, I64Attr:$sram, I64Attr:$indices,
                       I64Attr:$rows, I64Attr:$row_bytes, I64Attr:$table_rows,
                       UnitAttr:$fence,
                       DefaultValuedAttr<I64Attr, "0">:$wait,
                       DefaultValuedAttr<I64Attr, "0">:$signal);
  let assemblyFormat = [{
    `dram` $dram `sram` $sram `indices` $indices `rows` $rows `row_bytes`
    $row_bytes `table_rows` $table_rows attr-dict
  }];
}

#endif // TESSERA_SYSTOLIC_OPS_TD
