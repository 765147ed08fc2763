// SPDX-License-Identifier: Apache-2.0
// libtrace_beta.so: the other library trace_libs calls the API through. Through the CUDA
// Driver API in the runtime's context: cuMemAlloc_v2 2 MiB twice, cuMemFree_v2 both; then one
// cudaMalloc of 1 TiB that fails (out of memory): 5 calls, 1 error, 4 MiB allocated and freed.
#include "workloads/cuda_min.h"

#include <cstdio>

extern "C" {
int cuMemAlloc_v2(unsigned long long* dptr, size_t size);
int cuMemFree_v2(unsigned long long dptr);
}

extern "C" [[gnu::visibility("default")]] int beta_work() {
  unsigned long long p[2] = {};
  for (auto& q : p)
    if (int rc = cuMemAlloc_v2(&q, 2 << 20)) return std::fprintf(stderr, "beta: cuMemAlloc_v2: %d\n", rc), 1;
  for (auto q : p)
    if (int rc = cuMemFree_v2(q)) return std::fprintf(stderr, "beta: cuMemFree_v2: %d\n", rc), 1;
  void* huge = nullptr;
  if (cudaMalloc(&huge, size_t{1} << 40) != kCudaErrorMemoryAllocation)
    return std::fprintf(stderr, "beta: a 1 TiB cudaMalloc did not fail\n"), 1;
  return 0;
}
