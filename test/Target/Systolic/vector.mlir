// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions=target=systolic --tessera-systolic-operand-formats --convert-tessera-to-systolic="accel=small" | FileCheck %s

// A softmax on the vector unit: the row maximum, the shifted exponentials,
// their sum and the division, all on one chunk of rows in the unified
// buffer between one load and one store.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_0" input f32 [2, 8, 16] at 0
// CHECK: systolic.tensor "output_0" output f32 [2, 8, 16] at [[OUT:[0-9]+]]
// CHECK: systolic.load unified dram 0 sram [[X:[0-9]+]] rows 1 row_bytes 1024 stride 1024 {fence, signal = 64
// CHECK-NEXT: systolic.vector row_max f32 src [[X]] dst [[S:[0-9]+]] rows 16 cols 16 {wait = 64
// CHECK-NEXT: systolic.vector sub f32 src [[X]] dst [[T:[0-9]+]] rows 16 cols 16 mode column src2 [[S]]
// CHECK-NEXT: systolic.vector exp f32 src [[T]] dst [[T]] rows 16 cols 16
// CHECK-NEXT: systolic.vector row_sum f32 src [[T]] dst [[S]] rows 16 cols 16
// CHECK-NEXT: systolic.vector div f32 src [[T]] dst [[T]] rows 16 cols 16 mode column src2 [[S]] {signal = 16 : i64
// CHECK-NEXT: systolic.store dram [[OUT]] sram [[T]] rows 1 row_bytes 1024 {{.*}}wait = 16
func.func @main(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = tessera.softmax %x : tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// A layer norm with scale and bias rows (loaded once), then GELU whose
// result only a matmul reads: the GELU writes bf16 straight away, and
// the matmul's input needs no conversion.
// CHECK-LABEL: systolic.program
// CHECK: systolic.load unified {{.*}} rows 1 row_bytes 64 stride 64 {fence}
// CHECK-NEXT: systolic.load unified {{.*}} rows 1 row_bytes 64 stride 64
// CHECK: systolic.vector row_sum
// CHECK-NEXT: systolic.vector div f32 {{.*}} rows 8 cols 1 mode immediate imm 1.600000e+01{{$}}
// CHECK-NEXT: systolic.vector sub {{.*}}mode column
// CHECK-NEXT: systolic.vector mul {{.*}}mode full
// CHECK-NEXT: systolic.vector row_sum
// CHECK-NEXT: systolic.vector div
// CHECK-NEXT: systolic.vector add f32 {{.*}} rows 8 cols 1 mode immediate imm 9.99999974E-6{{$}}
// CHECK-NEXT: systolic.vector rsqrt
// CHECK-NEXT: systolic.vector mul {{.*}}mode column
// CHECK-NEXT: systolic.vector mul {{.*}}mode row
// CHECK-NEXT: systolic.vector add f32 {{.*}}mode row
// CHECK: systolic.vector gelu_tanh bf16
// CHECK-NOT: systolic.vector
// CHECK: systolic.matmul bf16
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %g = tessera.constant dense<2.0> : tensor<16xf32>
  %b = tessera.constant dense<0.5> : tensor<16xf32>
  %w = tessera.constant dense<0.25> : tensor<16x4xf32>
  %0 = tessera.layer_norm %x scale(%g : tensor<16xf32>) bias(%b : tensor<16xf32>) : tensor<8x16xf32>
  %1 = tessera.gelu %0 approximate = tanh : tensor<8x16xf32>
  %2 = tessera.matmul %1, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// An fp32 value a matmul and the vector unit both read (a residual): it is
// converted to bf16 for the matmul; a constant scalar is an immediate, and
// a scalar minus a tensor is a negation plus the scalar; rms_norm has no
// centering.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_0" input f32 [8, 16]
// CHECK: systolic.tensor "input_0/bf16" scratch bf16 [8, 16]
// CHECK: systolic.vector copy bf16
// CHECK: systolic.matmul
// CHECK: systolic.vector add f32 {{.*}}mode full
// CHECK: systolic.vector neg
// CHECK-NEXT: systolic.vector add f32 {{.*}}mode immediate imm 1.000000e+00
// CHECK: systolic.vector mul {{.*}}mode full
// CHECK-NEXT: systolic.vector row_sum
// CHECK-NOT: systolic.vector sub
// CHECK: systolic.vector rsqrt
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %w = tessera.constant dense<0.25> : tensor<16x16xf32>
  %one = tessera.constant dense<1.0> : tensor<f32>
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %1 = tessera.add %0, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %2 = tessera.sub %one, %1 : tensor<f32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %3 = tessera.rms_norm %2 : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// Must not convert: a matmul chain keeps its intermediate in bf16 and
// runs nothing on the vector unit but the drains.
// CHECK-LABEL: systolic.program
// CHECK-NOT: systolic.vector
// CHECK: systolic.tensor "matmul_1/result" scratch bf16
// CHECK-NOT: systolic.vector
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %w = tessera.constant dense<0.25> : tensor<16x16xf32>
  %0 = tessera.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %1 = tessera.matmul %0, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Rows that do not fit the unified buffer at once run in chunks: on the
// small preset (256 KiB) two fp32 slots of 2048 x 64 values take 1 MiB,
// so the exponential runs in chunks, each load after the vector unit is
// done with the last chunk and each vector op after its store.
// CHECK-LABEL: systolic.program
// CHECK: systolic.load {{.*}} {fence, signal = 64
// CHECK-NEXT: systolic.vector exp f32 {{.*}} rows [[N:[0-9]+]] cols 64 {signal = 144 : i64, wait = 64
// CHECK-NEXT: systolic.store {{.*}}signal = 32 : i64, wait = 16
// CHECK-NEXT: systolic.load {{.*}} {signal = 64 : i64, wait = 128
// CHECK-NEXT: systolic.vector exp f32 {{.*}} wait = 96
func.func @main(%x: tensor<2048x64xf32>) -> tensor<2048x64xf32> {
  %0 = tessera.exp %x : tensor<2048x64xf32>
  return %0 : tensor<2048x64xf32>
}

// -----

// A chain of vector ops whose intermediates only the next op reads runs
// as one step: the residual add's result stays in the unified buffer for
// the softmax (one load of each input, one store of the result).
// CHECK-LABEL: systolic.program
// CHECK: systolic.load unified dram 0 {{.*}}{fence}
// CHECK-NEXT: systolic.load unified dram {{[0-9]+}} {{.*}}signal = 64
// CHECK-NEXT: systolic.vector add f32 src {{[0-9]+}} dst [[SUM:[0-9]+]] {{.*}}mode full
// CHECK-NEXT: systolic.vector row_max f32 src [[SUM]]
// CHECK-NEXT: systolic.vector sub f32 src [[SUM]]
// CHECK-NEXT: systolic.vector exp
// CHECK-NEXT: systolic.vector row_sum
// CHECK-NEXT: systolic.vector div
// CHECK-NEXT: systolic.store
// CHECK-NOT: systolic.load
func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tessera.add %x, %y : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %1 = tessera.softmax %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Must not chain: a result two ops read, and a model output read again,
// go through memory (three steps, three stores).
// CHECK-LABEL: systolic.program
// CHECK-COUNT-3: systolic.store
// CHECK-NOT: systolic.store
func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = tessera.exp %x : tensor<8x16xf32>
  %1 = tessera.neg %0 : tensor<8x16xf32>
  %2 = tessera.mul %0, %1 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A global average pool (a mean over the image's two trailing dims) and a
// maximum over the last: a row sum (or maximum) of each row of the
// reduced dims into one value per row, the mean divided by their count;
// results stored as fp32, four bytes a row.
// CHECK-LABEL: systolic.program
// CHECK: systolic.vector row_sum f32 src [[X:[0-9]+]] dst [[S:[0-9]+]] rows 6 cols 12
// CHECK-NEXT: systolic.vector div f32 src [[S]] dst [[S]] rows 6 cols 1 mode immediate imm 1.200000e+01
// CHECK-NEXT: systolic.store dram {{[0-9]+}} sram [[S]] rows 1 row_bytes 24
// CHECK: systolic.vector row_max f32 src {{[0-9]+}} dst [[M:[0-9]+]] rows 24 cols 3
// CHECK-NEXT: systolic.store dram {{[0-9]+}} sram [[M]] rows 1 row_bytes 96
func.func @main(%x: tensor<2x3x4x3xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x4xf32>) {
  %0 = tessera.reduce_mean %x [2, 3] : tensor<2x3x4x3xf32> -> tensor<2x3x1x1xf32>
  %1 = tessera.reduce_max %x [-1] {keepdims = false} : tensor<2x3x4x3xf32> -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x3x4xf32>
}

// -----

// masked_fill of scores with -inf under a constant condition (a causal
// mask): the scores plus a constant mask, -0 where they are kept and -inf
// elsewhere, then the softmax.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "constant/f32_{{[0-9]+}}" constant f32 [4] at {{[0-9]+}} value dense<[-0.000000e+00, 0xFF800000, -0.000000e+00, -0.000000e+00]>
// CHECK: systolic.vector add f32 {{.*}} rows 4 cols 2 mode full
// CHECK: systolic.vector row_max
func.func @main(%s: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  %keep = tessera.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %m = tessera.where %keep, %s, %inf : tensor<2x2xi1>, tensor<2x2x2xf32>, tensor<f32> -> tensor<2x2x2xf32>
  %p = tessera.softmax %m : tensor<2x2x2xf32>
  return %p : tensor<2x2x2xf32>
}

// -----

// A select with a fill that is not at most -1e30 (adding it to the scores
// would not give the fill) runs as a select: the kept values where the
// condition holds, the fill where it does not, summed (the term not
// chosen is -0.0, so the sum is exact).
// CHECK-LABEL: systolic.program
// CHECK: systolic.vector when f32 src [[C:[0-9]+]] dst [[T:[0-9]+]] rows 2 cols 2 mode full src2 [[S:[0-9]+]]
// CHECK-NEXT: systolic.vector unless f32 src [[C]] dst [[U:[0-9]+]] rows 2 cols 2 mode immediate imm -1.000000e+09
// CHECK-NEXT: systolic.vector add f32 src [[T]] dst [[T]] rows 2 cols 2 mode full src2 [[U]]
func.func @main(%s: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %keep = tessera.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %fill = tessera.constant dense<-1.0e9> : tensor<f32>
  %m = tessera.where %keep, %s, %fill : tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

// -----

// A key padding mask that is an input of the model (booleans, which the
// host writes as 0.0 and 1.0): masked_fill with -inf becomes the scores
// plus a mask computed once at the mask's shape ([2, 1, 4]: -inf where
// padded, -0 elsewhere), broadcast over the queries.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "input_1" input f32 [2, 4] at [[PAD:[0-9]+]]
// CHECK: systolic.tensor "where_{{[0-9]+}}/result" scratch f32 [2, 1, 4]
// CHECK: systolic.load unified dram [[PAD]] sram [[S:[0-9]+]]
// CHECK-NEXT: systolic.vector ne f32 src [[S]] dst {{[0-9]+}} rows 2 cols 4 mode immediate imm 0.000000e+00
// CHECK: systolic.vector when f32 src [[P:[0-9]+]] dst [[T:[0-9]+]] rows 2 cols 4 mode immediate imm 0xFF800000
// CHECK-NEXT: systolic.vector unless f32 src [[P]] dst [[U:[0-9]+]] rows 2 cols 4 mode immediate imm -0.000000e+00
// CHECK-NEXT: systolic.vector add f32 src [[T]] dst [[T]] rows 2 cols 4 mode full src2 [[U]]
// CHECK: systolic.vector add f32 {{.*}} rows 8 cols 4 mode full
// CHECK-NEXT: systolic.vector row_max
func.func @main(%s: tensor<2x4x4xf32>, %pad: tensor<2x4xi1>) -> tensor<2x4x4xf32> {
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %p = tessera.reshape %pad : tensor<2x4xi1> -> tensor<2x1x4xi1>
  %m = tessera.where %p, %inf, %s : tensor<2x1x4xi1>, tensor<f32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %y = tessera.softmax %m : tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// Comparisons, logic and a cast to fp32 on booleans held as 0.0 and 1.0
// (a boolean input is read as x != 0 first, whatever number the host
// wrote): a scalar on the left swaps the comparison (0.5 < x is x > 0.5),
// not is x == 0, and is a product, or a maximum, the cast a copy.
// CHECK-LABEL: systolic.program
// CHECK: systolic.vector ne f32 {{.*}} mode immediate imm 0.000000e+00
// CHECK: systolic.vector gt f32 {{.*}} mode immediate imm 5.000000e-01
// CHECK-NEXT: systolic.vector gt f32 {{.*}} mode immediate imm 5.000000e-01
// CHECK-NEXT: systolic.vector eq f32 {{.*}} mode immediate imm 0.000000e+00
// CHECK-NEXT: systolic.vector mul f32 {{.*}} mode full
// CHECK-NEXT: systolic.vector max f32 {{.*}} mode full
// CHECK-NEXT: systolic.vector copy f32
func.func @main(%x: tensor<4x8xf32>, %b: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %half = tessera.constant dense<5.000000e-01> : tensor<f32>
  %c = tessera.compare gt, %x, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  %d = tessera.compare lt, %half, %x : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xi1>
  %n = tessera.not %c : tensor<4x8xi1>
  %a = tessera.and %n, %b : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %o = tessera.or %a, %d : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %f = tessera.cast %o : tensor<4x8xi1> to tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}

// -----

// A mask computed from constants only (a causal buffer sliced and
// compared with zero) is evaluated at compile time: no comparison runs.
// CHECK-LABEL: systolic.program
// CHECK: systolic.tensor "constant/f32_{{[0-9]+}}" constant f32 [4] at {{[0-9]+}} value dense<[-0.000000e+00, 0xFF800000, -0.000000e+00, -0.000000e+00]>
// CHECK-NOT: systolic.vector copy
// CHECK-NOT: systolic.vector eq
// CHECK-NOT: systolic.vector when
// CHECK: systolic.vector add f32
func.func @main(%s: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %tril = tessera.constant dense<[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]> : tensor<3x3xf32>
  %t = tessera.slice %tril starts [0, 0] ends [2, 2] : tensor<3x3xf32> -> tensor<2x2xf32>
  %zero = tessera.constant dense<0.0> : tensor<f32>
  %c = tessera.compare eq, %t, %zero : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xi1>
  %inf = tessera.constant dense<0xFF800000> : tensor<f32>
  %m = tessera.where %c, %inf, %s : tensor<2x2xi1>, tensor<f32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
