#!/usr/bin/python3
# dot_products.py - writes matmuls whose operands are exact bf16 values,
# with their products computed in float64, in ONNX's test layout: under
# the bf16 policy the casts to bf16 are exact, so what differs from the
# expected output is only the order of the f32 sums (and chains for the
# int8 policy).
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: dot_products.py OUT_DIR

Cases (each a folder with model.onnx and test_data_set_0..):
  weights  MatMul by constant weights, [B, S, K] x [K, N], with a symbolic
           batch and sequence: rows 1, 17, 127 and 129; N = 100 (panels
           of 48 and 48, then 4 columns), K = 96
  gemm     Gemm with transB (a constant [N, K] weight read transposed) and
           a bias: [M, 64] x [80, 64]^T, M = 24
  odd      MatMul with an odd K (63): no whole pairs
  inputs   MatMul of two inputs (the rhs packed in pairs at run time),
           batched: [2, 16, 32] x [2, 32, 48]
  chain    for the int8 policy, which keeps output heads fp32: MatMul by
           constant weights [B, S, 96] x [96, 100], Relu, then the head
           [100, 16]
  chain_inputs  the same with a first MatMul of two inputs,
           [2, 16, 32] x [2, 32, 48], then Relu and a head [48, 16]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def bf16(values):
    """`values` rounded to the nearest bf16 (ties to even), as float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(
        np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def save(folder, graph, sets):
    os.makedirs(folder, exist_ok=True)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for index, (inputs, outputs) in enumerate(sets):
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for kind, values in (("input", inputs), ("output", outputs)):
            for i, value in enumerate(values):
                tensor = numpy_helper.from_array(value.astype(np.float32))
                with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                    f.write(tensor.SerializeToString())


def main(out):
    rng = np.random.default_rng(7)
    normal = lambda *shape: bf16(rng.standard_normal(shape))

    # Constant weights, symbolic batch and sequence.
    w = normal(96, 100)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
        "weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", "seq", 96])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", "seq", 100])],
        [numpy_helper.from_array(w, "w")])
    sets = []
    for batch, seq in ((1, 1), (1, 17), (1, 127), (3, 43)):
        x = normal(batch, seq, 96)
        sets.append(([x], [x.astype(np.float64) @ w.astype(np.float64)]))
    save(os.path.join(out, "weights"), graph, sets)

    # Gemm with transB and a bias.
    wt = normal(80, 64)
    bias = normal(80)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc",
                          transB=1)],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [24, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [24, 80])],
        [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(bias, "b")])
    x = normal(24, 64)
    save(os.path.join(out, "gemm"), graph,
         [([x], [x.astype(np.float64) @ wt.T.astype(np.float64) + bias])])

    # An odd K.
    w = normal(63, 32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="odd")], "odd",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 63])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 32])],
        [numpy_helper.from_array(w, "w")])
    x = normal(16, 63)
    save(os.path.join(out, "odd"), graph,
         [([x], [x.astype(np.float64) @ w.astype(np.float64)])])

    # Two inputs, batched.
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")], "inputs",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 16, 32]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 32, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 48])])
    a, b = normal(2, 16, 32), normal(2, 32, 48)
    save(os.path.join(out, "inputs"), graph,
         [([a, b], [a.astype(np.float64) @ b.astype(np.float64)])])

    # Chains whose first matmul the int8 policy narrows.
    w1, head = normal(96, 100), normal(100, 16)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("MatMul", ["r", "head"], ["y"], name="head")],
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", "seq", 96])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", "seq", 16])],
        [numpy_helper.from_array(w1, "w1"),
         numpy_helper.from_array(head, "head")])
    sets = []
    for batch, seq in ((1, 1), (1, 17), (1, 127), (3, 43)):
        x = normal(batch, seq, 96)
        hidden = np.maximum(x.astype(np.float64) @ w1, 0)
        sets.append(([x], [hidden @ head]))
    save(os.path.join(out, "chain"), graph, sets)

    head = normal(48, 16)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["h"], name="bmm"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("MatMul", ["r", "head"], ["y"], name="head")],
        "chain_inputs",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 16, 32]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 32, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 16])],
        [numpy_helper.from_array(head, "head")])
    sets = []
    for _ in range(3):
        a, b = normal(2, 16, 32), normal(2, 32, 48)
        hidden = np.maximum(a.astype(np.float64) @ b, 0)
        sets.append(([a, b], [hidden @ head]))
    save(os.path.join(out, "chain_inputs"), graph, sets)


if __name__ == "__main__":
    main(sys.argv[1])
