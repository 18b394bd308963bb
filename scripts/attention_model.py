#!/usr/bin/python3
# attention_model.py - an ONNX scaled dot-product attention as exporters
# write it (Transpose, MatMul, Div, [Add mask], Softmax, MatMul), with a
# test data set computed by numpy, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: scripts/attention_model.py --out DIR [--batch 1] [--heads 12]
       [--seq 128] [--kv-seq N] [--dim 64] [--causal] [--mask] [--no-data]

Writes DIR/model.onnx (inputs Q of [batch, heads, seq, dim], K and V of
[batch, heads, kv-seq (default seq), dim], and M, an additive padding mask
[batch, 1, 1, kv-seq], with --mask; --causal adds a constant causal mask:
query i sees keys j <= i + kv-seq - seq) and, unless --no-data, DIR/test_data_set_0 with
random inputs and the numpy reference output.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def causal_mask(seq, kv_seq):
    return np.triu(np.full((seq, kv_seq), -np.inf, np.float32),
                   1 + kv_seq - seq)


def build(batch, heads, seq, dim, causal, mask, kv_seq=None):
    kv_seq = kv_seq or seq
    shape = [batch, heads, seq, dim]
    kv_shape = [batch, heads, kv_seq, dim]
    nodes = [
        helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2],
                         name="/attn/Transpose"),
        helper.make_node("MatMul", ["Q", "Kt"], ["S"], name="/attn/MatMul"),
        helper.make_node("Div", ["S", "scale"], ["Ss"], name="/attn/Div"),
    ]
    inits = [numpy_helper.from_array(np.array(np.sqrt(dim), np.float32),
                                     "scale")]
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
        nodes.append(helper.make_node("Add", [last, "M"], ["Sm"],
                                      name="/attn/AddMask"))
        last = "Sm"
    nodes += [helper.make_node("Softmax", [last], ["P"], axis=-1,
                               name="/attn/Softmax"),
              helper.make_node("MatMul", ["P", "V"], ["O"],
                               name="/attn/MatMul_1")]
    graph = helper.make_graph(
        nodes, "attention", inputs,
        [helper.make_tensor_value_info("O", TensorProto.FLOAT, shape)], inits)
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 17)])


def reference(q, k, v, m, causal):
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
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--mask", action="store_true")
    parser.add_argument("--no-data", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    kv_seq = args.kv_seq or args.seq
    onnx.save(build(args.batch, args.heads, args.seq, args.dim, args.causal,
                    args.mask, kv_seq),
              os.path.join(args.out, "model.onnx"))
    if args.no_data:
        return
    rng = np.random.default_rng(0)
    shape = (args.batch, args.heads, args.seq, args.dim)
    kv_shape = (args.batch, args.heads, kv_seq, args.dim)
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
