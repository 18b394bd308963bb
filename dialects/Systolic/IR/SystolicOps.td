// SystolicOps.td - the systolic accelerator's program as IR: one op per instruction.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_SYSTOLIC_OPS_TD
#define TESSERA_SYSTOLIC_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Systolic_Dialect : Dialect {
  let name = "systolic";
  let cppNamespace = "::mlir::systolic";
  let summary = "Programs for Tessera's systolic accelerator";
  let description = [{
    A `systolic.program` is what the accelerator runs: the tensors of its
    DRAM image (`systolic.tensor`) and its instructions in program order,
    one op each (`systolic.load`, `systolic.matmul`, `systolic.drain`,
    `systolic.vector`, `systolic.gather`, `systolic.store`), with the
    fields and dependency token masks of the instruction set in
    docs/Systolic.md. Every field is a typed attribute: number formats are
    MLIR element types, choices are enums, addresses and sizes are byte
    counts. The ops' verifiers hold the instruction set's rules that do not
    depend on the accelerator; the program emitter serializes the ops to a
    `.tsp` file and validates it against the accelerator's configuration
    (buffer sizes, array shape).
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Systolic_Buffer : I32EnumAttr<"Buffer",
    "the on-chip buffer a load writes", [
      I32EnumAttrCase<"Unified", 0, "unified">,
      I32EnumAttrCase<"Weights", 1, "weights">]> {
  let cppNamespace = "::mlir::systolic";
}

def Systolic_TensorRole : I32EnumAttr<"TensorRole",
    "who writes and reads a tensor of the DRAM image", [
      I32EnumAttrCase<"Input", 0, "input">,
      I32EnumAttrCase<"Output", 1, "output">,
      I32EnumAttrCase<"Constant", 2, "constant">,
      I32EnumAttrCase<"Scratch", 3, "scratch">]> {
  let cppNamespace = "::mlir::systolic";
}

// The values are the instruction set's function codes (include/tessera/Sim/Program.h).
def Systolic_VectorFn : I32EnumAttr<"VectorFn",
    "what a vector instruction computes", [
      I32EnumAttrCase<"Copy", 0, "copy">,
      I32EnumAttrCase<"Exp", 1, "exp">,
      I32EnumAttrCase<"Tanh", 2, "tanh">,
      I32EnumAttrCase<"Erf", 3, "erf">,
      I32EnumAttrCase<"Sigmoid", 4, "sigmoid">,
      I32EnumAttrCase<"Relu", 5, "relu">,
      I32EnumAttrCase<"GeluErf", 6, "gelu">,
      I32EnumAttrCase<"GeluTanh", 7, "gelu_tanh">,
      I32EnumAttrCase<"Silu", 8, "silu">,
      I32EnumAttrCase<"Sqrt", 9, "sqrt">,
      I32EnumAttrCase<"Rsqrt", 10, "rsqrt">,
      I32EnumAttrCase<"Reciprocal", 11, "reciprocal">,
      I32EnumAttrCase<"Neg", 12, "neg">,
      I32EnumAttrCase<"Abs", 13, "abs">,
      I32EnumAttrCase<"Log", 14, "log">,
      I32EnumAttrCase<"Quantize", 16, "quantize">,
      I32EnumAttrCase<"Add", 32, "add">,
      I32EnumAttrCase<"Sub", 33, "sub">,
      I32EnumAttrCase<"Mul", 34, "mul">,
      I32EnumAttrCase<"Div", 35, "div">,
      I32EnumAttrCase<"Max", 36, "max">,
      I32EnumAttrCase<"Min", 37, "min">,
      I32EnumAttrCase<"Pow", 38, "pow">,
      I32EnumAttrCase<"Less", 39, "lt">,
      I32EnumAttrCase<"LessEqual", 40, "le">,
      I32EnumAttrCase<"Greater", 41, "gt">,
      I32EnumAttrCase<"GreaterEqual", 42, "ge">,
      I32EnumAttrCase<"Equal", 43, "eq">,
      I32EnumAttrCase<"NotEqual", 44, "ne">,
      I32EnumAttrCase<"When", 45, "when">,
      I32EnumAttrCase<"Unless", 46, "unless">,
      I32EnumAttrCase<"RowSum", 64, "row_sum">,
      I32EnumAttrCase<"RowMax", 65, "row_max">]> {
  let cppNamespace = "::mlir::systolic";
}

// The values are the instruction set's mode codes (include/tessera/Sim/Program.h).
def Systolic_OperandMode : I32EnumAttr<"OperandMode",
    "where a binary vector instruction's second operand comes from", [
      I32EnumAttrCase<"Full", 0, "full">,
      I32EnumAttrCase<"Row", 1, "row">,
      I32EnumAttrCase<"Column", 2, "column">,
      I32EnumAttrCase<"Immediate", 3, "immediate">]> {
  let cppNamespace = "::mlir::systolic";
}

//===----------------------------------------------------------------------===//
// Field types
//===----------------------------------------------------------------------===//

// A number format of the DRAM image and the buffers.
def Systolic_StorageFormat : TypeAttrOf<AnyTypeOf<[F32, BF16, F16, F8E4M3FN,
                                                    F8E5M2, I8]>>;
// The formats the array multiplies.
def Systolic_OperandFormat : TypeAttrOf<AnyTypeOf<[BF16, F16, F8E4M3FN,
                                                    F8E5M2, I8]>>;

// A byte address or count (non-negative).
def Systolic_Address : ConfinedAttr<I64Attr, [IntNonNegative]>;
// A count that must not be zero.
def Systolic_Count : ConfinedAttr<I64Attr, [IntPositive]>;
// A dependency token mask: bit i is channel i (docs/Systolic.md).
def Systolic_TokenMask : DefaultValuedAttr<
    ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<255>]>, "0">;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class Systolic_Op<string mnemonic, list<Trait> traits = []>
    : Op<Systolic_Dialect, mnemonic,
         !listconcat(traits, [HasParent<"ProgramOp">])>;

def Systolic_ProgramOp : Op<Systolic_Dialect, "program",
                            [SingleBlock, NoTerminator]> {
  let summary = "a program for one accelerator";
  let description = [{
    The program's tensors and instructions, for the accelerator named by
    `accel` (a preset or a configuration file), with a DRAM image of
    `dram_bytes` bytes. Every tensor lies inside the image and has its own
    name.

    ```mlir
    systolic.program {accel = "small", dram_bytes = 4096 : i64} {
      systolic.tensor "A" input bf16 [64, 32] at 0
      systolic.load weights dram 0 sram 0 rows 32 row_bytes 64 stride 64 {signal = 1 : i64}
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$accel, Systolic_Address:$dram_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Systolic_TensorOp : Systolic_Op<"tensor"> {
  let summary = "a tensor in the DRAM image";
  let description = [{
    A named tensor at byte `offset` of the DRAM image, stored in `format`
    (`f32`, `bf16`, `f16`, `f8E4M3FN`, `f8E5M2`, `i8`). `role` is `input`
    (the host writes it), `output` (the host reads it), `constant` (its
    `value`, in f32, is part of the image, converted to `format`) or
    `scratch` (an intermediate result the program writes and reads).
  }];
  let arguments = (ins StrAttr:$name, Systolic_TensorRole:$role,
                       Systolic_StorageFormat:$format,
                       DenseI64ArrayAttr:$shape, Systolic_Address:$offset,
                       OptionalAttr<ElementsAttr>:$value);
  let assemblyFormat = [{
    $name $role $format $shape `at` $offset (`value` $value^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The tensor's size in the DRAM image, in bytes (0 for a format the
    /// accelerator does not store).
    int64_t getBytes();
  }];
  let hasVerifier = 1;
}

def Systolic_LoadOp : Systolic_Op<"load"> {
  let summary = "DRAM rows to the unified or the weight buffer (load queue)";
  let description = [{
    `rows` rows (0 reads one) of `row_bytes` bytes, `stride` bytes apart in
    DRAM from `dram`, to `buffer` at `sram` (packed); a stride smaller than
    a row reads rows again (a broadcast). With `fence`, the load waits for
    every earlier store (a read of a result the program wrote).
  }];
  let arguments = (ins Systolic_Buffer:$buffer, Systolic_Address:$dram,
                       Systolic_Address:$sram, Systolic_Address:$rows,
                       Systolic_Count:$row_bytes, Systolic_Address:$stride,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal,
                       UnitAttr:$fence);
  let assemblyFormat = [{
    $buffer `dram` $dram `sram` $sram `rows` $rows `row_bytes` $row_bytes
    `stride` $stride attr-dict
  }];
  let hasVerifier = 1;
}

def Systolic_StoreOp : Systolic_Op<"store"> {
  let summary = "unified-buffer rows to DRAM (store queue)";
  let description = [{
    `rows` rows (0 writes one) of `row_bytes` bytes from the unified buffer
    at `sram` (packed) to DRAM from `dram`, `stride` bytes apart; rows
    must not overlap.
  }];
  let arguments = (ins Systolic_Address:$dram, Systolic_Address:$sram,
                       Systolic_Address:$rows, Systolic_Count:$row_bytes,
                       Systolic_Address:$stride,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal);
  let assemblyFormat = [{
    `dram` $dram `sram` $sram `rows` $rows `row_bytes` $row_bytes
    `stride` $stride attr-dict
  }];
  let hasVerifier = 1;
}

def Systolic_MatmulOp : Systolic_Op<"matmul"> {
  let summary = "weights times activations into the accumulators (matrix queue)";
  let description = [{
    `rows` x `depth` activations (unified buffer at `activations`) times
    `depth` x `cols` weights (weight buffer at `weights`), both in
    `format`, into accumulator rows from `acc_row`; with `accumulate` the
    products are added to what the accumulators hold.
  }];
  let arguments = (ins Systolic_OperandFormat:$format,
                       Systolic_Address:$weights,
                       Systolic_Address:$activations,
                       Systolic_Address:$acc_row, Systolic_Count:$rows,
                       Systolic_Count:$depth, Systolic_Count:$cols,
                       UnitAttr:$accumulate,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal);
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
  let arguments = (ins Systolic_StorageFormat:$format,
                       Systolic_Address:$acc_row, Systolic_Address:$sram,
                       Systolic_Count:$rows, Systolic_Count:$cols,
                       OptionalAttr<Systolic_Address>:$bias, UnitAttr:$relu,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$int32,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal);
  let assemblyFormat = [{
    $format `acc` $acc_row `sram` $sram `rows` $rows `cols` $cols attr-dict
  }];
  let hasVerifier = 1;
}

def Systolic_VectorOp : Systolic_Op<"vector"> {
  let summary = "an elementwise operation or row reduction (vector queue)";
  let description = [{
    `fn` on `rows` x `cols` fp32 values in the unified buffer at `src`,
    written at `dst` in `format` (f32, bf16 or f16; a row reduction,
    `row_sum` or `row_max`, writes `rows` f32 values). Unary functions:
    copy, exp, tanh, erf, sigmoid, relu, gelu, gelu_tanh, silu, sqrt,
    rsqrt, reciprocal, neg, abs, log; quantize (x / `imm` converted to
    `format`, which may be i8 or fp8, saturating). Binary functions (add,
    sub, mul, div, max, min, pow) take a second operand by `mode`: `full`
    (a rows x cols block at `src2`), `row` (one row of cols values at
    `src2` for every row), `column` (one value per row at `src2`) or
    `immediate` (`imm`).
  }];
  let arguments = (ins Systolic_VectorFn:$fn,
                       Systolic_StorageFormat:$format,
                       Systolic_Address:$src, Systolic_Address:$dst,
                       Systolic_Count:$rows, Systolic_Count:$cols,
                       OptionalAttr<Systolic_OperandMode>:$mode,
                       OptionalAttr<Systolic_Address>:$src2,
                       OptionalAttr<F32Attr>:$imm,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal);
  let assemblyFormat = [{
    $fn $format `src` $src `dst` $dst `rows` $rows `cols` $cols
    (`mode` $mode^)? (`src2` $src2^)? (`imm` $imm^)? attr-dict
  }];
  let hasVerifier = 1;
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
  let arguments = (ins Systolic_Address:$dram, Systolic_Address:$sram,
                       Systolic_Address:$indices, Systolic_Count:$rows,
                       Systolic_Count:$row_bytes,
                       ConfinedAttr<I64Attr, [IntPositive,
                                              IntMaxValue<4294967295>]>:$table_rows,
                       UnitAttr:$fence,
                       Systolic_TokenMask:$wait, Systolic_TokenMask:$signal);
  let assemblyFormat = [{
    `dram` $dram `sram` $sram `indices` $indices `rows` $rows `row_bytes`
    $row_bytes `table_rows` $table_rows attr-dict
  }];
}

#endif // TESSERA_SYSTOLIC_OPS_TD
