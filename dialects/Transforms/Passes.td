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
    and at most -1e4 (or -inf) elsewhere becomes the `causal` flag.
    Every intermediate (scores, scaled scores, probabilities) must have
    no other users, and the matmuls no alpha other than 1 and no
    transposed lhs. Anything else is left unchanged.
  }];
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

#endif // TESSERA_TRANSFORMS_PASSES_TD
