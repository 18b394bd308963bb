// Passes.td - passes of the CUDA backend.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CUDA_PASSES_TD
#define TESSERA_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def CopiesToLinalgPass
    : Pass<"tessera-cuda-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turn buffer copies into linalg.copy, so they run on the GPU";
  let description = [{
    Bufferization leaves `memref.copy` where a result must own its buffer
    (a model output that is a weight or an input, a slice written in
    place). On the host a copy would read device memory; as `linalg.copy`
    it becomes a parallel loop and then a kernel like every other op.
    Copies inside loops that are already parallel are rewritten too.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldTransposesPass
    : Pass<"tessera-cuda-fold-transposes", "::mlir::func::FuncOp"> {
  let summary = "linalg.generic reads a transposed tensor through its map";
  let description = [{
    A `linalg.generic` input produced by `linalg.transpose` (a transposed
    weight, as `Gemm` with `transB` or a transposed K of attention lowers)
    becomes the transpose's input, read through the input's indexing map
    composed with the permutation; transposes left without uses go away.
    On the GPU that saves a kernel and a copy of the operand on every run,
    and a product whose weight is stored [n][k] reads it as it is (the
    tensor-core kernel takes B with K contiguous). On tensors; other
    consumers of a transpose are left alone.
  }];
}

def FuseElementwisePass
    : Pass<"tessera-cuda-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Elementwise producers computed inside their consumers";
  let description = [{
    Upstream's elementwise fusion (a producer with one use is computed in
    its consumer's loop: one kernel instead of two, and no buffer between
    them), except into a contraction: there the producer would run once
    per step of the reduction, and a product of bf16/f16 operands would
    read f32 and truncate inside, which the tensor-core kernel does not
    take. A `tensor.dim` of a result (symbolic sizes: the next op's
    `tensor.empty` reads them) is first computed from the op's operands,
    so that it is not counted as a second use. Runs unless the user asks
    for no fusion (`--no-fusion`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ReshapesToViewsPass
    : Pass<"tessera-cuda-reshapes-to-views", "::mlir::func::FuncOp"> {
  let summary = "Reshapes whose shape the host computes become views";
  let description = [{
    A reshape to a shape of runtime dims (`tensor.reshape` with a shape
    from `tensor.from_elements`) bufferizes to a `memref.reshape` that
    reads its shape from a small buffer filled by stores. On the GPU
    target that buffer would be device memory the host cannot read. When
    every element of the shape buffer is stored once with a value the host
    has, the reshape becomes a `memref.reinterpret_cast` with those sizes
    and row-major strides, and the buffer goes away. Reshapes whose shape
    comes from elsewhere are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PlaceBuffersPass : Pass<"tessera-cuda-place-buffers", "::mlir::ModuleOp"> {
  let summary = "Keep buffers that only the host reads in host memory";
  let description = [{
    Shape arithmetic on dynamic dims (ONNX's Shape, Gather, Concat feeding
    a Reshape) leaves small integer buffers that the host fills and reads
    to compute sizes. A buffer that no parallel loop (no future kernel)
    touches, whose uses are loads, stores, views and reshape shapes
    outside parallel loops, stays in host memory: a static allocation of
    at most 64 KiB becomes a `memref.alloca`, and a global read only that
    way is listed in the module attribute `tessera.cuda.host_globals`, so
    that it keeps its host address (a global read by both gets a host
    copy). Every other buffer is device memory, which host code never
    touches.
  }];
}

def MapParallelLoopsPass
    : Pass<"tessera-cuda-map-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Map each outermost parallel loop nest to a grid of blocks";
  let description = [{
    For every outermost `scf.parallel` of the function: collapses its
    dimensions into one, tiles it by `block-size` (the tile's loop bound
    stays constant and an `scf.if` guards the last, partial block), and
    marks the outer loop `block_x` and the tile `thread_x`. Parallel loops
    nested deeper run sequentially in their thread. Upstream's
    `convert-parallel-loops-to-gpu` then turns each nest into a
    `gpu.launch` whose grid is computed from the loop bounds at run time,
    so one compile serves every size of a dynamic dim.

    Work left on the host that reads or writes buffers (a loop of loads
    and stores outside any parallel loop) is wrapped in a one-iteration
    parallel loop, a kernel of one thread, because host code must never
    touch device memory. A value such work computes and the host then uses
    is an error naming the op.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "threads per block of each elementwise or row kernel">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def ExpandMathPass : Pass<"tessera-cuda-expand-math", "::mlir::func::FuncOp"> {
  let summary = "Math functions as arithmetic, so kernels call no library";
  let description = [{
    Expands math functions into simpler ones (rsqrt into a division by a
    square root, pow into exp and log, the hyperbolic functions into exp)
    and then every function MLIR has a polynomial for (exp, log, erf,
    tanh, sin, cos, atan, ...) into range reduction and a minimax
    polynomial, computing narrower floats in f32. Kernels then need no
    libdevice calls; `math.sqrt`, `math.absf`, `math.floor` and the like
    stay, as they map to single PTX instructions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def DecodeFp8Pass : Pass<"tessera-cuda-decode-fp8", "::mlir::func::FuncOp"> {
  let summary = "fp8 values widened by integer arithmetic where no tensor "
                "core reads them";
  let description = [{
    Rewrites each `arith.extf` from f8E4M3FN or f8E5M2 (what a contraction
    with fp8 operands widens them with, left wherever the tensor-core
    kernels did not take it, or staged by the mma.sync kernel, which has
    no fp8 instructions) into the exact decoding by integer arithmetic that
    the lowering's casts use: LLVM has no fp8 types. Runs after
    tessera-cuda-tensor-core-matmul, which matches the `arith.extf` form.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttachTargetsPass
    : Pass<"tessera-cuda-attach-targets", "::mlir::ModuleOp"> {
  let summary = "An #nvvm.target per architecture on each kernel module";
  let description = [{
    Gives every `gpu.module` an `#nvvm.target` (O3, PTX 8.0, the given
    device libraries) for each of `chips`, except that a module marked
    `tessera.cuda.arch = "sm_90a"` (by tessera-cuda-merge-kernel-modules:
    its kernels use wgmma) gets only that chip's, with PTX 8.3 (its
    `fence.proxy.tensormap`); a marked module whose chip is not among
    `chips` is an error. gpu-module-to-binary
    then compiles it for sm_90a alone, and the other chips' verifiers never
    see its instructions.
  }];
  let options = [
    ListOption<"chips", "chips", "std::string",
               "the architectures (sm_80, sm_90a, ...)">,
    ListOption<"linkLibs", "link-libs", "std::string",
               "bitcode libraries linked into every kernel module">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def MergeKernelModulesPass
    : Pass<"tessera-cuda-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "All kernels in one gpu.module";
  let description = [{
    Kernel outlining makes one `gpu.module` per kernel, each named after
    it. Moves every kernel into the first module, renamed to its module's
    (unique) name, and points each `gpu.launch_func` at it, so that the
    model's kernels are one PTX module per architecture: one ptxas run
    each, one module to load, and one PTX file for `--emit=ptx`. Kernels
    that use sm_90a's own instructions (`nvvm.wgmma.*`) are merged into a
    module of their own instead, marked `tessera.cuda.arch = "sm_90a"`
    (see tessera-cuda-attach-targets). A module holding anything but kernels
    is left alone. Every kernel's workgroup
    (shared-memory) buffers get `llvm.align = 16` unless they have an
    alignment: 16-byte `cp.async` copies and `ldmatrix` rows need it.
  }];
}

def CheckHostCodePass
    : Pass<"tessera-cuda-check-host-code", "::mlir::ModuleOp"> {
  let summary = "Host code must not touch device memory";
  let description = [{
    Runs after kernel outlining. A parallel loop left on the host (one
    that could not be mapped to a grid) or a load or store of a device
    buffer in a host function would read GPU memory from the CPU: each is
    an error naming the op, instead of a crash when the model runs.
  }];
}

def DeviceGlobalsPass
    : Pass<"tessera-cuda-device-globals", "::mlir::ModuleOp"> {
  let summary = "Give kernels the device copy of each weight";
  let description = [{
    Runs on the host code in the LLVM dialect. A model's weights are
    global constants in host memory; every `llvm.mlir.addressof` of one in
    a host function becomes a call to `tessera_cuda_device_global(address,
    bytes)`, which the artifact's support code answers with a device copy
    uploaded on first use. Addresses taken inside `gpu.module`s are left
    alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KernelImagesPass : Pass<"tessera-cuda-kernel-images", "::mlir::ModuleOp"> {
  let summary = "Assemble each gpu.binary's PTX into one kernel image";
  let description = [{
    Runs after `gpu-module-to-binary{format=isa}`, which leaves one PTX
    object per `#nvvm.target` of a module. Replaces the objects of every
    `gpu.binary` with a single object holding Tessera's kernel image: for
    each architecture, the cubin that `ptxas` (from `cuda-path`) assembles
    from its PTX, and the PTX itself (for newer GPUs' JIT and for the PTX
    emulator). `ptxas` failing, or absent when cubins are asked for, is an
    error naming the architecture.
  }];
  let options = [
    Option<"cudaPath", "cuda-path", "std::string", "\"/usr/local/cuda\"",
           "the CUDA toolkit whose bin/ptxas assembles cubins">,
    Option<"assemble", "assemble", "bool", "true",
           "assemble cubins; false embeds the PTX alone">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ConvolutionGemmsPass
    : Pass<"tessera-cuda-convolution-gemms", "::mlir::func::FuncOp"> {
  let summary = "Narrow convolutions become an im2col and a GEMM for the "
                "tensor cores";
  let description = [{
    A `linalg.conv_2d_nchw_fchw` on tensors whose input and filter are
    bf16 or f16 and whose result is f32 (what a convolution under the bf16
    and fp16 policies lowers to: products of the narrow operands summed in
    f32) becomes upstream's im2col form: a gather of the input's patches
    into an [N, C*KH*KW, OH*OW] tensor (a data movement kernel) and a
    contraction of the filter, seen as [F, C*KH*KW], with it into
    [N, F, OH*OW], which `tessera-cuda-tensor-core-matmul` computes on the
    tensor cores (M the filters, N the pixels, K the taps, a batch dim the
    images). The contraction starts from a zero fill of its own shape,
    placed right before it (not the convolution's result collapsed), and
    the elementwise `linalg.generic` ops that read the result (a bias, an
    activation, a rounding, and theirs in turn) are collapsed to
    [N, F, OH*OW] (linalg's fold of a reshape by collapsing), reading the
    contraction's result as it is: the tensor-core kernel takes them as
    its epilogue. Other readers (a reduction) read the expansion.

    Left alone: f32 convolutions (no tensor core takes them without
    tf32), and convolutions with a dynamic dim (the gather needs static
    sizes), which stay one thread per output element.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TensorCoreMatmulPass
    : Pass<"tessera-cuda-tensor-core-matmul", "::mlir::ModuleOp"> {
  let summary = "bf16/f16/fp8/int8 contractions become tensor-core kernels";
  let description = [{
    A contraction on buffers (one M, N and K dim, any batch dims, A stored
    with K contiguous, B with N or K contiguous, row-major buffers) whose
    operands are bf16 or f16 and whose body extends them to f32, multiplies
    and adds into an f32 result (what the bf16 and fp16 precision policies
    produce) becomes a `gpu.launch` of a tensor-core kernel:

    - a block of 8 warps computes a 128x128 tile of the result, each warp
      4x4 `mma.sync.m16n8k16` accumulator tiles (f32) in registers, when
      the grid of such tiles (times the batch) has at least 128 blocks;
      otherwise a block of 4 warps a 64x64 tile, each warp 2x4 tiles
      (chosen when compiling for static sizes, by the host otherwise);
    - K advances by 32 through a three-stage `cp.async` pipeline into
      shared memory (16-byte copies, zero-filled past the matrices' edges);
    - fragments are read with `ldmatrix` (`.trans` for B stored [k][n])
      from rows whose 16-byte chunks are XOR-swizzled against bank
      conflicts;
    - the result is stored with bounds checks; a zero fill of the result
      just before the contraction is folded into the accumulators'
      initial value, otherwise they start from the result's values.

    Every dim is a runtime value. The 16-byte copies need K, and N when B
    is stored with N contiguous, to be multiples of 8; otherwise the same
    kernel copies its tiles element by element (when that is known only at
    run time, the host chooses between the two). Empty dims and grids
    beyond CUDA's limits run the original op (an `scf.if` with the
    contraction in its else branch). Integer contractions
    and other layouts are left alone, and f32 ones unless `allow-tf32`:
    then they run as `mma.sync.m16n8k8` on tf32 (operands rounded to 10
    mantissa bits, f32 accumulation; K advances by 16, and K, and N when
    B is stored with N contiguous, must be multiples of 4).

    When the grid of 64x64 tiles has fewer than 128 blocks (few rows, deep
    K: a decoding step), the host splits K into up to 16 parts of at
    least 256 (computed at run time; never when a static K is under 512):
    the grid's z holds batch x parts, each block multiplies its part's K
    tiles and adds its tile to the result with atomic adds, the fused zero
    fill runs before and the fused epilogue after, as ops of their own.
    With `hopper` the split product runs on the sm_90a twin below
    (`wgmma_gemm_split_k`) where it would run, else on the mma.sync
    kernel (`mma_sync_gemm_split_k`, `_unaligned` when it copies element
    by element).

    With `hopper`, each bf16/f16 kernel also gets an sm_90a twin, launched
    instead when the device reports compute capability 9.0 (the host asks
    `tessera_cuda_compute_capability`) and A and B are 16-byte aligned: a
    warpgroup per 64 rows of a 64x128 tile, or of a 128x128 tile when the
    grid of those still has 128 blocks (chosen at run time), `wgmma.mma_async` m64n128k16 from shared
    memory that TMA copies fill (tensor maps from
    `tessera_cuda_tensor_map`, 128-byte swizzle, four stages on mbarriers).
    Its `gpu.launch` carries `tessera.cuda.arch = "sm_90a"`.

    fp8 (f8E4M3FN, f8E5M2) contractions: the mma.sync kernel (which has no
    fp8 form) copies their tiles element by element, widened to bf16
    (exact; tessera-cuda-decode-fp8 expands the `arith.extf`), split or
    not. With `hopper` and B stored with K contiguous (fp8 wgmma reads
    both operands K-major), the sm_90a twin reads the fp8 bytes through TMA
    (128 elements of K per stage) with `wgmma.mma_async` m64n128k32
    e4m3/e5m2, when K is also a multiple of 16 (checked on the host).

    int8 contractions (s8 operands, B stored with K contiguous, widened by
    `arith.extsi` and summed by `arith.addi` into an i32 result) run the
    mma.sync kernel with `mma.sync` m16n8k32 s8 into i32 accumulators
    (wrapping), 64 elements of K a stage; split-k adds with atomic integer
    adds. A B stored with N contiguous is left alone (ldmatrix transposes
    16-bit elements only). With `hopper` they also get the sm_90a twin,
    with `wgmma.mma_async` m64n128k32 s8 into s32 as for fp8.

    A contraction's kernel (fp8, bf16, f16, int8 dequantized in its
    epilogue, or tf32) also computes fp8 current scaling's amax of what it
    stores, when a linalg.generic later in the block reduces that buffer
    (its only input, read by a permutation) to one f32 by `arith.maximumf`
    (which keeps a NaN, as the integer maximum of the bits does) of values
    a `math.absf` makes non-negative, computed from the element alone, and
    nothing between writes the buffer: each thread keeps the largest
    element value it stores, five `gpu.shuffle xor` give the warp's, and
    lane 0 folds it by `memref.atomic_rmw maxs` into an i32 holding the
    f32's bits (which order non-negative floats as integers do). A
    one-thread kernel starts that i32 at -inf's bits before the product;
    in place of the reduction, another folds it into the reduction's
    result with the reduction's own combiner. Where the host splits K (the
    parts store partial sums, so their launch has no amax) or the original
    op runs instead (an empty dim, grids beyond CUDA's limits), the
    reduction runs over the stored result after the product and its
    epilogue, into an f32 of its own (the warp reductions take it), whose
    bits a one-thread kernel stores into the i32.
  }];
  let options = [
    Option<"allowTF32", "allow-tf32", "bool", "false",
           "run f32 contractions on tensor cores as tf32">,
    Option<"hopper", "hopper", "bool", "false",
           "also build sm_90a wgmma kernels, chosen at run time on sm_90a GPUs">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def FlashAttentionCallPass
    : Pass<"tessera-cuda-flash-attention-call", "::mlir::ModuleOp"> {
  let summary = "attention the fused kernel takes becomes a call on buffers";
  let description = [{
    `tessera.attention` whose query, key and value are bf16 or f16 with a
    head dim that is a multiple of 16 up to 128 (query, key and value
    alike; batch dims equal or
    broadcast along static unit dims; an additive float mask broadcast
    along its static unit dims) becomes a call to a private declaration
    marked `tessera.cuda.flash_attention`, on buffers: the operands through
    `bufferization.to_buffer`, then a new output buffer that
    `bufferization.to_tensor` makes the result. The call carries the scale
    (`tessera.scale`) and the causal flag (`tessera.causal`).
    Bufferization and deallocation treat it as any call;
    `tessera-cuda-flash-attention` later builds the kernel in its place.
    Other attention is left for the lowering to linalg (its products and
    softmax).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FlashAttentionPass
    : Pass<"tessera-cuda-flash-attention", "::mlir::ModuleOp"> {
  let summary = "calls to flash-attention declarations become the kernel";
  let description = [{
    Each call to a declaration marked `tessera.cuda.flash_attention` (made
    by `tessera-cuda-flash-attention-call`) becomes a `gpu.launch` in the
    manner of FlashAttention-2; the declarations go away.

    - A block of 4 warps owns 64 query rows (16 per warp); the query tile
      stays in shared memory.
    - 64 keys at a time: S = Q K^T with `mma.sync.m16n8k16` into f32
      accumulators, the online softmax on the accumulators (row maxima
      across a quad with warp shuffles, the running output and sums
      rescaled), then O += P V with P repacked in registers as the A
      operand.
    - K and V tiles come into shared memory with `cp.async` while the
      previous product runs, rows XOR-swizzled (head dims 64 and 128) or
      padded by 16 bytes for `ldmatrix`.
    - Scale, mask and causal limit apply to the scores; causal key blocks
      past a query block's last visible key are skipped. No sequence x
      sequence buffer exists.

    Every dim but the head dim is a runtime value; batch entries beyond the
    grid's y limit are looped over. A query row whose keys are all hidden,
    or that has none, comes out zero.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def WarpReductionsPass
    : Pass<"tessera-cuda-warp-reductions", "::mlir::func::FuncOp"> {
  let summary = "row reductions become one warp per row, full ones two launches";
  let description = [{
    A `linalg.generic` on buffers whose loops are all parallel but the
    last, a reduction over rows of at least 64 elements (or a dynamic
    number), with one f32 result indexed by exactly the parallel loops and
    a body that folds a value computed from the inputs into the result
    with one combiner (`arith.addf`, `mulf`, `maximumf`, `maxnumf`,
    `minimumf`, `minnumf`) becomes a `gpu.launch` in which a warp reduces
    a row: its lanes step through the row 32 elements apart folding their
    elements from the combiner's identity, five butterfly shuffles combine
    the lanes' totals, and lane 0 folds the total into the result. Four
    rows per block of 128 threads; every size is a runtime value. (A
    softmax's maximum and sum, a norm's mean and variance, with their
    fused elementwise producers.) Shorter rows, several reduction loops,
    or other bodies are left to the loop nest (one thread per row).

    A reduction over every loop into a result of rank 0, of at least 64
    elements (or a dynamic number), with such a body, becomes two
    launches: warps each reduce a contiguous chunk (at least 256 elements,
    at most 1024 chunks) of the flattened loops into a temporary buffer,
    then one warp reduces those partial results and folds their total into
    the result. When the buffer it reduces is written earlier in the block
    by an elementwise `linalg.generic` (all loops parallel, the same loops,
    that buffer its one output written in loop order and not read through
    it, inputs read by loops and constants and the buffer itself only at
    the same element, a body of pure ops), the reduction reads it by a
    permutation of its loops and through no other operand, and nothing
    between the two reads or writes the buffer or writes or frees the op's
    inputs, the first launch computes the op's value for each element from
    its inputs, stores it and reduces it, and the op is erased (fp8 current
    scaling's amax of a LayerNorm's output: no pass of its own over it).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def VectorizeElementwisePass
    : Pass<"tessera-cuda-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "elementwise ops on buffers read and write 16-byte vectors";
  let description = [{
    A `linalg.generic` on buffers whose loops are all parallel, whose body
    is elementwise `arith`/`math` ops (no `linalg.index`), and whose
    innermost loop is the last, contiguous (unit-stride) dim of every
    operand that it indexes and of every result, becomes an `scf.parallel`
    nest whose innermost loop steps V elements at a time: V is 16 bytes
    over the widest such operand's element (4 f32, 8 bf16/f16, 16 i8), or
    half that when the innermost size is a static multiple of V/2 only.
    Each iteration reads those operands with `vector.load` (their
    alignment set: `ld.global.v4` in PTX), the others (indexed by outer
    loops only: a bias along another dim, a scale) with one `memref.load`
    broadcast, computes the body on vectors and writes each result with
    `vector.store`. It first checks that every vector's address is a
    multiple of its size (views, offsets and a caller's device pointers
    need not be) and computes the V elements one at a time where one is
    not. The innermost size must be static; outer ones may be symbolic.
    Elementwise kernels with transposed operands, gathers, reductions and
    ops inside kernels are left alone. Copies (`tessera-cuda-copies-to-
    linalg`) are such ops.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // TESSERA_TARGET_CUDA_PASSES_TD
