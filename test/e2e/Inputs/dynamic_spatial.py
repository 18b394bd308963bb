#!/usr/bin/python3
# dynamic_spatial.py - writes convolution and pooling models whose batch,
# height and width are symbolic, with PyTorch's results at several sizes.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: dynamic_spatial.py OUT_DIR

Writes OUT_DIR/<case>/model.onnx and test_data_set_N (ONNX's test layout),
each exported by PyTorch with dynamic batch, height and width, and run by
PyTorch at the sizes below (odd sizes included, so that strides, ceil mode
and pads meet partial windows):
  convs    a padded strided conv, a depthwise conv with a stride along the
           columns only (as text recognizers use), a grouped conv, a
           dilated conv, a 1x1 conv
  pools    max pooling in ceil mode with pads, average pooling counting and
           not counting pads, in ceil mode, and a global average
  upsample a transposed conv (stride 2, 2x2, as segmentation heads use) and
           one with pads and output padding, then nearest upsampling
  convs_batch1
           the convs with the batch fixed at 1 (exported so, as many
           detection models are) and only the height and width symbolic
  segment  a segmentation head's resizes back to the input's size
           (interpolate(size=x.shape[-2:]), bilinear and nearest, sizes
           known only at run time), as torchvision's FCN, DeepLabV3 and
           LR-ASPP export them
  shuffle  a ShuffleNet channel shuffle (reshapes to [N, 2, C/2, H, W] and
           back to [N, -1, H, W], so the channel count is known only at run
           time) feeding a depthwise conv
  shifted  convs at stride 1 (the CPU runs their taps as shifts of the
           flat input): 3x3 padded with batch norm and ReLU, then a gate
           per image and channel computed from the input (an epilogue that
           reads the batch index), 5x5 padded without bias, 3x3 after an
           uneven pad (right and bottom only), dilated, a 2x3 kernel, and
           a squeeze-and-excitation scale per image; sizes down to a width
           of 3
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

SIZES = [(1, 32, 48), (2, 17, 23), (1, 9, 40)]


class Convs(nn.Module):
    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.depthwise = nn.Conv2d(8, 8, 3, stride=(1, 2), padding=1,
                                   groups=8)
        self.grouped = nn.Conv2d(8, 12, 3, padding=(1, 2), groups=4)
        self.dilated = nn.Conv2d(12, 6, 3, padding=2, dilation=2)
        self.pointwise = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        x = torch.relu(self.strided(x))
        x = self.depthwise(x)
        x = self.grouped(x)
        x = self.dilated(x)
        return self.pointwise(x)


class Pools(nn.Module):
    def __init__(self):
        super().__init__()
        self.max = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.avg_pads = nn.AvgPool2d(3, stride=2, padding=1,
                                     count_include_pad=False, ceil_mode=True)
        self.avg_counted = nn.AvgPool2d((3, 2), stride=(2, 2), padding=1,
                                        count_include_pad=True)

    def forward(self, x):
        y = self.max(x)
        return (self.avg_pads(y), self.avg_counted(x),
                torch.mean(x, dim=(2, 3), keepdim=True))


class Upsample(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 2, stride=2)
        self.padded = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1,
                                         output_padding=1)

    def forward(self, x):
        y = self.padded(torch.relu(self.up(x)))
        return nn.functional.interpolate(y, scale_factor=2.0, mode="nearest")


class Shuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(3, 8, 1)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        x = self.expand(x)
        n, c, h, w = x.size()
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous()
        return self.depthwise(x.view(n, -1, h, w))


class Segment(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 6, 3, stride=4, padding=1)
        self.head = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        size = x.shape[-2:]
        y = self.head(torch.relu(self.down(x)))
        return (nn.functional.interpolate(y, size=size, mode="bilinear",
                                          align_corners=False),
                nn.functional.interpolate(y, size=size, mode="nearest"))


class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(24)
        self.gate = nn.Conv2d(3, 24, 1)
        self.wide = nn.Conv2d(24, 16, 5, padding=2, bias=False)
        self.valid = nn.Conv2d(16, 8, 3)
        self.dilated = nn.Conv2d(8, 8, 3, padding=2, dilation=2)
        self.kernel23 = nn.Conv2d(8, 9, (2, 3), padding=(1, 1))
        self.squeeze = nn.Conv2d(9, 9, 1)

    def forward(self, x):
        gate = torch.sigmoid(self.gate(x.mean((2, 3), keepdim=True)))
        x = torch.relu(self.norm(self.conv(x))) * gate
        x = self.valid(nn.functional.pad(self.wide(x), (0, 1, 0, 1)))
        x = self.kernel23(torch.relu(self.dilated(x)))
        return x * torch.sigmoid(self.squeeze(x.mean((2, 3), keepdim=True)))


def write(out, name, module, symbolic_batch=True, sizes=SIZES):
    torch.manual_seed(len(name))
    module = module.eval()
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    example = torch.randn(1, 3, 32, 48)
    with torch.no_grad():
        outputs = module(example)
    count = len(outputs) if isinstance(outputs, tuple) else 1
    output_names = [f"y{i}" for i in range(count)]
    batch = {0: "batch"} if symbolic_batch else {}
    dynamic = {"x": {**batch, 2: "height", 3: "width"}}
    for o in output_names:
        dynamic[o] = {**batch, 2: "out_height", 3: "out_width"}
    torch.onnx.export(module, example, os.path.join(folder, "model.onnx"),
                      input_names=["x"], output_names=output_names,
                      dynamic_axes=dynamic, opset_version=13)
    for index, (n, h, w) in enumerate(sizes):
        x = torch.randn(n if symbolic_batch else 1, 3, h, w)
        with torch.no_grad():
            ys = module(x)
        if not isinstance(ys, tuple):
            ys = (ys,)
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"),
                         os.path.join(data, "input_0.pb"))
        for i, y in enumerate(ys):
            onnx.save_tensor(
                numpy_helper.from_array(y.numpy(), output_names[i]),
                os.path.join(data, f"output_{i}.pb"))
    ops = sorted({n.op_type for n in
                  onnx.load(os.path.join(folder, "model.onnx")).graph.node})
    print(f"{name}: {' '.join(ops)}")


def main():
    out = sys.argv[1]
    write(out, "convs", Convs())
    write(out, "pools", Pools())
    write(out, "upsample", Upsample())
    write(out, "convs_batch1", Convs(), symbolic_batch=False)
    write(out, "shuffle", Shuffle())
    write(out, "segment", Segment())
    shifted = Shifted()
    # Batch norm statistics of its own, not the identity.
    shifted.norm.running_mean.uniform_(-0.5, 0.5)
    shifted.norm.running_var.uniform_(0.5, 2.0)
    write(out, "shifted", shifted,
          sizes=[(1, 32, 48), (2, 17, 23), (3, 11, 3), (1, 60, 5), (2, 7, 5)])


if __name__ == "__main__":
    main()
