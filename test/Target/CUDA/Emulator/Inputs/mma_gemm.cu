// mma_gemm.cu - tensor-core GEMMs written with mma.sync and ldmatrix for the
// PTX emulator's tests. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to mma_gemm.ptx by ../gen_ptx.sh (nvcc -arch=sm_80 -O3 -ptx).
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

// C[M][N] (f32) = A[M][K] * B[K][N], both row-major 16-bit. One warp per
// 16x8 tile of C: grid (N/8, M/16), block 32. A goes through ldmatrix.x4,
// B (row-major, so K-major rows) through ldmatrix.x2.trans.
template <typename T, bool kBF16>
__device__ void gemmImpl(const T *A, const T *B, float *C, int M, int N, int K) {
  __shared__ __align__(16) T sA[16][16];
  __shared__ __align__(16) T sB[16][8];
  int lane = threadIdx.x;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = lane; i < 256; i += 32)
      sA[i / 16][i % 16] = A[(m0 + i / 16) * K + k0 + i % 16];
    for (int i = lane; i < 128; i += 32)
      sB[i / 8][i % 8] = B[(k0 + i / 8) * N + n0 + i % 8];
    __syncwarp();
    uint32_t a0, a1, a2, a3, b0, b1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                 : "r"(smemAddr(&sA[lane % 16][(lane / 16) * 8])));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(b0), "=r"(b1)
                 : "r"(smemAddr(&sB[lane % 16][0])));
    if (kBF16)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    __syncwarp();
  }
  int g = lane / 4, t = lane % 4;
  C[(m0 + g) * N + n0 + 2 * t] = c0;
  C[(m0 + g) * N + n0 + 2 * t + 1] = c1;
  C[(m0 + g + 8) * N + n0 + 2 * t] = c2;
  C[(m0 + g + 8) * N + n0 + 2 * t + 1] = c3;
}

extern "C" __global__ void gemm_f16(const __half *A, const __half *B, float *C, int M,
                                    int N, int K) {
  gemmImpl<__half, false>(A, B, C, M, N, K);
}
extern "C" __global__ void gemm_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                     float *C, int M, int N, int K) {
  gemmImpl<__nv_bfloat16, true>(A, B, C, M, N, K);
}

// tf32 m16n8k8 with fragments loaded straight from global memory (f32
// inputs rounded with cvt.rna.tf32.f32). Same grid as above.
__device__ __forceinline__ uint32_t toTF32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
extern "C" __global__ void gemm_tf32(const float *A, const float *B, float *C, int M, int N,
                                     int K) {
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
  for (int k0 = 0; k0 < K; k0 += 8) {
    uint32_t a0 = toTF32(A[(m0 + g) * K + k0 + t]);
    uint32_t a1 = toTF32(A[(m0 + g + 8) * K + k0 + t]);
    uint32_t a2 = toTF32(A[(m0 + g) * K + k0 + t + 4]);
    uint32_t a3 = toTF32(A[(m0 + g + 8) * K + k0 + t + 4]);
    uint32_t b0 = toTF32(B[(k0 + t) * N + n0 + g]);
    uint32_t b1 = toTF32(B[(k0 + t + 4) * N + n0 + g]);
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  C[(m0 + g) * N + n0 + 2 * t] = c0;
  C[(m0 + g) * N + n0 + 2 * t + 1] = c1;
  C[(m0 + g + 8) * N + n0 + 2 * t] = c2;
  C[(m0 + g + 8) * N + n0 + 2 * t + 1] = c3;
}
