// SPDX-License-Identifier: Apache-2.0
// The workload of the collector benchmarks: PAIRS cudaMalloc(4 KiB) + cudaFree, at full speed
// or paced to RATE pairs per second. Prints the mean time per pair and the pairs done.
//   bench_trace_workload PAIRS [RATE]
#include "workloads/cuda_min.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_trace_workload PAIRS [RATE]\n");
    return 2;
  }
  const long pairs = std::atol(argv[1]);
  const double rate = argc > 2 ? std::atof(argv[2]) : 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != 0 || cudaSetDevice(0) != 0) return 1;
  void* warm = nullptr;  // first call: backend initialisation, outside the timing
  cudaMalloc(&warm, 4096);
  cudaFree(warm);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (long i = 0; i < pairs; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, 4096) != 0 || cudaFree(p) != 0) return 1;
    if (rate > 0 && (i & 1023) == 1023) {  // pace in batches: a sleep per pair costs more than the pair
      const auto due = t0 + std::chrono::duration<double>(static_cast<double>(i + 1) / rate);
      std::this_thread::sleep_until(due);
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  std::printf("ns_per_pair=%.1f pairs=%ld seconds=%.3f\n", ns / static_cast<double>(pairs), pairs, ns / 1e9);
  return 0;
}
