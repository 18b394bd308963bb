// Passes.td - passes of the CPU backend.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TARGET_CPU_PASSES_TD
#define TESSERA_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def SequentializeNestedParallelPass
    : Pass<"tessera-cpu-sequentialize-nested-parallel",
           "::mlir::func::FuncOp"> {
  let summary = "Keep only the outermost parallel loops parallel, and only "
                "those with enough work";
  let description = [{
    Rewrites every scf.parallel nested inside another loop (scf.parallel or
    scf.for) into a nest of scf.for, so that each loop nest forks OpenMP
    threads once, at its outermost parallel loop, instead of once per
    iteration of an enclosing loop. With `min-parallel-work` = N > 0, one
    inside sequential loops only whose work (counted as below) is known
    and at least N stays parallel and forks once per iteration of theirs:
    a convolution over a symbolic batch is a loop over the images, each a
    GEMM, and ran on one thread (torchvision ResNet-18 at 112 exported with
    a symbolic batch, 3 alternating rounds, medians 8.05-8.46 ms against
    4.45-4.68 with this, as fast as with a static batch).

    With `min-parallel-work` = N > 0, an outermost parallel loop whose
    bounds are all constant and whose work (its iterations times the ops
    its body holds, nested loops' bodies counted once per iteration they
    make when their bounds are constant too, an op on vectors or a copy
    once per 16 elements) is below N runs as scf.for on
    the calling thread too: forking and joining the threads costs more
    than such a loop (a few microseconds), and each parallel loop also
    becomes a function that LLVM outlines, at a cost that grows with the
    size of the function holding it (a chain of 30,000 elementwise nodes on
    four floats made 484 of them). Loops with dynamic bounds, dynamic
    copies or calls inside stay parallel here; after convert-scf-to-openmp,
    tessera-cpu-parallel-if-enough-work makes such loops fork only when
    their work, counted at run time, is enough.
    Parallel loops with reductions are left alone.
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t", "0",
           "Outermost parallel loops with constant bounds and less work "
           "than this (iterations times ops) run sequentially; 0 keeps "
           "them all parallel">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def ParallelIfEnoughWorkPass
    : Pass<"tessera-cpu-parallel-if-enough-work", "::mlir::func::FuncOp"> {
  let summary = "Fork OpenMP threads for a parallel loop of dynamic bounds "
                "only when its iterations make enough work";
  let description = [{
    Runs after convert-scf-to-openmp. For each omp.parallel whose loop nest
    has bounds known only at run time (a symbolic batch, sequence or image
    size) and a body whose work is known (counted as
    tessera-cpu-sequentialize-nested-parallel counts it), sets the
    parallel region's `if` to "iterations times the body's work is at least
    `min-parallel-work`": below that the region runs on the calling thread,
    as a loop of constant bounds with that little work does. Before, every
    such loop forked the threads, and a small convolutional network over an
    image of symbolic size spent more time in OpenMP's fork, join and
    waits than in its loops. A body whose work is not known at compile
    time (calls, copies of dynamic size, loops of dynamic bounds such as a
    masked row's loop over an image's width) forks when the nest has at
    least two iterations (a product of few rows is one block of them); no
    region forks for one iteration. Left alone:
    regions that already have an `if`, that hold more or less than one
    loop nest, whose loop nest has bounds computed inside the region,
    inclusive bounds, loops not all collapsed, non-index bounds or steps
    that are not positive constants, and loops of constant bounds.
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t", "32768",
           "Parallel regions with less work than this (iterations times "
           "ops) at run time run on the calling thread">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def StaticChunksPass
    : Pass<"tessera-cpu-static-chunks", "::mlir::ModuleOp"> {
  let summary = "Divide a parallel region's iterations among its threads "
                "in the region, without a worksharing loop";
  let description = [{
    Runs after convert-scf-to-openmp (and tessera-cpu-parallel-if-enough-
    work). An `omp.wsloop` that is the last op of its `omp.parallel`
    becomes an `scf.for` over this thread's share of the collapsed
    iterations, [total * t / n, total * (t + 1) / n) with t and n from
    `omp_get_thread_num` and `omp_get_num_threads` (declared in the module
    when missing), the nest's indices divided out of the share's first
    iteration once and then carried from iteration to iteration (the
    innermost steps and wraps into the next: a division per iteration cost
    more than a small elementwise body). The OpenMP runtime's worksharing loop costs each thread a
    call to `__kmpc_for_static_init` (which in Debian's libomp formats a
    debug string every time) and a barrier at its end, on top of the
    region's own join: on a small convolutional network of ~145 regions
    per run, the barriers took 18% of the run's CPU time. Left alone:
    worksharing loops with reductions, private, linear or allocated
    values, ordered iterations, a schedule other than static or a chunk
    size, ops after them in their region, and loop nests with inclusive
    bounds, tiles, loops not all collapsed, non-index bounds, steps that
    are not positive constants or a body of several blocks.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def FuseReductionRegionsPass
    : Pass<"tessera-cpu-fuse-reduction-regions", "::mlir::func::FuncOp"> {
  let summary = "Compile each reduction fusion region as one row loop";
  let description = [{
    Runs after convert-tessera-to-linalg with `keep-reduction-regions`,
    which leaves `tessera.fusion` regions of kind `reduction` (softmax,
    layer_norm and rms_norm with their prologue and epilogue) in place,
    their bodies lowered to linalg. For each: tiles the op that computes
    the region's result one row at a time (every loop but the innermost)
    on an scf.forall and fuses into the row every producer of the region
    (the row maximum, the sums, the exponentials), so that the region is
    one loop nest whose intermediates are single rows that stay in cache;
    the region's inputs are not recomputed. A region whose result is not
    an all-parallel linalg op of rank 2 or more, and regions of other
    kinds, are inlined as they are.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseElementwisePass
    : Pass<"tessera-cpu-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers into elementwise consumers";
  let description = [{
    Merges chains of elementwise linalg.generics into one loop nest. A
    producer is fused only into a consumer whose loops are all parallel: in
    a reduction or contraction it would be recomputed at every step of the
    reduced loop (a GELU inside the next matmul would run once per
    multiply-add). A fused body holds at most 64 ops: each fusion clones
    both bodies, so one body for a chain of n ops would cost O(n^2)
    (a chain of 2,000 elementwise nodes took 18 s); a long chain becomes
    loops of about 64 ops each.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TileContractionsPass
    : Pass<"tessera-cpu-tile-contractions", "::mlir::ModuleOp"> {
  let summary = "Register-tile and vectorize matmul-like contractions";
  let description = [{
    First, each static linalg.conv_2d_nchw_fchw becomes im2col and a GEMM
    (per-tap copies of the image's strided slices), its loops in the order
    below: rows are the filters, columns the output pixels. One over an
    image of symbolic size keeps that order with the pixels padded to
    whole 48-column panels (a dynamic batch dim of the GEMM): at stride 1
    with no im2col, each panel one GEMM per tap of the filters and the
    flat input's slice from the panel's start shifted by the tap (the
    input's pad made a few rows taller), the convolution's elementwise
    consumer after the last tap unless it reads the batch index; at other
    strides from per-tap copies padded with zero rows; a pointwise one
    reads the image transposed as its dynamic rows. Then, for each
    linalg.generic
    contraction with loops [batch..., rows, k, columns]:
    - when the rhs reads none of the batch dims (a weight shared by every
      batch index, as in [S, B, K] x [K, N]) and the lhs and the result
      read batch and row dims contiguously, folds the batch dims into the
      rows (linalg's collapseOpIterationDims), so that one GEMM over all
      rows runs instead of one per batch index; its epilogue (see below)
      folds the same dims; where the product is expanded back into more
      than one dynamic dim, a tensor.reshape does it;
    then, for static k and columns:
    - when 8 does not divide the rows, splits off the last rows (fewer
      than 8, tiled as one tile); when 48 does not divide the columns
      (and there are more than 48), splits the contraction in two: the
      widest multiple of 48 columns, then the rest, which is split again
      after its widest multiple of 16 when 16 does not divide it (fewer
      than 16 columns form one panel); each part is tiled as below; an
      epilogue (see below) splits with the contraction, so that each part
      keeps its own, and a fill of the accumulator becomes one per part;
    - packs the lhs (when 8 divides its rows), read as (batch..., rows, k), into 8-row tiles
      ([batch..., M/8, K, 8], a linalg.transpose before the loops) so that
      the 8 values each k step broadcasts are contiguous, right after the
      lhs is defined (outside the loops the contraction is in);
      contractions that read the same lhs the same way share one packed
      copy;
    - tiles batch and columns to 1 x W with scf.forall, W = 48 (or 32 or
      16 where 48 does not divide the columns; panels run on threads; with
      more than 256 rows, a multiple of 256, or dynamic rows, rows are
      blocked by 256 in the same forall so that a block of the lhs stays
      in the L2 cache while the panels stream past, and a product with
      few columns and dynamic rows does not run on one thread; the last
      block of dynamic rows is partial);
    - packs each panel's rhs slice into a contiguous K x W buffer when
      more than 8 row tiles read it (a linalg.copy into a new tensor, which
      the loop vectorizer turns into row-wide vector moves; with at most 8,
      attention's blocks or a convolution's filters, the tiles read the
      slice where it is; a constant rhs, its transpose, or a column
      slice of either, shared by all batches, is packed once, at compile
      time, into a new constant of N/W such panels that each iteration
      slices; so is a matrix that is an argument of a private function
      to which every call passes a constant (a kernel that a model's
      layers share, `tessera-outline-kernels`): each call passes its
      constant packed, as a new argument, and the old argument goes once
      nothing reads it);
    - tiles rows by 8 and k by 1 with scf.for, and vectorizes the tile into
      a vector contraction unrolled into one (1 x 1) by (1 x 16) product
      per row and 16 columns, row by row, so that the 8 x W accumulator
      lives in vector registers across the k loop once hoisted (24 of the
      32 zmm registers at W = 48) and one broadcast lhs value is live at a
      time;
    - when the accumulator starts as a linalg.fill used by nothing else,
      starts each tile from the fill value instead (the fill of the whole
      result goes away);
    - when the only user of the result is an all-parallel linalg.generic
      reading it element for element (a bias, activation or residual add:
      a matmul's epilogue; also one of another element type, such as an
      8-bit consumer's quantization), fuses that op into the panel loop,
      so that it runs on each panel right after the panel's row tiles,
      while the panel is in cache.
    Dynamic rows are tiled by 8 and the row loop peeled: its full tiles
    get static types and are vectorized as above; the last, partial tile
    (fewer than 8 rows) runs as a loop of its own, one row at a time, each
    row a 1 x W register tile vectorized the same way; with a fill, it
    fills its own rows just before. Contractions with
    dynamic k or columns are left as they are (after folding).
    With `bf16-dot-product` (CPUs whose `vdpbf16ps` runs at twice the
    fp32 FMA rate, such as AMD Zen 4 and Zen 5), a contraction of bf16
    operands into an f32 accumulator with an even k and 16, 32 or 48
    columns per panel takes pairs of k instead: each panel of the rhs is
    packed as [K/2, W, 2] (a constant one at compile time), and each tile
    of up to 8 rows becomes a loop over the k pairs whose body broadcasts
    each row's pair of lhs values as one 32-bit lane and accumulates with
    `x86vector.avx512.dot` into 8 x W/16 f32 vectors carried in registers.
    The lhs is then read in place (not packed); the partial tile of
    dynamic rows reads the rhs as it is, a row at a time (the widened
    operands' fp32 products).
    With `int8-dot-product` (AVX-512 VNNI), a contraction of i8 operands
    into an i32 accumulator with k a multiple of 4 does the same with
    groups of four k ([K/4, W, 4] panels) on `vpdpbusd` (an
    `llvm.call_intrinsic`), which multiplies unsigned bytes by signed
    ones: the lhs bytes are read with their sign bit flipped (x + 128),
    and 128 times each column's sum over k (one loop per panel) is
    subtracted from the tile's sums.
    With `report-generic`, each contraction left as it is (and each
    convolution kept as a direct loop nest: dynamic, grouped or depthwise)
    gets a remark that says why, at its ONNX node.
  }];
  let options = [
    Option<"reportGeneric", "report-generic", "bool", /*default=*/"false",
           "Remark on each contraction that stays a generic loop nest">,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "The CPU's vector registers: 512 (AVX-512: 8 x 48 tiles of "
           "16-wide vectors) or 256 (AVX2: 4 x 24 tiles of 8-wide vectors, "
           "12 of its 16 registers)">,
    Option<"bf16DotProduct", "bf16-dot-product", "bool", /*default=*/"false",
           "Compute bf16 x bf16 -> f32 contractions with AVX-512 BF16's "
           "vdpbf16ps on pairs of k (for CPUs where it runs at twice the "
           "fp32 FMA rate)">,
    Option<"int8DotProduct", "int8-dot-product", "bool", /*default=*/"false",
           "Compute i8 x i8 -> i32 contractions with AVX-512 VNNI's "
           "vpdpbusd on groups of four k">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseFullReductionsPass
    : Pass<"tessera-cpu-fuse-full-reductions", "::mlir::func::FuncOp"> {
  let summary = "Reduce a tensor to its largest or smallest value as it is written";
  let description = [{
    For each linalg.generic that reduces one tensor to one value (every
    loop a reduction, the result rank 0) by a maximum or a minimum (fp8
    current scaling's amax: the largest |x|), with an element function
    that does not read the position (no linalg.index) and other inputs
    that are single values:
    - when the tensor is a result of an scf.forall (a register-tiled
      matmul's panel loop with its epilogue, a normalization's row loop),
      directly or through elementwise ops of one tensor, single values
      and tensors read by innermost dims alone (a bias, sliced at each
      tile's columns),
      collapses, expansions and transposes (none changes which values the
      tensor holds), or a slice of it from its first element (the tiled
      attention's output without its padding rows: only each tile's part
      inside the slice counts), each iteration reduces the tile it inserts (the
      elementwise ops applied to it) into its own element of a tensor of
      partial results, a new shared output of the loop, and the reduction
      reads those partials: the tensor is not read a second time. The
      loops of this pipeline write every element of their results (they
      come from tiling), which the fusion relies on; a loop that inserts
      more than one tile into the result, or steps that are not
      constants, is left alone.
    - the same when the tensor is put together by tensor.insert_slice ops
      from several such loops' results (a product whose rows or columns
      the register tiles do not divide: a block of whole tiles and the
      rest, each its own loop), slices of such and tensor.empty, all of
      static sizes: each loop reduces its tiles (a bias read at the
      loop's columns in the whole tensor) and the reduction combines
      every loop's partials. The elements no loop writes are unspecified
      (tensor.empty's); a loop result inserted over another's elements,
      into a tensor of defined values (a fill), or cut by a slice, two
      results of one loop, and a loop that starts its result from defined
      values are refused.
    - otherwise, when the tensor has two dims or more: rows first (the
      innermost dim reduced, the others parallel, which the loop
      vectorizer runs in vector steps on threads), then the rows' values;
      before, the reduction was a scalar loop over every element.
    A maximum or a minimum gives the same value in any order, so the
    result is unchanged; sums are left as they are.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def VectorizeLoopsPass
    : Pass<"tessera-cpu-vectorize-loops", "::mlir::func::FuncOp"> {
  let summary = "Vectorize elementwise loops and innermost-axis reductions";
  let description = [{
    For each linalg op on tensors whose loops are all parallel, or
    parallel but for the innermost one which reduces, and whose innermost
    loop is static: tiles the outer loops by 1 with scf.forall (they run
    on threads; they may be dynamic when the op is plain: operands indexed
    by loop dims, no linalg.index or tensor.extract) and the innermost
    loop into steps of 64 elements (16 when 64 does not divide it; whole
    when it is at most 64 long, or when it is a reduction of at most 4096
    elements), and vectorizes each tile, so that GELU, softmax, layer norm
    and bias loops run on AVX-512 registers rather than one element at a
    time. A plain op whose loops are all parallel and whose innermost loop
    is dynamic (the width of an image of symbolic size): the outer
    loops by 1 with scf.forall, each row an scf.for of masked 16-element
    steps, the last one partial, the masks then on the transfers (masked
    loads and stores; a transposed read, 16 loads). Reductions over outer
    axes or over a dynamic row, static rows with no such step, and ops
    linalg cannot vectorize are left as they are. A nearest upsampling by
    whole factors (a copy that reads each dim d as d or d floordiv f, the
    Resize lowering's, with a row factor dividing 16): rows by 1 with
    scf.forall, each row in steps of 16 outputs, 16/f inputs read and each
    repeated f times by a vector.shuffle, the last step masked.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FreeForallAllocationsPass
    : Pass<"tessera-cpu-free-forall-allocations", "::mlir::func::FuncOp"> {
  let summary = "Let buffer deallocation free what each scf.forall "
                "iteration allocates";
  let description = [{
    Runs on bufferized IR, before the ownership-based buffer deallocation.
    That pass does not look into scf.forall bodies (scf.forall is not a
    region branch op), so the buffers an iteration allocates, directly or
    as the results of a loop inside it (the running maximum, sum and
    accumulator of tiled attention's online softmax), were never freed.
    This pass wraps each forall body in an scf.execute_region, which the
    deallocation pass handles like any region: every buffer the iteration
    owns is freed at the region's end. A forall iteration cannot pass a
    buffer on to later code (its results are tensors, and the pass runs
    after bufferization). The canonicalizer inlines the region again.
    Bodies that hold only their terminator, or are wrapped already, are
    left alone.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def ApproximateMathPass
    : Pass<"tessera-cpu-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "Expand f32 transcendental functions into polynomials";
  let description = [{
    Rewrites math.erf, math.tanh, math.exp, math.expm1, math.log,
    math.log1p and math.log2 on f32 scalars and vectors into arithmetic
    (range reduction and minimax polynomials within a few ulp of libm), so
    that the loops computing GELU, softmax and the like vectorize instead
    of calling libm one element at a time. Other element types and other
    functions (sqrt, rsqrt, pow) are left for the LLVM intrinsics or libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CheckAllocationsPass
    : Pass<"tessera-cpu-check-allocations", "::mlir::ModuleOp"> {
  let summary = "Stop a run whose heap allocation fails instead of using "
                "the null pointer";
  let description = [{
    Runs on the LLVM dialect, after the CPU pipeline's last conversion.
    Lowered memref.alloc calls `_mlir_memref_to_llvm_alloc` or
    `_mlir_memref_to_llvm_aligned_alloc`, whose sizes may depend on the
    dims a caller passes at run time. Tessera's runtime allocator returns
    null (and counts the failure, `tesseraAllocationFailures`) when a
    request is over the memory limit or the system refuses it.

    After each such call this pass branches on a null result to the exit of
    the enclosing region: the function returns (poison results), an
    OpenMP loop iteration ends (`omp.yield`), or, directly in a parallel
    region that holds no worksharing loop, barrier or other OpenMP op (each
    thread's share of the iterations, as tessera-cpu-static-chunks leaves
    it), the thread's share ends (`omp.terminator`). A thread leaving a
    region that does hold one early would hang its team there, so an
    allocation anywhere else inside OpenMP regions is an error. After each
    op of a function's body whose regions may fail that way (`omp.parallel`)
    and each call to a function of the module that may fail, the counter is
    compared with its value at the function's entry and the function
    returns when it changed. The runtime reads the same
    counter around a run and reports the failure as an error, discarding
    the results. Functions without allocations are left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def InlineAllocaScopesPass
    : Pass<"tessera-cpu-inline-alloca-scopes", "::mlir::func::FuncOp"> {
  let summary = "Inline the memref.alloca_scope ops that hold no alloca";
  let description = [{
    Converting parallel loops to OpenMP wraps each loop body in a
    memref.alloca_scope, so that stack buffers made in an iteration go with
    it. A scope must stay one block, so the scopes that hold no stack
    allocation have to be inlined before structured control flow inside
    them becomes blocks. The canonicalizer inlines only scopes whose ops all
    declare their memory effects, and keeps those holding a call (such as
    buffer deallocation's `dealloc_helper`). A call allocates in its own
    frame, never in its caller's, so this pass inlines every scope without
    a memref.alloca of its own (nested automatic allocation scopes, such as
    functions and inner alloca scopes, do not count). Scopes with allocas,
    and scopes that return values, are left alone.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CopyStridedResultsPass
    : Pass<"tessera-cpu-copy-strided-results", "::mlir::func::FuncOp"> {
  let summary = "Copy a function's results that are strided slices";
  let description = [{
    Functions return buffers of the identity layout. A result that is a
    `tensor.extract_slice` whose stride along some dim is known only at run
    time (the real rows of an output padded up to whole blocks, as the
    tiled attention writes it for a symbolic sequence) bufferizes to a
    subview that one-shot bufferization then `memref.cast`s to the identity
    layout: the cast verifies (a dynamic stride is compatible with any) and
    the caller reads the rows as if they were contiguous. This pass, run
    before bufferization, returns a copy of each such slice instead
    (`bufferization.alloc_tensor copy(...)`). Slices that are contiguous
    (only the outermost non-unit dim cut, strides 1) are left alone.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def StridedReadsPass
    : Pass<"tessera-cpu-strided-reads", "::mlir::func::FuncOp"> {
  let summary = "Vector reads of lanes a few elements apart as contiguous reads and a shuffle";
  let description = [{
    Runs after bufferization. A 1-D `vector.transfer_read` in bounds, of
    32- or 64-bit elements, along the last dim of a memref whose stride
    there is a static 2 to 4 (a depthwise convolution's or max pool's taps
    read at stride 2, a stride-2 convolution's im2col taps), lowers to one
    scalar load and one insert per lane. This pass rewrites it into a read
    of `lanes * stride` contiguous elements from the first lane's on,
    through a 1-D `memref.reinterpret_cast` of the view's base buffer
    there, masked to the `(lanes - 1) * stride + 1` elements the lanes
    span (no element past the last lane's is read), and a
    `vector.shuffle` that keeps every stride-th lane. A read masked by a
    `vector.create_mask` of its first m lanes reads the
    `(min(m, lanes) - 1) * stride + 1` elements those span. Left alone:
    reads along unit or dynamic strides, strides over 4 (each lane a load
    of its own is cheaper than reading the span), narrower elements (a
    masked load of them is a load per lane without AVX-512BW), other
    masks, reads inside `vector.mask`, out-of-bounds reads, multi-dim
    vectors and transposed reads.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def ParallelCopiesPass
    : Pass<"tessera-cpu-parallel-copies", "::mlir::func::FuncOp"> {
  let summary = "Strided buffer copies as parallel loops of vector rows";
  let description = [{
    Runs after bufferization. A `memref.copy` between buffers that are not
    both contiguous (a tensor inserted into a padded one, a concatenation's
    slot, a crop of a strided view) lowers to a call of the runtime's
    strided copy, which moves one row at a time on the calling thread
    while the other threads wait. This pass rewrites each such copy that
    no loop encloses, of rank 2 or more and unit stride along the last dim
    on both sides, into an `scf.parallel` over its rows (every dim but the
    last), each row moved in masked vector steps of 16 elements, so that
    the rows are shared among the threads (a copy of static sizes too
    small to pay for a fork stays on the calling thread,
    tessera-cpu-sequentialize-nested-parallel; one whose rows have a
    symbolic width forks from two rows on,
    tessera-cpu-parallel-if-enough-work). Left alone: copies
    between contiguous buffers (one `memcpy`), copies inside loops or
    parallel regions, rank-1 copies, copies whose last dim is strided on
    either side, and elements narrower than a byte or of a width that is
    not a power of two.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def SplitEmptyTensorsPass
    : Pass<"tessera-cpu-split-empty-tensors", "::mlir::func::FuncOp"> {
  let summary = "Give each use of a tensor.empty its own";
  let description = [{
    CSE merges equal `tensor.empty` ops, so that every elementwise kernel of
    a function with the same result type writes into one shared empty
    tensor. One-shot bufferization then sees every one of those kernels
    write into one alias set and checks each write against all the others:
    quadratic in the number of kernels (a chain of 100,000 elementwise
    nodes, about 1,600 fused loops, spent more than 15 minutes there) and a
    source of needless copies. This pass, run before bufferization, gives
    every use after the first a clone of the `tensor.empty` (with the same
    dynamic sizes), which is how bufferization expects to find them. A slice
    that a part is computed into and the insert of that part back into the
    same slice (a split contraction's parts) keep one tensor between them:
    apart, the insert would be a copy. An empty tensor with one use is left
    alone.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def GuardAllocationSizesPass
    : Pass<"tessera-cpu-guard-allocation-sizes", "::mlir::func::FuncOp"> {
  let summary = "Make an allocation whose byte size overflows 64 bits fail "
                "instead of wrapping";
  let description = [{
    A memref.alloc with dynamic sizes computes its byte size when it runs,
    by multiplications that wrap around: a [N, N, N] float broadcast of
    three 8 MiB inputs with N = 2^21 asks for 2^65 bytes, which wraps to 0,
    and the code would then write far past the block it got. Before the
    memref lowering, this pass computes the product of each such
    allocation's dynamic sizes with overflow detection (times its static
    elements and element bytes), and when it overflows replaces the sizes
    by ones whose byte size is about 2^62: no wrap, and more than any memory
    limit, so the allocator refuses it and the run stops with an error
    (tessera-cpu-check-allocations). Static allocations, and those whose
    element type has no fixed byte size, are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SetFunctionLinkagePass
    : Pass<"tessera-cpu-set-function-linkage", "::mlir::func::FuncOp"> {
  let summary = "C wrappers for the entry functions, internal linkage for "
                "the private ones";
  let description = [{
    A public function with a body is an entry point the runtime calls: it
    gets `llvm.emit_c_interface`, so that the LLVM lowering adds its
    `_mlir_ciface_` wrapper. A private function with a body (a kernel that
    `tessera-outline-kernels` shares between its callers) gets
    `llvm.linkage = #llvm.linkage<internal>`: no wrapper, no exported
    symbol, and LLVM may inline it where it has one caller. Declarations
    (external functions such as libm's) are left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TESSERA_TARGET_CPU_PASSES_TD
