// SPDX-License-Identifier: Apache-2.0
// Cooperative launch with a grid-wide barrier (cooperative_groups::this_grid().sync()):
//   a two-phase sum: each block writes its partial sum, the grid synchronizes, block 0 adds
//   the partials, the grid synchronizes again, and every thread reads the total;
//   ten rounds of "each block adds 1 to a counter, grid.sync(), every thread reads it": each
//   round must see exactly (round + 1) * gridDim.x.
// The grid is sized to fit on the device at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor),
// at most 16 blocks of 256 threads.
// A stencil over the whole grid with grid.sync() in a loop: each step every thread's next
// value mixes its neighbours', which other blocks own at block edges (a step that read before
// every block had written the last would differ); 1000 steps in 1-D blocks of 256 threads,
// fewer in blocks of 1, 2, 3, 4 and 32 warps (partial last warps, 2-D and 3-D blocks and
// grids); and with shuffles among the odd lanes in divergent code (blocks of 64 and 1024).
#include "check.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace cg = cooperative_groups;
constexpr int kThreads = 256, kRounds = 10;

__global__ void two_phase(const int* in, long long* partial, long long* total, long long* seen, unsigned* counter,
                          unsigned* rounds) {
  cg::grid_group grid = cg::this_grid();
  __shared__ long long s[kThreads];
  unsigned t = threadIdx.x, b = blockIdx.x;
  s[t] = in[b * kThreads + t];
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[b] = s[0];
  grid.sync();
  if (b == 0 && t == 0) {
    long long sum = 0;
    for (unsigned k = 0; k < gridDim.x; ++k) sum += partial[k];
    *total = sum;
  }
  grid.sync();
  seen[b * kThreads + t] = *total;
  for (int r = 0; r < kRounds; ++r) {
    if (t == 0) atomicAdd(counter, 1u);
    grid.sync();
    if (t == 0) rounds[r * gridDim.x + b] = atomicAdd(counter, 0u);
    grid.sync();  // nobody adds for the next round before everyone has read this one
  }
}

// One step per iteration: next[i] = 3*left + mid + (right ^ step), with i the thread's rank in
// the grid; the buffers swap after the grid synchronizes. With `shuffles`, the odd lanes also
// exchange their ranks with the lane two away (0 when right): code only some lanes run.
template <bool shuffles>
__global__ void stencil(unsigned* a, unsigned* b, int steps) {
  cg::grid_group grid = cg::this_grid();
  const unsigned n = static_cast<unsigned>(grid.size());
  const unsigned i = static_cast<unsigned>(grid.thread_rank());
  for (int step = 0; step < steps; ++step) {
    unsigned v = 3u * a[(i + n - 1) % n] + a[i] + (a[(i + 1) % n] ^ static_cast<unsigned>(step));
    if (shuffles && (i & 1)) v += __shfl_xor_sync(0xAAAAAAAAu, i, 2) - (i ^ 2u);
    b[i] = v;
    grid.sync();
    unsigned* t = a;
    a = b;
    b = t;
  }
}

std::vector<unsigned> stencil_on_host(std::vector<unsigned> a, int steps) {
  const size_t n = a.size();
  std::vector<unsigned> b(n);
  for (int step = 0; step < steps; ++step) {
    for (size_t i = 0; i < n; ++i)
      b[i] = 3u * a[(i + n - 1) % n] + a[i] + (a[(i + 1) % n] ^ static_cast<unsigned>(step));
    std::swap(a, b);
  }
  return a;
}

// Runs `steps` steps of the stencil on a grid x block launch and checks every value.
void run_stencil(bool shuffles, dim3 grid, dim3 block, int steps, unsigned seed) {
  const void* kernel = shuffles ? reinterpret_cast<const void*>(stencil<true>)
                                : reinterpret_cast<const void*>(stencil<false>);
  const int threads = static_cast<int>(block.x * block.y * block.z);
  const int blocks = static_cast<int>(grid.x * grid.y * grid.z);
  char name[160];
  std::snprintf(name, sizeof name, "stencil%s: %d grid.sync() on grid (%u,%u,%u) of blocks (%u,%u,%u) fits",
                shuffles ? " with shuffles" : "", steps, grid.x, grid.y, grid.z, block.x, block.y, block.z);
  int per_sm = 0, sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  if (!kt::checkf(name, blocks <= per_sm * sms, "%d blocks, %d per SM x %d SMs", blocks, per_sm, sms)) return;
  const size_t n = static_cast<size_t>(blocks) * threads;
  std::vector<unsigned> a(n);
  kt::Rng rng(seed);
  for (unsigned& v : a) v = rng.u32();
  unsigned *da, *db;
  CK(cudaMalloc(&da, n * sizeof(unsigned)));
  CK(cudaMalloc(&db, n * sizeof(unsigned)));
  CK(cudaMemcpy(da, a.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  void* args[] = {&da, &db, &steps};
  CK(cudaLaunchCooperativeKernel(kernel, grid, block, args, 0, nullptr));
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> got(n);
  CK(cudaMemcpy(got.data(), steps % 2 ? db : da, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  const std::vector<unsigned> want = stencil_on_host(a, steps);
  std::snprintf(name, sizeof name, "stencil%s: %d grid.sync() on grid (%u,%u,%u) of blocks (%u,%u,%u)",
                shuffles ? " with shuffles" : "", steps, grid.x, grid.y, grid.z, block.x, block.y, block.z);
  kt::check_array(name, got.data(), want.data(), n);
  CK(cudaFree(da));
  CK(cudaFree(db));
}

int main() {
  int dev = 0, coop = 0, per_sm = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  kt::check("device supports cooperative launch", coop == 1);
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, two_phase, kThreads, 0));
  int blocks = std::min(16, per_sm * sms);
  kt::checkf("at least 2 co-resident blocks", blocks >= 2, "%d per SM x %d SMs", per_sm, sms);
  if (blocks < 2) return kt::finish("cooperative");

  int n = blocks * kThreads;
  std::vector<int> in(n);
  kt::Rng rng(21);
  long long want_total = 0;
  for (int& v : in) v = static_cast<int>(rng.u32() % 200001) - 100000, want_total += v;
  int* din;
  long long *dpartial, *dtotal, *dseen;
  unsigned *dcounter, *drounds;
  CK(cudaMalloc(&din, n * sizeof(int)));
  CK(cudaMalloc(&dpartial, blocks * sizeof(long long)));
  CK(cudaMalloc(&dtotal, sizeof(long long)));
  CK(cudaMalloc(&dseen, n * sizeof(long long)));
  CK(cudaMalloc(&dcounter, sizeof(unsigned)));
  CK(cudaMalloc(&drounds, kRounds * blocks * sizeof(unsigned)));
  CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(dcounter, 0, sizeof(unsigned)));
  void* args[] = {&din, &dpartial, &dtotal, &dseen, &dcounter, &drounds};
  CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(two_phase), dim3(blocks), dim3(kThreads), args, 0,
                                 nullptr));
  CK(cudaDeviceSynchronize());
  std::vector<long long> seen(n);
  std::vector<unsigned> rounds(kRounds * blocks);
  long long total = 0;
  CK(cudaMemcpy(seen.data(), dseen, n * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rounds.data(), drounds, rounds.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost));
  kt::check_eq("two-phase sum: total", total, want_total);
  std::vector<long long> want_seen(n, want_total);
  kt::check_array("every thread reads the total after grid.sync()", seen.data(), want_seen.data(), n);
  std::vector<unsigned> want_rounds(kRounds * blocks);
  for (int r = 0; r < kRounds; ++r)
    for (int b = 0; b < blocks; ++b) want_rounds[r * blocks + b] = static_cast<unsigned>((r + 1) * blocks);
  kt::check_array("10 rounds of grid.sync(): each sees every block's add", rounds.data(), want_rounds.data(),
                  rounds.size());
  for (void* p : {static_cast<void*>(din), static_cast<void*>(dpartial), static_cast<void*>(dtotal),
                  static_cast<void*>(dseen), static_cast<void*>(dcounter), static_cast<void*>(drounds)})
    CK(cudaFree(p));

  run_stencil(false, dim3(8), dim3(256), 1000, 31);           // 8 warps
  run_stencil(false, dim3(7), dim3(32), 100, 32);             // 1 warp
  run_stencil(false, dim3(5), dim3(33), 100, 33);             // 2 warps, one lane in the second
  run_stencil(false, dim3(3, 2), dim3(32, 3), 100, 34);       // 3 warps, 2-D
  run_stencil(false, dim3(2, 2, 2), dim3(8, 4, 3), 100, 35);  // 3 warps, 3-D
  run_stencil(false, dim3(4), dim3(100), 100, 36);            // 4 warps, the last partial
  run_stencil(false, dim3(2), dim3(1024), 20, 37);            // 32 warps
  run_stencil(true, dim3(6), dim3(64), 100, 38);
  run_stencil(true, dim3(2), dim3(1024), 10, 39);
  return kt::finish("cooperative");
}
