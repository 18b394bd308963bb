# auto_precision.py OUT - a model with three ops that must stay wide for the
# automatic precision policy's test, in ONNX's test layout with 12 samples
# (inputs and fp32 reference outputs):
#   x [32, 256] -> /fc1/MatMul -> Relu -> /fc2/MatMul (activations around
#   1e3) -> /ln/LayerNormalization (its sum of squares overflows fp16)
#   -> * 2 -> /exp/Exp (inputs up to about 8) -> * outlier channels (three
#   channels 40 times the others) -> /outlier/MatMul (fed by the outliers)
#   -> /fc4/MatMul -> y [32, 256].
# The four matmuls' FLOPs: fc1 8.4M, fc2 16.8M, outlier 16.8M, fc4 8.4M.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUTLIERS = [5, 77, 300]


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    w2 = (rng.standard_normal((512, 512)) * 60).astype(np.float32)
    scale = np.ones(512, np.float32)
    scale[OUTLIERS] = 40
    w3 = (rng.standard_normal((512, 512)) / 64).astype(np.float32)
    w3[OUTLIERS, :] /= 40
    w4 = (rng.standard_normal((512, 256)) / 22).astype(np.float32)
    init = [numpy_helper.from_array(w1, "w1"),
            numpy_helper.from_array(w2, "w2"),
            numpy_helper.from_array(np.ones(512, np.float32), "gamma"),
            numpy_helper.from_array(np.zeros(512, np.float32), "beta"),
            numpy_helper.from_array(np.array(2, np.float32), "two"),
            numpy_helper.from_array(scale, "scale"),
            numpy_helper.from_array(w3, "w3"),
            numpy_helper.from_array(w4, "w4")]
    node = helper.make_node
    graph = helper.make_graph(
        [node("MatMul", ["x", "w1"], ["a"], name="/fc1/MatMul"),
         node("Relu", ["a"], ["h1"], name="/fc1/Relu"),
         node("MatMul", ["h1", "w2"], ["h2"], name="/fc2/MatMul"),
         node("LayerNormalization", ["h2", "gamma", "beta"], ["n"],
              name="/ln/LayerNormalization", axis=-1, epsilon=1e-5),
         node("Mul", ["n", "two"], ["n2"], name="/exp/Mul"),
         node("Exp", ["n2"], ["e"], name="/exp/Exp"),
         node("Mul", ["e", "scale"], ["o"], name="/outlier/Mul"),
         node("MatMul", ["o", "w3"], ["h4"], name="/outlier/MatMul"),
         node("MatMul", ["h4", "w4"], ["y"], name="/fc4/MatMul")],
        "planted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 256])],
        init)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    def reference(x):
        h1 = np.maximum(x.astype(np.float64) @ w1, 0)
        h2 = h1 @ w2
        mean = h2.mean(-1, keepdims=True)
        var = ((h2 - mean) ** 2).mean(-1, keepdims=True)
        n = (h2 - mean) / np.sqrt(var + 1e-5)
        o = np.exp(2 * n) * scale
        return (o @ w3) @ w4, np.abs(h2).mean()

    for index in range(12):
        x = rng.standard_normal((32, 256)).astype(np.float32)
        y, h2 = reference(x)
        data = os.path.join(out, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for kind, name, value in (("input", "x", x), ("output", "y", y)):
            with open(os.path.join(data, f"{kind}_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(
                    value.astype(np.float32), name).SerializeToString())
    print(f"mean |fc2 output| {h2:.0f}")


if __name__ == "__main__":
    main()
