/* peak_fma_n.c - bench/peak_fma.c with NACC accumulators (default 16), all   */
/* kept in zmm registers: fp32 FMA peak (GFLOP/s) vs accumulator count.       */
/* Build: cc -O2 -mavx512f -DNACC=24 peak_fma_n.c -o peak_fma_n               */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#ifndef NACC
#define NACC 16
#endif

int main(void) {
  /* 16 independent accumulators hide the FMA latency. */
  __m512 acc[NACC];
  for (int i = 0; i < NACC; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  __m512 a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.9999999f);
  const long iterations = 50000000;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long n = 0; n < iterations; ++n)
#pragma GCC unroll 32
    for (int i = 0; i < NACC; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  clock_gettime(CLOCK_MONOTONIC, &end);
  float sink = 0;
  for (int i = 0; i < NACC; ++i)
    sink += _mm512_reduce_add_ps(acc[i]);
  double seconds =
      (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
  double flops = 2.0 * 16 * NACC * iterations;
  printf("%.1f %g\n", flops / seconds / 1e9, sink);
  return 0;
}
