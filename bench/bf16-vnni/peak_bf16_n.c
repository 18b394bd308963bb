/* peak_bf16_n.c - bench/peak_bf16.c with NACC accumulators (default 16):   */
/* vdpbf16ps throughput vs accumulator count.                               */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                  */
/* Build: cc -O2 -mavx512f -mavx512bf16 -DNACC=24 peak_bf16_n.c -o peak_bf16_n */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#ifndef NACC
#define NACC 16 /* accumulator-count sweep of bench/peak_bf16.c: -DNACC=8/16/24/32 */
#endif

int main(void) {
  /* 16 independent accumulators hide the vdpbf16ps latency. */
  __m512 acc[NACC];
  for (int i = 0; i < NACC; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  /* Each vdpbf16ps: 16 lanes x 2 bf16 products accumulated = 32 multiply-adds
     = 64 FLOP. Every 32-bit lane of a holds the bf16 pair (1.0, -1.0) and of b
     (0.5, 0.5), so each step adds exactly 0 and the accumulators stay bounded
     (the printed checksum is 16 * (0 + 1 + ... + 15) = 1920). In a 32-bit
     lane the lower 16 bits are the even bf16 element, the upper the odd one. */
  __m512bh a = (__m512bh)_mm512_set1_epi32((int)0xbf803f80u);
  __m512bh b = (__m512bh)_mm512_set1_epi32(0x3f003f00);
  const long iterations = 50000000;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long n = 0; n < iterations; ++n)
    /* Fully unrolled so the accumulators stay in zmm registers. */
#pragma GCC unroll 32
    for (int i = 0; i < NACC; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  clock_gettime(CLOCK_MONOTONIC, &end);
  float sink = 0;
  for (int i = 0; i < NACC; ++i)
    sink += _mm512_reduce_add_ps(acc[i]);
  double seconds =
      (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
  double flops = 64.0 * NACC * iterations;
  printf("%.1f %g\n", flops / seconds / 1e9, sink);
  return 0;
}
