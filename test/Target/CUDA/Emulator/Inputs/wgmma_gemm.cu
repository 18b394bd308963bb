// wgmma_gemm.cu - sm_90a warpgroup GEMMs for the PTX emulator's tests.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to wgmma_gemm.ptx by ../gen_ptx.sh (nvcc -arch=sm_90a -O3 -ptx).
//
// C[64][N] (f32) = sA * A[64][K] * B[N][K]^T with both operands K-major in
// shared memory, one warpgroup (128 threads) per CTA. kMode is the
// descriptor's swizzle code: 1 = 128B, 2 = 64B, 3 = 32B, 0 = none (8x16-byte
// core matrices, LBO = 128, SBO = 256). Each K tile fills one swizzle row
// (64, 32 or 16 elements; 16 without swizzle) and takes kTile/16 wgmma steps.
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

template <int kMode> struct Mode {
  static constexpr int rowBytes = kMode == 1 ? 128 : kMode == 2 ? 64 : 32;
  static constexpr int kTile = kMode == 0 ? 16 : rowBytes / 2;
  static constexpr int mask = kMode == 1 ? 7 : kMode == 2 ? 3 : 1;
  // Byte offset of the 16-byte chunk c (elements 8c..8c+7 along K) of row r.
  __device__ static uint32_t offset(int r, int c) {
    if (kMode == 0)
      return (r / 8) * 256 + c * 128 + (r % 8) * 16;
    uint32_t a = (r / 8) * (8 * rowBytes) + (r % 8) * rowBytes + c * 16;
    return a ^ (((a >> 7) & mask) << 4);
  }
  __device__ static uint64_t desc(uint32_t addr) {
    uint64_t lbo = kMode == 0 ? 128 : 16, sbo = kMode == 0 ? 256 : 8 * rowBytes;
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) |
           ((uint64_t)kMode << 62);
  }
  static constexpr int stepBytes = kMode == 0 ? 256 : 32; // one k16 step
};

#define R8(i)                                                                          \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),          \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

template <bool kBF16, int kScaleA>
__device__ __forceinline__ void wgmmaN64(float *d, uint64_t da, uint64_t db, int scaleD) {
  if (kBF16)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,"
                 "%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"
                 " %32, %33, p, %35, 1, 0, 0;\n}\n"
                 : R8(0), R8(8), R8(16), R8(24)
                 : "l"(da), "l"(db), "r"(scaleD), "n"(kScaleA));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,"
                 "%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"
                 " %32, %33, p, %35, 1, 0, 0;\n}\n"
                 : R8(0), R8(8), R8(16), R8(24)
                 : "l"(da), "l"(db), "r"(scaleD), "n"(kScaleA));
}

__device__ __forceinline__ void wgmmaN16(float *d, uint64_t da, uint64_t db, int scaleD) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
               : R8(0)
               : "l"(da), "l"(db), "r"(scaleD));
}

template <typename T, int kMode, int N, int kScaleA, bool kEarlyRead>
__device__ void gemmImpl(const T *A, const T *B, float *C, int K) {
  using L = Mode<kMode>;
  __shared__ __align__(1024) T sA[64 * 64];
  __shared__ __align__(1024) T sB[64 * 64];
  constexpr int chunks = L::kTile / 8;
  int tid = threadIdx.x;
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i)
    d[i] = 12345.f; // scale-d = 0 on the first step must ignore this
  for (int k0 = 0; k0 < K; k0 += L::kTile) {
    for (int i = tid; i < 64 * chunks; i += 128) {
      int r = i / chunks, c = i % chunks;
      uint32_t da = smemAddr(sA) + L::offset(r, c);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(da),
                   "l"(A + (size_t)r * K + k0 + c * 8));
      if (r < N) {
        uint32_t db = smemAddr(sB) + L::offset(r, c);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(db),
                     "l"(B + (size_t)r * K + k0 + c * 8));
      }
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    for (int s = 0; s < L::kTile / 16; ++s) {
      uint64_t da = L::desc(smemAddr(sA) + s * L::stepBytes);
      uint64_t db = L::desc(smemAddr(sB) + s * L::stepBytes);
      int scaleD = (k0 > 0 || s > 0) ? 1 : 0;
      if (N == 64)
        wgmmaN64<sizeof(T) == 2 && !__is_same(T, __half), kScaleA>(d, da, db, scaleD);
      else
        wgmmaN16(d, da, db, scaleD);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    if (kEarlyRead)
      C[tid] = d[0]; // reads an accumulator before the wait
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    __syncthreads();
  }
  int w = tid / 32, lane = tid % 32;
  for (int j = 0; j < N / 8; ++j) {
    int r = w * 16 + lane / 4, c = j * 8 + (lane % 4) * 2;
    C[r * N + c] = d[4 * j];
    C[r * N + c + 1] = d[4 * j + 1];
    C[(r + 8) * N + c] = d[4 * j + 2];
    C[(r + 8) * N + c + 1] = d[4 * j + 3];
  }
}

#define KERNEL(name, T, mode, n, scaleA, early)                                        \
  extern "C" __global__ void __launch_bounds__(128)                                   \
      name(const T *A, const T *B, float *C, int K) {                                  \
    gemmImpl<T, mode, n, scaleA, early>(A, B, C, K);                                   \
  }
KERNEL(wg_bf16_sw128, __nv_bfloat16, 1, 64, 1, false)
KERNEL(wg_bf16_sw64, __nv_bfloat16, 2, 64, 1, false)
KERNEL(wg_bf16_sw32, __nv_bfloat16, 3, 64, 1, false)
KERNEL(wg_bf16_interleave, __nv_bfloat16, 0, 64, 1, false)
KERNEL(wg_f16_sw128_neg, __half, 1, 64, -1, false)
KERNEL(wg_f16_sw64_n16, __half, 2, 16, 1, false)
KERNEL(wg_bf16_early_read, __nv_bfloat16, 1, 64, 1, true)
