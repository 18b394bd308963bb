#!/usr/bin/python3
# grouped_conv.py - writes grouped and depthwise Conv models with NumPy's results, for the CPU e2e test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: grouped_conv.py OUT_DIR

Writes OUT_DIR/<case>.onnx, <case>_x.npy and <case>_y.npy for each case:
a depthwise conv (group = channels, channel multiplier 2, stride 2, pads,
bias), depthwise convs with one filter per channel (3 x 3, pads, bias,
a symbolic batch, 75 columns; 5 x 5 with stride 2, a dilation of 2 along
the rows and 66 columns), a grouped conv of 4 groups (pads, stride 2
along the rows, bias, a symbolic batch), a dilated grouped conv (3 groups, dilation 2, asymmetric pads), and two
ungrouped convs with a symbolic batch dim run at batch 3 (one with
stride 2, pads and bias; one dilated). The
expected outputs come from a direct NumPy convolution, independent of
Tessera.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(x, w, b, group, strides, pads, dilations):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (x.shape[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, f, oh, ow), dtype=np.float64)
    fg = f // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg].astype(np.float64)
        for o in range(g * fg, (g + 1) * fg):
            for i in range(kh):
                for j in range(kw):
                    patch = xs[:, :, i * dilations[0]:
                               i * dilations[0] + strides[0] * (oh - 1) + 1:
                               strides[0],
                               j * dilations[1]:
                               j * dilations[1] + strides[1] * (ow - 1) + 1:
                               strides[1]]
                    y[:, o] += np.einsum("nchw,c->nhw", patch,
                                         w[o, :, i, j].astype(np.float64))
            if b is not None:
                y[:, o] += b[o]
    return y.astype(np.float32)


def write(out, name, x_shape, w_shape, group, strides, pads, dilations, bias,
          symbolic_batch=False):
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    b = rng.standard_normal(w_shape[0]).astype(np.float32) if bias else None
    y = conv(x, w, b, group, strides, pads, dilations)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["X", "W"]
    if bias:
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    node = helper.make_node("Conv", inputs, ["Y"], name="conv", group=group,
                            strides=strides, pads=pads, dilations=dilations)
    x_dims, y_dims = list(x_shape), list(y.shape)
    if symbolic_batch:
        x_dims[0] = y_dims[0] = "N"
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_dims)],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + "_x.npy"), x)
    np.save(os.path.join(out, name + "_y.npy"), y)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(out, "depthwise", [2, 4, 9, 9], [8, 1, 3, 3], 4, [2, 2],
          [1, 1, 1, 1], [1, 1], True)
    write(out, "depthwise1", [2, 6, 20, 75], [6, 1, 3, 3], 6, [1, 1],
          [1, 1, 1, 1], [1, 1], True, symbolic_batch=True)
    write(out, "depthwise_s2", [1, 5, 17, 135], [5, 1, 5, 5], 5, [2, 2],
          [2, 2, 2, 2], [1, 2], False)
    write(out, "grouped_gemm", [2, 8, 10, 9], [12, 2, 3, 3], 4, [1, 2],
          [1, 1, 1, 1], [1, 1], True, symbolic_batch=True)
    write(out, "grouped", [1, 6, 10, 8], [9, 2, 3, 2], 3, [1, 2],
          [2, 0, 1, 1], [2, 1], False)
    write(out, "batch", [3, 5, 12, 10], [16, 5, 3, 3], 1, [2, 2],
          [1, 1, 1, 1], [1, 1], True, symbolic_batch=True)
    write(out, "batch_dilated", [3, 4, 9, 9], [6, 4, 3, 3], 1, [1, 1],
          [0, 0, 0, 0], [2, 2], False, symbolic_batch=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
