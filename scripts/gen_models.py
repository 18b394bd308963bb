#!/usr/bin/python3
# gen_models.py - exports Tessera's reference transformer models from PyTorch in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Exports small transformer models with fixed seeds, each as

    OUT/<name>/model.onnx
    OUT/<name>/test_data_set_0/input_K.pb, output_K.pb   (PyTorch's outputs)

Models: bert (encoder layer, or --layers of them, dynamic batch and
sequence), gpt (causal decoder with embeddings, tanh GELU and a tied head),
llama (RMSNorm, rotary embeddings, SiLU-gated MLP), vit (conv patch
embedding, class token).

Usage: gen_models.py --out DIR [--only NAME ...] [--hidden H] [--ffn F]
                     [--heads N] [--seq S] [--layers L] [--batch B]
                     [--one-set]
Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx).
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

OPSET = 17


class Attention(nn.Module):
    """Multi-head self-attention written the way exporters see it in the wild:
    shapes read from the input at run time, so the graph carries the
    Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)

    def split(self, x):
        shape = x.size()[:-1] + (self.heads, self.head_dim)
        return x.view(shape).permute(0, 2, 1, 3)

    def forward(self, x, mask=None, rotary=None):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        if rotary is not None:
            q, k = rotary(q), rotary(k)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
        return self.o(ctx)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = Attention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, hidden, attention_mask):
        # [B, S] of 1/0 -> additive [B, 1, 1, S].
        mask = (1.0 - attention_mask[:, None, None, :]) * -10000.0
        x = self.ln1(hidden + self.attn(hidden, mask))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


class BertStack(nn.Module):
    """`layers` BertLayers one after another (a BERT encoder without its
    embeddings)."""
    def __init__(self, layers, hidden, heads, ffn):
        super().__init__()
        self.layers = nn.ModuleList(
            [BertLayer(hidden, heads, ffn) for _ in range(layers)])

    def forward(self, hidden, attention_mask):
        for layer in self.layers:
            hidden = layer(hidden, attention_mask)
        return hidden


class GPT(nn.Module):
    def __init__(self, vocab, hidden, heads, ffn, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_len, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.lnf = nn.LayerNorm(hidden)
        self.register_buffer(
            "causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, ids):
        seq = ids.size(1)
        x = self.tok(ids) + self.pos(torch.arange(seq))
        allowed = self.causal[:seq, :seq]
        mask = torch.zeros(seq, seq).masked_fill(~allowed, float("-inf"))
        x = x + self.attn(self.ln1(x), mask)
        h = nn.functional.gelu(self.ff1(self.ln2(x)), approximate="tanh")
        x = x + self.ff2(h)
        # The head shares the token embedding's weight.
        return torch.matmul(self.lnf(x), self.tok.weight.t())


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Rotary(nn.Module):
    def __init__(self, head_dim, max_len):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        seq = x.size(2)
        half = x.size(-1) // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos[:seq] + rotated * self.sin[:seq]


class LlamaBlock(nn.Module):
    def __init__(self, hidden, heads, ffn, max_len):
        super().__init__()
        self.norm1 = RMSNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.rotary = Rotary(hidden // heads, max_len)
        self.norm2 = RMSNorm(hidden)
        self.gate = nn.Linear(hidden, ffn, bias=False)
        self.up = nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        seq = x.size(1)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        x = x + self.attn(self.norm1(x), mask, self.rotary)
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class ViT(nn.Module):
    def __init__(self, hidden, heads, ffn, image, patch, classes):
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, kernel_size=patch, stride=patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, hidden))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, hidden))
        self.ln1 = nn.LayerNorm(hidden, eps=1e-6)
        self.attn = Attention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-6)
        self.ff1 = nn.Linear(hidden, ffn)
        self.ff2 = nn.Linear(ffn, hidden)
        self.lnf = nn.LayerNorm(hidden, eps=1e-6)
        self.head = nn.Linear(hidden, classes)

    def forward(self, pixels):
        x = self.patch(pixels).flatten(2).transpose(1, 2)
        cls = self.cls.expand(x.size(0), -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos
        x = x + self.attn(self.ln1(x))
        x = x + self.ff2(nn.functional.gelu(self.ff1(self.ln2(x))))
        return self.head(self.lnf(x)[:, 0])


def save_case(model, inputs, names, out_names, folder, dynamic_axes=None,
              more_inputs=()):
    """Exports `model` traced on `inputs`; writes one test data set for them
    and one for each entry of `more_inputs` (other sizes of dynamic dims)."""
    path = os.path.join(folder, "model.onnx")
    os.makedirs(folder, exist_ok=True)
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, tuple(inputs), path, opset_version=OPSET,
                          input_names=names, output_names=out_names,
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for index, case in enumerate([inputs, *more_inputs]):
        with torch.no_grad():
            outputs = model(*case)
        if not isinstance(outputs, (tuple, list)):
            outputs = [outputs]
        data = os.path.join(folder, f"test_data_set_{index}")
        os.makedirs(data, exist_ok=True)
        for kind, tensors, tensor_names in (("input", case, names),
                                            ("output", outputs, out_names)):
            for i, (t, name) in enumerate(zip(tensors, tensor_names)):
                proto = numpy_helper.from_array(t.numpy(), name)
                with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                    f.write(proto.SerializeToString())
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=256)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--layers", type=int, default=1,
                        help="BERT's encoder layers (one: a BertLayer)")
    parser.add_argument("--batch", type=int, default=2,
                        help="BERT's batch in its first test set")
    parser.add_argument("--one-set", action="store_true",
                        help="BERT's first test set only (not also one at "
                             "another batch and sequence)")
    args = parser.parse_args()
    h, n, f, s = args.hidden, args.heads, args.ffn, args.seq
    wanted = set(args.only or ["bert", "gpt", "llama", "vit"])

    def seeded(build):
        torch.manual_seed(0)
        return build()

    if "bert" in wanted:
        model = seeded(lambda: BertLayer(h, n, f) if args.layers == 1
                       else BertStack(args.layers, h, n, f))
        def bert_inputs(batch, seq):
            mask = torch.ones(batch, seq)
            mask[-1, seq // 2:] = 0.0
            return [torch.randn(batch, seq, h), mask]
        # Traced at one size; also checked at another batch and sequence.
        save_case(model, bert_inputs(args.batch, s), ["hidden", "attention_mask"],
                  ["output"], os.path.join(args.out, "bert"),
                  {"hidden": {0: "batch", 1: "seq"},
                   "attention_mask": {0: "batch", 1: "seq"},
                   "output": {0: "batch", 1: "seq"}},
                  more_inputs=[] if args.one_set else
                  [bert_inputs(args.batch + 1, 2 * s + 5)])
    if "gpt" in wanted:
        model = seeded(lambda: GPT(97, h, n, f, max_len=64))
        ids = torch.randint(0, 97, (1, s))
        save_case(model, [ids], ["input_ids"], ["logits"],
                  os.path.join(args.out, "gpt"))
    if "llama" in wanted:
        model = seeded(lambda: LlamaBlock(h, n, f, max_len=64))
        save_case(model, [torch.randn(1, s, h)], ["hidden"], ["output"],
                  os.path.join(args.out, "llama"))
    if "vit" in wanted:
        model = seeded(lambda: ViT(h, n, f, image=32, patch=8, classes=10))
        save_case(model, [torch.randn(1, 3, 32, 32)], ["pixels"], ["logits"],
                  os.path.join(args.out, "vit"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
