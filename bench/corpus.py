#!/usr/bin/python3
# corpus.py - exports transformer models that nobody here wrote (torch.nn's own layers, torchvision's vision transformers) in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/corpus.py OUT_DIR [NAME...] [--list]

Writes OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/test_data_set_0/
{input_K,output_K}.pb (an input and PyTorch's output) for each model named
(all of them by default), with Debian's python3-torch and
python3-torchvision and random, seeded weights. The models are PyTorch's
own modules as their users call them, in the layouts those modules take:

  nn_encoder_seq_first    nn.TransformerEncoderLayer(768, 12, 3072),
                          input [S=128, B=1, 768] (PyTorch's default
                          sequence-first layout), ReLU, post-norm
  nn_encoder_batch_first  the same layer with batch_first=True, GELU and
                          norm_first=True (pre-norm), input [1, 128, 768]
  nn_encoder_dynamic      nn_encoder_seq_first exported with symbolic
                          sequence and batch dims (test data at 128 x 1,
                          37 x 3 and 5 x 2)
  nn_encoder_stack        nn.TransformerEncoder: 4 such layers, batch_first,
                          a padding mask (src_key_padding_mask), input
                          [2, 64, 512], heads 8, FFN 2048
  nn_decoder              nn.TransformerDecoderLayer(768, 12, 3072) with a
                          causal target mask (-inf above the diagonal),
                          target [64, 1, 768], memory [128, 1, 768]
  nn_mha_self             nn.MultiheadAttention(768, 12) alone, self
                          attention, batch_first, input [1, 197, 768]
  causal_sliced           causal self-attention as minGPT and nanoGPT write
                          it (a tril buffer sliced to the sequence,
                          bias[:, :, :T, :T], masked_fill with -inf),
                          symbolic batch and sequence (test data at 2 x 64
                          and 1 x 37), 4 heads of 32
  nn_mlp_token            a transformer's MLP as torch.nn layers
                          (Linear 768 -> 3072, GELU, Linear 3072 -> 768)
                          on one token, input [1, 768]: the one-row
                          products of batch-1 decoding
  vit_b_16                torchvision's ViT-B/16 at 224 x 224, batch 1
                          (86M parameters)
  vit_b_16_dynamic        the same with a symbolic batch dim (test data at
                          batch 1 and 2)
  swin_t                  torchvision's Swin-T at 224 x 224 (shifted
                          windows: masks built from shapes)
  convnext_tiny           torchvision's ConvNeXt-T at 224 x 224 (7 x 7
                          depthwise convolutions, LayerNorm over channels)
  mobilenet_v2            torchvision's MobileNetV2 at 224 x 224 (3 x 3
                          depthwise convolutions), batch-norm statistics
                          calibrated on random batches
  swin_window             torchvision's ShiftedWindowAttention alone
                          (dim 96, 7 x 7 windows shifted by 3, 3 heads),
                          two images of 14 x 14 (the window mask is added
                          to the scores viewed as [images, windows, ...])

Prints one line per model: its name, ONNX operators and max |output|.
"""
import argparse
import os
import sys

import onnx
import torch
from onnx import numpy_helper

# name -> (builder, input shapes, dynamic axes or None[, more test sets'
# input shapes])


def encoder(batch_first, activation="relu", norm_first=False):
    return torch.nn.TransformerEncoderLayer(
        768, 12, 3072, dropout=0.0, activation=activation,
        batch_first=batch_first, norm_first=norm_first)


class Stack(torch.nn.Module):
    """nn.TransformerEncoder with a key padding mask, as BERT-style users
    write it (the mask is an input: True marks padding)."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            512, 8, 2048, dropout=0.0, batch_first=True, activation="gelu")
        self.encoder = torch.nn.TransformerEncoder(layer, 4,
                                                   enable_nested_tensor=False)

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerDecoderLayer(768, 12, 3072,
                                                      dropout=0.0)

    def forward(self, target, memory):
        size = target.shape[0]
        mask = torch.triu(torch.full((size, size), float("-inf")),
                          diagonal=1)
        return self.layer(target, memory, tgt_mask=mask)


class SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(768, 12,
                                                     batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class CausalSliced(torch.nn.Module):
    def __init__(self, n=128, heads=4, block=128):
        super().__init__()
        self.c_attn = torch.nn.Linear(n, 3 * n)
        self.c_proj = torch.nn.Linear(n, n)
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones(block, block))
                             .view(1, 1, block, block))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q = q.view(shape).transpose(1, 2)
        k = k.view(shape).transpose(1, 2)
        v = v.view(shape).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = torch.nn.functional.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


def mlp_token():
    return torch.nn.Sequential(torch.nn.Linear(768, 3072), torch.nn.GELU(),
                               torch.nn.Linear(3072, 768))


def vit():
    import torchvision
    model = torchvision.models.vit_b_16(weights=None)
    # torchvision starts the classifier head at zero (an all-zero output
    # would match anything): PyTorch's default init instead.
    for module in model.heads.modules():
        if isinstance(module, torch.nn.Linear):
            module.reset_parameters()
    return model


def swin():
    import torchvision
    return torchvision.models.swin_t(weights=None)


def torchvision_cnn(name):
    """A torchvision classifier whose batch-norm statistics are calibrated
    on random batches (so that activations neither vanish nor explode)."""
    import torchvision
    model = getattr(torchvision.models, name)(weights=None)
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.reset_parameters()
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, 224, 224))
    return model


def swin_window():
    from torchvision.models.swin_transformer import ShiftedWindowAttention
    return ShiftedWindowAttention(96, [7, 7], [3, 3], 3)


MODELS = {
    "nn_encoder_seq_first": (lambda: encoder(False), [(128, 1, 768)], None),
    "nn_encoder_batch_first": (
        lambda: encoder(True, "gelu", True), [(1, 128, 768)], None),
    "nn_encoder_dynamic": (lambda: encoder(False), [(128, 1, 768)],
                           {"x": {0: "sequence", 1: "batch"},
                            "y": {0: "sequence", 1: "batch"}},
                           [[(37, 3, 768)], [(5, 2, 768)]]),
    "nn_encoder_stack": (Stack, [(2, 64, 512), "padding"], None),
    "nn_decoder": (Decoder, [(64, 1, 768), (128, 1, 768)], None),
    "nn_mha_self": (SelfAttention, [(1, 197, 768)], None),
    "causal_sliced": (CausalSliced, [(2, 64, 128)],
                      {"x": {0: "batch", 1: "sequence"},
                       "y": {0: "batch", 1: "sequence"}},
                      [[(1, 37, 128)]]),
    "nn_mlp_token": (mlp_token, [(1, 768)], None),
    "vit_b_16": (vit, [(1, 3, 224, 224)], None),
    "vit_b_16_dynamic": (vit, [(1, 3, 224, 224)],
                         {"x": {0: "batch"}, "y": {0: "batch"}},
                         [[(2, 3, 224, 224)]]),
    "swin_t": (swin, [(1, 3, 224, 224)], None),
    "convnext_tiny": (lambda: torchvision_cnn("convnext_tiny"),
                      [(1, 3, 224, 224)], None),
    "mobilenet_v2": (lambda: torchvision_cnn("mobilenet_v2"),
                     [(1, 3, 224, 224)], None),
    "swin_window": (swin_window, [(2, 14, 14, 96)], None),
    # GPT-2-small-sized causal self-attention in minGPT's form, 1024 tokens.
    "causal_gpt_1024": (lambda: CausalSliced(768, 12, 1024),
                        [(1, 1024, 768)],
                        {"x": {0: "batch", 1: "sequence"},
                         "y": {0: "batch", 1: "sequence"}}),
}


def make_inputs(shapes):
    inputs = []
    for shape in shapes:
        if shape == "padding":
            # The last 16 positions of the second sequence are padding.
            mask = torch.zeros(2, 64, dtype=torch.bool)
            mask[1, 48:] = True
            inputs.append(mask)
        else:
            inputs.append(torch.randn(*shape))
    return inputs


def write_set(folder, index, names, inputs, expected):
    data = os.path.join(folder, f"test_data_set_{index}")
    os.makedirs(data, exist_ok=True)
    values = [(f"input_{i}", names[i], v) for i, v in enumerate(inputs)]
    values.append(("output_0", "y", expected))
    for file, tensor_name, value in values:
        tensor = numpy_helper.from_array(value.numpy(), tensor_name)
        with open(os.path.join(data, file + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())


def export(name, out):
    build, shapes, dynamic, *more = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    inputs = make_inputs(shapes)
    names = ["x", "padding"] if shapes[-1] == "padding" else (
        ["x"] if len(shapes) == 1 else ["x", "memory"])
    with torch.no_grad():
        expected = model(*inputs)
    folder = os.path.join(out, name)
    write_set(folder, 0, names, inputs, expected)
    for index, other in enumerate(more[0] if more else [], start=1):
        other_inputs = make_inputs(other)
        with torch.no_grad():
            write_set(folder, index, names, other_inputs,
                      model(*other_inputs))
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=14,
                      input_names=names, output_names=["y"],
                      dynamic_axes=dynamic)
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{name}: {' '.join(ops)}; max |output| "
          f"{expected.abs().max():.3g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    for name in args.names or MODELS:
        if name not in MODELS:
            print(f"corpus.py: unknown model '{name}' (--list lists them)",
                  file=sys.stderr)
            return 2
        export(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
