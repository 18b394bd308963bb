// mbarrier_bulk.cu - sm_90 mbarrier + cp.async.bulk kernels for the PTX
// emulator's tests. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to mbarrier_bulk.ptx by ../gen_ptx.sh (nvcc -arch=sm_90 -O3 -ptx).
#include <cstdint>

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void waitParity(uint32_t bar, uint32_t parity) {
  asm volatile("{\n\t.reg .pred p;\n"
               "WAIT_%=:\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
               "@!p bra WAIT_%=;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}

// out[t][i] = 3 * in[t][255 - i] + t for tiles of 256 floats. Thread 0
// announces 1024 transaction bytes (kTxBytes) and issues one bulk copy per
// tile; every thread waits on the mbarrier's phase parity, then reads
// floats of the whole tile. kEarlyRead reads the tile before the wait.
template <unsigned kTxBytes, bool kEarlyRead>
__device__ void bulkImpl(const float *in, float *out, int ntiles) {
  __shared__ __align__(128) float buf[256];
  __shared__ __align__(8) uint64_t bar;
  uint32_t sbar = smemAddr(&bar), sbuf = smemAddr(buf);
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sbar), "r"(1));
  __syncthreads();
  for (int t = 0; t < ntiles; ++t) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sbar),
                   "r"(kTxBytes)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                   "[%0], [%1], %2, [%3];\n" ::"r"(sbuf),
                   "l"(in + t * 256), "r"(1024), "r"(sbar)
                   : "memory");
    }
    float early = kEarlyRead ? buf[threadIdx.x] : 0.f;
    waitParity(sbar, t & 1);
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
      out[t * 256 + i] = 3.f * buf[255 - i] + (float)t + early;
    __syncthreads();
  }
}

extern "C" __global__ void bulk_copy(const float *in, float *out, int ntiles) {
  bulkImpl<1024, false>(in, out, ntiles);
}
extern "C" __global__ void bulk_copy_early_read(const float *in, float *out, int ntiles) {
  bulkImpl<1024, true>(in, out, ntiles);
}
extern "C" __global__ void bulk_copy_short_tx(const float *in, float *out, int ntiles) {
  bulkImpl<2048, false>(in, out, ntiles);
}
