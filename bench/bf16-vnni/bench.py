#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs each binary once per round (interleaved, under nice), prints every round and
min / median / max GFLOP/s per binary. Peak binaries print 'GFLOP/s checksum'; GEMM
binaries print '... = X GFLOP/s ...' (best of 5 calls) and PASS/FAIL."""
import os, re, statistics, subprocess, sys
rounds, bins = int(sys.argv[1]), sys.argv[2:]
# binaries are in out/ beside this script (run.sh builds them there)
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out'))
res = {b: [] for b in bins}
fails = []
for r in range(rounds):
    load = open('/proc/loadavg').read().split()[0]
    line = [f"round {r+1} (load {load}):"]
    for b in bins:
        out = subprocess.run(['nice', f'./{b}'], capture_output=True, text=True).stdout
        m = re.search(r'= ([0-9.]+) GFLOP/s', out)
        g = float(m.group(1)) if m else float(out.split()[0])
        if 'FAIL' in out: fails.append((b, out.strip()))
        res[b].append(g)
        line.append(f"{b} {g:.1f}")
    print('  '.join(line), flush=True)
print(f"\n{'binary':22s} {'min':>7s} {'median':>7s} {'max':>7s}  (GFLOP/s over {rounds} rounds)")
for b in bins:
    v = res[b]
    print(f"{b:22s} {min(v):7.1f} {statistics.median(v):7.1f} {max(v):7.1f}")
for b, o in fails: print("FAIL:", b, o)
sys.exit(1 if fails else 0)
