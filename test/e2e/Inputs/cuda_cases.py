# cuda_cases.py - GEMMs and attention at sizes no tile or block divides
# (1, 17, 127 and 129 rows; odd inner and column dims), in ONNX's test
# layout (model.onnx, test_data_set_0/input_K.pb, output_0.pb), with
# float64 references.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, output, inits, reference):
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape)
         for n, x in inputs],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       reference.shape)],
        [numpy_helper.from_array(x, n) for n, x in inits])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(folder, "model.onnx"))
    for i, (_, x) in enumerate(inputs):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"),
                  "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"),
              "wb") as f:
        f.write(numpy_helper.from_array(
            reference.astype(np.float32)).SerializeToString())


def gemm(out, m, k, n):
    """Y = GELU-free linear layer: A @ W + b, W and b constants."""
    rng = np.random.default_rng(m * 1000 + k)
    a = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((k, n), dtype=np.float32)
    b = rng.standard_normal((n,), dtype=np.float32)
    y = a.astype(np.float64) @ w.astype(np.float64) + b
    save(out, f"gemm_{m}x{k}x{n}",
         [helper.make_node("Gemm", ["A", "W", "B"], ["Y"])],
         [("A", a)], "Y", [("W", w), ("B", b)], y)


def batched(out, batch, m, k, n):
    """A batched product whose right operand broadcasts over the batch."""
    rng = np.random.default_rng(batch * 100 + m)
    a = rng.standard_normal((batch, m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    y = a.astype(np.float64) @ b.astype(np.float64)
    save(out, f"bmm_{batch}x{m}x{k}x{n}",
         [helper.make_node("MatMul", ["A", "B"], ["Y"])],
         [("A", a), ("B", b)], "Y", [], y)


def attention(out, seq, heads=2, dim=16, causal=False):
    """softmax(Q K^T / sqrt(d) + mask) V, the mask -inf above the diagonal
    when causal."""
    rng = np.random.default_rng(seq)
    q, k, v = (rng.standard_normal((1, heads, seq, dim), dtype=np.float32)
               for _ in range(3))
    mask = np.zeros((seq, seq), dtype=np.float32)
    if causal:
        mask[np.triu_indices(seq, 1)] = -np.inf
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) / np.sqrt(dim) + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    y = (p / p.sum(-1, keepdims=True)) @ v
    nodes = [
        helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["Q", "Kt"], ["S"]),
        helper.make_node("Mul", ["S", "scale"], ["Ss"]),
        helper.make_node("Add", ["Ss", "mask"], ["Sm"]),
        helper.make_node("Softmax", ["Sm"], ["P"], axis=-1),
        helper.make_node("MatMul", ["P", "V"], ["Y"]),
    ]
    save(out, f"attention_{seq}{'_causal' if causal else ''}", nodes,
         [("Q", q), ("K", k), ("V", v)], "Y",
         [("scale", np.array(1 / np.sqrt(dim), dtype=np.float32)),
          ("mask", mask)], y)


def rows(out, shape):
    """Softmax(LayerNormalization(X) * 4) over the last dim: row reductions
    (means, variances, maxima, sums), one warp per row from 64 elements."""
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape, dtype=np.float32) * 3
    gamma = rng.standard_normal(shape[-1:], dtype=np.float32)
    beta = rng.standard_normal(shape[-1:], dtype=np.float32)
    xd = x.astype(np.float64)
    mean = xd.mean(-1, keepdims=True)
    var = ((xd - mean) ** 2).mean(-1, keepdims=True)
    n = (xd - mean) / np.sqrt(var + 1e-5) * gamma + beta
    s = n * 4
    p = np.exp(s - s.max(-1, keepdims=True))
    y = p / p.sum(-1, keepdims=True)
    nodes = [
        helper.make_node("LayerNormalization", ["X", "gamma", "beta"], ["N"],
                         axis=-1, epsilon=1e-5),
        helper.make_node("Mul", ["N", "four"], ["S"]),
        helper.make_node("Softmax", ["S"], ["Y"], axis=-1),
    ]
    save(out, "rows_" + "x".join(map(str, shape)), nodes, [("X", x)], "Y",
         [("gamma", gamma), ("beta", beta),
          ("four", np.array(4, dtype=np.float32))], y)


def main():
    out = sys.argv[1]
    for m in (1, 17, 127, 129):
        gemm(out, m, 33, 70)
    batched(out, 3, 17, 20, 9)
    attention(out, 17)
    attention(out, 129, causal=True)
    for shape in ((3, 5, 1000), (7, 70), (9, 40)):
        rows(out, shape)


if __name__ == "__main__":
    main()
