# masked_attention.py - exports attention written as most GPT code writes it
# (scores.masked_fill(mask == 0, -inf) with a tril buffer, and a boolean
# padding mask), with PyTorch's output, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import math
import os

import torch
from onnx import numpy_helper


class MaskedAttention(torch.nn.Module):
    def __init__(self, seq, padding):
        super().__init__()
        self.padding = padding
        self.register_buffer("tril", torch.tril(torch.ones(seq, seq)))

    def forward(self, q, k, v, keep=None):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if self.padding:
            scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        else:
            scores = scores.masked_fill(self.tril == 0, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--padding", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    batch, heads, seq, dim = 2, 2, 8, 16
    model = MaskedAttention(seq, args.padding).eval()
    q, k, v = (torch.randn(batch, heads, seq, dim) for _ in range(3))
    inputs = [q, k, v]
    names = ["q", "k", "v"]
    if args.padding:
        keep = torch.ones(batch, seq, dtype=torch.bool)
        keep[1, 5:] = False
        inputs.append(keep)
        names.append("keep")
    os.makedirs(os.path.join(args.out, "test_data_set_0"), exist_ok=True)
    torch.onnx.export(model, tuple(inputs), os.path.join(args.out, "model.onnx"),
                      input_names=names, output_names=["out"], opset_version=14)
    with torch.no_grad():
        out = model(*inputs)
    folder = os.path.join(args.out, "test_data_set_0")
    for i, t in enumerate(inputs):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), names[i]).SerializeToString())
    with open(os.path.join(folder, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(out.numpy(), "out").SerializeToString())


if __name__ == "__main__":
    main()
