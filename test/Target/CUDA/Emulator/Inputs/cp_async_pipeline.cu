// cp_async_pipeline.cu - a double-buffered cp.async pipeline for the PTX
// emulator's tests. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to cp_async_pipeline.ptx by ../gen_ptx.sh (nvcc -arch=sm_80).
#include <cstdint>

__device__ __forceinline__ void cpAsync16(void *smem, const void *gmem) {
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void waitGroup() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// out[tile][i] = 2 * in[tile][511 - i] + tile for tiles of 512 floats. Each
// of the 128 threads copies 16 bytes of a tile and then reads floats copied by
// another warp, so the result needs both the wait_group and the barrier.
template <bool kWait, bool kSync>
__device__ void pipelineImpl(const float *in, float *out, int ntiles) {
  __shared__ __align__(16) float buf[2][512];
  int t = threadIdx.x;
  cpAsync16(&buf[0][4 * t], in + 4 * t);
  commit();
  for (int tile = 0; tile < ntiles; ++tile) {
    if (tile + 1 < ntiles)
      cpAsync16(&buf[(tile + 1) & 1][4 * t], in + (tile + 1) * 512 + 4 * t);
    commit();
    if (kWait)
      waitGroup<1>();
    if (kSync)
      __syncthreads();
    for (int j = 0; j < 4; ++j) {
      int i = 4 * t + j;
      out[tile * 512 + i] = 2.f * buf[tile & 1][511 - i] + (float)tile;
    }
    __syncthreads();
  }
}

extern "C" __global__ void pipeline(const float *in, float *out, int ntiles) {
  pipelineImpl<true, true>(in, out, ntiles);
}
extern "C" __global__ void pipeline_nowait(const float *in, float *out, int ntiles) {
  pipelineImpl<false, true>(in, out, ntiles);
}
extern "C" __global__ void pipeline_nosync(const float *in, float *out, int ntiles) {
  pipelineImpl<true, false>(in, out, ntiles);
}
