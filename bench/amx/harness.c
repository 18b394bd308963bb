// Harness for the MLIR-generated AMX kernel gemm_amx (see gen.py).
// usage: harness M N K packA(0/1) [noperm]
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

typedef uint16_t bf16;
// convert-to-llvm (non-bare) calling convention: each 1-D memref = (alloc, aligned, offset, size, stride)
void gemm_amx(bf16 *, bf16 *, int64_t, int64_t, int64_t,
              bf16 *, bf16 *, int64_t, int64_t, int64_t,
              float *, float *, int64_t, int64_t, int64_t);

static float bf2f(bf16 h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static bf16 f2bf(float f) { uint32_t u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return u >> 16; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static void on_sigill(int s) { (void)s; static const char m[] = "SIGILL caught: AMX tile instruction without arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)\n"; write(1, m, sizeof m - 1); _exit(42); }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: %s M N K packA [noperm]\n", argv[0]); return 2; }
  long M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]); int packA = atoi(argv[4]);
  int noperm = argc > 5 && !strcmp(argv[5], "noperm");
  if (!noperm) {
    long r = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
    unsigned long bits = 0; syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &bits);
    if (r) { perror("arch_prctl(ARCH_REQ_XCOMP_PERM)"); return 1; }
    fprintf(stderr, "arch_prctl ok, permitted xfeatures 0x%lx (bit 18 = %ld)\n", bits, (bits >> 18) & 1);
  } else {
    signal(SIGILL, on_sigill);
  }
  long NP = (N + 15) / 16;  // B panels; the last one is zero-padded past N
  bf16 *A = aligned_alloc(64, M * K * 2), *B = aligned_alloc(64, K * N * 2);
  bf16 *Ap = aligned_alloc(64, M * K * 2), *Bp = aligned_alloc(64, NP * K * 16 * 2);
  float *C = aligned_alloc(64, M * N * 4);
  for (long i = 0; i < M * K; i++) A[i] = f2bf((double)(rnd() >> 11) / (1ull << 53) * 2 - 1);
  for (long i = 0; i < K * N; i++) B[i] = f2bf((double)(rnd() >> 11) / (1ull << 53) * 2 - 1);
  // B (row-major [K][N]) -> VNNI panels Bp[NP][K/2][16][2]: Bp[nb][kp][n][v] = B[2kp+v][16nb+n] (0 past N)
  for (long nb = 0; nb < NP; nb++)
    for (long kp = 0; kp < K / 2; kp++)
      for (long n = 0; n < 16; n++)
        for (long v = 0; v < 2; v++)
          Bp[((nb * (K / 2) + kp) * 16 + n) * 2 + v] = 16 * nb + n < N ? B[(2 * kp + v) * N + 16 * nb + n] : 0;
  // A (row-major [M][K]) -> tiles Ap[M/16][K/32][16][32]
  bf16 *Ause = A;
  double tpack = 0;  // A packing is per call (activations), so its best time is added for packA=1
  if (packA) {
    tpack = 1e9;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now();
      for (long mt = 0; mt < M / 16; mt++)
        for (long kt = 0; kt < K / 32; kt++)
          for (long r = 0; r < 16; r++)
            memcpy(&Ap[((mt * (K / 32) + kt) * 16 + r) * 32], &A[(mt * 16 + r) * K + kt * 32], 64);
      double t = now() - t0; if (t < tpack) tpack = t;
    }
    Ause = Ap;
  }
  for (long i = 0; i < M * N; i++) C[i] = NAN;  // the kernel must overwrite every entry (C = A*B, not +=)
#define CALL() gemm_amx(Ause, Ause, 0, M * K, 1, Bp, Bp, 0, NP * K * 16, 1, C, C, 0, M * N, 1)
  CALL();  // warm-up (first AMX use also allocates the task's large XSAVE area)
  if (noperm) { printf("no SIGILL without arch_prctl?!\n"); return 0; }
  // check 4 corners + 512 random entries against an fp32 reference (double accumulation) of the bf16 values
  int bad = 0, nchk = 0; double maxrel = 0;
  long full = M * N <= 65536;  // small problems (remainder tests): check every entry
  for (long t = 0; t < (full ? M * N : 516); t++) {
    long i, j;
    if (full) { i = t / N; j = t % N; }
    else if (t < 4) { i = (t & 1) ? M - 1 : 0; j = (t & 2) ? N - 1 : 0; }
    else { i = rnd() % M; j = rnd() % N; }
    double ref = 0, mag = 0;
    for (long k = 0; k < K; k++) { double p = (double)bf2f(A[i * K + k]) * bf2f(B[k * N + j]); ref += p; mag += fabs(p); }
    double err = fabs(C[i * N + j] - ref), scale = fmax(fabs(ref), mag / sqrt((double)K));
    double rel = err / scale; if (rel > maxrel) maxrel = rel;
    if (!(rel <= 1e-3)) { if (bad < 5) fprintf(stderr, "MISMATCH C[%ld][%ld]=%g ref=%g\n", i, j, C[i * N + j], ref); bad++; }
    nchk++;
  }
  // timing: 5 calls, report best, median, worst
  double ts[5];
  int inner = getenv("INNER") ? atoi(getenv("INNER")) : 1;  // calls per timed sample (for tiny, cache-resident problems)
  for (int r = 0; r < 5; r++) { double t0 = now(); for (int q = 0; q < inner; q++) CALL(); ts[r] = (now() - t0) / inner; }
  qsort(ts, 5, sizeof(double), cmpd);
  double fl = 2.0 * M * N * K;
  printf("M=%ld N=%ld K=%ld packA=%d check=%s (%d/%d bad, max rel err %.2e) GFLOP/s best %.1f median %.1f worst %.1f (best %.3f ms) incl-Apack %.1f (pack %.3f ms)\n",
         M, N, K, packA, bad ? "FAIL" : "ok", bad, nchk, maxrel, fl / ts[0] / 1e9, fl / ts[2] / 1e9, fl / ts[4] / 1e9, ts[0] * 1e3,
         fl / (ts[0] + tpack) / 1e9, tpack * 1e3);
  return bad != 0;
}
