// Passes.td - Tessera's target-independent passes on the tessera dialect.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TRANSFORMS_PASSES_TD
#define TESSERA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RaiseCompositesPass
    : Pass<"tessera-raise-composites", "::mlir::func::FuncOp"> {
  let summary = "Recognize decomposed GELU, SiLU, LayerNorm and RMSNorm; "
                "fold transposes and scales into matmuls";
  let description = [{
    Exporters often spell composite ops as chains of elementary ones. This
    pass rewrites, when every condition holds:
    - `x * 0.5 * (1 + erf(x / sqrt(2)))` (or `x * 0.70710678`), in any
      order of the products, into `tessera.gelu`;
    - `x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` (the cube
      as `pow(x, 3)` or products) into `tessera.gelu approximate = tanh`;
    - `x * sigmoid(x)` into `tessera.silu`;
    - `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)`, the division also
      as a product with `rsqrt` or `reciprocal`, optionally times a scale
      and plus a bias of the normalized dim's size, into `tessera.layer_norm`;
    - `x / sqrt(mean(x^2) + eps)` (or times `rsqrt`, `reciprocal` or
      `1 / sqrt`), optionally times a scale, into `tessera.rms_norm`;
    - a transpose of the last two dims feeding a matmul into the matmul's
      `transpose_a` / `transpose_b`, and a product with (or division by) a
      scalar constant of a float matmul's result into its `alpha`.
    Means must reduce the last axis only, with keepdims; constants must be
    splats within 1e-4 (relative) of the expected values; every
    intermediate value must have no users outside the pattern (otherwise it
    would have to be computed anyway) and no step may broadcast the result
    beyond the input's shape. Anything else is left unchanged.
  }];
}

def FoldConstantsPass
    : Pass<"tessera-fold-constants", "::mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants";
  let description = [{
    Replaces an op whose operands are all dense constants and whose result
    is static (at most 2^20 elements) by a constant: elementwise
    arithmetic (with float pow, reciprocal, sqrt, rsqrt and abs),
    comparisons, logical ops, selects and casts with numpy
    broadcasting, and reshape, expand, transpose, slice, concat, gather
    and scatter_nd. Masks and indices built from shapes and constants (a
    shifted-window transformer's window mask and relative position bias)
    then cost nothing at run time and reach targets without those ops as
    constants. Values are computed in double or 64-bit integers and rounded
    once to the result's type. Left as they are: integer division by zero,
    float-to-integer casts out of range, out-of-range gather or scatter
    indices, scatter_nd with a reduction, float broadcasts to more than
    4096 elements (a bias stays a row that kernels broadcast), constants
    held as resources (weights), and ops with any non-constant operand.
  }];
}

def UpsamplingToMatmulPass
    : Pass<"tessera-upsampling-to-matmul", "::mlir::func::FuncOp"> {
  let summary = "Transposed convolutions whose kernel is their stride as "
                "one matmul";
  let description = [{
    The importer writes ONNX's ConvTranspose as a convolution over its
    input spread with zeros (`include/tessera/Transforms/Upsampling.h`).
    When the kernel equals the stride, with no padding, dilation, groups
    or output_padding (a learned upsampling), the windows do not overlap:
    the convolution becomes a matmul of the input's pixels
    ([N, H, W, C]) by the filter as [C, F*sh*sw], a transpose that
    interleaves its columns into sh x sw blocks of the output, and the
    bias added per filter. Batch and spatial dims may be dynamic (the
    spread's run-time shape must be the input's times the strides, as the
    importer writes it). Other transposed convolutions (overlapping
    windows, padding, groups) are left unchanged.
  }];
}

def RaiseAttentionPass
    : Pass<"tessera-raise-attention", "::mlir::func::FuncOp"> {
  let summary = "Recognize scaled dot-product attention";
  let description = [{
    Rewrites `softmax(s * (q @ k^T) + mask) @ v`, softmax over the last
    axis, into one `tessera.attention`. The scale may be a product with or
    a division by a scalar constant (or absent: scale 1), `k^T` a
    transpose of the last two dims or the matmul's `transpose_b`, and the
    mask an additive tensor that does not broadcast the scores beyond
    their shape. A constant mask that is 0 where key `j <= i + (Sk - Sq)`
    and at most -1e4 (or -inf) elsewhere becomes the `causal` flag. Masks
    may be stacked, applied with a select of a constant at most -1e4, or
    added to the scores viewed in another static shape and viewed back (a
    shifted-window transformer's window mask); the masks other than the
    causal flag are summed into the attention's one mask (static scores
    only when there are several). Every intermediate (scores, scaled scores, probabilities) must have
    no other users, and the matmuls no alpha other than 1 and no
    transposed lhs. Anything else is left unchanged.
  }];
}

def AssignPrecisionPass
    : Pass<"tessera-assign-precision", "::mlir::func::FuncOp"> {
  let summary = "Choose the element type each op computes in (a precision "
                "policy), as types and explicit casts";
  let description = [{
    Applies a precision policy to the ops' precision classes (the
    `Tessera_ComputesNarrow`, `Tessera_FollowsInputs`,
    `Tessera_ComputesWide` and `Tessera_MovesData` traits):
    - `fp32` (the default) changes nothing: ops compute in the types the
      model was exported with;
    - `bf16` and `fp16`: each matmul whose operands are f32 gets them cast
      to the narrow type (`tessera.cast`) and keeps its f32 result, so
      products accumulate in fp32 as Transformer Engine's linear layers do.
      Ops that follow their inputs then see f32 and stay f32; ops that
      compute wide never narrow. Weights are converted once, at compile
      time, when canonicalization folds their casts;
    - `int8`: each such matmul becomes `tessera.quantize` of its operands
      (symmetric, scale amax / 127: the lhs per tensor, from the
      `calibration` cache unless it is a constant; a constant 2-D rhs per
      output channel, quantized now), an `i8 x i8 -> i32` matmul, and a
      `tessera.dequantize` of the accumulator by the product of the scales
      and the matmul's alpha. Matmuls whose results reach the function's
      results through elementwise ops and data movement only (output
      heads) stay f32, as do matmuls whose activations were not
      calibrated;
    - `fp8`: each such matmul takes E4M3 operands (E5M2 with
      `fp8-format=e5m2`, 57344 in place of 448 below): constants quantized
      now with their own amax / 448 as the scale, other operands by
      `tessera.quantize` with their calibrated range / 448
      (`fp8-scaling=static`) or with the amax the program computes for
      them each run (`fp8-scaling=current`: a `tessera.reduce_max` of
      their absolute values, no calibration needed). Static scales fold
      into the matmul's alpha; current ones multiply its result (an
      epilogue the fusion pass joins to the matmul).

    A matmul stays f32, with the reason in a `tessera.precision` string
    attribute, when the `target`'s TargetInfo does not list the narrow
    type for contractions, when its ONNX node name matches one of the
    `keep-fp32` regular expressions (the whole name must match), and under
    `fp16` when a constant operand holds a finite value beyond fp16's range
    (65504) or, with a `calibration` cache, when an operand's calibrated
    amax is. A matmul made narrow gets the policy's name in that attribute.
    Under `bf16` and `fp16`, attention takes narrow query, key and value
    where the target accumulates it in f32 (its TargetInfo's
    `rejectWideAccumulation` gives no reason; otherwise its two products
    narrow as matmuls when the lowering computes them so), and under
    `bf16` so does a convolution; their results are cast back to f32. Under
    8-bit policies both stay f32. Casts and quantize/dequantize ops already
    in the model are kept as they are; a matmul whose operands are already
    narrow, and a contraction that reads the model's own dequantization
    through data movement only, are not touched.
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"fp32\"",
           "The precision policy: fp32, bf16, fp16, fp8 or int8">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Regular expressions over ONNX node names whose matmuls stay "
               "f32">,
    ListOption<"onlyNodes", "only-nodes", "std::string",
               "When given, the policy applies to the matmuls of these ONNX "
               "node names (calibration keys) only; others are left as they "
               "are (a precision plan runs the pass once per policy)">,
    Option<"target", "target", "std::string", "\"cpu\"",
           "The TargetInfo that says which element types contractions "
           "support">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "A calibration cache (JSON) whose operand ranges the range "
           "rules read">,
    Option<"smoothQuant", "smooth-quant", "std::string", "\"\"",
           "Under int8, SmoothQuant for matmuls with a constant 2-D weight "
           "and calibrated per-channel statistics of their lhs: an alpha in "
           "[0, 1], or 'auto' to choose it per matmul (empty: off)">,
    Option<"fp8Format", "fp8-format", "std::string", "\"e4m3\"",
           "Under fp8, the operands' format: 'e4m3' (f8E4M3FN: 3 mantissa "
           "bits, largest 448) or 'e5m2' (f8E5M2: 2 mantissa bits, largest "
           "57344, the wider range)">,
    Option<"fp8Scaling", "fp8-scaling", "std::string", "\"static\"",
           "Under fp8, how an operand that is not a constant is scaled: "
           "'static' (its calibrated range over 448, fixed at compile "
           "time) or 'current' (its own largest |value| over 448, computed "
           "by the program each run; no calibration needed). The scale "
           "divides, as ONNX's QuantizeLinear's does">,
    Option<"remarks", "remarks", "bool", "false",
           "Emit a remark at each matmul the policy considered: the type it "
           "computes in, or why it stays f32 (tessera-compile -v)">,
    Option<"keepHeads", "keep-heads", "bool", "true",
           "Under 8-bit policies, keep output heads (matmuls whose results "
           "reach the function's results through elementwise ops and data "
           "movement only) f32">,
    Option<"keepFirstLayers", "keep-first-layers", "bool", "true",
           "Under 8-bit policies, keep first layers (matmuls whose "
           "activation, the lhs, comes from the function's arguments "
           "through elementwise ops and data movement only) f32">,
    Option<"report", "report", "std::string", "\"\"",
           "For the precision report: 'local' keeps the program f32 and "
           "returns each narrowed matmul's, convolution's or attention's "
           "f32 result and the result of a narrow copy fed the same f32 "
           "operands (and each one kept f32, and each normalization and "
           "softmax, as its own reference); 'accumulated' narrows as usual "
           "and returns each one's result">
  ];
}

def ExposeCalibrationValuesPass
    : Pass<"tessera-expose-calibration-values", "::mlir::ModuleOp"> {
  let summary = "Return the operands the precision passes may narrow, for "
                "calibration";
  let description = [{
    Adds to the entry function (its first public function with a body) one
    result for each operand of a matmul that tessera-assign-precision may
    narrow (f32, not a constant), named
    `tessera.calibration:<key>` (`tessera::calibrationKey`: the ONNX node
    and `lhs` or `rhs`). Running the program on calibration samples then
    gives every such operand's values, from which the driver computes the
    calibration cache. It runs where tessera-assign-precision would, so
    that both see the same matmuls.
  }];
}

def CountSaturationPass
    : Pass<"tessera-count-saturation", "::mlir::ModuleOp"> {
  let summary = "Return how many values each quantize clips, as outputs";
  let description = [{
    Adds to the entry function (its first public function with a body) one
    result per `tessera.quantize` of a computed value whose scale is fixed
    (a constant: calibrated scales, or a model's QuantizeLinear with
    constant parameters): a tensor<2xi64> holding the number of elements
    that the quantize saturates on that run and the number of its
    elements. An integer quantize saturates an element when
    `round_half_even(x / scale) + zero_point` lies outside its type's
    range; an fp8 one when `|x / scale|` exceeds the format's largest
    finite value (448 for E4M3FN, 57344 for E5M2). An infinity counts as
    saturated; a NaN does not (it lies beyond no bound). The results are
    named `tessera.saturated:<key>`: the calibration key of the op the
    quantize feeds (`<ONNX node>:lhs`, `:rhs`, ...), or the quantize's own
    ONNX node name, or `#quantize<n>` (its position) without one; a name
    taken already gets `#2`, `#3`, ... Only quantizes at the function's
    top level are counted (run the pass before fusion). A quantize of a
    constant (folded at compile time; through casts, reshapes and
    transposes), or
    one whose scale is computed at run time (fp8 current scaling, where
    nothing saturates by construction) gets no count.

    ```mlir
    %q = tessera.quantize %x scale(%s : tensor<f32>) : tensor<8x64xf32> -> tensor<8x64xi8>
    // becomes, beside it:
    %r = tessera.round (tessera.div %x, %s)        // + zero point, if any
    %o = tessera.compare gt, (tessera.abs (tessera.sub %r, -0.5)), 127.5
    %n = tessera.reduce_sum (tessera.cast %o : i1 -> i64) [0, 1] {keepdims = false}
    %t = tessera.reduce_prod (tessera.shape %x) [0]
    %c = tessera.concat %n, %t {axis = 0}   // tensor<2xi64>
    return ..., %c  // tessera.name = "tessera.saturated:/fc/MatMul:lhs"
    ```
  }];
}

def LegalizePrecisionPass
    : Pass<"tessera-legalize-precision", "::mlir::func::FuncOp"> {
  let summary = "Widen what the target cannot compute in the chosen type";
  let description = [{
    Asks the TargetInfo registered as `target` which element types each
    precision class computes in. An op whose float operands or results
    have a type the target does not list for its class computes in f32
    instead: its operands are cast up, and its results cast back to the
    types the rest of the program expects, so that the program's types
    (and the choice of the assign pass elsewhere) stay as they were. The
    op gets a `tessera.precision` attribute saying why ("bf16 contraction:
    not supported by the cpu target; computed in f32"). Ops without a
    precision class (casts, quantize and dequantize, constants) and ops
    whose types the target supports are left alone.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "The TargetInfo that says which element types each op class "
           "supports">
  ];
}

def HoistCastsPass : Pass<"tessera-hoist-casts", "::mlir::func::FuncOp"> {
  let summary = "Move casts across reshapes and transposes to where data "
                "is narrow";
  let description = [{
    A float cast commutes exactly with a reshape or a transpose (both only
    move elements), so the data movement can run on whichever side is
    narrower. A narrowing cast (f32 to bf16 or f16) of a reshape or
    transpose that nothing else reads moves above it: the movement then
    moves half the bytes, and the cast lands next to the op that computes
    the value, whose fusion region (a matmul's epilogue, an elementwise
    chain) it then joins, so that the producer writes the narrow type.
    A widening cast (bf16 or f16 to f32) that only a reshape or transpose
    reads moves below it, for the same reason. Repeated until no cast
    moves, so a cast crosses a chain of them. Casts between types of one
    width (bf16 and f16), to or from integers or fp8, a narrowing cast of
    a movement something else reads, a widening cast something other than
    movements reads, and a narrowing cast of a transpose that a matmul or
    convolution reads (a backend folds that transpose into the cast's
    kernel) stay where they are. Targets whose data movement lacks a
    16-bit float type, or whose reshapes reinterpret memory, do not run
    it (TargetInfo::hoistsCasts).
  }];
  let dependentDialects = ["::mlir::tessera::TesseraDialect"];
}

def FormFusionRegionsPass
    : Pass<"tessera-form-fusion-regions", "::mlir::ModuleOp"> {
  let summary = "Group ops into tessera.fusion regions and explain why";
  let description = [{
    Forms the regions a backend compiles as one kernel each, asking the
    TargetInfo registered as `target` what it can fuse:
    - `attention`: each tessera.attention (when the target fuses attention);
    - `epilogue`: a matmul or conv2d with the chain of elementwise ops
      applied to its result, each link the only user of the previous one,
      whose other operands the target can read in the epilogue, up to the
      target's epilogue budget;
    - `reduction`: softmax, layer_norm, rms_norm or a reduce op with the
      elementwise ops producing its input (used only there) and those
      consuming its result;
    - `elementwise`: connected elementwise ops whose producers have no
      other users, or whose producer the target says is cheaper to compute
      again than to store and load (one op whose inputs are in memory, for
      at most four users on the CPU): then each consumer's region gets its
      own copy, listed under `recomputed`.
    A group is formed only when every value leaving it is used after the
    group's last op. Each rejected candidate (a consumer that was not
    fused) is recorded with its reason, for example "producer has 2 users",
    "broadcast not supported in epilogue", "exceeds register budget".

    With `report`, writes a JSON object for all functions of the module:
    `target`, `kernels_before`, `kernels_after`, `bytes_saved`, `regions`
    (each with `function`, `kind`, `ops`, `nodes` — the ONNX node names —
    `tile`, `bytes_saved`, the estimated bytes of intermediate tensors no
    longer written and read back when their shapes are static, and
    `dynamic_shapes`), `recomputed` (each with `function`, `op`, `node`,
    `copies`) and `rejected` (each with `function`, `op`, `node`, `kind`,
    `reason`). With `summary`, prints the same as text to stderr.
    With `dot`, writes the fused graph for Graphviz: a cluster per
    function, one node per kernel.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"cpu\"",
           "The TargetInfo that decides what fuses">,
    Option<"report", "report", "std::string", "\"\"",
           "Write the fusion report (JSON) to this file">,
    Option<"dot", "dot", "std::string", "\"\"",
           "Write the fused graph (Graphviz) to this file">,
    Option<"summary", "summary", "bool", "false",
           "Print the fusion report as text to stderr">
  ];
}

def RecordSignaturePass
    : Pass<"tessera-record-signature", "::mlir::ModuleOp"> {
  let summary = "Record the model's signature on its entry function";
  let description = [{
    Writes the inputs and outputs of the module's entry function (its first
    public function with a body), while they are still tensors, as the
    `tessera.signature` attribute of that function: the JSON that every
    artifact embeds and the runtime checks inputs against (names from
    `tessera.name`, element types, static and dynamic dims with their
    symbolic names from `tessera.dim_params`). Later lowerings change the
    function's arguments (bufferization, LLVM's calling convention) but keep
    the attribute, so artifact writers and the in-process JIT read the
    signature from the IR. A function that already has one keeps it.
    An element type the runtime cannot pass (for example a complex type) is
    an error at the function.

    With `drop-arg-attrs`, the arguments' and results' attributes are
    removed once recorded (lowerings to LLVM have no use for them).
  }];
  let options = [
    Option<"dropArgAttrs", "drop-arg-attrs", "bool", /*default=*/"false",
           "Remove argument and result attributes once recorded">
  ];
}

def OutlineKernelsPass
    : Pass<"tessera-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile repeated kernels once: identical fusion regions "
                "and contractions become one function, called where each "
                "stood";
  let description = [{
    A model of N identical layers has N copies of each of its kernels,
    which differ only in their weights. This pass cuts the body of each of
    the module's public functions into pieces: the kernels (each
    `tessera.fusion` region, and each matmul, conv2d, attention, softmax,
    normalization, reduction or pooling op outside one) and the runs of
    other tessera ops between two kernels (transposes, slices, single
    elementwise ops; constants stay where they are and do not end a run).
    Pieces that are identical once their inputs are arguments become one
    private function, `@tessera_kernel_N`, called where each stood (after
    its last op); the backend then lowers and generates code for them
    once.

    A piece's inputs are the values it uses from outside: each distinct
    value is one argument, in the order the piece first uses them. A
    constant input with at most 16 elements (or a splat: scales,
    epsilons, shapes) is copied into the function, so it is part of the
    piece's identity; a larger one (a weight, a bias) is an argument. Its
    results are its values used after it. Two pieces are identical when
    their functions print the same (generic form, without locations). A
    fusion region stays a region inside its function, so the backend
    compiles it as it would in place; a function takes the location of
    its first member's first op. A run stays in place when it only
    reshapes (views) or when an integer tensor (a shape, indices: values
    the lowering reads at compile time) would cross the call.

    Pieces that occur fewer than `min-uses` times stay where they are.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"minUses", "min-uses", "unsigned", /*default=*/"2",
           "Outline a kernel only when this many identical copies exist">,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Print how many kernels were outlined, and their calls, to "
           "stderr">
  ];
}

#endif // TESSERA_TRANSFORMS_PASSES_TD
