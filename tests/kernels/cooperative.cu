// SPDX-License-Identifier: Apache-2.0
// Cooperative launch with a grid-wide barrier (cooperative_groups::this_grid().sync()):
//   a two-phase sum: each block writes its partial sum, the grid synchronizes, block 0 adds
//   the partials, the grid synchronizes again, and every thread reads the total;
//   ten rounds of "each block adds 1 to a counter, grid.sync(), every thread reads it": each
//   round must see exactly (round + 1) * gridDim.x.
// The grid is sized to fit on the device at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor),
// at most 16 blocks of 256 threads.
#include "check.h"

#include <cooperative_groups.h>

#include <algorithm>
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
  return kt::finish("cooperative");
}
