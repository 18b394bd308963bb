#!/usr/bin/python3
# dynamic_reductions.py - writes reductions over an image of symbolic size
# (PyTorch's pools and reductions over the height and width, as
# squeeze-and-excitation blocks use them), exported with a symbolic batch,
# height and width, with PyTorch's results at widths that no vector step
# divides, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: dynamic_reductions.py OUT_DIR

One model, one output per reduction: mean (global average pool), max
(global max pool), min, sum, product, sum of squares and the L2 norm over
[H, W]; at sizes 1 x 4 x 3 x 7, 2 x 4 x 5 x 17 and 1 x 4 x 2 x 33 (rows
of 7, 17 and 33: one partial vector step, one full and a partial one,
two full and a partial one). Inputs lie in [0.5, 1.5], so the products
stay in range.
"""
import os
import sys

import onnx
import torch
from onnx import numpy_helper
from torch import nn
from torch.nn import functional as F

OUTPUTS = ["mean", "max", "min", "sum", "prod", "sumsq", "l2"]
SIZES = [(1, 4, 3, 7), (2, 4, 5, 17), (1, 4, 2, 33)]


class Reductions(nn.Module):
    def forward(self, x):
        return (F.adaptive_avg_pool2d(x, 1),
                F.adaptive_max_pool2d(x, 1),
                torch.amin(x, dim=(2, 3)),
                torch.sum(x, dim=(2, 3)),
                torch.prod(torch.prod(x, dim=3), dim=2),
                torch.sum(x * x, dim=(2, 3)),
                torch.linalg.vector_norm(x, dim=(2, 3)))


def main(out):
    torch.manual_seed(0)
    os.makedirs(out, exist_ok=True)
    model = Reductions().eval()
    path = os.path.join(out, "model.onnx")
    dynamic = {"x": {0: "n", 2: "h", 3: "w"}}
    dynamic.update({name: {0: "n"} for name in OUTPUTS})
    torch.onnx.export(model, torch.rand(*SIZES[0]) + 0.5, path,
                      input_names=["x"], output_names=OUTPUTS,
                      dynamic_axes=dynamic, opset_version=13)
    onnx.checker.check_model(onnx.load(path))
    for index, size in enumerate(SIZES):
        data = os.path.join(out, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        x = torch.rand(*size) + 0.5
        with torch.no_grad():
            results = model(x)
        tensors = [("x", x)] + list(zip(OUTPUTS, results))
        for i, (name, value) in enumerate(tensors):
            prefix = "input" if i == 0 else "output"
            number = 0 if i == 0 else i - 1
            tensor = numpy_helper.from_array(value.numpy(), name)
            with open(os.path.join(data, f"{prefix}_{number}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
