#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Remainder-handling demo: C[M,N] = A[M,K] x B for any M, N and even K, one C tile at a time,
with every edge peeled into its own static tile shape (AMX tiles may have fewer rows / narrower rows,
the shape is static in !amx.tile<RxC>):
   m edge: mr = M % 16 rows; n edge: nr = N % 16 columns; k tail: kr = K % 32 (even) bf16 per A row,
   kr/2 k-pair rows of B.
A row-major [M][K]; B VNNI panels [ceil(N/16)][K/2][16][2], zero-padded past N (the kernel never reads the pad).
usage: gen_rem.py M N K"""
import sys
M, N, K = map(int, sys.argv[1:4]); assert K % 2 == 0
NP = (N + 15) // 16
import argparse
ap = argparse.ArgumentParser(); ap.add_argument('M', type=int); ap.add_argument('N', type=int); ap.add_argument('K', type=int)
ap.add_argument('--one-func', action='store_true', help='all edge cases in one function (LLVM 22 fails: ran out of registers)')
args = ap.parse_args()
L = []; w = L.append
sig = f'%A: memref<{M*K}xbf16>, %B: memref<{NP*K*16}xbf16>, %C: memref<{M*N}xf32>'
sigt = f'memref<{M*K}xbf16>, memref<{NP*K*16}xbf16>, memref<{M*N}xf32>'
consts = {0, 1, 32, K, N, M // 16, N // 16, K // 32}
def head(name, vis=''):
    w(f'func.func {vis}@{name}({sig}) {{')
    for c in sorted(consts): w(f'  %c{c} = arith.constant {c} : index')
calls = []
if args.one_func: head('gemm_amx')
mcases = [(16, M // 16, 0)] + ([(M % 16, 1, (M // 16) * 16)] if M % 16 else [])   # (rows, count, start row)
ncases = [(16, N // 16, 0)] + ([(N % 16, 1, (N // 16) * 16)] if N % 16 else [])
kfull, kr = K // 32, K % 32
u = [0]
def nid(): u[0] += 1; return u[0]
for (mr, mcnt, m0) in mcases:
    if mcnt == 0: continue
    for (nr, ncnt, n0) in ncases:
        if ncnt == 0: continue
        q = nid()
        TC = f'!amx.tile<{mr}x{nr}xf32>'
        if not args.one_func:
            # one function per edge case: LLVM gives each physical tile register one shape per
            # function (one ldtilecfg at entry), so at most 8 distinct tile shapes per function
            head(f'gemm_amx_{mr}x{nr}'); calls.append(f'gemm_amx_{mr}x{nr}')
        w(f'  // C tiles of {mr}x{nr}')
        w(f'  scf.for %mt{q} = %c0 to %c{mcnt} step %c1 {{')
        w(f'    scf.for %nt{q} = %c0 to %c{ncnt} step %c1 {{')
        w(f'      %row{q} = affine.apply affine_map<(t) -> (t * 16 + {m0})>(%mt{q})')
        w(f'      %col{q} = affine.apply affine_map<(t) -> (t * 16 + {n0})>(%nt{q})')
        w(f'      %z{q} = amx.tile_zero : {TC}')
        def step(kt, kk, acc, ind):
            TA = f'!amx.tile<{mr}x{kk}xbf16>'; TB = f'!amx.tile<{kk//2}x{2*nr}xbf16>'
            p = ' ' * ind
            w(f'{p}%ao{q}_{kk} = affine.apply affine_map<(r, k) -> (r * {K} + k * 32)>(%row{q}, {kt})')
            w(f'{p}%a{q}_{kk} = amx.tile_load %A[%ao{q}_{kk}], %c{K} : memref<{M*K}xbf16> into {TA}')
            # panel of column c: (c / 16) * K*16 ; k-pair row kt*16 -> + kt*512 ; stride 32 elements (64 B) even for nr < 16
            w(f'{p}%bo{q}_{kk} = affine.apply affine_map<(c, k) -> ((c floordiv 16) * {K*16} + k * 512)>(%col{q}, {kt})')
            w(f'{p}%b{q}_{kk} = amx.tile_load %B[%bo{q}_{kk}], %c32 : memref<{NP*K*16}xbf16> into {TB}')
            w(f'{p}%d{q}_{kk} = amx.tile_mulf %a{q}_{kk}, %b{q}_{kk}, {acc} : {TA}, {TB}, {TC}')
            return f'%d{q}_{kk}'
        acc = f'%z{q}'
        if kfull:
            w(f'      %r{q} = scf.for %kt{q} = %c0 to %c{K//32} step %c1 iter_args(%acc{q} = %z{q}) -> ({TC}) {{')
            d = step(f'%kt{q}', 32, f'%acc{q}', 8)
            w(f'        scf.yield {d} : {TC}')
            w('      }')
            acc = f'%r{q}'
        if kr:
            d = step(f'%c{K//32}', kr, acc, 6); acc = d
        w(f'      %co{q} = affine.apply affine_map<(r, c) -> (r * {N} + c)>(%row{q}, %col{q})')
        w(f'      amx.tile_store %C[%co{q}], {acc}, %c{N} : memref<{M*N}xf32>, {TC}')
        w('    }')
        w('  }')
        if not args.one_func:
            w('  return'); w('}')
if args.one_func:
    w('  return'); w('}')
else:
    w(f'func.func @gemm_amx({sig}) {{')
    for c in calls: w(f'  call @{c}(%A, %B, %C) : ({sigt}) -> ()')
    w('  return'); w('}')
print('\n'.join(L))
