// RUN: tessera-opt %s --split-input-file --tessera-assign-precision | FileCheck %s --check-prefix=FP32
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16" --canonicalize | FileCheck %s --check-prefix=BF16
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=fp16" --canonicalize | FileCheck %s --check-prefix=FP16
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 keep-fp32=/head/.*,/other" | FileCheck %s --check-prefix=KEEP
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 target=cuda" | FileCheck %s --check-prefix=CUDA
// A plan's pass narrows the matmuls it names only and leaves the others
// as they are (no decision recorded).
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 only-nodes=/head/proj" | FileCheck %s --check-prefix=ONLY
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 target=cuda remarks" 2>&1 >/dev/null | FileCheck %s --check-prefix=CUDA-REMARK
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=int8 keep-first-layers=false target=cuda" | FileCheck %s --check-prefix=CUDA-INT8
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=bf16 target=cuda keep-fp32=/other" | FileCheck %s --check-prefix=CUDA-KEEP
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=fp16 target=cuda" | FileCheck %s --check-prefix=CUDA-FP16
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=fp16 remarks" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// Without remarks, none.
// RUN: tessera-opt %s --split-input-file --tessera-assign-precision="policy=fp16" 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark
// REMARK: remark: precision fp16: fp16
// REMARK: remark: precision fp16: f32: a weight holds values beyond fp16's range (largest |x| 1e+05)

// A linear layer, its softmax and a layer norm. fp32 changes nothing.
// bf16: the matmul's operands are cast (the weight once, at compile time)
// and it accumulates into an f32 result; softmax and the norm stay f32.
// FP32-LABEL: func @linear
// FP32-NOT: tessera.cast
// FP32-NOT: tessera.precision
// FP32: tessera.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// BF16-LABEL: func @linear
// BF16-DAG: %[[W:.*]] = tessera.constant dense<5.000000e-01> : tensor<8x16xbf16>
// BF16-DAG: %[[X:.*]] = tessera.cast %arg0 : tensor<4x8xf32> to tensor<4x8xbf16>
// BF16: %[[Y:.*]] = tessera.matmul %[[X]], %[[W]] {tessera.precision = "bf16"} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
// BF16: tessera.softmax %[[Y]] : tensor<4x16xf32>
// BF16: tessera.layer_norm %{{.*}} scale(%{{.*}} : tensor<16xf32>) bias(%{{.*}} : tensor<16xf32>) : tensor<4x16xf32>
// FP16-LABEL: func @linear
// FP16: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "fp16"} : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
// The node name does not match the patterns: narrowed.
// KEEP-LABEL: func @linear
// KEEP: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "bf16"} : tensor<4x8xbf16>
// The CUDA target computes bf16 and int8 contractions on its tensor cores;
// int8 without calibrated ranges stays f32 and says why.
// CUDA-LABEL: func @linear
// CUDA: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "bf16"} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
// CUDA-INT8-LABEL: func @linear
// CUDA-INT8-NOT: tessera.cast
// CUDA-INT8: tessera.matmul %{{.*}}, %{{.*}} {tessera.precision = "f32: int8 needs the range of its lhs (--calibrate)"} : tensor<4x8xf32>
func.func @linear(%x: tensor<4x8xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %w = tessera.constant dense<0.5> : tensor<8x16xf32>
  %y = tessera.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("/body/MatMul")
  %s = tessera.softmax %y : tensor<4x16xf32>
  %n = tessera.layer_norm %s scale(%g : tensor<16xf32>) bias(%b : tensor<16xf32>) : tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// An output head named by --keep-fp32 stays f32, with the pattern that
// kept it; the whole name must match ("/head/proj" matches "/head/.*",
// "/other/x" does not match "/other").
// KEEP-LABEL: func @head
// KEEP: tessera.matmul {{.*}} {tessera.precision = "f32: kept by --keep-fp32 pattern '/head/.*'"} : tensor<4x8xf32>, tensor<8x16xf32>
// KEEP: tessera.matmul {{.*}} {tessera.precision = "bf16"} : tensor<4x8xbf16>, tensor<8x16xbf16>
// ONLY-LABEL: func @head
// ONLY: tessera.matmul {{.*}} {tessera.precision = "bf16"} : tensor<4x8xbf16>, tensor<8x16xbf16>
// ONLY-NOT: tessera.precision
// ONLY: tessera.matmul %arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// ONLY-LABEL: func @large_weight
// ONLY-NOT: tessera.precision
// ONLY: return
func.func @head(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = tessera.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc(fused<"MatMul">["/head/proj"("model.onnx":0:0)])
  %1 = tessera.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("/other/x")
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A weight with values beyond fp16's range (1e5) keeps its matmul f32
// under fp16; bf16 has fp32's range and narrows it.
// FP16-LABEL: func @large_weight
// FP16-NOT: tessera.cast
// FP16: tessera.matmul {{.*}} {tessera.precision = "f32: a weight holds values beyond fp16's range (largest |x| 1e+05)"} : tensor<2x2xf32>
// BF16-LABEL: func @large_weight
// BF16: tessera.matmul {{.*}} {tessera.precision = "bf16"} : tensor<2x2xbf16>
func.func @large_weight(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = tessera.constant dense<[[1.0, 1.0e5], [2.0, 3.0]]> : tensor<2x2xf32>
  %y = tessera.matmul %x, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Must not fire: operands already narrow (the model's own casts), an
// integer matmul, and exp (computes wide). Attention stays f32 and says
// so, and so does a convolution whose GEMM would have partial tiles.
// BF16-LABEL: func @not_narrowed
// BF16: tessera.matmul %arg0, %arg0 : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
// BF16: tessera.matmul %arg1, %arg1 : tensor<2x2xi8>, tensor<2x2xi8> -> tensor<2x2xi32>
// BF16: tessera.exp %arg2 : tensor<2x2xf32>
// BF16: tessera.attention {{.*}} {tessera.narrow_products = bf16, tessera.precision = "f32: tessera.attention stays f32 under every policy; its products bf16 when lowered as matmuls"} : tensor<1x4x8xf32>
// BF16: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's bf16 convolution GEMMs take whole tiles only (filters a multiple of 8, pixels of 16, an even depth)"} : tensor<1x3x4x4xf32>
func.func @not_narrowed(%a: tensor<2x2xbf16>, %i: tensor<2x2xi8>, %e: tensor<2x2xf32>, %q: tensor<1x4x8xf32>, %img: tensor<1x3x4x4xf32>, %f: tensor<2x3x2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>, tensor<1x4x8xf32>, tensor<1x2x3x3xf32>) {
  %0 = tessera.matmul %a, %a : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
  %1 = tessera.matmul %i, %i : tensor<2x2xi8>, tensor<2x2xi8> -> tensor<2x2xi32>
  %2 = tessera.exp %e : tensor<2x2xf32>
  %3 = tessera.attention %q, %q, %q : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %4 = tessera.conv2d %img, %f : tensor<1x3x4x4xf32>, tensor<2x3x2x2xf32> -> tensor<1x2x3x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x2xf32>, tensor<1x4x8xf32>, tensor<1x2x3x3xf32>
}

// -----

// The CUDA target's fused attention kernel accumulates in f32: under bf16
// its query, key and value narrow and its result widens back; the mask
// stays f32. A head dim the kernel does not take (40) stays f32, and so
// does attention on the CPU.
// CUDA-LABEL: func @attention
// CUDA: %[[Q:.*]] = tessera.cast %arg0 : tensor<1x2x8x64xf32> to tensor<1x2x8x64xbf16>
// CUDA: %[[A:.*]] = tessera.attention %[[Q]], %{{.*}}, %{{.*}} mask(%arg1 : tensor<1x1x8x8xf32>) {causal, tessera.precision = "bf16"} : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
// CUDA: tessera.cast %[[A]] : tensor<1x2x8x64xbf16> to tensor<1x2x8x64xf32>
// CUDA: tessera.attention {{.*}} {tessera.narrow_products = bf16, tessera.precision = "f32: the fused attention kernel does not take tessera.attention (a head dim that is not a static multiple of 16 up to 128); its products bf16 when lowered as matmuls"} : tensor<1x2x8x40xf32>
// BF16-LABEL: func @attention
// BF16-NOT: tessera.cast
// BF16: tessera.attention {{.*}} {causal, tessera.narrow_products = bf16, tessera.precision = "f32: tessera.attention stays f32 under every policy; its products bf16 when lowered as matmuls"} : tensor<1x2x8x64xf32>
// -v names what happened to each attention.
// CUDA-REMARK: assign-precision.mlir:[[# @LINE + 3]]:{{.*}} remark: precision bf16: bf16
// CUDA-REMARK: assign-precision.mlir:[[# @LINE + 3]]:{{.*}} remark: precision bf16: f32: the fused attention kernel does not take tessera.attention (a head dim that is not a static multiple of 16 up to 128); its products bf16 when lowered as matmuls
func.func @attention(%q: tensor<1x2x8x64xf32>, %m: tensor<1x1x8x8xf32>, %q40: tensor<1x2x8x40xf32>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x40xf32>) {
  %0 = tessera.attention %q, %q, %q mask(%m : tensor<1x1x8x8xf32>) {causal} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
  %1 = tessera.attention %q40, %q40, %q40 : tensor<1x2x8x40xf32>, tensor<1x2x8x40xf32>, tensor<1x2x8x40xf32> -> tensor<1x2x8x40xf32>
  return %0, %1 : tensor<1x2x8x64xf32>, tensor<1x2x8x40xf32>
}

// -----

// --keep-fp32 keeps attention whole and its products f32; under fp16 an
// operand beyond fp16's range keeps it f32 too.
// CUDA-KEEP-LABEL: func @attention_kept
// CUDA-KEEP-NOT: tessera.cast
// CUDA-KEEP: tessera.attention {{.*}} {tessera.precision = "f32: kept by --keep-fp32 pattern '/other'"}
// CUDA-FP16-LABEL: func @attention_kept
// CUDA-FP16-NOT: tessera.cast
// CUDA-FP16: tessera.attention {{.*}} {tessera.precision = "f32: an operand holds values beyond fp16's range (largest |x| 1e+05)"}
func.func @attention_kept(%q: tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32> {
  %big = tessera.constant dense<1.0e5> : tensor<1x2x8x64xf32>
  %0 = tessera.attention %q, %big, %q : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32> loc("/other")
  return %0 : tensor<1x2x8x64xf32>
}

// -----

// Convolutions that stay f32 under bf16, each with its reason: over an
// image of dynamic size and grouped (the CPU's kernels for those take f32
// only), depthwise (memory-bound taps), dilated (no GEMM path), kept by a
// pattern; under fp16 every one (nothing bounds their
// results to fp16's range).
// A static dense convolution whose GEMM has whole tiles (16 filters, 4 x 4
// pixels, depth 72) narrows on the CPU: its input and filter cast to bf16,
// accumulated in f32 by the lowering, its bf16 result cast back.
// BF16-LABEL: func @convs_kept
// BF16: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's convolutions over an image of dynamic size take f32 operands only"}
// BF16: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's grouped convolutions take f32 operands only"}
// BF16: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's depthwise convolutions widen narrow operands in their taps: no faster"}
// BF16: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's dilated convolutions take f32 operands only"}
// BF16: %[[IMG:.*]] = tessera.cast %arg5 : tensor<1x8x6x6xf32> to tensor<1x8x6x6xbf16>
// BF16: %[[F:.*]] = tessera.cast %arg6 : tensor<16x8x3x3xf32> to tensor<16x8x3x3xbf16>
// BF16: %[[C:.*]] = tessera.conv2d %[[IMG]], %[[F]] {tessera.precision = "bf16"} : tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16> -> tensor<1x16x4x4xbf16>
// BF16: tessera.cast %[[C]] : tensor<1x16x4x4xbf16> to tensor<1x16x4x4xf32>
// FP16-LABEL: func @convs_kept
// FP16-COUNT-5: tessera.precision = "f32: fp16 would round a convolution's results to fp16's range, which nothing bounds yet"}
// KEEP-LABEL: func @convs_kept
// KEEP-COUNT-2: tessera.conv2d {{.*}}tessera.precision = "f32: the cpu target's
// KEEP: tessera.conv2d {{.*}}tessera.precision = "f32: kept by --keep-fp32 pattern '/other'"}
// On the CUDA target a static, ungrouped, undilated convolution narrows
// (an im2col and a tensor-core GEMM); the others stay f32 with the reason.
// CUDA-LABEL: func @convs_kept
// CUDA: tessera.conv2d {{.*}}tessera.precision = "f32: the cuda target's tensor-core convolutions have static shapes: a narrow one with a dynamic dim would run no faster"}
// CUDA-COUNT-2: tessera.conv2d {{.*}}tessera.precision = "f32: the cuda target's tensor-core convolutions are ungrouped: a narrow grouped one would run no faster"}
// CUDA: tessera.conv2d {{.*}}tessera.precision = "f32: the cuda target's tensor-core convolutions are undilated: a narrow dilated one would run no faster"}
// CUDA: tessera.conv2d %{{.*}}, %{{.*}} {tessera.precision = "bf16"} : tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16> -> tensor<1x16x4x4xbf16>
func.func @convs_kept(%x: tensor<1x4x?x?xf32>, %f: tensor<4x4x3x3xf32>, %y: tensor<1x4x8x8xf32>, %g: tensor<4x2x3x3xf32>, %d: tensor<4x1x3x3xf32>, %w: tensor<1x8x6x6xf32>, %wf: tensor<16x8x3x3xf32>, %dx: tensor<1x8x8x8xf32>) -> (tensor<1x4x?x?xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) {
  %0 = tessera.conv2d %x, %f : tensor<1x4x?x?xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x?x?xf32>
  %1 = tessera.conv2d %y, %g {group = 2} : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x6x6xf32>
  %2 = tessera.conv2d %y, %d {group = 4} : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x6x6xf32> loc("/other")
  %4 = tessera.conv2d %dx, %wf {dilations = array<i64: 2, 2>} : tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x4x4xf32>
  %3 = tessera.conv2d %w, %wf : tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x4x4xf32>
  return %0, %1, %2, %3, %4 : tensor<1x4x?x?xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>
}

