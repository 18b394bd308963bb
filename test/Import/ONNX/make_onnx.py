#!/usr/bin/python3
# make_onnx.py - turns ONNX's textual model format into a .onnx file for the importer tests.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: make_onnx.py MODEL.txt -o MODEL.onnx [--keep-names] [--no-check]
                     [--external FILE]

Nodes without a name are named after their first output ("node_<output>")
unless --keep-names is given, so that diagnostics can name them. The model
is checked with onnx.checker unless --no-check is given (tests of invalid
models need that). With --external, tensors of 64 bytes or more are
stored in FILE next to the model (ONNX external data).
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
    parser.add_argument("--external", metavar="FILE")
    args = parser.parse_args()
    with open(args.text) as f:
        model = onnx.parser.parse_model(f.read())
    if not args.keep_names:
        for node in model.graph.node:
            if not node.name and node.output:
                node.name = "node_" + node.output[0]
    if not args.no_check:
        onnx.checker.check_model(model)
    if args.external:
        onnx.save(model, args.output, save_as_external_data=True,
                  all_tensors_to_one_file=True, location=args.external,
                  size_threshold=64)
    else:
        onnx.save(model, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
