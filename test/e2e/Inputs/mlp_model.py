# mlp_model.py - small models in ONNX's test layout, with an input and the
# float64 outputs of bf16-rounded operands, for the systolic target's
# end-to-end test: OUT/mlp, a two-layer MLP (MatMul, Add, Relu, MatMul), and
# OUT/heads, two independent matmuls of one input (two outputs), and
# OUT/block, a feed-forward block with vector-unit work: MatMul, Add,
# LayerNormalization, Gelu (erf), MatMul, a residual Add, Softmax; and
# OUT/int8, an int8 matmul in QDQ form with its exact result.
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


def save(folder, graph, inputs, outputs):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), os.path.join(folder, "model.onnx"))
    data = os.path.join(folder, "test_data_set_0")
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(
                    value.astype(np.float32), name).SerializeToString())


def main():
    out = sys.argv[1]
    m, k, h, n = 48, 40, 72, 24
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((k, h), dtype=np.float32) * 0.3
    b1 = rng.standard_normal(h, dtype=np.float32)
    w2 = rng.standard_normal((h, n), dtype=np.float32) * 0.3
    x = rng.standard_normal((m, k), dtype=np.float32)
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
             numpy_helper.from_array(w2, "w2")]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])
    # The accelerator's arithmetic: bf16 operands, fp32 sums, the hidden
    # layer stored as bf16 between the two matmuls.
    hidden = np.maximum(bf16(x).astype(np.float64) @ bf16(w1) + b1, 0)
    y = bf16(hidden.astype(np.float32)).astype(np.float64) @ bf16(w2)
    save(os.path.join(out, "mlp"), helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
         helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
         helper.make_node("MatMul", ["h2", "w2"], ["y"], name="fc2")],
        "mlp", [x_info],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        inits), [("x", x)], [("y", y)])
    # Two heads on one input: the second matmul reuses the first's buffers.
    w3 = rng.standard_normal((k, n), dtype=np.float32) * 0.3
    first = bf16(x).astype(np.float64) @ bf16(w1)
    second = bf16(x).astype(np.float64) @ bf16(w3)
    save(os.path.join(out, "heads"), helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["a"], name="head_a"),
         helper.make_node("MatMul", ["x", "w3"], ["b"], name="head_b")],
        "heads", [x_info],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, h]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w3, "w3")]),
        [("x", x)], [("a", first), ("b", second)])

    block(out, rng)
    quantized(out, rng)
    per_channel(out, rng)


def quantized(out, rng):
    """An int8 matmul in ONNX's QDQ form, y = dq(q(x)) @ dq(w), and its
    exact result: the accelerator quantizes x (x / s in fp32, rounded half
    to even, saturated), sums int8 products in int32 and scales the sums
    by s_x * s_w in fp32, as this reference does."""
    m, k, n = 24, 48, 40
    x = rng.standard_normal((m, k), dtype=np.float32) * 3
    w = rng.integers(-127, 128, (k, n), dtype=np.int8)
    sx, sw = np.float32(0.05), np.float32(0.01)
    q = np.clip(np.rint(x / sx), -128, 127).astype(np.int64)
    y = np.float32(q @ w.astype(np.int64)) * np.float32(sx * sw)
    zero = np.array(0, np.int8)
    consts = {"sx": np.array(sx), "sw": np.array(sw), "zp": zero, "w": w}
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    node = helper.make_node
    save(os.path.join(out, "int8"), helper.make_graph(
        [node("QuantizeLinear", ["x", "sx", "zp"], ["xq"], name="quant_x"),
         node("DequantizeLinear", ["xq", "sx", "zp"], ["xd"], name="dequant_x"),
         node("DequantizeLinear", ["w", "sw", "zp"], ["wd"], name="dequant_w"),
         node("MatMul", ["xd", "wd"], ["y"], name="qmatmul")],
        "int8", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        inits), [("x", x)], [("y", y)])


def per_channel(out, rng):
    """An int8 matmul with per-column weight scales (DequantizeLinear with
    a scale vector along axis 1), a bias and ReLU, and its exact result:
    the int32 sums scaled by s_x in fp32, then by each column's s_w, plus
    the bias, in fp32, as the accelerator's drain and epilogue do."""
    m, k, n = 24, 48, 40
    x = rng.standard_normal((m, k), dtype=np.float32) * 3
    w = rng.integers(-127, 128, (k, n), dtype=np.int8)
    sx = np.float32(0.05)
    sw = (rng.random(n, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    q = np.clip(np.rint(x / sx), -128, 127).astype(np.int64)
    acc = np.float32(q @ w.astype(np.int64))
    y = np.maximum((acc * sx) * sw + bias, np.float32(0)).astype(np.float32)
    consts = {"sx": np.array(sx), "zp": np.array(0, np.int8), "sw": sw,
              "zw": np.zeros(n, np.int8), "w": w, "bias": bias}
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    node = helper.make_node
    save(os.path.join(out, "int8pc"), helper.make_graph(
        [node("QuantizeLinear", ["x", "sx", "zp"], ["xq"], name="quant_x"),
         node("DequantizeLinear", ["xq", "sx", "zp"], ["xd"], name="dequant_x"),
         node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=1,
              name="dequant_w"),
         node("MatMul", ["xd", "wd"], ["p"], name="qmatmul"),
         node("Add", ["p", "bias"], ["pb"], name="bias_add"),
         node("Relu", ["pb"], ["y"], name="relu")],
        "int8pc", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                 [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        inits), [("x", x)], [("y", y)])


def layer_norm(v, scale, bias, eps=1e-5):
    mean = v.mean(-1, keepdims=True)
    var = ((v - mean) ** 2).mean(-1, keepdims=True)
    return (v - mean) / np.sqrt(var + eps) * scale + bias


def block(out, rng):
    """y = softmax(x + gelu(layer_norm(x @ w1 + b1)) @ w2): float64, with
    the matmul operands rounded to bf16 as the accelerator rounds them."""
    from math import erf
    m, d, f = 40, 32, 64
    x = rng.standard_normal((m, d), dtype=np.float32)
    w1 = rng.standard_normal((d, f), dtype=np.float32) * 0.2
    b1 = rng.standard_normal(f, dtype=np.float32) * 0.1
    g = 1 + 0.1 * rng.standard_normal(f, dtype=np.float32)
    beta = 0.1 * rng.standard_normal(f, dtype=np.float32)
    w2 = rng.standard_normal((f, d), dtype=np.float32) * 0.2
    h = bf16(x).astype(np.float64) @ bf16(w1) + b1
    n = layer_norm(h, g, beta)
    gelu = 0.5 * n * (1 + np.vectorize(erf)(n / np.sqrt(2)))
    r = x + bf16(gelu.astype(np.float32)).astype(np.float64) @ bf16(w2)
    e = np.exp(r - r.max(-1, keepdims=True))
    y = e / e.sum(-1, keepdims=True)
    consts = {"w1": w1, "b1": b1, "g": g, "beta": beta, "w2": w2,
              "sqrt2": np.array(np.sqrt(2), np.float32),
              "one": np.array(1, np.float32), "half": np.array(0.5, np.float32)}
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    node = helper.make_node
    save(os.path.join(out, "block"), helper.make_graph(
        [node("MatMul", ["x", "w1"], ["h0"], name="up"),
         node("Add", ["h0", "b1"], ["h1"], name="up_bias"),
         node("LayerNormalization", ["h1", "g", "beta"], ["n"], name="norm",
              axis=-1),
         # GELU in its erf form, raised to one op by the compiler.
         node("Div", ["n", "sqrt2"], ["n_s"], name="gelu_div"),
         node("Erf", ["n_s"], ["n_e"], name="gelu_erf"),
         node("Add", ["n_e", "one"], ["n_p"], name="gelu_add"),
         node("Mul", ["n", "n_p"], ["n_m"], name="gelu_mul"),
         node("Mul", ["n_m", "half"], ["a"], name="gelu_half"),
         node("MatMul", ["a", "w2"], ["d"], name="down"),
         node("Add", ["x", "d"], ["r"], name="residual"),
         node("Softmax", ["r"], ["y"], name="probs", axis=-1)],
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, d])],
        inits), [("x", x)], [("y", y)])

if __name__ == "__main__":
    main()
