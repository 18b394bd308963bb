// tma_wgmma_gemm.cu - sm_90a TMA + wgmma GEMM for the PTX emulator's tests.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to tma_wgmma_gemm.ptx by ../gen_ptx.sh (nvcc -arch=sm_90a -O3 -ptx).
//
// C[64][N] (f32) = A[64][K] * B[K][N], bf16, one warpgroup (128 threads).
// A is K-major and B is [K][N] row-major (N-major) in global memory; both
// come in through TMA tensor maps with 128-byte swizzle, BK = 64 per stage:
//   A: dims {K, 64}, box {64, 64}: 64 rows of 128 bytes at sA;
//   B: dims {N, K}, box {64, 64}: 64 k-rows of 128 bytes (64 n) per box,
//      N/64 boxes at sB + j * 8 KiB.
// wgmma m64nNk16 reads A K-major (SBO = 1024, start + 32 bytes per k16
// step) and B with imm-trans-b = 1 (MN-major: SBO = 1024 between groups of
// 8 k-rows, LBO = 8 KiB between the 64-column boxes, start + 16 rows * 128
// bytes per k16 step). The tensor maps are passed as pointers to their
// 128-byte objects in global memory. kEarlyRead reads sB before the
// mbarrier wait (a hazard).
#include <cstdint>

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
         ((uint64_t)(sbo >> 4) << 32) | (1ull << 62); // 128B swizzle
}

__device__ __forceinline__ void tmaLoad2d(uint32_t dst, const void *map, int c0, int c1,
                                          uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
               "l"(map), "r"(c0), "r"(c1), "r"(bar)
               : "memory");
}

__device__ __forceinline__ void waitParity(uint32_t bar, uint32_t parity) {
  asm volatile("{\n\t.reg .pred p;\n"
               "WAIT_%=:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
               "@!p bra WAIT_%=;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}

#define R8(i)                                                                          \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),          \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

__device__ __forceinline__ void wgmma64(float *d, uint64_t da, uint64_t db, int scaleD) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,"
               "%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"
               " %32, %33, p, 1, 1, 0, 1;\n}\n"
               : R8(0), R8(8), R8(16), R8(24)
               : "l"(da), "l"(db), "r"(scaleD));
}

__device__ __forceinline__ void wgmma128(float *d, uint64_t da, uint64_t db, int scaleD) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,"
               "%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,"
               "%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,"
               "%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63},"
               " %64, %65, p, 1, 1, 0, 1;\n}\n"
               : R8(0), R8(8), R8(16), R8(24), R8(32), R8(40), R8(48), R8(56)
               : "l"(da), "l"(db), "r"(scaleD));
}

template <int N, bool kEarlyRead>
__device__ void gemmImpl(const void *tmA, const void *tmB, float *C, int K) {
  __shared__ __align__(1024) uint16_t sA[64 * 64];
  __shared__ __align__(1024) uint16_t sB[64 * N];
  __shared__ __align__(8) uint64_t bar;
  uint32_t sbar = smemAddr(&bar), a0 = smemAddr(sA), b0 = smemAddr(sB);
  int tid = threadIdx.x;
  if (tid == 0) {
    asm volatile("prefetch.tensormap [%0];\nprefetch.tensormap [%1];\n" ::"l"(tmA),
                 "l"(tmB)
                 : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sbar), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  float d[N / 2];
  float early = 0.f;
  for (int k0 = 0, phase = 0; k0 < K; k0 += 64, phase ^= 1) {
    if (tid == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sbar),
                   "r"(64 * 128 + N * 128)
                   : "memory");
      tmaLoad2d(a0, tmA, k0, 0, sbar);
      for (int j = 0; j < N / 64; ++j)
        tmaLoad2d(b0 + j * 8192, tmB, j * 64, k0, sbar);
    }
    if (kEarlyRead)
      early += __uint_as_float((uint32_t)sB[tid] << 16);
    waitParity(sbar, phase);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int s = 0; s < 4; ++s) {
      uint64_t da = desc(a0 + s * 32, 16, 1024);
      uint64_t db = desc(b0 + s * 16 * 128, 8192, 1024);
      int scaleD = (k0 > 0 || s > 0) ? 1 : 0;
      if (N == 64)
        wgmma64(d, da, db, scaleD);
      else
        wgmma128(d, da, db, scaleD);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    __syncthreads(); // every warp is done with sA/sB before the next copies
  }
  int w = tid / 32, lane = tid % 32;
  for (int j = 0; j < N / 8; ++j) {
    int r = w * 16 + lane / 4, c = j * 8 + (lane % 4) * 2;
    C[r * N + c] = d[4 * j] + early;
    C[r * N + c + 1] = d[4 * j + 1];
    C[(r + 8) * N + c] = d[4 * j + 2];
    C[(r + 8) * N + c + 1] = d[4 * j + 3];
  }
}

#define KERNEL(name, n, early)                                                         \
  extern "C" __global__ void __launch_bounds__(128)                                   \
      name(const void *tmA, const void *tmB, float *C, int K) {                        \
    gemmImpl<n, early>(tmA, tmB, C, K);                                                \
  }
KERNEL(tma_gemm_n64, 64, false)
KERNEL(tma_gemm_n128, 128, false)
KERNEL(tma_gemm_early_read, 64, true)
