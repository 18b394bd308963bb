#!/usr/bin/python3
# cpu_bench.py - Tessera against ONNX Runtime on this CPU: a BERT-base layer and fp32 GEMMs.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/cpu_bench.py [--build build] [--threads 2] [--runs 10]
                             [--rounds 3] [--precision fp32 bf16 ...]
                             [--ort-dir DIR]
                             [--cases bert gemm attention gemv]

Measures, in one run:
  * this CPU's fp32 FMA peak (bench/peak_fma.c, one core);
  * a BERT-base encoder layer (hidden 768, 12 heads, FFN 3072, batch 1,
    sequence 128), fp32 GEMMs 1024x1024x1024 and 128x768x3072, and
    scaled dot-product attention (12 heads of 64, sequence 512 and 2048,
    as exporters write it: scripts/attention_model.py), with --cases gemv
    a 4096 x 4096 weight times an input vector of 4096 (ONNX MatMul with a
    rank-1 second operand: the GEMV kernel) and a row of 4096 times it (a
    one-row GEMM, as a batch-1 decoder's linear layers), each
    compiled by `tessera-compile -o model.so` and timed with
    `tessera-run --benchmark`, and timed with ONNX Runtime (npm package
    onnxruntime-node, installed into --ort-dir with --ignore-scripts);
and prints the median latencies, Tessera's ratio to ONNX Runtime, and the
GFLOP/s of each as a fraction of the peak times the thread count (for
the bf16 policy, of the bf16 dot-product peak, bench/peak_bf16.c, where
the CPU has AVX-512 BF16). Each
case runs `--rounds` times, ONNX Runtime (fp32) and Tessera under each
`--precision` policy alternately; the table gives the median over the
rounds and the range of Tessera's ratio.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gemm_model(path, m, k, n):
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(
        rng.standard_normal((k, n), dtype=np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "W"], ["C"], name="gemm")], "gemm",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, [m, n])],
        [weight])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def gemv_model(path, m, k, row):
    """A weight [m, k] times an input vector [k] (MatMul(W, x)), or with
    `row` an input row [1, k] times a weight [k, m]."""
    rng = np.random.default_rng(0)
    shape = (k, m) if row else (m, k)
    weight = numpy_helper.from_array(
        rng.standard_normal(shape, dtype=np.float32), "W")
    node = ["X", "W"] if row else ["W", "X"]
    graph = helper.make_graph(
        [helper.make_node("MatMul", node, ["C"], name="gemv")], "gemv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       [1, k] if row else [k])],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT,
                                       [1, m] if row else [m])],
        [weight])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def write_inputs(model_path, folder):
    """Fixed-pattern inputs as .pb files plus a JSON spec for ONNX Runtime."""
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    spec, files = [], []
    for i, value in enumerate(v for v in model.graph.input
                              if v.name not in inits):
        t = value.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if t.elem_type == TensorProto.INT64:
            data = (np.arange(np.prod(shape)) % 7).astype(np.int64)
            kind = "int64"
        else:
            data = (((np.arange(np.prod(shape)) % 13) - 6) / 7).astype(
                np.float32)
            kind = "float32"
        path = os.path.join(folder, f"input_{i}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(data.reshape(shape),
                                            value.name).SerializeToString())
        files.append(path)
        spec.append({"name": value.name, "type": kind, "shape": shape})
    spec_path = os.path.join(folder, "inputs.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    return files, spec_path


def write_calibration(model_path, folder, samples=4):
    """`samples` sets of the timed inputs, each scaled by 1 + s / 10, in
    ONNX's test layout: what --calibrate reads for the fp8 and int8
    policies. Returns the folder."""
    calib = os.path.join(folder, "calibration")
    for sample in range(samples):
        data = os.path.join(calib, f"test_data_set_{sample}")
        os.makedirs(data, exist_ok=True)
        files, _ = write_inputs(model_path, data)
        for path in files:
            tensor = onnx.TensorProto()
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
            values = numpy_helper.to_array(tensor)
            if values.dtype == np.float32:
                values = values * np.float32(1 + sample / 10)
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(
                    values, tensor.name).SerializeToString())
    return calib


def compile_tessera(build, model, folder, precision="fp32", threads=0):
    """Compiles `model` under `precision` for `threads` OpenMP threads (0:
    OMP_NUM_THREADS at run time, else one per core); the fp8 and int8
    policies calibrate on the timed inputs (write_calibration) and narrow
    the first layers too (the BERT layer stands for one in the middle of a
    model, whose query, key and value projections are not first layers)."""
    artifact = os.path.join(folder, f"model_{precision}.so")
    calibrate = []
    if precision in ("fp8", "int8"):
        calibrate = [f"--calibrate={write_calibration(model, folder)}",
                     "--quantize-first-layers"]
    subprocess.run([os.path.join(build, "bin", "tessera-compile"), model,
                    f"--precision={precision}", f"--threads={threads}", "-o",
                    artifact] + calibrate, check=True,
                   stderr=subprocess.DEVNULL if calibrate else None)
    return artifact


def time_tessera(build, model, folder, runs, artifact=None):
    if artifact is None:
        artifact = compile_tessera(build, model, folder)
    files, _ = write_inputs(model, folder)
    out = subprocess.run([os.path.join(build, "bin", "tessera-run"), artifact,
                          f"--benchmark={runs}"] +
                         [f"--input={p}" for p in files],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def time_ort(ort_dir, model, folder, threads, runs):
    _, spec = write_inputs(model, folder)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    out = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_runner.js"),
                          model, str(threads), str(runs), spec],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)["median_ms"]


def ensure_ort(ort_dir):
    """Installs onnxruntime-node into ort_dir (npm, --ignore-scripts)."""
    if not os.path.isdir(os.path.join(ort_dir, "node_modules",
                                      "onnxruntime-node")):
        os.makedirs(ort_dir, exist_ok=True)
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit",
                        "--no-fund", "onnxruntime-node"], cwd=ort_dir,
                       check=True, stdout=subprocess.DEVNULL)


def attention_model(tmp, seq):
    """Scaled dot-product attention over Q, K, V inputs of [1, 12, seq, 64]
    (Transpose, MatMul, Div, Softmax, MatMul); returns its path."""
    out = os.path.join(tmp, f"attention_{seq}")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                 "attention_model.py"),
                    "--out", out, "--seq", str(seq), "--no-data"], check=True)
    return os.path.join(out, "model.onnx")


def bert_base_model(tmp):
    """A BERT-base encoder layer (hidden 768, 12 heads, FFN 3072) with batch
    1 and sequence 128 fixed; returns its path."""
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                 "gen_models.py"),
                    "--out", os.path.join(tmp, "bert"), "--only", "bert",
                    "--hidden", "768", "--heads", "12", "--ffn", "3072",
                    "--seq", "128"], check=True, stdout=subprocess.DEVNULL)
    # A static copy of the dynamic export.
    bert = onnx.load(os.path.join(tmp, "bert", "bert", "model.onnx"))
    for value in list(bert.graph.input) + list(bert.graph.output):
        dims = value.type.tensor_type.shape.dim
        dims[0].dim_value, dims[1].dim_value = 1, 128
    path = os.path.join(tmp, "bert_base.onnx")
    onnx.save(bert, path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--precision", nargs="+", default=["fp32"],
                        help="Tessera's precision policies to time")
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build",
                                                          "ort"))
    parser.add_argument("--cases", nargs="+",
                        default=["bert", "gemm", "attention"],
                        choices=["bert", "gemm", "attention", "gemv"])
    args = parser.parse_args()
    ensure_ort(args.ort_dir)
    with tempfile.TemporaryDirectory() as tmp:
        peak_bin = os.path.join(tmp, "peak")
        subprocess.run(["clang-22", "-O2", "-o", peak_bin,
                        os.path.join(ROOT, "bench", "peak_fma.c")], check=True)
        fields = subprocess.run([peak_bin], capture_output=True, text=True,
                                check=True).stdout.split()
        peak = float(fields[0])
        print(f"fp32 FMA peak ({fields[2]}): {peak:.1f} GFLOP/s per core, "
              f"{peak * args.threads:.1f} on {args.threads} threads")
        # The bf16 policy's rows are a fraction of the bf16 dot-product
        # peak (bench/peak_bf16.c, vdpbf16ps) where the CPU has one.
        peaks = {}
        with open("/proc/cpuinfo") as cpuinfo:
            has_bf16 = "avx512_bf16" in cpuinfo.read()
        if "bf16" in args.precision and has_bf16:
            bf16_bin = os.path.join(tmp, "peak_bf16")
            subprocess.run(["clang-22", "-O2", "-mavx512f", "-mavx512bf16",
                            "-o", bf16_bin,
                            os.path.join(ROOT, "bench", "peak_bf16.c")],
                           check=True)
            peaks["bf16"] = float(subprocess.run(
                [bf16_bin], capture_output=True, text=True,
                check=True).stdout.split()[0])
            print(f"bf16 dot-product peak (vdpbf16ps): {peaks['bf16']:.1f} "
                  f"GFLOP/s per core (the bf16 rows' %peak)")
        cases = []
        if "bert" in args.cases:
            bert_path = bert_base_model(tmp)
            layer_flops = 2 * 128 * (4 * 768 * 768 + 2 * 768 * 3072) + \
                2 * 2 * 12 * 128 * 128 * 64
            cases.append(("BERT-base layer (1x128)", bert_path, layer_flops))
        for m, k, n in [(1024, 1024, 1024), (128, 768, 3072)]:
            if "gemm" not in args.cases:
                break
            path = os.path.join(tmp, f"gemm_{m}x{k}x{n}.onnx")
            gemm_model(path, m, k, n)
            cases.append((f"GEMM {m}x{k}x{n}", path, 2 * m * k * n))
        for seq in [512, 2048]:
            if "attention" not in args.cases:
                break
            cases.append((f"attention 12x{seq}x64",
                          attention_model(tmp, seq), 4 * 12 * seq * seq * 64))
        for row in [False, True]:
            if "gemv" not in args.cases:
                break
            path = os.path.join(tmp, f"gemv_{int(row)}.onnx")
            gemv_model(path, 4096, 4096, row)
            cases.append(("row x W 1x4096x4096" if row else
                          "W x vector 4096x4096", path, 2 * 4096 * 4096))
        print(f"{'case':26} {'policy':>6} {'Tessera ms':>11} {'ORT ms':>9} "
              f"{'ratio':>6} {'(range)':>13} {'Tessera %peak':>14} "
              f"{'ORT %peak':>10}")
        for name, model, flops in cases:
            folder = tempfile.mkdtemp(dir=tmp)
            artifacts = {p: compile_tessera(args.build, model, folder, p,
                                            args.threads)
                         for p in args.precision}
            ort_times, ours = [], {p: [] for p in args.precision}
            for _ in range(args.rounds):
                ort_times.append(time_ort(args.ort_dir, model, folder,
                                          args.threads, args.runs))
                for policy, artifact in artifacts.items():
                    ours[policy].append(time_tessera(
                        args.build, model, folder, args.runs, artifact))
            ort = float(np.median(ort_times))
            peak_all = peak * args.threads
            for policy, times in ours.items():
                ratios = [t / o for t, o in zip(times, ort_times)]
                t = float(np.median(times))
                own_peak = peaks.get(policy, peak) * args.threads
                print(f"{name:26} {policy:>6} {t:11.2f} {ort:9.2f} "
                      f"{float(np.median(ratios)):5.2f}x "
                      f"({min(ratios):.2f}-{max(ratios):.2f}) "
                      f"{100 * flops / t / 1e6 / own_peak:13.1f}% "
                      f"{100 * flops / ort / 1e6 / peak_all:9.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
