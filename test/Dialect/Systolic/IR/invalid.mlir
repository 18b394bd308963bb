// RUN: tessera-opt %s --split-input-file --verify-diagnostics

// Every verifier error of the systolic dialect.
// Two tensors may not share a name.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  systolic.tensor "x" input f32 [4] at 0
  // expected-error @+1 {{'systolic.tensor' op a second tensor named 'x'}}
  systolic.tensor "x" output f32 [4] at 64
}

// -----

// A tensor lies inside the DRAM image.
systolic.program attributes {accel = "small", dram_bytes = 80 : i64} {
  // expected-error @+1 {{'systolic.tensor' op bytes [64, 96) lie beyond the DRAM image of 80 bytes}}
  systolic.tensor "x" input f32 [8] at 64
}

// -----

// Dims are positive.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op dims must be positive}}
  systolic.tensor "x" input f32 [4, 0] at 0
}

// -----

// A constant has a value...
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op a constant needs a value, and only a constant has one}}
  systolic.tensor "w" constant bf16 [2] at 0
}

// -----

// ...and only a constant.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op a constant needs a value, and only a constant has one}}
  systolic.tensor "x" input f32 [2] at 0 value dense<1.0> : tensor<2xf32>
}

// -----

// A constant's value is f32.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op a constant's value must be f32}}
  systolic.tensor "w" constant bf16 [2] at 0 value dense<1.0> : tensor<2xbf16>
}

// -----

// A constant's value fills its shape.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op value has 3 elements but the shape has 2}}
  systolic.tensor "w" constant bf16 [2] at 0 value dense<1.0> : tensor<3xf32>
}

// -----

// Only the accelerator's number formats.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.tensor' op attribute 'format' failed to satisfy constraint}}
  systolic.tensor "x" input f64 [2] at 0
}

// -----

// An unknown role does not parse.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{expected}}
  systolic.tensor "x" weights f32 [2] at 0
}

// -----

// Addresses are not negative.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.load' op attribute 'dram' failed to satisfy constraint}}
  systolic.load unified dram -4 sram 0 rows 1 row_bytes 4 stride 4
}

// -----

// A token mask has 8 channels.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.load' op attribute 'signal' failed to satisfy constraint}}
  systolic.load unified dram 0 sram 0 rows 1 row_bytes 4 stride 4 {signal = 256 : i64}
}

// -----

// Rows fit their 16-bit field.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.load' op 'rows' is 65536, beyond its instruction field (at most 65535)}}
  systolic.load unified dram 0 sram 0 rows 65536 row_bytes 4 stride 4
}

// -----

// On-chip addresses fit their 32-bit field.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.load' op 'sram' is 4294967296, beyond its instruction field (at most 4294967295)}}
  systolic.load weights dram 0 sram 4294967296 rows 1 row_bytes 4 stride 4
}

// -----

// A row is not empty.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.load' op attribute 'row_bytes' failed to satisfy constraint}}
  systolic.load unified dram 0 sram 0 rows 1 row_bytes 0 stride 4
}

// -----

// Stored rows do not overlap.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.store' op rows of 32 bytes overlap at a stride of 16}}
  systolic.store dram 0 sram 0 rows 2 row_bytes 32 stride 16
}

// -----

// The array multiplies bf16, f16, fp8 and i8, not f32.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.matmul' op attribute 'format' failed to satisfy constraint}}
  systolic.matmul f32 weights 0 activations 0 acc 0 rows 4 depth 2 cols 2
}

// -----

// A matmul is not empty.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.matmul' op attribute 'depth' failed to satisfy constraint}}
  systolic.matmul bf16 weights 0 activations 0 acc 0 rows 4 depth 0 cols 2
}

// -----

// A drain writes f32, bf16, f16 or i8.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.drain' op drains to f32, bf16, f16 or i8, not 'f8E4M3FN'}}
  systolic.drain f8E4M3FN acc 0 sram 0 rows 4 cols 2
}

// -----

// An i8 drain requantizes with its scale...
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.drain' op an i8 drain needs its requantization scale}}
  systolic.drain i8 acc 0 sram 0 rows 4 cols 2
}

// -----

// ...and takes no int32.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.drain' op an i8 drain requantizes; it takes no int32}}
  systolic.drain i8 acc 0 sram 0 rows 4 cols 2 {int32, scale = 1.0 : f32}
}

// -----

// Columns fit their 16-bit field.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.drain' op 'cols' is 70000, beyond its instruction field (at most 65535)}}
  systolic.drain f32 acc 0 sram 0 rows 4 cols 70000
}

// -----

// Quantize takes its scale as imm.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op quantize needs its scale as imm}}
  systolic.vector quantize i8 src 0 dst 64 rows 1 cols 4
}

// -----

// Only quantize writes i8 and fp8.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op only quantize writes 'f8E5M2'}}
  systolic.vector exp f8E5M2 src 0 dst 64 rows 1 cols 4
}

// -----

// A row reduction writes f32.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op a row reduction writes f32}}
  systolic.vector row_sum bf16 src 0 dst 64 rows 1 cols 4
}

// -----

// A unary function takes no second operand...
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op 'exp' takes one operand: no mode or src2}}
  systolic.vector exp f32 src 0 dst 64 rows 1 cols 4 mode full src2 0
}

// -----

// ...and no immediate.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op 'tanh' takes no imm}}
  systolic.vector tanh f32 src 0 dst 64 rows 1 cols 4 imm 1.0
}

// -----

// A binary function says where its second operand comes from.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op a binary function needs a mode: full, row, column or immediate}}
  systolic.vector add f32 src 0 dst 64 rows 1 cols 4 src2 0
}

// -----

// An immediate operand is imm...
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op an immediate operand needs imm and no src2}}
  systolic.vector mul f32 src 0 dst 64 rows 1 cols 4 mode immediate src2 0
}

// -----

// ...a buffered one is src2.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.vector' op a 'column' operand needs src2 and no imm}}
  systolic.vector mul f32 src 0 dst 64 rows 1 cols 4 mode column imm 2.0
}

// -----

// An unknown function does not parse.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{expected}}
  systolic.vector cube f32 src 0 dst 64 rows 1 cols 4
}

// -----

// A gather's table has 1 to 2^32 - 1 rows.
systolic.program attributes {accel = "small", dram_bytes = 256 : i64} {
  // expected-error @+1 {{'systolic.gather' op attribute 'table_rows' failed to satisfy constraint}}
  systolic.gather dram 0 sram 0 indices 64 rows 1 row_bytes 4 table_rows 0
}

// -----

// The instructions live in a program.
func.func @f() {
  // expected-error @+1 {{'systolic.store' op expects parent op 'systolic.program'}}
  systolic.store dram 0 sram 0 rows 1 row_bytes 4 stride 4
  return
}

// -----

// The generic form without a required field is an error, not a crash.
"systolic.program"() <{accel = "small", dram_bytes = 64 : i64}> ({
  // expected-error @+1 {{'systolic.tensor' op requires attribute 'format'}}
  "systolic.tensor"() <{name = "x", role = 0 : i32, shape = array<i64: 2>, offset = 0 : i64}> : () -> ()
}) : () -> ()
