#!/usr/bin/python3
# systolic_bench.py - the matmuls of a BERT-base layer on the accelerator model.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/systolic_bench.py [--build build] [--accel default]
                                  [--dataflow ws|os] [--seq 128]

Runs, with `tessera-sim gemm`, the six matmuls of a BERT-base encoder layer
(hidden 768, FFN 3072, sequence --seq): Q, K, V and the output projection
(seq x 768 x 768), the FFN's two (seq x 768 x 3072, seq x 3072 x 768), in
bf16 on the accelerator --accel (a preset, with --dataflow), and prints
for each and in total: the cycle-level model's cycles and array
utilization, the analytical figures for the same dataflow beside it
(SCALE-Sim's, one fold at a time, and the bound for an array that
pipelines its folds, which the accelerator model does unless its
configuration says "pipelined_folds": false), and the simulator's own
speed (simulated cycles and MACs per second of wall time).

Then the whole layer (exported by scripts/gen_models.py at batch 1 and
sequence --seq, 12 heads) compiled with `tessera-compile --target=systolic`
and run by `tessera-run` on random inputs: total cycles, the utilization of
the array while its matmuls run (matrix unit utilization: MACs over the
matrix unit's busy cycles x cells) and over the whole run, the analytical
lower bound of all its matmuls (the six above plus two per head), and the
simulator's speed.
"""
import argparse
import json
import os
import subprocess
import sys
import re
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--accel", default="default")
    parser.add_argument("--dataflow", choices=["ws", "os"], default="ws")
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args()

    sim = os.path.join(args.build, "bin", "tessera-sim")
    config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"base": args.accel, "dataflow": args.dataflow}, config)
    config.close()
    print(f"accelerator: {args.accel}, {args.dataflow} dataflow, sequence "
          f"{args.seq}")
    s = args.seq
    gemms = [("Q projection", s, 768, 768), ("K projection", s, 768, 768),
             ("V projection", s, 768, 768), ("output projection", s, 768, 768),
             ("FFN up", s, 3072, 768), ("FFN down", s, 768, 3072)]
    print(f"{'matmul':18} {'M x N x K':>16} {'cycles':>9} {'SCALE-Sim':>10} "
          f"{'pipelined':>10} {'ratio':>6} {'array util':>10} "
          f"{'sim Mcycles/s':>13} {'sim GMAC/s':>10}")
    total = {"cycles": 0, "analytical": 0, "pipelined": 0, "macs": 0,
             "wall": 0.0}
    cells = None
    for name, m, n, k in gemms:
        out = subprocess.run([sim, "gemm", f"--accel={config.name}",
                              f"--gemm={m},{n},{k}"], capture_output=True,
                             text=True, check=True).stdout
        r = json.loads(out)
        args.array = r["array"]
        cycles = r["cycles"]
        analytical = r["analytical"]["compute_cycles"]
        pipelined = r["analytical"]["pipelined_compute_cycles"]
        wall = r["simulator"]["wall_seconds"]
        cells = r["macs"] / (r["array_utilization"] * cycles)
        total["cycles"] += cycles
        total["analytical"] += analytical
        total["pipelined"] += pipelined
        total["macs"] += r["macs"]
        total["wall"] += wall
        print(f"{name:18} {f'{m}x{n}x{k}':>16} {cycles:9d} {analytical:10d} "
              f"{pipelined:10d} {cycles / pipelined:6.3f} "
              f"{100 * r['array_utilization']:9.1f}% "
              f"{cycles / wall / 1e6:13.1f} {r['macs'] / wall / 1e9:10.2f}")
    t = total
    print(f"{'total':18} {'':>16} {t['cycles']:9d} {t['analytical']:10d} "
          f"{t['pipelined']:10d} {t['cycles'] / t['pipelined']:6.3f} "
          f"{100 * t['macs'] / (t['cycles'] * cells):9.1f}% "
          f"{t['cycles'] / t['wall'] / 1e6:13.1f} "
          f"{t['macs'] / t['wall'] / 1e9:10.2f}")
    args.cells = cells
    layer(args, config.name, sim)
    os.unlink(config.name)
    return 0


def layer(args, config, sim):
    """The whole BERT-base layer, compiled and simulated."""
    build = args.build
    s, hidden, heads, ffn = args.seq, 768, 12, 3072
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "gen_models.py"),
                        "--out", tmp, "--only", "bert", "--hidden",
                        str(hidden), "--heads", str(heads), "--ffn", str(ffn),
                        "--seq", str(s)], check=True,
                       stdout=subprocess.DEVNULL)
        program = os.path.join(tmp, "bert.tsp")
        subprocess.run([os.path.join(build, "bin", "tessera-compile"),
                        os.path.join(tmp, "bert", "model.onnx"),
                        "--target=systolic", f"--accel={config}",
                        "--dim=batch=1", f"--dim=seq={s}", "-o", program],
                       check=True)
        start = time.perf_counter()
        out = subprocess.run([os.path.join(build, "bin", "tessera-run"),
                              program, f"--accel={config}", "--seed=1"],
                             capture_output=True, text=True,
                             check=True).stdout
        wall = time.perf_counter() - start
    found = re.search(r"(\d+) cycles .* array utilization ([0-9.]+)%, "
                      r"matrix unit utilization ([0-9.]+)%", out)
    cycles, array, matrix = (int(found.group(1)), float(found.group(2)),
                             float(found.group(3)))
    # The layer's matmuls: the six projections and two per head (each of
    # the head's products one batched schedule of 12 GEMMs).
    d = hidden // heads
    gemms = [(s, hidden, hidden, 1)] * 4 + [(s, ffn, hidden, 1),
                                           (s, hidden, ffn, 1)]
    gemms += [(s, s, d, heads), (s, d, s, heads)]
    scalesim = pipelined = macs = 0
    for m, n, k, batch in gemms:
        r = json.loads(subprocess.run(
            [sim, "analyze", f"--array={args.array}",
             f"--dataflow={args.dataflow}", f"--gemm={m},{n},{k}"],
            capture_output=True, text=True, check=True).stdout)
        scalesim += batch * r["compute_cycles"]
        pipelined += ((batch * r["folds"] - 1) * r["fold_interval"] +
                      r["cycles_per_fold"] - 1)
        macs += batch * m * n * k
    ideal = macs / args.cells
    print(f"\nwhole layer (batch 1, sequence {s}, {heads} heads) on the "
          f"accelerator: {cycles} cycles; its matmuls' analytical figures: "
          f"pipelined folds {pipelined} cycles "
          f"({100 * ideal / pipelined:.1f}% utilization), SCALE-Sim "
          f"(one fold at a time) {scalesim} cycles "
          f"({100 * ideal / scalesim:.1f}%), ideal (MACs / cells) "
          f"{ideal:.0f} cycles")
    print(f"array utilization while the matmuls run {matrix:.1f}% "
          f"(target 80%), over the whole run {array:.1f}%; simulator "
          f"{cycles / wall / 1e6:.2f} M simulated cycles/s and "
          f"{macs / wall / 1e9:.2f} G MACs/s (compile excluded, "
          f"{wall:.2f} s wall)")


if __name__ == "__main__":
    sys.exit(main())
