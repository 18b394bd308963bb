# fp8_cases.py - products for the CUDA target's 8-bit kernels in ONNX's test
# layout, with values that make --precision=fp8 (or, with --int8,
# --precision=int8) exact. fp8 (wgmma e4m3/e5m2 on sm_90a, the mma.sync
# kernel with tiles decoded to bf16 elsewhere): every operand holds 448 once
# (so that its amax, calibrated or computed each run, gives E4M3 a scale of
# exactly 1 and E5M2 one of 1/128). int8 (mma.sync s8): 127 instead, in
# every column of a weight (its per-channel scales are then 1 too).
# Otherwise the values are integers in [-8, 8], which every format holds at
# those scales. Products and their sums are then integers well inside
# f32's exact range, and a correct kernel matches the float64 reference to
# the last bit (--atol=0 --rtol=0): a wrong layout, swizzle, stage or edge
# cannot hide.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tensor_core_cases import f64, save  # noqa: E402


PEAK = 448.0


def exact(rng, shape):
    x = rng.integers(-8, 9, size=shape).astype(np.float32)
    x.flat[rng.integers(0, x.size)] = PEAK
    return x


def weight(rng, k, n, trans_b=False):
    """[k, n] (or [n, k] with trans_b); for int8 every output column
    (n) holds the peak, so that its per-channel scale is 1."""
    w = exact(rng, (n, k) if trans_b else (k, n))
    if PEAK == 127.0:
        for j in range(n):
            i = rng.integers(0, k)
            if trans_b:
                w[j, i] = PEAK
            else:
                w[i, j] = PEAK
    return w


def gemm(out, m, k, n, trans_b=False, name=None):
    """Y = A W + b (Gemm; W stored [n, k] with trans_b)."""
    rng = np.random.default_rng(m * 1000 + k + n)
    a = exact(rng, (m, k))
    w = weight(rng, k, n, trans_b)
    b = rng.integers(-8, 9, size=(n,)).astype(np.float32)
    y = f64(a) @ f64(w.T if trans_b else w) + b
    save(out, name or f"gemm_{m}x{k}x{n}{'_tb' if trans_b else ''}",
         [helper.make_node("Gemm", ["A", "W", "B"], ["Y"],
                           transB=int(trans_b))],
         [("A", [m, k])], [("W", w), ("B", b)], [([a], y)], [m, n])


def linear(out, k, n, sizes):
    """A [batch, seq, k] (symbolic batch and seq) times a shared weight."""
    rng = np.random.default_rng(k + n)
    w = weight(rng, k, n)
    sets = []
    for batch, seq in sizes:
        a = exact(rng, (batch, seq, k))
        sets.append(([a], f64(a) @ f64(w)))
    save(out, f"linear_{k}x{n}",
         [helper.make_node("MatMul", ["A", "W"], ["Y"])],
         [("A", ["batch", "seq", k])], [("W", w)], sets,
         ["batch", "seq", n])


def bmm(out, batch, m, k, n):
    """Two activations (B stored [k][n], quantized each run)."""
    rng = np.random.default_rng(batch + m + k + n)
    a = exact(rng, (batch, m, k))
    b = exact(rng, (batch, k, n))
    save(out, f"bmm_{batch}x{m}x{k}x{n}",
         [helper.make_node("MatMul", ["A", "B"], ["Y"])],
         [("A", [batch, m, k]), ("B", [batch, k, n])], [],
         [([a, b], f64(a) @ f64(b))], [batch, m, n])


def chain(out, m, k, n1, n2):
    """Y = relu(A W1) W2, exact under fp8 current scaling too: W1 copies
    A's first n1 columns (ones on its diagonal; its 448, for a scale of 1,
    meets A's last column, all zeros), so relu(A W1) holds A's peak and
    integers in [0, 8], and its amax, which the first product's kernel
    computes as it stores, is 448 again."""
    rng = np.random.default_rng(m + k + n1 + n2)
    a = exact(rng, (m, k))
    a[a == PEAK] = 0
    a[rng.integers(0, m), rng.integers(0, n1)] = PEAK
    a[:, k - 1] = 0
    w1 = np.zeros((k, n1), np.float32)
    w1[np.arange(n1), np.arange(n1)] = 1
    w1[k - 1, 0] = PEAK
    w2 = weight(rng, n1, n2)
    y = np.maximum(f64(a) @ f64(w1), 0) @ f64(w2)
    save(out, f"chain_{m}x{k}x{n1}x{n2}",
         [helper.make_node("MatMul", ["A", "W1"], ["H"]),
          helper.make_node("Relu", ["H"], ["R"]),
          helper.make_node("MatMul", ["R", "W2"], ["Y"])],
         [("A", [m, k])], [("W1", w1), ("W2", w2)], [([a], y)], [m, n2])


def chain_rows(out, k, n1, n2, rows):
    """chain() with a symbolic number of rows, one test set per count."""
    rng = np.random.default_rng(k + n1 + n2)
    w1 = np.zeros((k, n1), np.float32)
    w1[np.arange(n1), np.arange(n1)] = 1
    w1[k - 1, 0] = PEAK
    w2 = weight(rng, n1, n2)
    sets = []
    for m in rows:
        a = exact(rng, (m, k))
        a[a == PEAK] = 0
        a[rng.integers(0, m), rng.integers(0, n1)] = PEAK
        a[:, k - 1] = 0
        sets.append(([a], np.maximum(f64(a) @ f64(w1), 0) @ f64(w2)))
    save(out, f"chain_rows_{k}x{n1}x{n2}",
         [helper.make_node("MatMul", ["A", "W1"], ["H"]),
          helper.make_node("Relu", ["H"], ["R"]),
          helper.make_node("MatMul", ["R", "W2"], ["Y"])],
         [("A", ["rows", k])], [("W1", w1), ("W2", w2)], sets, ["rows", n2])


def main():
    global PEAK
    out = sys.argv[1]
    if "--int8" in sys.argv[2:]:
        PEAK = 127.0
    # N not a multiple of the 128-wide tile, M of the 64 rows.
    gemm(out, 129, 64, 72)
    # K = 592: five 128-deep K tiles through four stages (a refill), the
    # last one partial (TMA's zero fill).
    gemm(out, 64, 592, 136)
    # A weight stored [n, k] already (Gemm transB = 1).
    gemm(out, 17, 48, 40, trans_b=True)
    # K = 2088 is not a multiple of 16: TMA cannot stride its rows, and the
    # host runs the mma.sync kernel even on sm_90a.
    gemm(out, 3, 2088, 64)
    # A grid of 144 128-row tiles: two warpgroups a block.
    gemm(out, 1040, 32, 2048)
    linear(out, 64, 72, [(2, 16), (3, 37), (1, 1)])
    bmm(out, 2, 33, 48, 16)
    chain(out, 129, 80, 72, 40)
    # On the CPU, 96 columns are two whole 48-column panels, whose loop
    # computes the amax.
    chain(out, 128, 112, 96, 40)
    # Rows known only at run time: the host checks that the kernel can run
    # them.
    chain_rows(out, 80, 72, 40, [129, 5])
    # Three rows and K = 1024: one output tile, so the host splits K when
    # the first product runs on tf32 tensor cores (its amax then reduces
    # the summed result after it).
    chain(out, 3, 1024, 64, 40)


if __name__ == "__main__":
    main()
