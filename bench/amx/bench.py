#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""bench.py [rounds] [filter] : round-robin over peaks and every out/bin/k_* kernel; each kernel run reports
best-of-5 GFLOP/s; we print median and min-max over rounds. Writes out/results.json."""
import subprocess, sys, re, glob, json, statistics, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
flt = sys.argv[2] if len(sys.argv) > 2 else ''
peaks = {'peak_fma (fp32 FMA, bench/peak_fma.c)': ['out/peak/peak_fma'],
         'peak_bf16 (vdpbf16ps, bench/peak_bf16.c)': ['out/peak/peak_bf16'],
         'peak_amx (tdpbf16ps reg-only, 4 acc)': ['out/peak/peak_amx'],
         'peak_amx6 (tdpbf16ps reg-only, 6 acc)': ['out/peak/peak_amx6']}
kern = {}
for b in sorted(glob.glob('out/bin/k_*')):
    name = os.path.basename(b)
    if flt and not re.search(flt, name): continue
    m = re.match(r'k_(\d+)_(\d+)_(\d+)_.*', name)
    kern[name] = [b, m.group(1), m.group(2), m.group(3), '1' if name.endswith('_pA') else '0']
res = {k: [] for k in list(peaks) + list(kern)}
ratio = {k: [] for k in kern}; apack = {k: [] for k in kern}
fails = []
for r in range(R):
    for k, cmd in list(peaks.items()) + list(kern.items()):
        if k in kern:  # paired short AMX peak right before the kernel (conditions on this VM change by 2x)
            pk = float(subprocess.run(['out/peak/peak_amx', '2000000'], capture_output=True, text=True).stdout.split()[0])
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        if k in kern:
            if 'check=ok' not in out: fails.append((k, out))
            g = float(re.search(r'best ([\d.]+)', out).group(1))
            ratio[k].append(g / pk); apack[k].append(float(re.search(r'incl-Apack ([\d.]+)', out).group(1)))
        else:
            g = float(out.split()[0])
        res[k].append(g)
json.dump({'gflops': res, 'ratio_to_paired_amx_peak': ratio, 'gflops_incl_Apack': apack}, open('out/results.json', 'w'), indent=1)
print(f'{R} rounds; median (min-max) GFLOP/s; kernel runs are best-of-5 calls each')
md = statistics.median
for k, v in res.items():
    extra = ''
    if k in kern:
        extra = f'   ratio-to-paired-AMX-peak {md(ratio[k]):.2f} ({min(ratio[k]):.2f}-{max(ratio[k]):.2f})'
        if k.endswith('_pA'): extra += f'   incl-A-pack {md(apack[k]):.1f}'
    print(f'{k:48s} {md(v):8.1f} ({min(v):.1f}-{max(v):.1f}){extra}')
print('correctness failures:', len(fails))
for k, o in fails[:5]: print(k, o)
