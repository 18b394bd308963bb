#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generate an AMX bf16 x bf16 -> f32 GEMM in MLIR 22's amx dialect.
usage: gen.py M N K [--tm TM] [--tn TN] [--pack-a]
  A: row-major [M][K] bf16 (or, with --pack-a, tiles [M/16][K/32][16][32])
  B: VNNI panels [N/16][K/2][16][2] bf16 (one 16x32 tile = 16 k-pairs x 16 cols, 64 B rows)
  C: row-major [M][N] f32
  Register block: TM x TN C tiles of 16x16 (TM*16 rows x TN*16 cols), k step 32.
Static shapes; M % (16*TM) == 0, N % (16*TN) == 0, K % 32 == 0 (remainders: see FINDINGS)."""
import sys, argparse
p = argparse.ArgumentParser()
p.add_argument('M', type=int); p.add_argument('N', type=int); p.add_argument('K', type=int)
p.add_argument('--tm', type=int, default=2); p.add_argument('--tn', type=int, default=2)
p.add_argument('--pack-a', action='store_true')
p.add_argument('--name', default='gemm_amx')
p.add_argument('--kc', type=int, default=0, help='K cache block (multiple of 32); C tiles are reloaded between K blocks')
p.add_argument('--ku', type=int, default=1, help='unroll the k loop (distinct tile values per step)')
p.add_argument('--nm', action='store_true', help='loop order n-blocks outer, m-blocks inner (default m outer)')
p.add_argument('--order', default='bj', choices=['all', 'bj', 'ai', 'min'],
               help='all: load every A and B tile, then the muls (TM+TN+TM*TN live tiles); '
                    'bj: all A, then per B tile its muls (TM+1+TM*TN); ai: all B, then per A tile (TN+1+TM*TN); '
                    'min: per A tile, reload each B tile (2+TM*TN live, TM*TN B loads)')
a = p.parse_args()
M, N, K, TM, TN = a.M, a.N, a.K, a.tm, a.tn
assert M % (16*TM) == 0 and N % (16*TN) == 0 and K % 32 == 0
TA = '!amx.tile<16x32xbf16>'; TC = '!amx.tile<16x16xf32>'
L = []
w = L.append
w(f'func.func @{a.name}(%A: memref<{M*K}xbf16>, %B: memref<{N*K}xbf16>, %C: memref<{M*N}xf32>) {{')
KC = a.kc or K
assert K % KC == 0 and KC % 32 == 0
for c in sorted({0, 1, 32, K, N, M//(16*TM), N//(16*TN), K//32, K//KC, KC//32, a.ku, *range(1, a.ku)}):
    w(f'  %c{c} = arith.constant {c} : index')
# loops run over block indices (kb, mb, nb, kt) so that every offset is a product, no floordiv
accs = [(i, j) for i in range(TM) for j in range(TN)]
rt = ', '.join(TC for _ in accs)
def coff(i, j):
    w(f'      %co{i}{j} = affine.apply affine_map<(mb, nb) -> ((mb * {16*TM} + {16*i}) * {N} + nb * {16*TN} + {16*j})>(%mb, %nb)')
    return f'%co{i}{j}'
if KC != K:
    w(f'  scf.for %kb = %c0 to %c{K//KC} step %c1 {{')
loops = [('mb', M//(16*TM)), ('nb', N//(16*TN))]
if a.nm: loops.reverse()
w(f'  scf.for %{loops[0][0]} = %c0 to %c{loops[0][1]} step %c1 {{')
w(f'    scf.for %{loops[1][0]} = %c0 to %c{loops[1][1]} step %c1 {{')
if KC == K:
    for (i, j) in accs:
        w(f'      %z{i}{j} = amx.tile_zero : {TC}')
    init = [f'%z{i}{j}' for (i, j) in accs]
else:
    # first K block starts from zero tiles, later ones from the partial C in memory
    w('      %first = arith.cmpi eq, %kb, %c0 : index')
    w(f'      %init:{len(accs)} = scf.if %first -> ({rt}) {{')
    for (i, j) in accs:
        w(f'        %z{i}{j} = amx.tile_zero : {TC}')
    w('        scf.yield ' + ', '.join(f'%z{i}{j}' for (i, j) in accs) + ' : ' + rt)
    w('      } else {')
    for (i, j) in accs:
        o = coff(i, j)
        w(f'        %l{i}{j} = amx.tile_load %C[{o}], %c{N} : memref<{M*N}xf32> into {TC}')
    w('        scf.yield ' + ', '.join(f'%l{i}{j}' for (i, j) in accs) + ' : ' + rt)
    w('      }')
    init = [f'%init#{n}' for n in range(len(accs))]
ia = ', '.join(f'%acc{i}{j} = {v}' for (i, j), v in zip(accs, init))
if KC == K:
    w(f'      %r:{len(accs)} = scf.for %kt = %c0 to %c{K//32} step %c{a.ku} iter_args({ia}) -> ({rt}) {{')
else:
    w(f'      %kt0 = arith.muli %kb, %c{KC//32} : index')
    w(f'      %kt1 = arith.addi %kt0, %c{KC//32} : index')
    w(f'      %r:{len(accs)} = scf.for %kt = %kt0 to %kt1 step %c{a.ku} iter_args({ia}) -> ({rt}) {{')
def loadA(i, sfx=''):
    if a.pack_a:
        # packed A: tile (mt, kt) at (mt*(K/32) + kt) * 512 elements, rows of 32 bf16 (64 B): stride 32
        w(f'        %am{i}{sfx}{U} = affine.apply affine_map<(mb, kt) -> ((mb * {TM} + {i}) * {K//32 * 512} + kt * 512)>(%mb, {KT})')
        w(f'        %a{i}{sfx}{U} = amx.tile_load %A[%am{i}{sfx}{U}], %c32 : memref<{M*K}xbf16> into {TA}')
    else:
        # row-major A: 16 rows x 32 k at A[m][k], stride K elements (converted to 2K bytes by the lowering)
        w(f'        %am{i}{sfx}{U} = affine.apply affine_map<(mb, kt) -> ((mb * {16*TM} + {16*i}) * {K} + kt * 32)>(%mb, {KT})')
        w(f'        %a{i}{sfx}{U} = amx.tile_load %A[%am{i}{sfx}{U}], %c{K} : memref<{M*K}xbf16> into {TA}')
    return f'%a{i}{sfx}{U}'
def loadB(j, sfx=''):
    # B panel nbk = nb*TN+j: base nbk*K*16 elements; k-pair row kt*16 -> offset kt*16*32 = kt*512; stride 32 (64 B)
    w(f'        %bo{j}{sfx}{U} = affine.apply affine_map<(nb, kt) -> ((nb * {TN} + {j}) * {K*16} + kt * 512)>(%nb, {KT})')
    w(f'        %b{j}{sfx}{U} = amx.tile_load %B[%bo{j}{sfx}{U}], %c32 : memref<{N*K}xbf16> into {TA}')
    return f'%b{j}{sfx}{U}'
def mul(i, j, av, bv):
    w(f'        %d{i}{j}{U} = amx.tile_mulf {av}, {bv}, {CUR[(i, j)]} : {TA}, {TA}, {TC}')
    CUR[(i, j)] = f'%d{i}{j}{U}'
CUR = {(i, j): f'%acc{i}{j}' for (i, j) in accs}
for u in range(a.ku):
    U = f'_u{u}' if a.ku > 1 else ''
    if u == 0: KT = '%kt'
    else:
        KT = f'%kt_u{u}'; w(f'        {KT} = arith.addi %kt, %c{u} : index')
    if a.order == 'all':
        A_ = [loadA(i) for i in range(TM)]; B_ = [loadB(j) for j in range(TN)]
        for (i, j) in accs: mul(i, j, A_[i], B_[j])
    elif a.order == 'bj':
        A_ = [loadA(i) for i in range(TM)]
        for j in range(TN):
            bv = loadB(j)
            for i in range(TM): mul(i, j, A_[i], bv)
    elif a.order == 'ai':
        B_ = [loadB(j) for j in range(TN)]
        for i in range(TM):
            av = loadA(i)
            for j in range(TN): mul(i, j, av, B_[j])
    else:
        for i in range(TM):
            av = loadA(i)
            for j in range(TN): mul(i, j, av, loadB(j, f'_{i}'))
w('        scf.yield ' + ', '.join(CUR[(i, j)] for (i, j) in accs) + ' : ' + rt)
w('      }')
for idx, (i, j) in enumerate(accs):
    w(f'      %cs{i}{j} = affine.apply affine_map<(mb, nb) -> ((mb * {16*TM} + {16*i}) * {N} + nb * {16*TN} + {16*j})>(%mb, %nb)')
    w(f'      amx.tile_store %C[%cs{i}{j}], %r#{idx}, %c{N} : memref<{M*N}xf32>, {TC}')
w('    }')
w('  }')
if KC != K:
    w('  }')
w('  return')
w('}')
print('\n'.join(L))
