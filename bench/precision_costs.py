#!/usr/bin/python3
"""The cpu target's cost model (what --precision=auto prices a matmul at)
against the kernels' measured time on this machine.

    bench/precision_costs.py [--build build] [--rounds 3] [--runs 50]

For single GEMMs of a constant weight (a decoder's 1 x 4096 x 4096, a
BERT-base FFN's 128 x 768 x 3072, a 512 x 1024 x 1024), the plan that
--precision=auto writes gives each policy's predicted time; the same GEMM
compiled under each policy is then timed with tessera-run --benchmark,
the policies alternately, --rounds times. The table gives, per shape and
policy, the predicted and the measured time relative to fp32 (the
measured ratio as the median of the rounds' ratios, with their range).
Measured on this machine, with its own instructions (vdpbf16ps,
vpdpbusd where it has them); the model's rates were measured on one
machine (docs/Precision.md), so the ratios say how far it carries.
"""
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from cpu_bench import time_tessera  # noqa: E402

SHAPES = ((1, 4096, 4096), (128, 768, 3072), (512, 1024, 1024))
POLICIES = ("fp32", "bf16", "fp16", "fp8", "int8")


def write_gemm(folder, m, k, n):
    """A MatMul of an [m, k] input by a constant [k, n] weight, with four
    samples in ONNX's test layout (the plan's and the calibration's)."""
    rng = np.random.default_rng(m + k + n)
    w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="/fc/MatMul")],
        "gemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w")])
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), model)
    for s in range(4):
        data = os.path.join(folder, f"test_data_set_{s}")
        os.makedirs(data, exist_ok=True)
        x = rng.standard_normal((m, k)).astype(np.float32)
        for name, (key, value) in (("input_0", ("x", x)),
                                   ("output_0", ("y", x @ w))):
            with open(os.path.join(data, name + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, key).SerializeToString())
    return model


def predicted(build, model, folder):
    """Each policy's predicted time for the GEMM, from --precision=auto's
    plan, which prices every candidate the target has, whatever the
    accuracy."""
    plan = os.path.join(folder, "plan.json")
    subprocess.run([os.path.join(build, "bin", "tessera-compile"), model,
                    "--precision=auto", f"--calibrate={folder}",
                    "--accuracy-budget=cos:0.9,nrel:1",
                    f"--precision-plan={plan}",
                    "-o", os.path.join(folder, "auto.so")],
                   check=True, stderr=subprocess.DEVNULL)
    with open(plan) as f:
        node = json.load(f)["nodes"]["/fc/MatMul"]
    return node["predicted_time"]


def compile_policy(build, model, folder, policy):
    artifact = os.path.join(folder, f"model_{policy}.so")
    extra = []
    if policy in ("fp8", "int8"):
        extra = [f"--calibrate={folder}", "--quantize-heads",
                 "--quantize-first-layers"]
    subprocess.run([os.path.join(build, "bin", "tessera-compile"), model,
                    f"--precision={policy}", "-o", artifact] + extra,
                   check=True, stderr=subprocess.DEVNULL)
    return artifact


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    print(f"{'shape':>16} {'policy':>6} {'predicted':>10} {'measured':>9} "
          f"{'(range)':>13} {'fp32 ms':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for m, k, n in SHAPES:
            folder = os.path.join(tmp, f"gemm_{m}x{k}x{n}")
            model = write_gemm(folder, m, k, n)
            times = predicted(args.build, model, folder)
            artifacts = {p: compile_policy(args.build, model, folder, p)
                         for p in POLICIES}
            measured = {p: [] for p in POLICIES}
            for _ in range(args.rounds):
                for p in POLICIES:
                    measured[p].append(time_tessera(
                        args.build, model, folder, args.runs, artifacts[p]))
            for p in POLICIES:
                if p not in times:
                    continue
                ratios = [t / f for t, f in zip(measured[p], measured["fp32"])]
                print(f"{f'{m}x{k}x{n}':>16} {p:>6} "
                      f"{times[p] / times['fp32']:>9.2f}x "
                      f"{statistics.median(ratios):>8.2f}x "
                      f"({min(ratios):.2f}-{max(ratios):.2f}) "
                      f"{statistics.median(measured['fp32']):>8.3f}")


if __name__ == "__main__":
    main()
