#!/usr/bin/python3
# gpu_models.py - the GPU check's benchmark models (GEMM, attention) as ONNX, and .pb test data as .npy.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Two commands, both for scripts/gpu-bundle.sh (Debian's /usr/bin/python3,
python3-onnx and numpy):

  gpu_models.py models OUT   writes OUT/<name>/model.onnx for every benchmark
                             model below (and OUT/probe, a 16^3 GEMM for
                             the check's preflight), and OUT/<name>/test_data_set_0/
                             input_K.npy + output_K.npy (float64 references)
                             for the small ones that are checked, and
                             OUT/benchmarks.json describing them all (the
                             operation, its sizes and FLOPs, for
                             bench/gpu_bench.py's PyTorch side)
  gpu_models.py npy DIR      converts every DIR/**/test_data_set_*/*.pb to
                             .npy (same base name) and deletes the .pb

The benchmark models have no weights (every operand is an input), so their
artifacts stay small whatever the sizes; the GPU runner fills the inputs of
the big ones with pseudo-random values (tessera-gpu-run --random). A causal
mask is computed in the graph (Range, Greater, Where), not stored.
"""
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def save_model(folder, name, nodes, inputs, outputs, dtype=TensorProto.FLOAT,
               inits=()):
    os.makedirs(folder, exist_ok=True)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, dtype, s) for n, s in outputs],
        list(inits))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "model.onnx"))


def save_case(folder, inputs, outputs):
    case = os.path.join(folder, "test_data_set_0")
    os.makedirs(case, exist_ok=True)
    for i, x in enumerate(inputs):
        np.save(os.path.join(case, f"input_{i}.npy"), x)
    for i, x in enumerate(outputs):
        np.save(os.path.join(case, f"output_{i}.npy"), x)


def gemm(out, m, k, n, checked, dtype="float32"):
    """Y = A @ B, both operands inputs (float32, or bfloat16 timed only:
    .npy has no bfloat16)."""
    assert dtype == "float32" or not checked
    short = {"float32": "f32", "bfloat16": "bf16"}[dtype]
    name = f"gemm_{short}_{m}x{k}x{n}"
    folder = os.path.join(out, name)
    save_model(folder, name, [helper.make_node("MatMul", ["A", "B"], ["Y"])],
               [("A", [m, k]), ("B", [k, n])], [("Y", [m, n])],
               dtype={"float32": TensorProto.FLOAT,
                      "bfloat16": TensorProto.BFLOAT16}[dtype])
    if checked:
        rng = np.random.default_rng(m + k + n)
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        y = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        save_case(folder, [a, b], [y])
    return {"name": name, "op": "gemm", "dtype": dtype, "m": m, "k": k,
            "n": n, "flops": 2.0 * m * k * n, "checked": checked}


def attention(out, batch, heads, seq, dim, causal, checked,
              dtype="float32"):
    """softmax(Q K^T / sqrt(d) [+ causal mask]) V on [batch, heads, seq,
    dim] inputs (float32, or bfloat16 timed only: the fused tensor-core
    kernel); the mask is built from Range in the graph."""
    assert dtype == "float32" or not checked
    short = {"float32": "f32", "bfloat16": "bf16"}[dtype]
    name = f"attention_{short}_b{batch}h{heads}s{seq}d{dim}" + (
        "_causal" if causal else "")
    folder = os.path.join(out, name)
    shape = [batch, heads, seq, dim]
    onnx_type = {"float32": TensorProto.FLOAT,
                 "bfloat16": TensorProto.BFLOAT16}[dtype]
    f32 = lambda v: helper.make_tensor("value", onnx_type, [],
                                       [float(v)])
    i64 = lambda v: numpy_helper.from_array(np.array(v, np.int64))
    nodes = [
        helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["Q", "Kt"], ["S"]),
        helper.make_node("Constant", [], ["scale"],
                         value=f32(1 / np.sqrt(dim))),
        helper.make_node("Mul", ["S", "scale"], ["Ss"]),
    ]
    scores = "Ss"
    if causal:
        nodes += [
            helper.make_node("Constant", [], ["zero_i"], value=i64(0)),
            helper.make_node("Constant", [], ["one_i"], value=i64(1)),
            helper.make_node("Shape", ["Q"], ["qshape"], start=2, end=3),
            helper.make_node("Squeeze", ["qshape"], ["n"]),
            helper.make_node("Range", ["zero_i", "n", "one_i"], ["pos"]),
            helper.make_node("Constant", [], ["ax1"], value=i64([1])),
            helper.make_node("Constant", [], ["ax0"], value=i64([0])),
            helper.make_node("Unsqueeze", ["pos", "ax1"], ["rows"]),
            helper.make_node("Unsqueeze", ["pos", "ax0"], ["cols"]),
            helper.make_node("Greater", ["cols", "rows"], ["above"]),
            helper.make_node("Constant", [], ["ninf"],
                             value=f32(-np.inf)),
            helper.make_node("Constant", [], ["zero_f"], value=f32(0.0)),
            helper.make_node("Where", ["above", "ninf", "zero_f"], ["mask"]),
            helper.make_node("Add", ["Ss", "mask"], ["Sm"]),
        ]
        scores = "Sm"
    nodes += [
        helper.make_node("Softmax", [scores], ["P"], axis=-1),
        helper.make_node("MatMul", ["P", "V"], ["Y"]),
    ]
    save_model(folder, name, nodes, [("Q", shape), ("K", shape),
                                     ("V", shape)], [("Y", shape)],
               dtype=onnx_type)
    if checked:
        rng = np.random.default_rng(seq + dim)
        q, k, v = (rng.standard_normal(shape, dtype=np.float32)
                   for _ in range(3))
        s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2)) / np.sqrt(dim)
        if causal:
            s = s + np.triu(np.full((seq, seq), -np.inf), 1)
        p = np.exp(s - s.max(-1, keepdims=True))
        y = ((p / p.sum(-1, keepdims=True)) @ v).astype(np.float32)
        save_case(folder, [q, k, v], [y])
    flops = 4.0 * batch * heads * seq * seq * dim
    return {"name": name, "op": "attention", "dtype": dtype,
            "batch": batch, "heads": heads, "seq": seq, "dim": dim,
            "causal": causal,
            "flops": flops / 2 if causal else flops, "checked": checked}


def models(out):
    # The GPU check's preflight (scripts/gpu-check.sh): one tiny checked
    # GEMM, not a benchmark.
    probe = gemm(out, 16, 16, 16, checked=True)
    os.rename(os.path.join(out, probe["name"]), os.path.join(out, "probe"))
    specs = [
        # Checked on the GPU against float64 references (small data).
        gemm(out, 256, 256, 256, checked=True),
        attention(out, 1, 2, 128, 64, causal=True, checked=True),
        # Timed against PyTorch in the same run (random inputs).
        gemm(out, 4096, 4096, 4096, checked=False),
        gemm(out, 8192, 8192, 8192, checked=False),
        gemm(out, 4096, 4096, 4096, checked=False, dtype="bfloat16"),
        gemm(out, 8192, 8192, 8192, checked=False, dtype="bfloat16"),
        # Decoding steps: one and 16 rows (split-k), and an output head
        # over a 50257-token vocabulary (N not a multiple of 8: tiles
        # copied element by element).
        gemm(out, 1, 4096, 4096, checked=False, dtype="bfloat16"),
        gemm(out, 16, 4096, 4096, checked=False, dtype="bfloat16"),
        gemm(out, 16, 768, 50257, checked=False, dtype="bfloat16"),
        attention(out, 4, 16, 4096, 128, causal=False, checked=False),
        attention(out, 4, 16, 4096, 128, causal=True, checked=False),
        attention(out, 4, 16, 4096, 128, causal=False, checked=False,
                  dtype="bfloat16"),
        attention(out, 4, 16, 4096, 128, causal=True, checked=False,
                  dtype="bfloat16"),
    ]
    with open(os.path.join(out, "benchmarks.json"), "w") as f:
        json.dump(specs, f, indent=1)
    for s in specs:
        print("wrote", os.path.join(out, s["name"], "model.onnx"))


def to_npy(root):
    count = 0
    for pb in sorted(glob.glob(os.path.join(root, "**", "test_data_set_*",
                                            "*.pb"), recursive=True)):
        tensor = onnx.TensorProto()
        with open(pb, "rb") as f:
            tensor.ParseFromString(f.read())
        np.save(pb[:-3] + ".npy",
                np.ascontiguousarray(numpy_helper.to_array(tensor)))
        os.remove(pb)
        count += 1
    print(f"converted {count} .pb files under {root} to .npy")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("models", "npy"):
        sys.exit("usage: gpu_models.py models OUT | npy DIR")
    (models if sys.argv[1] == "models" else to_npy)(sys.argv[2])


if __name__ == "__main__":
    main()
