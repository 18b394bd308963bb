#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""summarize.py results.json [...]: per shape, variants sorted by median GFLOP/s (one column per sitting)."""
import json, sys, statistics as st
R = [json.load(open(f)) for f in sys.argv[1:]]
md = st.median
for name, key in [('peaks', None)]:
    for k in R[0]['gflops']:
        if not k.startswith('k_'):
            print(f'{k:45s} ' + '   '.join(f"{md(r['gflops'][k]):7.1f} ({min(r['gflops'][k]):.0f}-{max(r['gflops'][k]):.0f})" for r in R))
for shape in ['1024_1024_1024', '128_768_768', '128_3072_768', '128_768_3072']:
    M, N, K = shape.split('_'); print(f'\nM={M} N={N} K={K}: median (min-max) GFLOP/s | ratio to paired AMX peak | incl. A packing, per sitting')
    ks = [k for k in R[0]['ratio_to_paired_amx_peak'] if k.startswith('k_' + shape + '_')]
    ks.sort(key=lambda k: -md([md(r['gflops'][k]) for r in R if k in r['gflops']]))
    for k in ks:
        cols = []
        for r in R:
            if k not in r['gflops']: cols.append('-'); continue
            g, q, a = r['gflops'][k], r['ratio_to_paired_amx_peak'][k], r['gflops_incl_Apack'][k]
            cols.append(f'{md(g):6.0f} ({min(g):4.0f}-{max(g):4.0f}) r{md(q):.2f}' + (f' pk{md(a):5.0f}' if k.endswith('_pA') else ''))
        print(f'  {k[len(shape)+3:]:18s} ' + ' | '.join(cols))
