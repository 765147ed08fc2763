// SPDX-License-Identifier: Apache-2.0
// Start-up cost of the backend: from dlopen() of libcudart.so.13 to the return of the first
// cudaGetDeviceCount, in this fresh process (constructors, configuration, ledger attach,
// device registration). scripts/bench.sh runs it many times and prints the median.
//   bench_startup LIBDIR      prints the microseconds on one line
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_startup LIBDIR\n");
    return 2;
  }
  const std::string lib = std::string(argv[1]) + "/libcudart.so.13";
  const auto t0 = std::chrono::steady_clock::now();
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    std::fprintf(stderr, "bench_startup: %s\n", dlerror());
    return 1;
  }
  auto count_fn = reinterpret_cast<int (*)(int*)>(dlsym(h, "cudaGetDeviceCount"));
  int n = 0;
  const int rc = count_fn ? count_fn(&n) : -1;
  const auto t1 = std::chrono::steady_clock::now();
  if (rc != 0 || n == 0) {
    std::fprintf(stderr, "bench_startup: cudaGetDeviceCount failed (%d, %d devices)\n", rc, n);
    return 1;
  }
  std::printf("%.1f\n", std::chrono::duration<double, std::micro>(t1 - t0).count());
  return 0;
}
