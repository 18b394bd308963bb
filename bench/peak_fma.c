/* peak_fma.c - measures this core's fp32 FMA peak (GFLOP/s) with AVX-512. */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  /* 16 independent accumulators hide the FMA latency. */
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  __m512 a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.9999999f);
  const long iterations = 50000000;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long n = 0; n < iterations; ++n)
    /* Fully unrolled so the accumulators stay in zmm registers (without it
       gcc -O2 keeps them in memory and measures a quarter of the peak). */
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  clock_gettime(CLOCK_MONOTONIC, &end);
  float sink = 0;
  for (int i = 0; i < 16; ++i)
    sink += _mm512_reduce_add_ps(acc[i]);
  double seconds =
      (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
  double flops = 2.0 * 16 * 16 * iterations;
  printf("%.1f %g\n", flops / seconds / 1e9, sink);
  return 0;
}
