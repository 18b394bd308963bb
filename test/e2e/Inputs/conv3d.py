#!/usr/bin/python3
# conv3d.py - writes 3-D convolution models (video and volumetric networks'
# layers) exported by PyTorch, with PyTorch's results, in ONNX's test
# layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: conv3d.py OUT_DIR

Cases: block (a padded 3 x 3 x 3 Conv3d, BatchNorm3d, ReLU, a strided and
depth-dilated one, MaxPool3d; symbolic batch), factored (R(2+1)D's spatial
(1, 3, 3) and temporal (3, 1, 1) convolutions, grouped, then AvgPool3d).
"""
import sys

import torch
from torch import nn

from export_cases import write_case

CASES = {
    "block": (nn.Sequential(
        nn.Conv3d(3, 8, 3, padding=1), nn.BatchNorm3d(8), nn.ReLU(),
        nn.Conv3d(8, 8, (3, 3, 3), stride=(2, 2, 2), padding=(2, 1, 1),
                  dilation=(2, 1, 1)),
        nn.MaxPool3d(2)), [(2, 3, 8, 12, 12), (1, 3, 8, 12, 12)],
        {0: "batch"}),
    "factored": (nn.Sequential(
        nn.Conv3d(4, 8, (1, 3, 3), padding=(0, 1, 1), groups=2),
        nn.ReLU(), nn.Conv3d(8, 8, (3, 1, 1), padding=(1, 0, 0)),
        nn.AvgPool3d((1, 2, 2))), [(1, 4, 5, 8, 8)], None),
}


def main(out):
    torch.manual_seed(0)
    for name, (module, sizes, dynamic) in CASES.items():
        with torch.no_grad():
            for _ in range(2):  # batch statistics that are not the identity
                module.train()(torch.randn(*sizes[0]))
        write_case(out, name, module, sizes, dynamic)

if __name__ == "__main__":
    main(sys.argv[1])
