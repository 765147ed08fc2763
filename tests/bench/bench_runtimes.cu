// The two runtimes side by side: built twice by tests/clients/CMakeLists.txt, with
// -cudart shared (the fake's runtime: bench_runtimes) and with nvcc's default static
// runtime (NVIDIA's, over the fake driver: bench_runtimes_static). scripts/bench.sh runs both.
//   bench_runtimes alloc ITERS ROUNDS   cudaMalloc+cudaFree of 1 MiB and malloc+free of 1 MiB,
//                                       alternating; prints "cuda_ns=… libc_ns=…" (medians)
//   bench_runtimes startup              returns as soon as cudaGetDeviceCount has (the
//                                       caller times the whole process)
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
  if (argc != 4 || std::strcmp(argv[1], "alloc") != 0) {
    std::fprintf(stderr, "usage: %s alloc ITERS ROUNDS | startup\n", argv[0]);
    return 2;
  }
  const long iters = std::atol(argv[2]);
  const int rounds = std::atoi(argv[3]);
  constexpr size_t kMiB = 1 << 20;
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
