// SPDX-License-Identifier: Apache-2.0
// Every built-in a thread can read about its place in the launch, for 1-D, 2-D and 3-D grids
// and blocks: threadIdx, blockIdx, blockDim, gridDim, warpSize and %laneid, written to memory
// by each thread and compared with what the CUDA Programming Guide defines. Warps are formed
// from the linear thread index x + y*Dx + z*Dx*Dy, so lane = linear index % 32. Also the
// largest grid dimensions (x beyond 65535, y and z at 65535) and a 1024-thread block.
#include "check.h"

#include <vector>

struct Rec {
  unsigned tid[3], ctaid[3], ntid[3], nctaid[3], warp_size, lane;
};
constexpr int kFields = 14;
static_assert(sizeof(Rec) == kFields * sizeof(unsigned));

__device__ unsigned lane_id() {
  unsigned l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

__global__ void record(Rec* out) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  Rec r;
  r.tid[0] = threadIdx.x, r.tid[1] = threadIdx.y, r.tid[2] = threadIdx.z;
  r.ctaid[0] = blockIdx.x, r.ctaid[1] = blockIdx.y, r.ctaid[2] = blockIdx.z;
  r.ntid[0] = blockDim.x, r.ntid[1] = blockDim.y, r.ntid[2] = blockDim.z;
  r.nctaid[0] = gridDim.x, r.nctaid[1] = gridDim.y, r.nctaid[2] = gridDim.z;
  r.warp_size = warpSize;
  r.lane = lane_id();
  out[static_cast<size_t>(block) * per_block + thread] = r;
}

// One value per block: which block along each axis (large grids, one thread per block).
__global__ void block_coords(unsigned* out) {
  size_t block = blockIdx.x +
                 static_cast<size_t>(gridDim.x) * (blockIdx.y + static_cast<size_t>(gridDim.y) * blockIdx.z);
  out[block] = blockIdx.x ^ (blockIdx.y << 8) ^ (blockIdx.z << 16);
}

__global__ void linear_index(unsigned* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * blockDim.x + threadIdx.x;
}

static const char* const kFieldNames[kFields] = {
    "threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z", "blockDim.x",
    "blockDim.y",  "blockDim.z",  "gridDim.x",   "gridDim.y",  "gridDim.z",  "warpSize",   "laneid"};

static void check_record(dim3 grid, dim3 block) {
  size_t per_block = static_cast<size_t>(block.x) * block.y * block.z;
  size_t blocks = static_cast<size_t>(grid.x) * grid.y * grid.z;
  size_t n = per_block * blocks;
  Rec* d = nullptr;
  CK(cudaMalloc(&d, n * sizeof(Rec)));
  CK(cudaMemset(d, 0xff, n * sizeof(Rec)));
  record<<<grid, block>>>(d);
  CK_LAUNCH();
  CK(cudaDeviceSynchronize());
  std::vector<Rec> got(n);
  CK(cudaMemcpy(got.data(), d, n * sizeof(Rec), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));

  std::vector<Rec> want(n);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              size_t b = bx + grid.x * (by + grid.y * static_cast<size_t>(bz));
              unsigned t = tx + block.x * (ty + block.y * tz);
              Rec r = {{tx, ty, tz}, {bx, by, bz}, {block.x, block.y, block.z}, {grid.x, grid.y, grid.z}, 32, t % 32};
              want[b * per_block + t] = r;
            }
  char name[128];
  std::snprintf(name, sizeof name, "builtins grid(%u,%u,%u) block(%u,%u,%u)", grid.x, grid.y, grid.z, block.x, block.y,
                block.z);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned* g = reinterpret_cast<const unsigned*>(&got[i]);
    const unsigned* w = reinterpret_cast<const unsigned*>(&want[i]);
    for (int f = 0; f < kFields; ++f)
      if (g[f] != w[f] && bad++ == 0)
        kt::checkf(name, false, "thread record %zu: %s = %u, expected %u", i, kFieldNames[f], g[f], w[f]);
  }
  if (bad == 0) kt::check(name, true);
}

static void check_block_coords(dim3 grid) {
  size_t n = static_cast<size_t>(grid.x) * grid.y * grid.z;
  unsigned* d = nullptr;
  CK(cudaMalloc(&d, n * sizeof(unsigned)));
  CK(cudaMemset(d, 0xff, n * sizeof(unsigned)));
  block_coords<<<grid, 1>>>(d);
  CK_LAUNCH();
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> got(n), want(n);
  CK(cudaMemcpy(got.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x)
        want[x + grid.x * (y + static_cast<size_t>(grid.y) * z)] = x ^ (y << 8) ^ (z << 16);
  char name[96];
  std::snprintf(name, sizeof name, "block coordinates grid(%u,%u,%u)", grid.x, grid.y, grid.z);
  kt::check_array(name, got.data(), want.data(), n);
}

int main() {
  check_record(dim3(7), dim3(64));              // 1-D, two full warps per block
  check_record(dim3(5), dim3(50));              // 1-D, the second warp partial
  check_record(dim3(3, 5), dim3(16, 8));        // 2-D
  check_record(dim3(3, 2, 2), dim3(4, 3, 5));   // 3-D, 60 threads: warps of 32 and 28
  check_record(dim3(2, 1, 3), dim3(1, 1, 64));  // z-only block
  check_record(dim3(1, 2, 1), dim3(1024));      // the largest block
  check_record(dim3(2, 2, 2), dim3(8, 8, 16));  // 3-D, 1024 threads
  check_block_coords(dim3(70000));              // gridDim.x beyond 65535
  check_block_coords(dim3(1, 65535));           // gridDim.y at its limit
  check_block_coords(dim3(2, 3, 65535));        // gridDim.z at its limit

  // A plain 1-D index over many blocks: every element written exactly by its thread.
  const unsigned blocks = 4096, threads = 256, n = blocks * threads;
  unsigned* d = nullptr;
  CK(cudaMalloc(&d, n * sizeof(unsigned)));
  CK(cudaMemset(d, 0, n * sizeof(unsigned)));
  linear_index<<<blocks, threads>>>(d);
  CK_LAUNCH();
  std::vector<unsigned> got(n), want(n);
  CK(cudaMemcpy(got.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  for (unsigned i = 0; i < n; ++i) want[i] = i;
  kt::check_array("linear index 4096x256", got.data(), want.data(), n);
  return kt::finish("indexing");
}
