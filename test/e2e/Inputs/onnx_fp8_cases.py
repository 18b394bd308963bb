#!/usr/bin/python3
"""ONNX models (opset 19) with fp8 tensors, in ONNX's test layout, for
test/e2e/onnx-fp8.test: Cast from float to FLOAT8E4M3FN and FLOAT8E5M2
(saturating, ONNX's default, and with saturate=0), Cast from them to
float, QuantizeLinear to fp8 and DequantizeLinear from it (a zero point of
the fp8 type, all zeros, as ONNX requires), and a MatMul of a weight stored
as FLOAT8E4M3FN, dequantized.

    onnx_fp8_cases.py OUT

The expected outputs come from a reference written here from the formats'
definitions: every finite code's value is enumerated, and a float rounds to
the nearest of them, ties to the even code, as ONNX specifies; past the
largest finite value (after rounding) saturate=1 gives it and saturate=0
gives NaN (E4M3FN, which has no infinity) or infinity (E5M2). ONNX 1.12's
Python package knows neither type, so tensors are written by their type
numbers (17 and 19) and raw bytes.
"""
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

E4M3FN, E5M2 = 17, 19


def code_value(code, fmt):
    """The value of fp8 code `code` (0-255) in `fmt`."""
    sign = -1.0 if code & 0x80 else 1.0
    if fmt == E4M3FN:
        e, m = (code >> 3) & 0xF, code & 0x7
        if e == 0xF and m == 0x7:
            return float("nan")
        return sign * (m / 8 * 2.0 ** -6 if e == 0 else
                       (1 + m / 8) * 2.0 ** (e - 7))
    e, m = (code >> 2) & 0x1F, code & 0x3
    if e == 0x1F:
        return sign * float("inf") if m == 0 else float("nan")
    return sign * (m / 4 * 2.0 ** -14 if e == 0 else
                   (1 + m / 4) * 2.0 ** (e - 15))


def encode(x, fmt, saturate):
    """float `x` to the fp8 code of `fmt`: round to nearest, ties to the
    even code, saturating or not (see the module's docstring)."""
    largest = 448.0 if fmt == E4M3FN else 57344.0
    nan = 0x7F if fmt == E4M3FN else 0x7E
    if np.isnan(x):
        return nan
    sign = 0x80 if np.signbit(x) else 0
    ax = abs(float(x))
    if np.isinf(ax):
        if saturate:
            ax = largest
        else:
            return (0x7F if fmt == E4M3FN else 0x7C) | sign
    finite = [(code_value(c, fmt), c) for c in range(0x80)
              if np.isfinite(code_value(c, fmt))]
    # The next value past the largest, for rounding only.
    step = 32.0 if fmt == E4M3FN else 8192.0
    candidates = finite + [(largest + step, None)]
    best = min(candidates, key=lambda vc: (abs(vc[0] - ax),
                                           vc[1] is None or vc[1] & 1))
    # Ties go to the even code (the one past the largest counts as even
    # for E5M2, whose next code, infinity, is 0x7C; odd for E4M3FN, whose
    # would be 0x7F).
    ties = [vc for vc in candidates if abs(vc[0] - ax) == abs(best[0] - ax)]
    if len(ties) > 1:
        def even(vc):
            code = vc[1] if vc[1] is not None else (
                0x7F if fmt == E4M3FN else 0x7C)
            return code & 1 == 0
        best = [vc for vc in ties if even(vc)][0]
    if best[1] is None:
        if saturate:
            return 0x7E | sign if fmt == E4M3FN else 0x7B | sign
        return (0x7F if fmt == E4M3FN else 0x7C) | sign
    return best[1] | sign


def tensor(name, fmt, codes, shape):
    t = TensorProto()
    t.name = name
    t.data_type = fmt
    t.dims.extend(shape)
    t.raw_data = bytes(codes)
    return t


def float_tensor(name, values):
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def save(out, name, nodes, inputs, outputs, inits, arrays, expected):
    folder = os.path.join(out, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 19)])
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, tensors in (("input", arrays), ("output", expected)):
        for i, t in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())


# Values around every rule: ties, subnormals, the largest finite value and
# just past it, infinities, NaN, signed zeros.
VALUES = [0.0, -0.0, 1.0, -1.5, 0.4789, 0.5, 1.0625, 1.1875, 3.1415926,
          17.0, 18.0, 19.0, 240.0, 248.0, 256.0, 416.0, 432.0, 448.0, 449.0,
          463.9, 464.0, 464.1, 480.0, -500.0, 1e5, 57344.0, 61439.0, 61440.0,
          61441.0, 1e6, 2.0 ** -7, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
          2.0 ** -16, 2.0 ** -17, 1e-9, float("inf"), float("-inf"),
          float("nan")]


def unsupported(out):
    """Models Tessera refuses, each with a clear error: a Cast to
    FLOAT8E4M3FNUZ (18), a nonzero fp8 zero point, QuantizeLinear with
    saturate=0."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    save(out, "fnuz", [helper.make_node("Cast", ["x"], ["y"], to=18)], [x],
         [helper.make_tensor_value_info("y", 18, [4])], [], [], [])
    save(out, "nonzero_zero_point",
         [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])], [x],
         [helper.make_tensor_value_info("y", E4M3FN, [4])],
         [float_tensor("s", 1.0), tensor("zp", E4M3FN, [0x38], [])], [], [])
    save(out, "quantize_no_saturate",
         [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"],
                           saturate=0)], [x],
         [helper.make_tensor_value_info("y", E4M3FN, [4])],
         [float_tensor("s", 1.0), tensor("zp", E4M3FN, [0], [])], [], [])


def main():
    if sys.argv[1] == "--unsupported":
        return unsupported(sys.argv[2])
    out = sys.argv[1]
    shape = [len(VALUES)]
    x = float_tensor("x", VALUES)
    for fmt, suffix in ((E4M3FN, "e4m3fn"), (E5M2, "e5m2")):
        for saturate in (1, 0):
            codes = [encode(v, fmt, saturate) for v in VALUES]
            name = f"cast_to_{suffix}" + ("" if saturate else "_no_saturate")
            save(out, name,
                 [helper.make_node("Cast", ["x"], ["y"], to=fmt,
                                   saturate=saturate)],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                shape)],
                 [helper.make_tensor_value_info("y", fmt, shape)], [],
                 [x], [tensor("y", fmt, codes, shape)])
        # Every code back to float.
        codes = list(range(256))
        save(out, f"cast_from_{suffix}",
             [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
             [helper.make_tensor_value_info("x", fmt, [256])],
             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])],
             [], [tensor("x", fmt, codes, [256])],
             [float_tensor("y", [code_value(c, fmt) for c in codes])])
        # QuantizeLinear: x / scale, then the saturating cast; and back.
        scale = 0.25
        zero = tensor("zp", fmt, [0], [])
        q = [encode(np.float32(v) / np.float32(scale), fmt, 1)
             for v in VALUES]
        save(out, f"quantize_{suffix}",
             [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"])],
             [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
             [helper.make_tensor_value_info("y", fmt, shape)],
             [float_tensor("scale", scale), zero], [x],
             [tensor("y", fmt, q, shape)])
        save(out, f"dequantize_{suffix}",
             [helper.make_node("DequantizeLinear", ["x", "scale", "zp"],
                               ["y"])],
             [helper.make_tensor_value_info("x", fmt, [256])],
             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])],
             [float_tensor("scale", scale), zero],
             [tensor("x", fmt, list(range(256)), [256])],
             [float_tensor("y", [code_value(c, fmt) * scale
                                 for c in range(256)])])
    # CastLike (its saturate too) to the type of an E4M3FN initializer.
    like = tensor("like", E4M3FN, [0], [1])
    save(out, "castlike_e4m3fn_no_saturate",
         [helper.make_node("CastLike", ["x", "like"], ["y"], saturate=0)],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
         [helper.make_tensor_value_info("y", E4M3FN, shape)], [like], [x],
         [tensor("y", E4M3FN, [encode(v, E4M3FN, 0) for v in VALUES],
                 shape)])
    # Per channel along axis 0, 20 channels: the zero points are more than
    # the importer keeps inline.
    channels = 20
    scales = [0.5 + c / 8 for c in range(channels)]
    codes = [(c * 37 + j * 11) % 256 for c in range(channels)
             for j in range(3)]
    save(out, "dequantize_axis_e4m3fn",
         [helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"],
                           axis=0)],
         [helper.make_tensor_value_info("x", E4M3FN, [channels, 3])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                        [channels, 3])],
         [float_tensor("scale", scales),
          tensor("zp", E4M3FN, [0] * channels, [channels])],
         [tensor("x", E4M3FN, codes, [channels, 3])],
         [float_tensor("y", [[code_value(codes[c * 3 + j], E4M3FN) * scales[c]
                              for j in range(3)] for c in range(channels)])])
    # A weight stored in E4M3FN, dequantized per tensor, times an input.
    rng = np.random.default_rng(19)
    k, n, m = 64, 48, 5
    wcodes = [encode(v, E4M3FN, 1)
              for v in rng.standard_normal(k * n) * 40]
    w = np.array([code_value(c, E4M3FN) for c in wcodes]).reshape(k, n)
    a = rng.integers(-4, 5, size=(m, k)).astype(np.float32)
    save(out, "fp8_weight_matmul",
         [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
          helper.make_node("MatMul", ["a", "wf"], ["y"])],
         [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
         [tensor("w", E4M3FN, wcodes, [k, n]), float_tensor("ws", 0.5),
          tensor("wz", E4M3FN, [0], [])],
         [float_tensor("a", a)],
         [float_tensor("y", a.astype(np.float64) @ (w * 0.5))])


if __name__ == "__main__":
    main()
