# half_convs.py - convolutions of models exported in float16 or bfloat16
# (dense with padding and a bias, depthwise with stride 2, grouped) in ONNX's
# test layout. Values are multiples of 1/16 up to 2, so every product and
# every sum is exact in f32 (not in 8 or 11 bits): a convolution that
# accumulates in f32 and rounds its result once matches the float64
# reference rounded once exactly, one that accumulates in the model's type
# does not.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
from onnx import TensorProto, helper
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tensor_core_cases import exact, narrow_tensor  # noqa: E402


def conv2d(x, w, b, stride, pad, group):
    """NCHW convolution in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    y = np.zeros((n, f, oh, ow))
    per = f // group
    for o in range(f):
        g = o // per
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                          j * stride:j * stride + kw]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3)) + b[o]
    return y


def round_once(y, dtype):
    if dtype == "float16":
        return y.astype(np.float16).astype(np.float32)
    bits = y.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def case(out, dtype, name, channels, filters, group, stride, pad, kernel=3,
         size=9):
    elem = {"float16": TensorProto.FLOAT16,
            "bfloat16": TensorProto.BFLOAT16}[dtype]
    rng = np.random.default_rng(channels * 10 + group)
    x = exact(rng, (1, channels, size, size))
    w = exact(rng, (filters, channels // group, kernel, kernel))
    b = exact(rng, (filters,))
    y = round_once(conv2d(x, w, b, stride, pad, group), dtype)
    weight, bias = narrow_tensor(w, dtype), narrow_tensor(b, dtype)
    weight.name, bias.name = "W", "B"
    folder = os.path.join(out, f"{name}_{dtype}")
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "B"], ["Y"], group=group,
                          strides=[stride, stride], pads=[pad] * 4)],
        name, [helper.make_tensor_value_info("X", elem, list(x.shape))],
        [helper.make_tensor_value_info("Y", elem, list(y.shape))],
        [weight, bias])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)]), os.path.join(folder, "model.onnx"))
    for f, t in [("input_0.pb", x), ("output_0.pb", y)]:
        with open(os.path.join(folder, "test_data_set_0", f), "wb") as fh:
            fh.write(narrow_tensor(t, dtype).SerializeToString())


def main():
    for dtype in ["float16", "bfloat16"]:
        case(sys.argv[1], dtype, "conv", 8, 6, 1, 1, 1)
        case(sys.argv[1], dtype, "depthwise", 8, 8, 8, 2, 1)
        case(sys.argv[1], dtype, "grouped", 8, 6, 2, 1, 0)
        # A GEMM of whole tiles (16 filters, 4 x 4 pixels, depth 144): the
        # im2col GEMM on the narrow operands; and a patch embedding of more
        # taps than are copied one by one (4 pixels: the widening path).
        case(sys.argv[1], dtype, "filters16", 16, 16, 1, 1, 0, size=6)
        case(sys.argv[1], dtype, "patches", 3, 16, 1, 8, 0, kernel=8,
             size=16)


if __name__ == "__main__":
    main()
