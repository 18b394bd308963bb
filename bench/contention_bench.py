#!/usr/bin/python3
# contention_bench.py - a compiled model's latency under each OpenMP wait policy, alone and beside a busy process on the same cores.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: bench/contention_bench.py MODEL.so INPUT.pb... [--build build]
                                   [--runs 30] [--rounds 3] [--busy 1]

Times `tessera-run MODEL.so --benchmark=RUNS` under four OpenMP wait
policies (the artifact's default: waiting threads spin for 1 ms, then
sleep; OMP_WAIT_POLICY=passive: they sleep at once; active: they spin for
200 ms, libomp's own default; KMP_BLOCKTIME=0), in turn, `--rounds` times,
first on an otherwise idle machine and then while `--busy` processes spin
on the same cores (a shared machine: another job, another model). Prints
the minimum and median latency of each, the median over the rounds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = {"default (1 ms)": {},
            "passive": {"OMP_WAIT_POLICY": "passive"},
            "active (spin)": {"OMP_WAIT_POLICY": "active"},
            "KMP_BLOCKTIME=0": {"KMP_BLOCKTIME": "0"}}


def measure(build, model, inputs, runs, env):
    out = subprocess.run(
        [os.path.join(build, "bin", "tessera-run"), model,
         f"--benchmark={runs}"] + [f"--input={p}" for p in inputs],
        capture_output=True, text=True, check=True,
        env=dict(os.environ, **env)).stdout
    found = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", out)
    return float(found.group(1)), float(found.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("inputs", nargs="*")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1)
    args = parser.parse_args()
    print(f"{'load':10} {'policy':16} {'min ms':>8} {'median ms':>10}")
    for load in ["alone", f"{args.busy} busy"]:
        spinners = []
        if load != "alone":
            spinners = [subprocess.Popen([sys.executable, "-c",
                                          "while True: pass"])
                        for _ in range(args.busy)]
        try:
            results = {name: [] for name in POLICIES}
            for _ in range(args.rounds):
                for name, env in POLICIES.items():
                    results[name].append(measure(args.build, args.model,
                                                 args.inputs, args.runs, env))
            for name, values in results.items():
                print(f"{load:10} {name:16} "
                      f"{statistics.median(v[0] for v in values):8.2f} "
                      f"{statistics.median(v[1] for v in values):10.2f}",
                      flush=True)
        finally:
            for spinner in spinners:
                spinner.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
