/* harness.c - drives the MLIR-generated bf16 GEMM kernel gemm_bf16(A, B, C):
 * C[M][N] (f32) += A (bf16) x B (bf16), fills random data, packs the operands into
 * the layout the kernel variant expects, checks a few hundred entries against a
 * scalar fp32 reference and times the kernel (best of REPS calls).
 * Layouts: A direct [M][K] or packed [M/8][K/2][8][2] (PACK_A);
 *          B VNNI [K/2][N][2] or panels [N/32][K/2][32][2] (PACK_B).
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif
#ifndef K
#define K 1024
#endif
#ifndef REPS
#define REPS 5
#endif

#ifdef A_F32 /* comparison kernel: A given as f32 [M][K] (the exact values of the bf16 A) */
void gemm_bf16(float *A, uint16_t *B, float *C);
#else
void gemm_bf16(uint16_t *A, uint16_t *B, float *C);
#endif /* bare-pointer memref ABI */

static uint16_t f2bf(float f) { /* round to nearest even */
  uint32_t u; memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static uint64_t rs = 88172645463325252ull;
static float rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (float)((rs >> 11) * (1.0 / 9007199254740992.0)) * 2.f - 1.f; }

int main(void) {
  uint16_t *a = aligned_alloc(64, sizeof(uint16_t) * M * K);   /* logical A[M][K] */
  uint16_t *b = aligned_alloc(64, sizeof(uint16_t) * K * N);   /* logical B[K][N] */
  uint16_t *Ak = aligned_alloc(64, sizeof(uint16_t) * M * K);  /* kernel's A */
  uint16_t *Bk = aligned_alloc(64, sizeof(uint16_t) * K * N);  /* kernel's B */
  float *C = aligned_alloc(64, sizeof(float) * M * N), *C0 = malloc(sizeof(float) * M * N);
  for (long i = 0; i < (long)M * K; ++i) a[i] = f2bf(rnd());
  for (long i = 0; i < (long)K * N; ++i) b[i] = f2bf(rnd());
  for (long i = 0; i < (long)M * N; ++i) C0[i] = C[i] = rnd();

  double tp = now();
#ifdef PACK_A
  for (int m = 0; m < M; ++m)           /* [M/8][K/2][8][2] */
    for (int k = 0; k < K; ++k)
      Ak[(((long)(m / 8) * (K / 2) + k / 2) * 8 + m % 8) * 2 + k % 2] = a[(long)m * K + k];
#else
  memcpy(Ak, a, sizeof(uint16_t) * M * K); /* [M][K] == [M][K/2][2] */
#endif
#ifdef A_F32
  float *Akf = aligned_alloc(64, sizeof(float) * M * K);
  for (long i = 0; i < (long)M * K; ++i) Akf[i] = bf2f(a[i]);
#define AK Akf
#else
#define AK Ak
#endif
  double tpa = now() - tp; tp = now();
#ifdef PACK_B
  for (int k = 0; k < K; ++k)           /* [N/32][K/2][32][2] */
    for (int n = 0; n < N; ++n)
      Bk[(((long)(n / 32) * (K / 2) + k / 2) * 32 + n % 32) * 2 + k % 2] = b[(long)k * N + n];
#else
  for (int k = 0; k < K; ++k)           /* [K/2][N][2] */
    for (int n = 0; n < N; ++n)
      Bk[((long)(k / 2) * N + n) * 2 + k % 2] = b[(long)k * N + n];
#endif
  double tpb = now() - tp;

  gemm_bf16(AK, Bk, C);
  /* Check 512 entries (plus the four corners) against an fp32 scalar reference of
     the bf16 products: |c - ref| <= 1e-3 * max(|ref|, sum_k |a*b| / sqrt(K)). */
  int bad = 0, checked = 0; double maxrel = 0;
  for (int t = 0; t < 516; ++t) {
    int m, n;
    if (t < 4) { m = (t & 1) ? M - 1 : 0; n = (t & 2) ? N - 1 : 0; }
    else { m = (int)((rnd() + 1) * 0.5f * M) % M; n = (int)((rnd() + 1) * 0.5f * N) % N; }
    float ref = C0[(long)m * N + n], sabs = 0;
    for (int k = 0; k < K; ++k) {
      float p = bf2f(a[(long)m * K + k]) * bf2f(b[(long)k * N + n]);
      ref += p; sabs += fabsf(p);
    }
    double err = fabs((double)C[(long)m * N + n] - ref);
    double scale = fmax(fabs(ref), sabs / sqrt((double)K));
    double rel = err / scale;
    if (rel > maxrel) maxrel = rel;
    if (!(rel <= 1e-3)) { if (bad < 5) fprintf(stderr, "mismatch C[%d][%d] = %g, ref %g\n", m, n, C[(long)m * N + n], ref); ++bad; }
    ++checked;
  }
  double best = 1e30, worst = 0;
  for (int r = 0; r < REPS; ++r) {
    double t0 = now();
    gemm_bf16(AK, Bk, C);
    double t = now() - t0;
    if (t < best) best = t;
    if (t > worst) worst = t;
  }
  double fl = 2.0 * M * N * K;
  printf("%s check %d/%d ok (max rel err %.2e)  best %.2f ms = %.1f GFLOP/s  (worst %.1f GFLOP/s)  pack A %.1f ms, pack B %.1f ms (scalar C, not tuned)\n",
         bad ? "FAIL" : "PASS", checked - bad, checked, maxrel, best * 1e3, fl / best / 1e9, fl / worst / 1e9, tpa * 1e3, tpb * 1e3);
  return bad != 0;
}
