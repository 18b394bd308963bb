# mlp_model.py - a two-layer MLP (MatMul, Add, Relu, MatMul) in ONNX's test
# layout, with an input and the float64 output of bf16-rounded operands,
# for the systolic target's end-to-end test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def bf16(x):
    """Rounds fp32 to bf16 (ties to even), kept in fp32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def main():
    out = sys.argv[1]
    m, k, h, n = 48, 40, 72, 24
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((k, h), dtype=np.float32) * 0.3
    b1 = rng.standard_normal(h, dtype=np.float32)
    w2 = rng.standard_normal((h, n), dtype=np.float32) * 0.3
    x = rng.standard_normal((m, k), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
         helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
         helper.make_node("MatMul", ["h2", "w2"], ["y"], name="fc2")],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")])
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(out, "model.onnx"))
    # The accelerator's arithmetic: bf16 operands, fp32 sums, the hidden
    # layer stored as bf16 between the two matmuls.
    hidden = np.maximum(bf16(x).astype(np.float64) @ bf16(w1) + b1, 0)
    y = bf16(hidden.astype(np.float32)).astype(np.float64) @ bf16(w2)
    folder = os.path.join(out, "test_data_set_0")
    with open(os.path.join(folder, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32),
                                        "y").SerializeToString())


if __name__ == "__main__":
    main()
