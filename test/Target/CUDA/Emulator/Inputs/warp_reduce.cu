// warp_reduce.cu - shuffle/vote kernels for the PTX emulator's tests.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled to warp_reduce.ptx by ../gen_ptx.sh (nvcc -arch=sm_80 -O3 -ptx).

// Per-block sum: grid-stride loads, shfl.down within each warp, one partial
// per warp in shared memory, then warp 0 reduces the partials with shfl.bfly.
// kSync=false drops the __syncthreads between the partial stores and warp
// 0's loads: the race checker must report it.
template <bool kSync>
__device__ void blockSumImpl(const float *in, float *out, int n) {
  __shared__ float partial[32];
  float s = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    s += in[i];
  for (int off = 16; off > 0; off >>= 1)
    s += __shfl_down_sync(0xffffffffu, s, off);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    partial[warp] = s;
  if (kSync)
    __syncthreads();
  if (warp == 0) {
    s = lane < (int)(blockDim.x / 32) ? partial[lane] : 0.f;
    for (int off = 16; off > 0; off >>= 1)
      s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0)
      out[blockIdx.x] = s;
  }
}

extern "C" __global__ void block_sum(const float *in, float *out, int n) {
  blockSumImpl<true>(in, out, n);
}
extern "C" __global__ void block_sum_nosync(const float *in, float *out, int n) {
  blockSumImpl<false>(in, out, n);
}

// Per warp: ballot of in > 0, and all/any as 0/1.
extern "C" __global__ void vote_probe(const int *in, unsigned *out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned b = __ballot_sync(0xffffffffu, v > 0);
  int all = __all_sync(0xffffffffu, v > 0), any = __any_sync(0xffffffffu, v > 0);
  if (threadIdx.x % 32 == 0) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    out[3 * w] = b;
    out[3 * w + 1] = all;
    out[3 * w + 2] = any;
  }
}

// Divergent loop trip counts: lane i adds i+1 values, so the warp diverges
// in the loop and must reconverge before the shuffle.
extern "C" __global__ void diverge_then_shuffle(const float *in, float *out) {
  int lane = threadIdx.x % 32;
  float s = 0.f;
  for (int i = 0; i <= lane; ++i)
    s += in[i];
  if (lane & 1)
    s = -s;
  s += __shfl_xor_sync(0xffffffffu, s, 1);
  out[threadIdx.x] = s;
}

// Must fail: only half the warp executes a shuffle whose mask names all 32
// lanes.
extern "C" __global__ void divergent_shfl(const float *in, float *out) {
  float v = in[threadIdx.x];
  if (threadIdx.x < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
