# gemm_reference.py - random A (M x K), B (K x N) and the float64 product
# of their bf16 roundings, as .npy files, for the systolic simulator test.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import sys

import numpy as np


def bf16(x):
    """Rounds fp32 to bf16 (ties to even), kept in fp32."""
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def main():
    out, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = bf16(a).astype(np.float64) @ bf16(b).astype(np.float64)
    np.save(f"{out}/A.npy", a)
    np.save(f"{out}/B.npy", b)
    np.save(f"{out}/C.npy", c.astype(np.float32))
    np.save(f"{out}/wrong.npy", np.zeros((m + 1, k), np.float32))


if __name__ == "__main__":
    main()
