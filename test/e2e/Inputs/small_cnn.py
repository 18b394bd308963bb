# small_cnn.py - exports a small convolutional network written with
# PyTorch's own modules (padded convolution with batch norm, max pooling,
# a depthwise and a grouped convolution, average pooling with ceil mode
# and without the pads in the count, global average pooling, a linear
# head), with PyTorch's output, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import os

import torch
from onnx import numpy_helper


def small_cnn():
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(3, stride=2, padding=1),
        nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.ReLU6(),
        nn.Conv2d(8, 12, 3, stride=2, padding=(1, 2), groups=4),
        nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                     count_include_pad=False),
        nn.MaxPool2d(2, stride=1, ceil_mode=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(12, 5))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", type=int, default=23)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = small_cnn().eval()
    # Batch-norm statistics that are not the identity.
    with torch.no_grad():
        bn = model[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, args.size, args.size)
    with torch.no_grad():
        y = model(x)
    folder = os.path.join(args.out, "test_data_set_0")
    os.makedirs(folder, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(args.out, "model.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=17)
    with open(os.path.join(folder, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.numpy(), "y").SerializeToString())


if __name__ == "__main__":
    main()
