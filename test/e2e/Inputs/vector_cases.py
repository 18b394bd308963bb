# vector_cases.py - elementwise models for the CUDA target's 16-byte loads
# and stores (tessera-cuda-vectorize-elementwise), in ONNX's test layout,
# with values whose sums and products f32 holds exactly (multiples of 1/16
# up to 2), so the outputs must match to the last bit.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import sys

import numpy as np
from onnx import TensorProto, helper

# The exact values and the test layout of the tensor-core cases.
from tensor_core_cases import exact, save


def residual(out, hidden, sizes):
    """Y = Relu(X + B) * S + R: X and R [batch, seq, hidden] (symbolic
    batch and seq), a bias B along hidden, a scale S per row."""
    rng = np.random.default_rng(hidden)
    b = exact(rng, (hidden,))
    sets = []
    for batch, seq in sizes:
        x = exact(rng, (batch, seq, hidden))
        s = exact(rng, (batch, seq, 1))
        r = exact(rng, (batch, seq, hidden))
        y = np.maximum(x.astype(np.float64) + b, 0) * s + r
        sets.append(([x, s, r], y))
    save(out, f"residual_{hidden}",
         [helper.make_node("Add", ["X", "B"], ["XB"]),
          helper.make_node("Relu", ["XB"], ["A"]),
          helper.make_node("Mul", ["A", "S"], ["AS"]),
          helper.make_node("Add", ["AS", "R"], ["Y"])],
         [("X", ["batch", "seq", hidden]), ("S", ["batch", "seq", 1]),
          ("R", ["batch", "seq", hidden])], [("B", b)], sets,
         ["batch", "seq", hidden])


def shifted(out, rows, width):
    """Y = X[:, 1:] + C: the slice starts one element into each row of
    width + 1, so only some rows' vectors are 16-byte aligned."""
    rng = np.random.default_rng(rows * width)
    x = exact(rng, (rows, width + 1))
    c = exact(rng, (width,))
    starts = np.array([1], dtype=np.int64)
    ends = np.array([width + 1], dtype=np.int64)
    axes = np.array([1], dtype=np.int64)
    save(out, f"shifted_{rows}x{width}",
         [helper.make_node("Slice", ["X", "starts", "ends", "axes"], ["XS"]),
          helper.make_node("Add", ["XS", "C"], ["Y"])],
         [("X", [rows, width + 1])],
         [("C", c), ("starts", starts), ("ends", ends), ("axes", axes)],
         [([x], x[:, 1:].astype(np.float64) + c)], [rows, width])


def scaled(out, rows, width):
    """Y = X * 2 + 1 on rows of `width`."""
    rng = np.random.default_rng(rows + width)
    x = exact(rng, (rows, width))
    save(out, f"scaled_{rows}x{width}",
         [helper.make_node("Mul", ["X", "two"], ["X2"]),
          helper.make_node("Add", ["X2", "one"], ["Y"])],
         [("X", [rows, width])],
         [("two", np.array(2, np.float32)), ("one", np.array(1, np.float32))],
         [([x], x.astype(np.float64) * 2 + 1)], [rows, width])


def half_round_trip(out, rows, width):
    """Y = float(half(X)), one kernel: f32 read and written 4 at a time,
    rounded to f16 in registers."""
    rng = np.random.default_rng(rows * 7 + width)
    x = exact(rng, (rows, width))
    save(out, f"half_{rows}x{width}",
         [helper.make_node("Cast", ["X"], ["H"], to=TensorProto.FLOAT16),
          helper.make_node("Cast", ["H"], ["Y"], to=TensorProto.FLOAT)],
         [("X", [rows, width])], [], [([x], x.astype(np.float64))],
         [rows, width])


def main():
    out = sys.argv[1]
    residual(out, 768, [(2, 3), (1, 5)])
    shifted(out, 8, 64)
    scaled(out, 5, 64)
    scaled(out, 5, 6)   # 8-byte vectors (6 is no multiple of 4)
    scaled(out, 5, 7)   # one element at a time
    half_round_trip(out, 4, 256)


if __name__ == "__main__":
    main()
