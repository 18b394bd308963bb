#!/usr/bin/python3
# conv1d.py - writes 1-D convolution models (speech and sequence front ends)
# exported by PyTorch with a symbolic length, with PyTorch's results at
# several lengths, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: conv1d.py OUT_DIR

Cases: frontend (a wav2vec-style feature encoder: Conv1d 1 -> 32, kernel
10 at stride 5, GroupNorm, GELU, then kernel 3 at stride 2; symbolic batch
and length), mixer (a padded, dilated, grouped Conv1d at stride 2, then a
pointwise one; the batch fixed at 1, the length symbolic).
"""
import sys

import torch
from torch import nn

from export_cases import write_case


class Frontend(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Conv1d(1, 32, 10, stride=5)
        self.norm = nn.GroupNorm(32, 32)
        self.second = nn.Conv1d(32, 32, 3, stride=2)

    def forward(self, x):
        x = nn.functional.gelu(self.norm(self.first(x)))
        return nn.functional.gelu(self.second(x))


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv1d(16, 32, 5, stride=2, dilation=2, padding=3,
                                 groups=4)
        self.pointwise = nn.Conv1d(32, 8, 1)

    def forward(self, x):
        return self.pointwise(torch.relu(self.grouped(x)))


CASES = {
    "frontend": (Frontend(), [(1, 1, 1600), (2, 1, 999), (1, 1, 37)],
                 {0: "batch", 2: "length"}),
    "mixer": (Mixer(), [(1, 16, 40), (1, 16, 17), (1, 16, 5)],
              {2: "length"}),
}


def main(out):
    torch.manual_seed(0)
    for name, (module, sizes, dynamic) in CASES.items():
        write_case(out, name, module, sizes, dynamic, opset=13)

if __name__ == "__main__":
    main(sys.argv[1])
