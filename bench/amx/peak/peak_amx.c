// peak_amx.c - AMX tdpbf16ps throughput (no memory traffic in the loop): 4 independent
// 16x16 f32 accumulators (tmm0-3) x operands tmm4-7. Each tdpbf16ps = 16*16*32 MACs = 16384 FLOP.
// Build: clang -O2 -mamx-tile -mamx-bf16 peak_amx.c -o peak_amx
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
struct cfg { uint8_t palette, start; uint8_t r0[14]; uint16_t colsb[16]; uint8_t rows[16]; };
int main(int argc, char **argv) {
  if (syscall(SYS_arch_prctl, 0x1023, 18)) { perror("arch_prctl"); return 1; }
  struct cfg c; memset(&c, 0, sizeof c); c.palette = 1;
  for (int i = 0; i < 8; i++) { c.colsb[i] = 64; c.rows[i] = 16; }
  _tile_loadconfig(&c);
  static uint16_t buf[16 * 32] __attribute__((aligned(64)));
  for (int i = 0; i < 16 * 32; i++) buf[i] = 0;  // zeros: accumulators stay 0
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  _tile_loadd(4, buf, 64); _tile_loadd(5, buf, 64); _tile_loadd(6, buf, 64); _tile_loadd(7, buf, 64);
  const long it = argc > 1 ? atol(argv[1]) : 20000000;
  struct timespec s, e; clock_gettime(CLOCK_MONOTONIC, &s);
  for (long n = 0; n < it; n++) {
    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
  }
  clock_gettime(CLOCK_MONOTONIC, &e);
  float out[256]; _tile_stored(0, out, 64); _tile_release();
  double t = e.tv_sec - s.tv_sec + 1e-9 * (e.tv_nsec - s.tv_nsec);
  printf("%.1f GFLOP/s (AMX tdpbf16ps, reg-only)  %g\n", 4.0 * it * 16384 / t / 1e9, out[0]);
  return 0;
}
