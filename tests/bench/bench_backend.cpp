// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the backend, measured side by side in one run (these machines are shared
// and noisy: ratios, not absolute times, are what to compare).
//   1. cudaMalloc+cudaFree of 1 MiB vs malloc+free of 1 MiB, with 1 and 2 threads
//   2. cudaMemcpy host->device of 64 MiB vs memcpy of 64 MiB
// Start-up cost is measured by scripts/bench.sh (a fresh process per sample).
#include "bench_common.h"
#include "workloads/cuda_min.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using bench::Clock;
using bench::median;
using bench::ns_per_iter;

int main(int argc, char** argv) {
  const long iters = argc > 1 ? std::atol(argv[1]) : 200000;
  const int rounds = 7;
  int n = 0;
  if (cudaGetDeviceCount(&n) != 0 || n == 0) {
    std::fprintf(stderr, "bench: no fake devices\n");
    return 1;
  }
  const size_t one_mib = 1 << 20;
  std::printf("%-44s %10s %10s %8s\n", "benchmark", "fake ns", "libc ns", "ratio");
  for (int threads : {1, 2}) {
    std::vector<double> fake, libc, ratio;
    for (int r = 0; r < rounds; ++r) {  // alternate A/B so drift hits both alike
      double a = ns_per_iter(threads, iters, [&](long k) {
        cudaSetDevice(0);
        for (long i = 0; i < k; ++i) {
          void* p = nullptr;
          if (cudaMalloc(&p, one_mib) != 0) std::abort();
          cudaFree(p);
        }
      });
      double b = ns_per_iter(threads, iters, [&](long k) { bench::malloc_free_pairs(k, one_mib); });
      fake.push_back(a);
      libc.push_back(b);
      ratio.push_back(a / b);
    }
    char label[64];
    std::snprintf(label, sizeof label, "cudaMalloc+cudaFree 1 MiB, %d thread%s", threads, threads > 1 ? "s" : "");
    std::printf("%-44s %10.1f %10.1f %7.2fx\n", label, median(fake), median(libc), median(ratio));
  }
  {
    const size_t size = 64 << 20;
    std::vector<char> src(size, 1), dst(size, 0);
    void* d = nullptr;
    if (cudaMalloc(&d, size) != 0) return 1;
    cudaMemcpy(d, src.data(), size, kCudaMemcpyHostToDevice);  // first touch outside the timing
    std::vector<double> fake, libc, ratio;
    for (int r = 0; r < rounds; ++r) {
      auto t0 = Clock::now();
      cudaMemcpy(d, src.data(), size, kCudaMemcpyHostToDevice);
      auto t1 = Clock::now();
      std::memcpy(dst.data(), src.data(), size);
      asm volatile("" ::"r"(dst.data()) : "memory");
      auto t2 = Clock::now();
      double a = std::chrono::duration<double, std::nano>(t1 - t0).count();
      double b = std::chrono::duration<double, std::nano>(t2 - t1).count();
      fake.push_back(a);
      libc.push_back(b);
      ratio.push_back(a / b);
    }
    std::printf("%-44s %10.0f %10.0f %7.2fx\n", "cudaMemcpy H2D 64 MiB vs memcpy", median(fake), median(libc),
                median(ratio));
    cudaFree(d);
  }
  return 0;
}
