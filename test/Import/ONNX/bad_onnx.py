#!/usr/bin/python3
# bad_onnx.py - writes the malformed and hostile ONNX files the importer's error tests read.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bad_onnx.py KIND OUTPUT.onnx

Each KIND is one defect the importer must report clearly (see KINDS). The
models are built with onnx.helper and never checked, since most are invalid
on purpose; external data files are written next to OUTPUT.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17, domain=""):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid(domain, opset)])


def vec(name, n=4, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, [n])


def relu_model(**kwargs):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vec("x")], [vec("y")], **kwargs)


def weight_model(tensor, shape=(4,)):
    node = helper.make_node("Add", ["x", tensor.name], ["y"], name="add")
    value = helper.make_tensor_value_info
    return model([node], [value("x", TensorProto.FLOAT, shape)],
                 [value("y", TensorProto.FLOAT, shape)], [tensor])


def external_weight(location, offset=None, length=None):
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    return weight_model(t)


def write_external(path, size):
    with open(os.path.join(os.path.dirname(path), "weights.bin"), "wb") as f:
        f.write(bytes(size))


def kinds(path):
    big = numpy_helper.from_array(
        np.arange(1024, dtype=np.float32).reshape(4, 256), "big")
    small = numpy_helper.from_array(np.array([1, 2, 3, 4], np.float32), "bias")
    return {
        "truncated": lambda: open(path, "wb").write(
            relu_model().SerializeToString()[:20]),
        "not-onnx": lambda: open(path, "w").write("this is not a model\n"),
        "dangling": lambda: onnx.save(model(
            [helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")],
            [vec("x")], [vec("y")]), path),
        "size-mismatch": lambda: onnx.save(weight_model(TensorProto(
            name="w", data_type=TensorProto.FLOAT, dims=[4],
            raw_data=b"\0" * 12)), path),
        "typed-mismatch": lambda: onnx.save(weight_model(TensorProto(
            name="w", data_type=TensorProto.FLOAT, dims=[4],
            float_data=[1.0, 2.0])), path),
        "dims-overflow": lambda: onnx.save(weight_model(TensorProto(
            name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40],
            raw_data=b"\0" * 16)), path),
        "external-absolute": lambda: onnx.save(
            external_weight("/etc/passwd"), path),
        "external-dotdot": lambda: onnx.save(
            external_weight("data/../../secret.bin"), path),
        "external-range": lambda: (write_external(path, 8), onnx.save(
            external_weight("weights.bin", offset=4, length=16), path)),
        "external-length": lambda: (write_external(path, 64), onnx.save(
            external_weight("weights.bin", offset=0, length=8), path)),
        "external-missing": lambda: onnx.save(
            external_weight("missing.bin"), path),
        "unsupported": lambda: onnx.save(model([
            helper.make_node("NonZero", ["x"], ["a"], name="nz1"),
            helper.make_node("NonZero", ["x"], ["b"], name="nz2"),
            helper.make_node("Unique", ["x"], ["c"], name="unique"),
            helper.make_node("FusedGemm", ["x"], ["e"], name="fused",
                             domain="com.microsoft"),
        ], [vec("x"), vec("k", 1, TensorProto.INT64)], [vec("e")]), path),
        "opset-old": lambda: onnx.save(relu_model(opset=0), path),
        "opset-new": lambda: onnx.save(relu_model(opset=22), path),
        "other-domain": lambda: onnx.save(
            relu_model(opset=1, domain="com.microsoft"), path),
        "double-input": lambda: onnx.save(model(
            [helper.make_node("Relu", ["x"], ["y"], name="relu")],
            [vec("x", dtype=TensorProto.DOUBLE)],
            [vec("y", dtype=TensorProto.DOUBLE)]), path),
        "no-shape": lambda: onnx.save(model(
            [helper.make_node("Relu", ["x"], ["y"], name="relu")],
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
            [vec("y")]), path),
        "shape-error": lambda: onnx.save(model(
            [helper.make_node("Add", ["x", "z"], ["y"], name="add_mismatch")],
            [vec("x", 4), vec("z", 3)], [vec("y")]), path),
        # Valid models: a weight in external data; inline and blob weights.
        "external-ok": lambda: onnx.save(weight_model(numpy_helper.from_array(
            np.arange(1, 257, dtype=np.float32).reshape(16, 16), "w"),
            shape=[16, 16]), path, save_as_external_data=True,
            all_tensors_to_one_file=True, location="weights.bin",
            size_threshold=0),
        "weights": lambda: onnx.save(model([
            helper.make_node("MatMul", ["x", "big"], ["m"], name="mm"),
            helper.make_node("Reshape", ["m", "shape"], ["r"], name="r"),
            helper.make_node("Add", ["r", "bias"], ["y"], name="add"),
        ], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [128, 4])],
            [big, small, numpy_helper.from_array(
                np.array([128, 4], np.int64), "shape")]), path),
    }


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in kinds(sys.argv[2]):
        print(__doc__ + "\nKINDS: " + " ".join(kinds("x")), file=sys.stderr)
        return 2
    kinds(sys.argv[2])[sys.argv[1]]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
