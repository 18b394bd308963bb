# flash_attention_cases.py - attention models for the CUDA target's fused
# attention kernel (tessera-cuda-flash-attention) in ONNX's test layout.
# Query, key and value hold values that bf16 and fp16 represent exactly, and
# the expected output follows the kernel's algorithm in float64: scores in
# f32, 64 keys at a time with a running maximum, the probabilities rounded
# to the narrow type for the second product, the output rounded to it at
# the end. A correct kernel matches it to within a few rounding flips
# (relative L2 below 1e-4), while a wrong fragment layout, rescale, mask
# index or causal limit is off by 1e-3 and more (plain rounding against an
# exact float64 attention alone is 2e-3). Rows that see no key come out
# zero. Each case is written as exporters write it (Transpose, MatMul, Div,
# [Add causal mask], [Add mask], Softmax, MatMul).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def exact(rng, shape):
    # Multiples of 1/32 up to 1.5 in magnitude: bf16 holds them exactly.
    return (rng.integers(-48, 49, size=shape) / 32).astype(np.float32)


def causal_mask(seq, kv_seq):
    return np.triu(np.full((seq, kv_seq), -np.inf, np.float32),
                   1 + kv_seq - seq)


def model(name, q_shape, kv_shape, dim, causal, mask_shape):
    nodes = [
        helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2],
                         name="/attn/Transpose"),
        helper.make_node("MatMul", ["Q", "Kt"], ["S"], name="/attn/MatMul"),
        helper.make_node("Div", ["S", "scale"], ["Ss"], name="/attn/Div"),
    ]
    inits = [numpy_helper.from_array(np.array(np.sqrt(dim), np.float32),
                                     "scale")]
    inputs = [helper.make_tensor_value_info("Q", TensorProto.FLOAT, q_shape),
              helper.make_tensor_value_info("K", TensorProto.FLOAT, kv_shape),
              helper.make_tensor_value_info("V", TensorProto.FLOAT, kv_shape)]
    last = "Ss"
    if causal:
        inits.append(numpy_helper.from_array(
            causal_mask(q_shape[2], kv_shape[2]), "causal"))
        nodes.append(helper.make_node("Add", [last, "causal"], ["Sc"],
                                      name="/attn/AddCausal"))
        last = "Sc"
    if mask_shape:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.FLOAT,
                                                    mask_shape))
        nodes.append(helper.make_node("Add", [last, "M"], ["Sm"],
                                      name="/attn/AddMask"))
        last = "Sm"
    nodes += [helper.make_node("Softmax", [last], ["P"], axis=-1,
                               name="/attn/Softmax"),
              helper.make_node("MatMul", ["P", "V"], ["Y"],
                               name="/attn/MatMul_1")]
    out_shape = list(q_shape)
    graph = helper.make_graph(
        nodes, name, inputs,
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)],
        inits)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


def narrow(x, kind):
    """`x` rounded to bf16 or fp16 (to nearest, ties to even; fp32: not
    rounded), as float64."""
    if kind == "fp32":
        return np.asarray(x, np.float64)
    x = np.asarray(x, np.float32)
    if kind == "fp16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def reference(q, k, v, m, causal, kind):
    """What the kernel computes (see the top of this file)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    scale = np.float32(1 / np.sqrt(q.shape[-1]))
    s = (q @ k.transpose(0, 1, 3, 2)).astype(np.float32) * scale
    if m is not None:
        s = s + m
    if causal:
        s = s + causal_mask(s.shape[-2], s.shape[-1])
    s = s.astype(np.float64)
    rows = s.shape[:-1] + (1,)
    top, total = np.full(rows, -np.inf), np.zeros(rows)
    out = np.zeros(q.shape)
    for j in range(0, s.shape[-1], 64):
        block = s[..., j:j + 64]
        new_top = np.maximum(top, block.max(-1, keepdims=True))
        shift = np.where(np.isfinite(new_top), new_top, 0)
        p = np.exp(block - shift)
        alpha = np.exp(top - shift)
        total = total * alpha + p.sum(-1, keepdims=True)
        out = out * alpha + narrow(p, kind) @ v[..., j:j + 64, :]
        top = new_top
    # A row that sees no key comes out zero.
    out = np.where(total > 0, out / np.where(total > 0, total, 1), 0)
    return narrow(out, kind)


def write(out, name, onnx_model, sets):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    onnx.save(onnx_model, os.path.join(folder, "model.onnx"))
    for t, (arrays, y) in enumerate(sets):
        data = os.path.join(folder, f"test_data_set_{t}")
        os.makedirs(data, exist_ok=True)
        for i, x in enumerate(arrays):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x).SerializeToString())
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                y.astype(np.float32)).SerializeToString())


def data(rng, b, h, sq, sk, dim, causal, mask_shape, kind, kv_heads=None):
    q = exact(rng, (b, h, sq, dim))
    k = exact(rng, (b, kv_heads or h, sk, dim))
    v = exact(rng, (b, kv_heads or h, sk, dim))
    arrays = [q, k, v]
    m = None
    if mask_shape:
        # A padding mask: a quarter of the keys hidden (-inf), the others
        # shifted by multiples of 1/4.
        m = (rng.integers(-4, 1, size=mask_shape) / 4).astype(np.float32)
        m[rng.random(mask_shape) < 0.25] = -np.inf
        arrays.append(m)
    return arrays, reference(q, k, v, m, causal, kind)


def case(out, rng, name, b, h, sq, sk, dim, causal=False, mask=None,
         symbolic=False, more=(), kind="bf16", kv_heads=None):
    """`mask`: whether a padding mask [b, 1, 1, kv] is an input; `more`:
    other (b, sq, sk) sizes to run with symbolic batch and sequence
    dims; `kv_heads`: key and value heads (1: shared by every query
    head)."""
    kvh = kv_heads or h
    q_shape = ["batch", h, "seq", dim] if symbolic else [b, h, sq, dim]
    kv_shape = ["batch", kvh, "kv", dim] if symbolic else [b, kvh, sk, dim]
    mask_shape = None
    if mask:
        mask_shape = ["batch", 1, 1, "kv"] if symbolic else [b, 1, 1, sk]
    sets = [data(rng, b, h, sq, sk, dim, causal, mask and (b, 1, 1, sk),
                 kind, kv_heads)]
    for b2, sq2, sk2 in more:
        sets.append(data(rng, b2, h, sq2, sk2, dim, causal,
                         mask and (b2, 1, 1, sk2), kind, kv_heads))
    write(out, name, model(name, q_shape, kv_shape, dim, causal, mask_shape),
          sets)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    # Part of a query block and of a key block.
    case(out, rng, "plain_2x3x100_d64", 2, 3, 100, 100, 64)
    # Three key blocks, causal (the last partly hidden, blocks past a
    # query block's last key skipped), a head dim of 128.
    case(out, rng, "causal_1x2x150_d128", 1, 2, 150, 150, 128, causal=True)
    # A decoder step with a key cache: 5 queries, 77 keys, causal aligned
    # to the bottom right, and a padding mask input [b, 1, 1, kv].
    case(out, rng, "cache_2x2x5x77_mask", 2, 2, 5, 77, 64, causal=True,
         mask=True)
    # One key and value head shared by four query heads (as in multi-query
    # attention), read in place.
    case(out, rng, "shared_kv_1x4x70_d64", 1, 4, 70, 70, 64, kv_heads=1)
    # One decoding step: a single query over 130 cached keys, causal.
    case(out, rng, "decode_2x2x1x130", 2, 2, 1, 130, 64, causal=True)
    # More queries than keys, causal: the first rows see no key.
    case(out, rng, "causal_1x1x70x40_empty_rows", 1, 1, 70, 40, 64,
         causal=True)
    # Symbolic batch and sequences: one compile, three sizes.
    case(out, rng, "symbolic_d64_mask", 1, 2, 33, 33, 64, mask=True,
         symbolic=True, more=[(3, 130, 130), (2, 64, 200)])
    # A head dim of 80 (padded shared rows instead of the swizzle).
    case(out, rng, "plain_1x2x40_d80", 1, 2, 40, 40, 80)
    # fp16 operands.
    case(out, rng, "fp16_causal_1x2x90_d64", 1, 2, 90, 90, 64, causal=True,
         kind="fp16")
    # A head dim the kernel does not take: products and softmax in f32.
    case(out, rng, "plain_1x2x40_d40", 1, 2, 40, 40, 40, kind="fp32")


if __name__ == "__main__":
    main()
