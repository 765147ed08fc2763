// The two runtimes side by side: built twice by tests/clients/CMakeLists.txt, with
// -cudart shared (the fake's runtime: bench_runtimes) and with nvcc's default static
// runtime (NVIDIA's, over the fake driver: bench_runtimes_static). scripts/bench.sh runs both.
//   bench_runtimes alloc ITERS ROUNDS   cudaMalloc+cudaFree of 1 MiB and malloc+free of 1 MiB,
//                                       alternating; prints "cuda_ns=… libc_ns=…" (medians)
//   bench_runtimes startup              returns as soon as cudaGetDeviceCount has (the
//                                       caller times the whole process)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

template <class F>
double ns_per_pair(long iters, F&& body) {
  const auto t0 = Clock::now();
  for (long i = 0; i < iters; ++i) body();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(iters);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

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
    cuda.push_back(ns_per_pair(iters, [] {
      void* p = nullptr;
      if (cudaMalloc(&p, kMiB) != cudaSuccess) std::abort();
      cudaFree(p);
    }));
    libc.push_back(ns_per_pair(iters, [] {
      void* p = std::malloc(kMiB);
      asm volatile("" ::"r"(p) : "memory");
      std::free(p);
    }));
  }
  std::printf("cuda_ns=%.1f libc_ns=%.1f\n", median(cuda), median(libc));
  return 0;
}
