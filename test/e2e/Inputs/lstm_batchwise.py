#!/usr/bin/python3
# lstm_batchwise.py - writes an ONNX LSTM with layout 1 (batch first) and
# initial states, bidirectional, batch 2, with the outputs of a NumPy model
# of ONNX's equations, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: lstm_batchwise.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B, T, I, H, D = 2, 5, 3, 4, 2


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm(x, w, r, b, h0, c0):
    """ONNX LSTM, layout 0: x [T, B, I], states [D, B, H]; gates iofc."""
    ys, hs, cs = [], [], []
    for d in range(D):
        h, c = h0[d], c0[d]
        out = [None] * T
        steps = range(T) if d == 0 else range(T - 1, -1, -1)
        for t in steps:
            g = x[t] @ w[d].T + h @ r[d].T + b[d, :4 * H] + b[d, 4 * H:]
            i, o, f, n = np.split(g, 4, axis=-1)
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(n)
            h = sigmoid(o) * np.tanh(c)
            out[t] = h
        ys.append(np.stack(out))
        hs.append(h)
        cs.append(c)
    return np.stack(ys, 1), np.stack(hs), np.stack(cs)


def main(out):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((D, 4 * H, I)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((D, 4 * H, H)) * 0.5).astype(np.float32)
    b = (rng.standard_normal((D, 8 * H)) * 0.5).astype(np.float32)
    x = rng.standard_normal((B, T, I)).astype(np.float32)
    h0 = rng.standard_normal((B, D, H)).astype(np.float32)
    c0 = rng.standard_normal((B, D, H)).astype(np.float32)
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "", "H0", "C0"],
                            ["Y", "Y_h", "Y_c"], hidden_size=H,
                            direction="bidirectional", layout=1)
    graph = helper.make_graph(
        [node], "lstm",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in (("X", [B, T, I]), ("H0", [B, D, H]),
                      ("C0", [B, D, H]))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
         for n in ("Y", "Y_h", "Y_c")],
        [numpy_helper.from_array(v, n) for n, v in
         (("W", w), ("R", r), ("B", b))])
    folder = os.path.join(out, "lstm_batchwise")
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 14)]),
              os.path.join(folder, "model.onnx"))
    y, hn, cn = lstm(x.transpose(1, 0, 2).astype(np.float64), w, r, b,
                     h0.transpose(1, 0, 2), c0.transpose(1, 0, 2))
    # Layout 1: Y [B, T, D, H], states [B, D, H].
    expected = (y.transpose(2, 0, 1, 3), hn.transpose(1, 0, 2),
                cn.transpose(1, 0, 2))
    for k, (name, value) in enumerate((("X", x), ("H0", h0), ("C0", c0))):
        onnx.save_tensor(numpy_helper.from_array(value, name),
                         os.path.join(data, f"input_{k}.pb"))
    for k, (name, value) in enumerate(zip(("Y", "Y_h", "Y_c"), expected)):
        onnx.save_tensor(
            numpy_helper.from_array(value.astype(np.float32), name),
            os.path.join(data, f"output_{k}.pb"))


if __name__ == "__main__":
    main(sys.argv[1])
