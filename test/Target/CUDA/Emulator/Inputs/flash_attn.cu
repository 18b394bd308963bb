// flash_attn.cu - FlashAttention-2 style forward for the PTX emulator's tests.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to flash_attn.ptx by ../gen_ptx.sh (nvcc -arch=sm_80 -O3 -ptx).
// With C linkage. The largest kernel of the emulator's tests: its speed
// is measured on it (docs/CUDA.md).
//
// Minimal FlashAttention-2 style forward (head dim 64, Br=64 (4 warps x 16 rows), Bc=64), f16 in, f32 accum.
// cp.async K/V tiles (double-buffered), ldmatrix / ldmatrix.trans, mma.sync m16n8k16, online softmax with quad shuffles.
#include <cuda_fp16.h>
#include <stdint.h>
constexpr int D = 64, BR = 64, BC = 64;
__device__ __forceinline__ uint32_t su32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp16(uint32_t d, const void* s) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(s)); }
__device__ __forceinline__ void ldx4(uint32_t a, uint32_t* r) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]),"=r"(r[1]),"=r"(r[2]),"=r"(r[3]) : "r"(a)); }
__device__ __forceinline__ void ldx4t(uint32_t a, uint32_t* r) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]),"=r"(r[1]),"=r"(r[2]),"=r"(r[3]) : "r"(a)); }
__device__ __forceinline__ void mma(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
    : "+f"(d[0]),"+f"(d[1]),"+f"(d[2]),"+f"(d[3]) : "r"(a[0]),"r"(a[1]),"r"(a[2]),"r"(a[3]),"r"(b0),"r"(b1));
}
__device__ __forceinline__ uint32_t pack(float a, float b) { __half2 h = __floats2half2_rn(a, b); return *(uint32_t*)&h; }
__device__ __forceinline__ int sw(int r, int c) { return r * D + ((((c >> 3) ^ (r & 7)) << 3) | (c & 7)); }  // 128B xor swizzle
extern "C" __global__ void __launch_bounds__(128) fa2_fwd(const __half* __restrict__ Q, const __half* __restrict__ K, const __half* __restrict__ V,
                                               __half* __restrict__ O, int seqlen, float scale_log2) {
  __shared__ __align__(128) __half sQ[BR * D];
  __shared__ __align__(128) __half sK[2][BC * D];
  __shared__ __align__(128) __half sV[2][BC * D];
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  size_t bh = blockIdx.y; const __half* q = Q + bh * seqlen * D; const __half* k = K + bh * seqlen * D;
  const __half* v = V + bh * seqlen * D; __half* o = O + bh * seqlen * D;
  int q0 = blockIdx.x * BR;
  for (int i = tid; i < BR * D / 8; i += 128) { int r = i / 8, c = (i % 8) * 8; cp16(su32(&sQ[sw(r, c)]), q + (size_t)(q0 + r) * D + c); }
  auto load_kv = [&](int buf, int kv0) {
    for (int i = tid; i < BC * D / 8; i += 128) { int r = i / 8, c = (i % 8) * 8;
      cp16(su32(&sK[buf][sw(r, c)]), k + (size_t)(kv0 + r) * D + c); cp16(su32(&sV[buf][sw(r, c)]), v + (size_t)(kv0 + r) * D + c); }
    asm volatile("cp.async.commit_group;\n");
  };
  load_kv(0, 0);
  asm volatile("cp.async.wait_group 0;\n"); __syncthreads();
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) ldx4(su32(&sQ[sw(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8)]), qf[kk]);
  float oacc[D / 8][4] = {}; float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
  int ntiles = seqlen / BC;
  for (int t = 0; t < ntiles; ++t) {
    int buf = t & 1;
    if (t + 1 < ntiles) load_kv(buf ^ 1, (t + 1) * BC);
    float s[BC / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int nj = 0; nj < BC / 16; ++nj) { uint32_t kf[4];
        ldx4(su32(&sK[buf][sw(nj * 16 + (lane / 16) * 8 + lane % 8, kk * 16 + ((lane / 8) % 2) * 8)]), kf);
        mma(s[2 * nj], qf[kk], kf[0], kf[1]); mma(s[2 * nj + 1], qf[kk], kf[2], kf[3]); }
    float mnew[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int j = 0; j < BC / 8; ++j) { mnew[0] = fmaxf(mnew[0], fmaxf(s[j][0], s[j][1])); mnew[1] = fmaxf(mnew[1], fmaxf(s[j][2], s[j][3])); }
#pragma unroll
    for (int h = 0; h < 2; ++h) { mnew[h] = fmaxf(mnew[h], __shfl_xor_sync(0xffffffffu, mnew[h], 1)); mnew[h] = fmaxf(mnew[h], __shfl_xor_sync(0xffffffffu, mnew[h], 2)); }
    float corr[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) corr[h] = exp2f((mrow[h] - mnew[h]) * scale_log2);
    uint32_t pf[BC / 16][4];
#pragma unroll
    for (int j = 0; j < BC / 8; ++j) {
      float p0 = exp2f(s[j][0] * scale_log2 - mnew[0] * scale_log2), p1 = exp2f(s[j][1] * scale_log2 - mnew[0] * scale_log2);
      float p2 = exp2f(s[j][2] * scale_log2 - mnew[1] * scale_log2), p3 = exp2f(s[j][3] * scale_log2 - mnew[1] * scale_log2);
      rs[0] += p0 + p1; rs[1] += p2 + p3;
      pf[j / 2][(j % 2) * 2 + 0] = pack(p0, p1); pf[j / 2][(j % 2) * 2 + 1] = pack(p2, p3);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) { rs[h] += __shfl_xor_sync(0xffffffffu, rs[h], 1); rs[h] += __shfl_xor_sync(0xffffffffu, rs[h], 2);
      lrow[h] = lrow[h] * corr[h] + rs[h]; mrow[h] = mnew[h]; }
#pragma unroll
    for (int j = 0; j < D / 8; ++j) { oacc[j][0] *= corr[0]; oacc[j][1] *= corr[0]; oacc[j][2] *= corr[1]; oacc[j][3] *= corr[1]; }
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      uint32_t a[4] = {pf[kk][0], pf[kk][1], pf[kk][2], pf[kk][3]};
#pragma unroll
      for (int dj = 0; dj < D / 16; ++dj) { uint32_t vf[4];
        ldx4t(su32(&sV[buf][sw(kk * 16 + (lane % 16), dj * 16 + (lane / 16) * 8)]), vf);
        mma(oacc[2 * dj], a, vf[0], vf[1]); mma(oacc[2 * dj + 1], a, vf[2], vf[3]); }
    }
    asm volatile("cp.async.wait_group 0;\n"); __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    int r = q0 + warp * 16 + lane / 4, c = j * 8 + (lane % 4) * 2;
    *(__half2*)&o[(size_t)r * D + c] = __floats2half2_rn(oacc[j][0] / lrow[0], oacc[j][1] / lrow[0]);
    *(__half2*)&o[(size_t)(r + 8) * D + c] = __floats2half2_rn(oacc[j][2] / lrow[1], oacc[j][3] / lrow[1]);
  }
}
