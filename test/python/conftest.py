# conftest.py - shared fixtures of the Python package's tests: small ONNX models and the reference models.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_model(nodes, inputs, outputs, initializers=(), name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


@pytest.fixture(scope="session")
def affine():
    """Y = 2 X + 1 on f32 [2, 3]."""
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    nodes = [helper.make_node("Mul", ["X", "two"], ["M"], name="mul"),
             helper.make_node("Add", ["M", "one"], ["Y"], name="add")]
    return make_model(nodes, [tensor("X", TensorProto.FLOAT, [2, 3])],
                      [tensor("Y", TensorProto.FLOAT, [2, 3])], [two, one])


@pytest.fixture(scope="session")
def dynamic_add():
    """Z = A + B, both f32 [batch, 4], and S = ReduceSum(A) over all axes."""
    nodes = [helper.make_node("Add", ["A", "B"], ["Z"], name="add"),
             helper.make_node("ReduceSum", ["A"], ["S"], name="sum", keepdims=0)]
    return make_model(nodes,
                      [tensor("A", TensorProto.FLOAT, ["batch", 4]),
                       tensor("B", TensorProto.FLOAT, ["batch", 4])],
                      [tensor("Z", TensorProto.FLOAT, ["batch", 4]),
                       tensor("S", TensorProto.FLOAT, [])])


@pytest.fixture(scope="session")
def reduce_all():
    """S = ReduceMax(X) of f32 [n] (a big input, a tiny output)."""
    node = helper.make_node("ReduceMax", ["X"], ["S"], name="max", keepdims=0)
    return make_model([node], [tensor("X", TensorProto.FLOAT, ["n"])],
                      [tensor("S", TensorProto.FLOAT, [])])


@pytest.fixture(scope="session")
def compiled_affine(affine):
    import tessera
    return tessera.compile(affine)


@pytest.fixture(scope="session")
def reference_models(tmp_path_factory):
    """The reference models exported by scripts/gen_models.py, with
    PyTorch's outputs: {name: folder}."""
    out = tmp_path_factory.mktemp("models")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_models.py"),
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return {name: out / name for name in ("bert", "gpt", "llama", "vit")}


@pytest.fixture(scope="session")
def gen_models():
    """scripts/gen_models.py as a module (the reference models' classes)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import gen_models
    finally:
        sys.path.pop(0)
    return gen_models


def load_case(folder):
    """Inputs and expected outputs of every test_data_set_* in `folder`."""
    cases = []
    for entry in sorted(os.listdir(folder)):
        if not entry.startswith("test_data_set_"):
            continue
        path = os.path.join(folder, entry)
        def read(prefix):
            files = sorted(f for f in os.listdir(path) if f.startswith(prefix))
            return [numpy_helper.to_array(onnx.load_tensor(os.path.join(path, f)))
                    for f in files]
        cases.append((read("input_"), read("output_")))
    return cases


def error_ratio(actual, expected):
    """max |actual - expected| over max |expected| (as tessera-run reports)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    scale = max(np.abs(expected).max(), 1e-30)
    return float(np.abs(actual - expected).max() / scale)
