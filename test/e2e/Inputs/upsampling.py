#!/usr/bin/python3
# upsampling.py - writes transposed convolutions whose kernel is their
# stride (learned upsamplings), exported by PyTorch with static shapes,
# with PyTorch's results, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: upsampling.py OUT_DIR

Cases: square (ConvTranspose2d 24 -> 24, 2x2 at stride 2, with bias, as a
text detector's head), wide (8 -> 3, 2x3 at stride (2, 3), no bias, batch
2), line (ConvTranspose1d 4 -> 2, 4 at stride 4).
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

CASES = {
    "square": (nn.ConvTranspose2d(24, 24, 2, stride=2), (1, 24, 20, 28)),
    "wide": (nn.ConvTranspose2d(8, 3, (2, 3), stride=(2, 3), bias=False),
             (2, 8, 5, 7)),
    "line": (nn.ConvTranspose1d(4, 2, 4, stride=4), (1, 4, 9)),
}


def main(out):
    torch.manual_seed(0)
    for name, (module, shape) in CASES.items():
        folder = os.path.join(out, name)
        os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
        x = torch.randn(*shape)
        torch.onnx.export(module, (x,), os.path.join(folder, "model.onnx"),
                          input_names=["x"], output_names=["y"],
                          opset_version=17)
        with torch.no_grad():
            y = module(x)
        data = os.path.join(folder, "test_data_set_0")
        for file, value in (("input_0.pb", x), ("output_0.pb", y)):
            tensor = numpy_helper.from_array(value.numpy().astype(np.float32))
            with open(os.path.join(data, file), "wb") as f:
                f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
