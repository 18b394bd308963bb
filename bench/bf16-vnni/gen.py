#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generates the bf16 x bf16 -> f32 GEMM kernel C[M,N] += A x B in MLIR (vector dialect).

Register tile MR x NR = 8 x 32 (16 f32 accumulators of vector<16xf32>), k is walked
in pairs (kp = k/2).  Every rank-1 update (one row m, one k pair, 16 columns) is written
as the VNNI-form vector.contract that x86vector's
populateVectorContractToPackedTypeDotProductPatterns rewrites to x86vector.avx512.dot:

  lhs vector<1x1x2xbf16>  (m, kp, vnni)   map (d4,d1,d2,d3) -> (d1,d3,d4)
  rhs vector<1x16x2xbf16> (kp, n, vnni)   map (d4,d1,d2,d3) -> (d3,d2,d4)
  acc vector<1x16xf32>    (m, n)          map (d4,d1,d2,d3) -> (d1,d2)
  iterator_types = [reduction (vnni), parallel (m), parallel (n), reduction (kp)]

Layouts (all flat 1-D memrefs, row-major):
  A direct : [M][K]                 == [M][K/2][2]       (no packing needed: a row's k pairs are adjacent)
  A packed : [M/8][K/2][8][2]       (--pack-a)
  B VNNI   : [K/2][N][2]            (default)
  B panels : [N/32][K/2][32][2]     (--pack-b)
  C        : [M][N] f32
Usage: gen.py M N K [--pack-a] [--pack-b] [--fma] > kernel.mlir
"""
import sys

M, N, K = (int(x) for x in sys.argv[1:4])
pack_a = "--pack-a" in sys.argv
pack_b = "--pack-b" in sys.argv
# --fma: comparison kernel without vdpbf16ps: A pre-converted to f32 ([M][K] f32), B's
# bf16 pairs widened in registers (even k: i32 << 16, odd k: i32 & 0xffff0000) and
# two vector.fma per (row, 16 columns, k pair).
fma = "--fma" in sys.argv
assert not (fma and pack_a)
MR, NR = 8, 32
assert M % MR == 0 and N % NR == 0 and K % 2 == 0
KP = K // 2

o = []
w = o.append
w("#mA = affine_map<(d4, d1, d2, d3) -> (d1, d3, d4)>")
w("#mB = affine_map<(d4, d1, d2, d3) -> (d3, d2, d4)>")
w("#mC = affine_map<(d4, d1, d2, d3) -> (d1, d2)>")
AT = "f32" if fma else "bf16"
w(f"func.func @gemm_bf16(%A: memref<{M*K}x{AT}>, %B: memref<{K*N}xbf16>, %C: memref<{M*N}xf32>) {{")
for c in sorted({0, 1, 2, 16, 32, 64, MR, NR, M, N, KP, K, 2 * N} | set(range(MR)) | {2 * i for i in range(MR)}):
    w(f"  %c{c} = arith.constant {c} : index")
if fma:
    w("  %sh16 = arith.constant dense<16> : vector<16xi32>")
    w("  %hmask = arith.constant dense<-65536> : vector<16xi32>")
w(f"  scf.for %n0 = %c0 to %c{N} step %c{NR} {{")
w(f"    scf.for %m0 = %c0 to %c{M} step %c{MR} {{")
# C tile loads
accs = []
for i in range(MR):
    w(f"      %mi{i} = arith.addi %m0, %c{i} : index" if i else f"      %mi{i} = arith.addi %m0, %c0 : index")
    w(f"      %crow{i} = arith.muli %mi{i}, %c{N} : index")
    for j in range(NR // 16):
        w(f"      %coff{i}_{j} = arith.addi %crow{i}, %n0 : index")
        if j:
            w(f"      %coffj{i}_{j} = arith.addi %coff{i}_{j}, %c16 : index")
            off = f"%coffj{i}_{j}"
        else:
            off = f"%coff{i}_{j}"
        w(f"      %acc{i}_{j} = vector.load %C[{off}] : memref<{M*N}xf32>, vector<16xf32>")
        accs.append((i, j, off))
names = [f"%acc{i}_{j}" for i, j, _ in accs]
iter_decl = ", ".join(f"%x{i}_{j} = %acc{i}_{j}" for i, j, _ in accs)
types = ", ".join("vector<16xf32>" for _ in accs)
# loop-invariant bases
if pack_a:
    w(f"      %abase = arith.muli %m0, %c{K} : index")           # panel (m0/8) starts at m0*K
else:
    for i in range(MR):
        w(f"      %abase{i} = arith.muli %mi{i}, %c{K} : index")
if pack_b:
    w(f"      %bbase = arith.muli %n0, %c{K} : index")           # panel (n0/32) starts at n0*K
else:
    w(f"      %bbase = arith.muli %n0, %c2 : index")
w(f"      %r:{len(accs)} = scf.for %kp = %c0 to %c{KP} step %c1 iter_args({iter_decl}) -> ({types}) {{")
# B loads: two vector<32xbf16> = 16 columns x 2 k each
if pack_b:
    w(f"        %kb = arith.muli %kp, %c64 : index")
else:
    w(f"        %kb = arith.muli %kp, %c{2*N} : index")
w(f"        %boff0 = arith.addi %bbase, %kb : index")
w(f"        %boff1 = arith.addi %boff0, %c{32} : index")
for j in range(2):
    w(f"        %bf{j} = vector.load %B[%boff{j}] : memref<{K*N}xbf16>, vector<32xbf16>")
    if fma:
        w(f"        %bi{j} = vector.bitcast %bf{j} : vector<32xbf16> to vector<16xi32>")
        w(f"        %bes{j} = arith.shli %bi{j}, %sh16 : vector<16xi32>")
        w(f"        %boa{j} = arith.andi %bi{j}, %hmask : vector<16xi32>")
        w(f"        %be{j} = vector.bitcast %bes{j} : vector<16xi32> to vector<16xf32>")
        w(f"        %bo{j} = vector.bitcast %boa{j} : vector<16xi32> to vector<16xf32>")
    else:
        w(f"        %b{j} = vector.shape_cast %bf{j} : vector<32xbf16> to vector<1x16x2xbf16>")
# A loads: one bf16 pair per row
if pack_a:
    w(f"        %ka = arith.muli %kp, %c16 : index")
    w(f"        %aoffb = arith.addi %abase, %ka : index")
else:
    w(f"        %ka = arith.muli %kp, %c2 : index")
for i in range(MR):
    if pack_a:
        w(f"        %aoff{i} = arith.addi %aoffb, %c{2*i} : index" if i else f"        %aoff{i} = arith.addi %aoffb, %c0 : index")
    else:
        w(f"        %aoff{i} = arith.addi %abase{i}, %ka : index")
    if fma:
        w(f"        %aoo{i} = arith.addi %aoff{i}, %c1 : index")
        w(f"        %ase{i} = memref.load %A[%aoff{i}] : memref<{M*K}xf32>")
        w(f"        %aso{i} = memref.load %A[%aoo{i}] : memref<{M*K}xf32>")
        w(f"        %ae{i} = vector.broadcast %ase{i} : f32 to vector<16xf32>")
        w(f"        %ao{i} = vector.broadcast %aso{i} : f32 to vector<16xf32>")
    else:
        w(f"        %af{i} = vector.load %A[%aoff{i}] : memref<{M*K}xbf16>, vector<2xbf16>")
        w(f"        %a{i} = vector.shape_cast %af{i} : vector<2xbf16> to vector<1x1x2xbf16>")
outs = []
for i, j, _ in accs:
    if fma:
        w(f"        %t{i}_{j} = vector.fma %ae{i}, %be{j}, %x{i}_{j} : vector<16xf32>")
        w(f"        %y{i}_{j} = vector.fma %ao{i}, %bo{j}, %t{i}_{j} : vector<16xf32>")
        outs.append(f"%y{i}_{j}")
        continue
    w(f"        %xc{i}_{j} = vector.shape_cast %x{i}_{j} : vector<16xf32> to vector<1x16xf32>")
    w(f"        %d{i}_{j} = vector.contract {{indexing_maps = [#mA, #mB, #mC], "
      f"iterator_types = [\"reduction\", \"parallel\", \"parallel\", \"reduction\"], kind = #vector.kind<add>}} "
      f"%a{i}, %b{j}, %xc{i}_{j} : vector<1x1x2xbf16>, vector<1x16x2xbf16> into vector<1x16xf32>")
    w(f"        %y{i}_{j} = vector.shape_cast %d{i}_{j} : vector<1x16xf32> to vector<16xf32>")
    outs.append(f"%y{i}_{j}")
w(f"        scf.yield {', '.join(outs)} : {types}")
w("      }")
for n, (i, j, off) in enumerate(accs):
    w(f"      vector.store %r#{n}, %C[{off}] : memref<{M*N}xf32>, vector<16xf32>")
w("    }")
w("  }")
w("  return")
w("}")
print("\n".join(o))
