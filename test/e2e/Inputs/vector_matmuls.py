# vector_matmuls.py - ONNX MatMuls with a rank-1 operand, in ONNX's test
# layout with float64 reference outputs, under OUT:
#   OUT/vector_weights: x [256] times a weight [256, 192] (a vector times a
#     matrix: one row);
#   OUT/vector_batched: x [256] times activations b [3, 256, 40];
#   OUT/matrix_vector: activations a [64, 256] times a weight [256] (a
#     matrix times a vector);
#   OUT/matrix_vector_tails: a [3, 37, 100] times a weight [100] (rows no
#     block of 8 divides, k no vector of 16 divides);
#   OUT/matrix_vector_dynamic: a [batch, rows, 40] (2 x 13 in the test)
#     times a weight [40];
#   OUT/weight_vector: a weight [96, 200] times x [200].
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(folder, node, inputs, weights, output_shape, symbolic=None):
    """One MatMul node named /<folder's name>/MatMul of `inputs` (name,
    value) and `weights` (initializers), with its float64 product as the
    expected output; `symbolic` names the input dims (and output dims)
    that the model leaves symbolic: {index: name}."""
    symbolic = symbolic or {}
    name = os.path.basename(folder)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("MatMul", node, ["y"], name=f"/{name}/MatMul")],
        name,
        [helper.make_tensor_value_info(
            n, TensorProto.FLOAT,
            [symbolic.get(i, d) for i, d in enumerate(v.shape)])
         for n, v in inputs],
        [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT,
            [symbolic.get(i, d) for i, d in enumerate(output_shape)])],
        [numpy_helper.from_array(v, n) for n, v in weights])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    values = dict(inputs + weights)
    product = np.matmul(values[node[0]].astype(np.float64),
                        values[node[1]].astype(np.float64))
    for i, (n, v) in enumerate(inputs):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(product.astype(np.float32),
                                        "y").SerializeToString())


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(256).astype(np.float32)
    save(os.path.join(out, "vector_weights"), ["x", "w"], [("x", x)],
         [("w", rng.standard_normal((256, 192)).astype(np.float32))], [192])
    save(os.path.join(out, "vector_batched"), ["x", "b"],
         [("x", x), ("b", rng.standard_normal((3, 256, 40)).astype(np.float32))],
         [], [3, 40])
    save(os.path.join(out, "matrix_vector"), ["a", "w"],
         [("a", rng.standard_normal((64, 256)).astype(np.float32))],
         [("w", rng.standard_normal(256).astype(np.float32))], [64])
    save(os.path.join(out, "matrix_vector_tails"), ["a", "w"],
         [("a", rng.standard_normal((3, 37, 100)).astype(np.float32))],
         [("w", rng.standard_normal(100).astype(np.float32))], [3, 37])
    save(os.path.join(out, "matrix_vector_dynamic"), ["a", "w"],
         [("a", rng.standard_normal((2, 13, 40)).astype(np.float32))],
         [("w", rng.standard_normal(40).astype(np.float32))], [2, 13],
         symbolic={0: "batch", 1: "rows"})
    save(os.path.join(out, "weight_vector"), ["w", "x"],
         [("x", rng.standard_normal(200).astype(np.float32))],
         [("w", rng.standard_normal((96, 200)).astype(np.float32))], [96])
    return 0


if __name__ == "__main__":
    sys.exit(main())
