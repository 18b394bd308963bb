// Which instruction faults without arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)?
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>
typedef uint16_t bf16;
void gemm_amx(bf16 *, bf16 *, int64_t, int64_t, int64_t, bf16 *, bf16 *, int64_t, int64_t, int64_t,
              float *, float *, int64_t, int64_t, int64_t);
static void h(int s, siginfo_t *si, void *uc) {
  ucontext_t *u = uc; unsigned char *pc = (unsigned char *)u->uc_mcontext.gregs[REG_RIP];
  printf("signal %d (%s) si_code %d at rip=%p (gemm_amx+0x%lx) bytes %02x %02x %02x %02x %02x\n", s, strsignal(s), si->si_code,
         pc, (long)(pc - (unsigned char *)gemm_amx), pc[0], pc[1], pc[2], pc[3], pc[4]);
  fflush(stdout); _exit(42);
}
int main(int argc, char **argv) {
  struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO; sigaction(SIGILL, &sa, 0);
  if (argc > 1) printf("arch_prctl -> %ld\n", syscall(SYS_arch_prctl, 0x1023, 18));
  static bf16 A[64 * 64] __attribute__((aligned(64))), B[64 * 64] __attribute__((aligned(64)));
  static float C[64 * 64] __attribute__((aligned(64)));
  gemm_amx(A, A, 0, 4096, 1, B, B, 0, 4096, 1, C, C, 0, 4096, 1);
  printf("no fault, C[0]=%g\n", C[0]);
  return 0;
}
