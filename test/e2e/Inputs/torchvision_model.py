#!/usr/bin/python3
# torchvision_model.py - exports a torchvision classifier (random weights) in ONNX's test layout, for the CPU e2e test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: torchvision_model.py NAME OUT_DIR [--opset N] [--size S]

Builds torchvision.models.NAME with random weights (seeded), calibrates its
batch-norm statistics on random batches (so activations are neither
vanishing nor exploding), re-initializes linear layers with PyTorch's
default init, switches to eval mode and exports it with torch.onnx (Debian's
python3-torch and python3-torchvision) to OUT_DIR/model.onnx, with
OUT_DIR/test_data_set_0/{input_0,output_0}.pb holding an input and
PyTorch's output. Prints the ONNX operators the model uses.
"""
import argparse
import os
import sys

import onnx
import torch
import torchvision
from onnx import numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("out")
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--size", type=int, default=112)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.name)(weights=None)
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.reset_parameters()
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.momentum = None  # a cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, args.size, args.size))
    model.eval()
    x = torch.randn(1, 3, args.size, args.size)
    with torch.no_grad():
        y = model(x)
    data = os.path.join(args.out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=args.opset,
                      input_names=["input"], output_names=["output"])
    for name, value in [("input_0", x), ("output_0", y)]:
        tensor = numpy_helper.from_array(value.numpy(),
                                         "input" if name == "input_0"
                                         else "output")
        with open(os.path.join(data, name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{args.name}: {' '.join(ops)}; max |output| {y.abs().max():.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
