// SPDX-License-Identifier: Apache-2.0
// Asynchronous copies from global to shared memory (cp.async, compute capability 8.0):
//   a double-buffered tile sum: each block stages 16-byte chunks of its rows with
//     __pipeline_memcpy_async, two stages in flight (commit, wait_prior(1)), and sums them;
//   4- and 8-byte copies;
//   the zero-fill form: the last chunk of a row copies only the bytes left in the array
//     (src-size < 16) and fills the rest with zeros, so a row whose length is not a multiple
//     of four floats reads nothing past the array's end.
// Every result is an integer sum of small integers: exact.
#include "check.h"

#include <cuda_pipeline.h>

#include <vector>

constexpr int kThreads = 64, kTile = kThreads * 4;  // floats per stage: one 16-byte chunk per thread

// out[b] = sum of in[b * len .. b * len + len), len a multiple of kTile.
__global__ void staged_sum(const float* in, float* out, int len) {
  __shared__ __align__(16) float stage[2][kTile];
  const float* row = in + static_cast<size_t>(blockIdx.x) * len;
  const int t = threadIdx.x, tiles = len / kTile;
  float acc = 0.0f;
  __pipeline_memcpy_async(&stage[0][t * 4], row + t * 4, 16);
  __pipeline_commit();
  for (int k = 0; k < tiles; ++k) {
    if (k + 1 < tiles) __pipeline_memcpy_async(&stage[(k + 1) & 1][t * 4], row + (k + 1) * kTile + t * 4, 16);
    __pipeline_commit();
    __pipeline_wait_prior(1);  // tile k has landed
    __syncthreads();
    for (int j = 0; j < 4; ++j) acc += stage[k & 1][t * 4 + j];
    __syncthreads();
  }
  __shared__ float sums[kThreads];
  sums[t] = acc;
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int i = 0; i < kThreads; ++i) s += sums[i];
    out[blockIdx.x] = s;
  }
}

// Each thread copies one element of `bytes` (4 or 8) bytes, then writes it back doubled.
__global__ void small_copies(const unsigned long long* in64, const unsigned* in32, unsigned long long* out64,
                             unsigned* out32) {
  __shared__ __align__(16) unsigned long long s64[32];
  __shared__ __align__(16) unsigned s32[32];
  const int t = threadIdx.x;
  __pipeline_memcpy_async(&s64[t], &in64[t], 8);
  __pipeline_memcpy_async(&s32[t], &in32[t], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out64[t] = s64[31 - t] * 2;
  out32[t] = s32[31 - t] * 2;
}

// A row of n floats (any n) in chunks of four: the last chunk copies what is left and zero-fills
// the rest of its 16 bytes. out[i] = 1000 * (chunk-local position) + the value, for every slot.
__global__ void zero_fill(const float* in, int n, float* out) {
  __shared__ __align__(16) float s[256];
  const int t = threadIdx.x;  // chunk t: floats 4t .. 4t + 3
  const int left = n - t * 4;
  if (left > 0) {
    const size_t zfill = left >= 4 ? 0 : (4 - left) * sizeof(float);
    __pipeline_memcpy_async(&s[t * 4], in + t * 4, 16, zfill);
  } else {
    for (int j = 0; j < 4; ++j) s[t * 4 + j] = -1.0f;
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  for (int j = 0; j < 4; ++j) out[t * 4 + j] = s[t * 4 + j] + 1000.0f * j;
}

int main() {
  {
    const int blocks = 12, len = kTile * 5;
    std::vector<float> in(static_cast<size_t>(blocks) * len), got(blocks), want(blocks, 0.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97);
    for (int b = 0; b < blocks; ++b)
      for (int i = 0; i < len; ++i) want[b] += in[static_cast<size_t>(b) * len + i];
    float *din, *dout;
    CK(cudaMalloc(&din, in.size() * sizeof(float)));
    CK(cudaMalloc(&dout, blocks * sizeof(float)));
    CK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    staged_sum<<<blocks, kThreads>>>(din, dout, len);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dout, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    kt::check_array("double-buffered 16-byte cp.async tiles: 12 rows of 1280 floats summed", got.data(), want.data(),
                    blocks);
  }
  {
    std::vector<unsigned long long> in64(32), got64(32), want64(32);
    std::vector<unsigned> in32(32), got32(32), want32(32);
    for (int i = 0; i < 32; ++i) {
      in64[i] = 0x100000001ull * (i + 1);
      in32[i] = 77u * i + 5u;
      want64[31 - i] = in64[i] * 2;
      want32[31 - i] = in32[i] * 2;
    }
    unsigned long long *d64, *o64;
    unsigned *d32, *o32;
    CK(cudaMalloc(&d64, 32 * 8));
    CK(cudaMalloc(&o64, 32 * 8));
    CK(cudaMalloc(&d32, 32 * 4));
    CK(cudaMalloc(&o32, 32 * 4));
    CK(cudaMemcpy(d64, in64.data(), 32 * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d32, in32.data(), 32 * 4, cudaMemcpyHostToDevice));
    small_copies<<<1, 32>>>(d64, d32, o64, o32);
    CK_LAUNCH();
    CK(cudaMemcpy(got64.data(), o64, 32 * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got32.data(), o32, 32 * 4, cudaMemcpyDeviceToHost));
    for (void* p : {static_cast<void*>(d64), static_cast<void*>(o64), static_cast<void*>(d32), static_cast<void*>(o32)})
      CK(cudaFree(p));
    kt::check_array("8-byte cp.async", got64.data(), want64.data(), 32);
    kt::check_array("4-byte cp.async", got32.data(), want32.data(), 32);
  }
  for (int n : {256, 253, 250, 1}) {
    // The array holds exactly n floats: a zero-fill copy that read past it would fault.
    std::vector<float> in(n), got(256), want(256);
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i + 1);
    for (int t = 0; t < 64; ++t)
      for (int j = 0; j < 4; ++j) {
        const int i = t * 4 + j;
        const int left = n - t * 4;
        want[i] = (left > 0 ? (i < n ? in[i] : 0.0f) : -1.0f) + 1000.0f * j;
      }
    float *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(float)));
    CK(cudaMalloc(&dout, 256 * sizeof(float)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    zero_fill<<<1, 64>>>(din, n, dout);
    CK_LAUNCH();
    CK(cudaMemcpy(got.data(), dout, 256 * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    char name[96];
    std::snprintf(name, sizeof name, "zero-filling cp.async at the end of a %d-float array", n);
    kt::check_array(name, got.data(), want.data(), 256);
  }
  return kt::finish("async_copy");
}
