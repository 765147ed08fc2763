// SPDX-License-Identifier: Apache-2.0
// The kernels of bench_kernels' reduction, SGEMM and hash rows, as CUDA C++. bench_kernels runs
// their PTX, bench_kernels_sm80.ptx, made by nvcc 13.0 from this file (no toolkit is needed to
// build or run the bench):
//   /usr/local/cuda/bin/nvcc -arch=sm_80 -ptx bench_kernels.cu -o bench_kernels_sm80.ptx

// The classic block reduction: each thread adds two elements, the block halves its partial sums
// in shared memory down to one warp, the warp finishes with __shfl_down_sync; one partial sum per
// block. Dynamic shared memory: blockDim.x floats.
extern "C" __global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ partial, unsigned n) {
  extern __shared__ float s[];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * (blockDim.x * 2) + tid;
  float v = 0.0f;
  if (i < n) v = in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
    if (tid < stride) s[tid] = v = v + s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (tid == 0) partial[blockIdx.x] = v;
  }
}

// C = A B for n x n row-major matrices, n a multiple of TILE; blocks of TILE x TILE threads, one
// element of C each, the tiles of A and B staged in shared memory.
#define TILE 16
extern "C" __global__ void sgemm_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                       unsigned n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (unsigned t = 0; t < n; t += TILE) {
    as[ty][tx] = a[row * n + t + tx];
    bs[ty][tx] = b[(t + ty) * n + col];
    __syncthreads();
    for (unsigned k = 0; k < TILE; ++k) acc += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// `rounds` rounds of murmur3's 32-bit finalizer per element, each element on its own (the
// OpenCL C twin is in bench_kernels.cpp).
__device__ __forceinline__ unsigned mix32(unsigned h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
extern "C" __global__ void hash_rounds(const unsigned* __restrict__ in, unsigned* __restrict__ out, unsigned n,
                                       unsigned rounds) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned h = in[i];
  for (unsigned r = 0; r < rounds; ++r) h = mix32(h + r);
  out[i] = h;
}
