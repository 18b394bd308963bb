#!/usr/bin/python3
# fusion_bench.py - what fusion buys on this CPU: a BERT-base layer and attention alone.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/fusion_bench.py [--build build] [--threads 2] [--runs 10]
                                [--ort-dir DIR] [--seqs 512,2048]

Measures, in one run, each case compiled by Tessera with fusion (the
default: composite ops and attention raised, fusion regions, attention as
one tiled kernel) and with --no-fusion (one kernel per op, attention as
matmul, softmax, matmul), and with ONNX Runtime (npm onnxruntime-node,
both on --threads threads):
  * a BERT-base encoder layer (hidden 768, 12 heads, FFN 3072, batch 1,
    sequence 128), with the number of kernels before and after fusion
    from the fusion report;
  * attention alone (batch 1, 12 heads, head dim 64) at each sequence
    length in --seqs, with the peak memory (max RSS) of the Tessera run
    beside the size of one sequence x sequence score tensor.
Prints median latencies and ratios.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from cpu_bench import (bert_base_model, ensure_ort, time_ort,  # noqa: E402
                       write_inputs)


def tessera_run(build, model, folder, runs, flags):
    """Compiles with `flags` and times with tessera-run: median ms."""
    artifact = os.path.join(folder, "model%s.so" % "".join(flags))
    subprocess.run([os.path.join(build, "bin", "tessera-compile"), model,
                    "-o", artifact] + flags, check=True)
    files, _ = write_inputs(model, folder)
    out = subprocess.run(
        [os.path.join(build, "bin", "tessera-run"), artifact,
         f"--benchmark={runs}"] + [f"--input={p}" for p in files],
        capture_output=True, text=True, check=True).stdout
    return float(out.split("median ")[1].split(" ms")[0])


def peak_rss(build, artifact_flags, model, folder):
    """Max RSS (MB) of one tessera-run of the model compiled with flags."""
    artifact = os.path.join(folder, "peak%s.so" % "".join(artifact_flags))
    subprocess.run([os.path.join(build, "bin", "tessera-compile"), model,
                    "-o", artifact] + artifact_flags, check=True)
    files, _ = write_inputs(model, folder)
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(os.path.join(build, "bin", "tessera-run"),
                 ["tessera-run", artifact, "--benchmark=2"] +
                 [f"--input={p}" for p in files])
    _, status, usage = os.wait4(pid, 0)
    if status:
        raise SystemExit(f"tessera-run failed on {model}")
    return usage.ru_maxrss / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build",
                                                          "ort"))
    parser.add_argument("--seqs", default="512,2048")
    args = parser.parse_args()
    ensure_ort(args.ort_dir)
    tools = os.path.join(args.build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        bert_path = bert_base_model(tmp)
        report = os.path.join(tmp, "bert_fusion.json")
        subprocess.run([os.path.join(tools, "tessera-compile"), bert_path,
                        "--compile-to=graph", "--fusion-report=" + report,
                        "-o", os.devnull], check=True)
        with open(report) as f:
            fusion = json.load(f)
        print(f"BERT-base layer: {fusion['kernels_before']} kernels before "
              f"fusion, {fusion['kernels_after']} after; regions: " +
              ", ".join(r["kind"] for r in fusion["regions"]))
        cases = [("BERT-base layer (1x128)", bert_path, None)]
        for seq in [int(s) for s in args.seqs.split(",")]:
            path = os.path.join(tmp, f"attention_{seq}")
            subprocess.run([sys.executable, os.path.join(
                ROOT, "scripts", "attention_model.py"), "--out", path,
                "--heads", "12", "--seq", str(seq), "--dim", "64",
                "--no-data"], check=True)
            cases.append((f"attention 1x12x{seq}x64",
                          os.path.join(path, "model.onnx"), seq))
        print(f"{'case':28} {'fused ms':>9} {'unfused ms':>11} {'ORT ms':>8} "
              f"{'fused/ORT':>10} {'unfused/fused':>14} "
              f"{'peak MB fused/unfused':>22} {'scores MB':>10}")
        for name, model, seq in cases:
            folder = tempfile.mkdtemp(dir=tmp)
            fused = tessera_run(args.build, model, folder, args.runs, [])
            unfused = tessera_run(args.build, model, folder, args.runs,
                                     ["--no-fusion"])
            ort = time_ort(args.ort_dir, model, folder, args.threads,
                           args.runs)
            peak = peak_rss(args.build, [], model, folder)
            peak_unfused = peak_rss(args.build, ["--no-fusion"], model,
                                    folder)
            scores = f"{12 * seq * seq * 4 / 2**20:10.0f}" if seq else \
                f"{'-':>10}"
            print(f"{name:28} {fused:9.2f} {unfused:11.2f} {ort:8.2f} "
                  f"{fused / ort:9.2f}x {unfused / fused:13.2f}x "
                  f"{peak:10.0f} / {peak_unfused:<9.0f} {scores}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
