#!/usr/bin/python3
# compile_scaling.py - how tessera-compile's time grows with the graph: chains of elementwise nodes of growing length.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/compile_scaling.py [--build build] [--sizes 500,1000,...]

Writes ONNX models that are one chain of N elementwise nodes (Relu, Neg,
Abs, Sigmoid in turn, on a [64] tensor; real exports have 5,000-10,000
nodes), compiles each to a shared library with `tessera-compile` and
prints the seconds per size and per 1,000 nodes. Time that grows linearly
keeps the per-1,000 column flat.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--sizes", default="500,1000,2000,5000,10000")
    args = parser.parse_args()
    compiler = os.path.join(args.build, "bin", "tessera-compile")
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
