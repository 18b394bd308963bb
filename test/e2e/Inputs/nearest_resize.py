#!/usr/bin/python3
# nearest_resize.py - writes nearest upsamplings by whole factors
# (interpolate(mode="nearest"), as text detectors' feature pyramids use),
# exported by PyTorch with a symbolic batch, height and width, with
# PyTorch's results at sizes whose rows no vector step divides, in ONNX's
# test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: nearest_resize.py OUT_DIR

Cases: by2 (factor 2), by8 (factor 8), by2x4 (2 down the height, 4 across
the width), each at three sizes; by3 (factor 3, static 4 x 25 -> 12 x 75:
a row that no vector step divides and that 16 lanes do not split evenly).
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn
from torch.nn import functional as F


class Upsample(nn.Module):
    def __init__(self, factors):
        super().__init__()
        self.factors = factors

    def forward(self, x):
        return F.interpolate(x, scale_factor=self.factors, mode="nearest")


CASES = {
    "by2": (2.0, 2.0),
    "by8": (8.0, 8.0),
    "by2x4": (2.0, 4.0),
}
SIZES = [(1, 3, 5, 7), (2, 3, 4, 9), (1, 3, 3, 17)]


def main(out):
    torch.manual_seed(0)
    cases = {name: (factors, SIZES, True) for name, factors in CASES.items()}
    cases["by3"] = ((3.0, 3.0), [(1, 3, 4, 25)], False)
    for name, (factors, sizes, symbolic) in cases.items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        model = Upsample(factors).eval()
        path = os.path.join(folder, "model.onnx")
        torch.onnx.export(model, torch.randn(*sizes[0]), path,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"},
                                        "y": {0: "n", 2: "oh", 3: "ow"}}
                          if symbolic else None,
                          opset_version=13)
        for index, size in enumerate(sizes):
            data = os.path.join(folder, f"test_data_set_{index}")
            os.makedirs(data, exist_ok=True)
            x = torch.randn(*size)
            with torch.no_grad():
                y = model(x)
            for kind, tensor_name, value in (("input", "x", x),
                                             ("output", "y", y)):
                tensor = numpy_helper.from_array(
                    value.numpy().astype(np.float32), tensor_name)
                with open(os.path.join(data, f"{kind}_0.pb"), "wb") as f:
                    f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
