#!/usr/bin/python3
# compile_scaling.py - how tessera-compile's time grows with the graph: chains of elementwise nodes of growing length, and encoder stacks of growing depth.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/compile_scaling.py [--build build] [--sizes 500,1000,...]
       [--layers 1,2,4,12] [--rounds 1]

Writes ONNX models that are one chain of N elementwise nodes (Relu, Neg,
Abs, Sigmoid in turn, on a [64] tensor; real exports have 5,000-10,000
nodes), compiles each to a shared library with `tessera-compile` and
prints the seconds per size and per 1,000 nodes. Time that grows linearly
keeps the per-1,000 column flat.

With --layers, it exports PyTorch's own nn.TransformerEncoder at BERT-base
size (768 wide, 12 heads, FFN 3072, batch_first, input [1, 128, 768]) with
each number of layers instead, compiles each --rounds times (the sizes in
turn) and prints the fastest and slowest compile, the weights' megabytes,
and the seconds each layer past the first adds. Identical layers share
their kernels, so a layer past the first adds its 28 MB of weights and
nothing else: compare its seconds with the first layer's compile.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain(path, size):
    ops = ["Relu", "Neg", "Abs", "Sigmoid"]
    nodes, previous = [], "x"
    for i in range(size):
        output = "y" if i == size - 1 else f"t{i}"
        nodes.append(helper.make_node(ops[i % 4], [previous], [output],
                                      name=f"n{i}"))
        previous = output
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def encoder_stack(path, layers):
    import torch  # only this mode needs PyTorch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers,
                                        enable_nested_tensor=False).eval()
    # The layers are copies of one: give each weights of its own (the
    # exporter writes identical tensors once).
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.02)
    torch.onnx.export(model, (torch.randn(1, 128, 768),), path,
                      opset_version=14, input_names=["x"],
                      output_names=["y"])


def weight_megabytes(path):
    model = onnx.load(path)
    return sum(len(t.raw_data) or 4 * len(t.float_data)
               for t in model.graph.initializer) / 1e6


def layers(compiler, tmp, counts, rounds):
    models = {}
    for count in counts:
        models[count] = os.path.join(tmp, f"encoder{count}.onnx")
        encoder_stack(models[count], count)
    times = {count: [] for count in counts}
    for _ in range(rounds):
        for count in counts:
            start = time.monotonic()
            subprocess.run([compiler, models[count], "-o",
                            os.path.join(tmp, f"encoder{count}.so")],
                           check=True)
            times[count].append(time.monotonic() - start)
    first = counts[0]
    base, base_mb = min(times[first]), weight_megabytes(models[first])
    print(f"{'layers':>6} {'weights MB':>10} {'compile s':>14} "
          f"{'s per extra layer':>17}")
    for count in counts:
        fastest, slowest = min(times[count]), max(times[count])
        extra = ((fastest - base) / (count - first) if count != first
                 else float("nan"))
        print(f"{count:6d} {weight_megabytes(models[count]):10.1f} "
              f"{fastest:6.2f}-{slowest:<6.2f} {extra:17.3f}", flush=True)
    print(f"({first} layer(s): {base:.2f} s with {base_mb:.1f} MB of "
          "weights)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--sizes", default="500,1000,2000,5000,10000")
    parser.add_argument("--layers",
                        help="encoder depths to compile (e.g. 1,2,4,12) "
                        "instead of elementwise chains")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    compiler = os.path.join(args.build, "bin", "tessera-compile")
    if args.layers:
        with tempfile.TemporaryDirectory() as tmp:
            layers(compiler, tmp, [int(n) for n in args.layers.split(",")],
                   args.rounds)
        return 0
    print(f"{'nodes':>7} {'compile s':>10} {'s per 1000':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            model = os.path.join(tmp, f"chain{size}.onnx")
            chain(model, size)
            start = time.monotonic()
            subprocess.run([compiler, model, "-o",
                            os.path.join(tmp, f"chain{size}.so")], check=True)
            seconds = time.monotonic() - start
            print(f"{size:7d} {seconds:10.2f} {1000 * seconds / size:11.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
