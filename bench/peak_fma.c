/* peak_fma.c - measures this core's fp32 FMA peak (GFLOP/s): AVX-512 when */
/* the CPU has it, else AVX2 (prints the GFLOP/s, a checksum, the ISA).   */
/* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static const long iterations = 50000000;

static double seconds_since(const struct timespec *start) {
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  return (end.tv_sec - start->tv_sec) + (end.tv_nsec - start->tv_nsec) * 1e-9;
}

/* 16 independent accumulators hide the FMA latency; the loops are fully
   unrolled so the accumulators stay in registers (without it gcc -O2 keeps
   them in memory and measures a quarter of the peak). */
__attribute__((target("avx512f"))) static double peak512(float *sink) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps((float)i);
  __m512 a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.9999999f);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long n = 0; n < iterations; ++n)
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  double seconds = seconds_since(&start);
  for (int i = 0; i < 16; ++i)
    *sink += _mm512_reduce_add_ps(acc[i]);
  return 2.0 * 16 * 16 * iterations / seconds / 1e9;
}

__attribute__((target("avx2,fma"))) static double peak256(float *sink) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps((float)i);
  __m256 a = _mm256_set1_ps(1.0000001f), b = _mm256_set1_ps(0.9999999f);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long n = 0; n < iterations; ++n)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  double seconds = seconds_since(&start);
  float lanes[8];
  for (int i = 0; i < 12; ++i) {
    _mm256_storeu_ps(lanes, acc[i]);
    for (int l = 0; l < 8; ++l)
      *sink += lanes[l];
  }
  return 2.0 * 8 * 12 * iterations / seconds / 1e9;
}

int main(void) {
  float sink = 0;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    double gflops = peak512(&sink);
    printf("%.1f %g avx512\n", gflops, sink);
  } else {
    double gflops = peak256(&sink);
    printf("%.1f %g avx2\n", gflops, sink);
  }
  return 0;
}
