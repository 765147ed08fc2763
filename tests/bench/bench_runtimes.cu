// SPDX-License-Identifier: Apache-2.0
// The two runtimes side by side: built twice by tests/clients/CMakeLists.txt, with
// -cudart shared (the fake's runtime: bench_runtimes) and with nvcc's default static
// runtime (NVIDIA's, over the fake driver: bench_runtimes_static). scripts/bench.sh runs both.
//   bench_runtimes alloc ITERS ROUNDS   cudaMalloc+cudaFree of 1 MiB and malloc+free of 1 MiB,
//                                       alternating; prints "cuda_ns=… libc_ns=…" (medians)
//   bench_runtimes startup              returns as soon as cudaGetDeviceCount has (the
//                                       caller times the whole process)
//   bench_runtimes cuda N | libc N      N pairs of one kind only, untimed (for counting
//                                       instructions under callgrind; N = 0 is the baseline)
#include "bench_common.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "startup") == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return 1;
    _exit(0);  // the start-up is what is timed, not the teardown
  }
  constexpr size_t kMiB = 1 << 20;
  if (argc == 3 && (std::strcmp(argv[1], "cuda") == 0 || std::strcmp(argv[1], "libc") == 0)) {
    void* warm = nullptr;
    if (cudaMalloc(&warm, kMiB) != cudaSuccess) return 1;  // as in "alloc": set up outside
    cudaFree(warm);
    bench::malloc_free_pairs(1, kMiB);
    const long n = std::atol(argv[2]);
    if (argv[1][0] == 'l') {
      bench::malloc_free_pairs(n, kMiB);
      return 0;
    }
    for (long i = 0; i < n; ++i) {
      void* p = nullptr;
      if (cudaMalloc(&p, kMiB) != cudaSuccess) return 1;
      cudaFree(p);
    }
    return 0;
  }
  if (argc != 4 || std::strcmp(argv[1], "alloc") != 0) {
    std::fprintf(stderr, "usage: %s alloc ITERS ROUNDS | startup | cuda N | libc N\n", argv[0]);
    return 2;
  }
  const long iters = std::atol(argv[2]);
  const int rounds = std::atoi(argv[3]);
  void* warm = nullptr;
  if (cudaMalloc(&warm, kMiB) != cudaSuccess) return 1;  // context and arena outside the timing
  cudaFree(warm);
  std::vector<double> cuda, libc;
  for (int r = 0; r < rounds; ++r) {
    cuda.push_back(bench::ns_per_iter(1, iters, [](long k) {
      for (long i = 0; i < k; ++i) {
        void* p = nullptr;
        if (cudaMalloc(&p, kMiB) != cudaSuccess) std::abort();
        cudaFree(p);
      }
    }));
    libc.push_back(bench::ns_per_iter(1, iters, [](long k) { bench::malloc_free_pairs(k, kMiB); }));
  }
  std::printf("cuda_ns=%.1f libc_ns=%.1f\n", bench::median(cuda), bench::median(libc));
  return 0;
}
