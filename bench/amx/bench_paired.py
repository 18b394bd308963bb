#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""bench_paired.py ROUNDS INNER M N K packA bin... : each kernel run is preceded by a short
peak_amx run (same conditions), prints median/min/max of GFLOP/s and of kernel/peak ratio."""
import subprocess, sys, re, os, statistics as st
os.chdir(os.path.dirname(os.path.abspath(__file__)))  # kernel paths are relative to this folder
R, INNER, M, N, K, pA = sys.argv[1:7]; bins = sys.argv[7:]
res = {b: ([], []) for b in bins}; pk = []
for r in range(int(R)):
    for b in bins:
        p = float(subprocess.run(['out/peak/peak_amx', '2000000'], capture_output=True, text=True).stdout.split()[0])
        o = subprocess.run([b, M, N, K, pA], capture_output=True, text=True, env={'INNER': INNER}).stdout
        assert 'check=ok' in o, o
        g = float(re.search(r'best ([\d.]+)', o).group(1))
        res[b][0].append(g); res[b][1].append(g / p); pk.append(p)
print(f'peak_amx (short, paired): median {st.median(pk):.0f} ({min(pk):.0f}-{max(pk):.0f})')
for b, (g, q) in res.items():
    print(f'{b:40s} {st.median(g):7.1f} ({min(g):.0f}-{max(g):.0f}) GFLOP/s   ratio to paired peak {st.median(q):.2f} ({min(q):.2f}-{max(q):.2f})')
