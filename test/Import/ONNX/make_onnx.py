#!/usr/bin/python3
# make_onnx.py - turns ONNX's textual model format into a .onnx file for the importer tests.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_onnx.py MODEL.txt -o MODEL.onnx [--keep-names] [--no-check]

Nodes without a name are named after their first output ("node_<output>")
unless --keep-names is given, so that diagnostics can name them. The model
is checked with onnx.checker unless --no-check is given (tests of invalid
models need that).
"""
import argparse
import sys

import onnx
import onnx.parser


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--keep-names", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    args = parser.parse_args()
    with open(args.text) as f:
        model = onnx.parser.parse_model(f.read())
    if not args.keep_names:
        for node in model.graph.node:
            if not node.name and node.output:
                node.name = "node_" + node.output[0]
    if not args.no_check:
        onnx.checker.check_model(model)
    onnx.save(model, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
