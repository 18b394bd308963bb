#!/usr/bin/python3
# import_bert.py - benchmarks importing a BERT-base-sized encoder layer: time and peak memory.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/import_bert.py [--build build] [--runs 5]

Exports a BERT-base-sized layer (hidden 768, 12 heads, FFN 3072, about 28 MB
of fp32 weights) with scripts/gen_models.py, then runs

    tessera-compile model.onnx --compile-to=import --disable-output

several times, reporting the median wall time, the import phase's own time
(--mlir-timing) and the peak resident memory of the process. Memory is
also given net of a tiny model's peak (the cost of loading the compiler
itself) as a multiple of the model file's size. Targets: import under 1 s,
net memory under 3x the model.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(tool, model):
    """Wall seconds, import-phase seconds and peak RSS (bytes) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen([tool, model, "--compile-to=import",
                              "--disable-output", "--mlir-timing"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    stderr = child.stderr.read()
    # wait4 reports this child's own peak, not the other children's.
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"tessera-compile failed:\n{stderr}")
    match = re.search(r"([0-9.]+) \([ 0-9.]+%\)\s+Import ONNX", stderr)
    phase = float(match.group(1)) if match else float("nan")
    return wall, phase, usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "tessera-compile")
    gen = os.path.join(ROOT, "scripts", "gen_models.py")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, "--out", os.path.join(tmp, "tiny"),
                        "--only", "bert", "--hidden", "8", "--heads", "2",
                        "--ffn", "8", "--seq", "4"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, gen, "--out", os.path.join(tmp, "base"),
                        "--only", "bert", "--hidden", "768", "--heads", "12",
                        "--ffn", "3072", "--seq", "128"], check=True,
                       stdout=subprocess.DEVNULL)
        tiny = os.path.join(tmp, "tiny", "bert", "model.onnx")
        model = os.path.join(tmp, "base", "bert", "model.onnx")
        size = os.path.getsize(model)
        _, _, baseline = run(tool, tiny)
        runs = [run(tool, model) for _ in range(args.runs)]
    wall = statistics.median(r[0] for r in runs)
    phase = statistics.median(r[1] for r in runs)
    peak = max(r[2] for r in runs)
    mb = 1024 * 1024
    print(f"model: BERT-base encoder layer, {size / mb:.1f} MB")
    print(f"import wall time (median of {args.runs}): {wall * 1000:.0f} ms "
          f"(import phase {phase * 1000:.0f} ms); target < 1000 ms")
    print(f"peak RSS: {peak / mb:.1f} MB; compiler alone (tiny model): "
          f"{baseline / mb:.1f} MB")
    print(f"net memory: {(peak - baseline) / mb:.1f} MB = "
          f"{(peak - baseline) / size:.2f}x the model; target < 3x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
