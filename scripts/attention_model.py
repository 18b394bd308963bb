#!/usr/bin/python3
# attention_model.py - an ONNX scaled dot-product attention as exporters
# write it (Transpose, MatMul, Div, [Add mask], Softmax, MatMul), with a
# test data set computed by numpy, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: scripts/attention_model.py --out DIR [--batch 1] [--heads 12]
       [--seq 128] [--kv-seq N] [--kv-heads N] [--dim 64] [--causal]
       [--mask] [--no-data]

Writes DIR/model.onnx (inputs Q of [batch, heads, seq, dim], K and V of
[batch, kv-heads (default heads), kv-seq (default seq), dim], and M, an
additive padding mask [batch, 1, 1, kv-seq], with --mask; --causal adds a
constant causal mask: query i sees keys j <= i + kv-seq - seq) and, unless
--no-data, DIR/test_data_set_0 with random inputs and the numpy reference
output. Keys and values shared by several heads are written as exporters
write them: one kv head (multi-query) broadcast by the products, or
kv-heads groups (grouped-query) with the query reshaped to [batch,
kv-heads, heads / kv-heads, seq, dim] against keys and values unsqueezed to
[batch, kv-heads, 1, kv-seq, dim]; query head h reads kv head
h // (heads / kv-heads).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def causal_mask(seq, kv_seq):
    return np.triu(np.full((seq, kv_seq), -np.inf, np.float32),
                   1 + kv_seq - seq)


def build(batch, heads, seq, dim, causal, mask, kv_seq=None, kv_heads=None):
    kv_seq = kv_seq or seq
    kv_heads = kv_heads or heads
    shape = [batch, heads, seq, dim]
    kv_shape = [batch, kv_heads, kv_seq, dim]
    inits = [numpy_helper.from_array(np.array(np.sqrt(dim), np.float32),
                                     "scale")]
    nodes = []
    q, k, v, perm = "Q", "K", "V", [0, 1, 3, 2]
    grouped = kv_heads not in (1, heads)
    if grouped:
        inits += [numpy_helper.from_array(
                      np.array([batch, kv_heads, heads // kv_heads, seq, dim],
                               np.int64), "group_shape"),
                  numpy_helper.from_array(np.array(shape, np.int64),
                                          "out_shape"),
                  numpy_helper.from_array(np.array([2], np.int64), "axis2")]
        nodes += [
            helper.make_node("Reshape", ["Q", "group_shape"], ["Qg"],
                             name="/attn/ReshapeQ"),
            helper.make_node("Unsqueeze", ["K", "axis2"], ["Kg"],
                             name="/attn/UnsqueezeK"),
            helper.make_node("Unsqueeze", ["V", "axis2"], ["Vg"],
                             name="/attn/UnsqueezeV")]
        q, k, v, perm = "Qg", "Kg", "Vg", [0, 1, 2, 4, 3]
    nodes += [
        helper.make_node("Transpose", [k], ["Kt"], perm=perm,
                         name="/attn/Transpose"),
        helper.make_node("MatMul", [q, "Kt"], ["S"], name="/attn/MatMul"),
        helper.make_node("Div", ["S", "scale"], ["Ss"], name="/attn/Div"),
    ]
    inputs = [helper.make_tensor_value_info("Q", TensorProto.FLOAT, shape)] + [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, kv_shape)
        for n in "KV"]
    last = "Ss"
    if causal:
        inits.append(numpy_helper.from_array(causal_mask(seq, kv_seq),
                                             "causal"))
        nodes.append(helper.make_node("Add", [last, "causal"], ["Sc"],
                                      name="/attn/AddCausal"))
        last = "Sc"
    if mask:
        inputs.append(helper.make_tensor_value_info(
            "M", TensorProto.FLOAT, [batch, 1, 1, kv_seq]))
        m = "M"
        if grouped:
            # [batch, 1, 1, 1, kv-seq] against the grouped scores.
            inits.append(numpy_helper.from_array(np.array([1], np.int64),
                                                 "axis1"))
            nodes.append(helper.make_node("Unsqueeze", ["M", "axis1"], ["Mg"],
                                          name="/attn/UnsqueezeM"))
            m = "Mg"
        nodes.append(helper.make_node("Add", [last, m], ["Sm"],
                                      name="/attn/AddMask"))
        last = "Sm"
    out = "Og" if grouped else "O"
    nodes += [helper.make_node("Softmax", [last], ["P"], axis=-1,
                               name="/attn/Softmax"),
              helper.make_node("MatMul", ["P", v], [out],
                               name="/attn/MatMul_1")]
    if grouped:
        nodes.append(helper.make_node("Reshape", [out, "out_shape"], ["O"],
                                      name="/attn/ReshapeO"))
    graph = helper.make_graph(
        nodes, "attention", inputs,
        [helper.make_tensor_value_info("O", TensorProto.FLOAT, shape)], inits)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


def reference(q, k, v, m, causal):
    # Each kv head serves heads / kv-heads consecutive query heads.
    k, v = (np.repeat(x, q.shape[1] // x.shape[1], axis=1) for x in (k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        s = s + causal_mask(s.shape[-2], s.shape[-1])
    if m is not None:
        s = s + m
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--kv-seq", type=int, default=None)
    parser.add_argument("--kv-heads", type=int, default=None)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--mask", action="store_true")
    parser.add_argument("--no-data", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    kv_seq = args.kv_seq or args.seq
    kv_heads = args.kv_heads or args.heads
    if args.heads % kv_heads:
        parser.error("--kv-heads must divide --heads")
    onnx.save(build(args.batch, args.heads, args.seq, args.dim, args.causal,
                    args.mask, kv_seq, kv_heads),
              os.path.join(args.out, "model.onnx"))
    if args.no_data:
        return
    rng = np.random.default_rng(0)
    shape = (args.batch, args.heads, args.seq, args.dim)
    kv_shape = (args.batch, kv_heads, kv_seq, args.dim)
    q = rng.standard_normal(shape, dtype=np.float32)
    k, v = (rng.standard_normal(kv_shape, dtype=np.float32) for _ in "kv")
    m = None
    tensors = [("Q", q), ("K", k), ("V", v)]
    if args.mask:
        m = np.where(rng.random((args.batch, 1, 1, kv_seq)) < 0.25,
                     np.float32(-10000.0), np.float32(0.0))
        tensors.append(("M", m))
    out = reference(q, k, v, m, args.causal).astype(np.float32)
    folder = os.path.join(args.out, "test_data_set_0")
    os.makedirs(folder, exist_ok=True)
    for i, (name, value) in enumerate(tensors):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(out, "O").SerializeToString())


if __name__ == "__main__":
    main()
