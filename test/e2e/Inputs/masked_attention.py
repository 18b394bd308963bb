# masked_attention.py - exports attention written as most GPT code writes it
# (scores.masked_fill(mask == 0, -inf) with a tril buffer, and a boolean
# padding mask), with PyTorch's output, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import math
import os

import torch
from onnx import numpy_helper


class DynamicCausal(torch.nn.Module):
    """The causal mask built on every call from the sequence length, as GPT
    code with no buffer writes it (Trilu over a symbolic size)."""

    def forward(self, q, k, v):
        t = q.shape[-2]
        masked = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(masked, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


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
    parser.add_argument("--dynamic", action="store_true",
                        help="a causal mask from torch.triu over a symbolic "
                        "sequence, two test sets of other sizes")
    args = parser.parse_args()
    if args.dynamic:
        return dynamic(args.out)
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


def dynamic(out):
    torch.manual_seed(1)
    model = DynamicCausal().eval()
    names = ["q", "k", "v"]
    axes = {name: {0: "batch", 2: "seq"} for name in names}
    axes["out"] = {0: "batch", 2: "seq"}
    for index, (batch, seq) in enumerate([(2, 8), (1, 37)]):
        inputs = [torch.randn(batch, 2, seq, 16) for _ in range(3)]
        if index == 0:
            os.makedirs(out, exist_ok=True)
            torch.onnx.export(model, tuple(inputs),
                              os.path.join(out, "model.onnx"),
                              input_names=names, output_names=["out"],
                              dynamic_axes=axes, opset_version=14)
        folder = os.path.join(out, f"test_data_set_{index}")
        os.makedirs(folder, exist_ok=True)
        with torch.no_grad():
            result = model(*inputs)
        for i, t in enumerate(inputs):
            with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t.numpy(), names[i])
                        .SerializeToString())
        with open(os.path.join(folder, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(result.numpy(), "out")
                    .SerializeToString())


if __name__ == "__main__":
    main()
