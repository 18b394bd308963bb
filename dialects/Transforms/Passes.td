// Passes.td - Tessera's target-independent passes on the tessera dialect.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_TRANSFORMS_PASSES_TD
#define TESSERA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RaiseCompositesPass
    : Pass<"tessera-raise-composites", "::mlir::func::FuncOp"> {
  let summary = "Recognize decomposed GELU, SiLU, LayerNorm and RMSNorm";
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
      `1 / sqrt`), optionally times a scale, into `tessera.rms_norm`.
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

#endif // TESSERA_TRANSFORMS_PASSES_TD
