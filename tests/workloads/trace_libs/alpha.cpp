// SPDX-License-Identifier: Apache-2.0
// libtrace_alpha.so: one of the two libraries trace_libs calls the API through (per-library
// attribution, tests/integration/test_trace.py). Through the CUDA Runtime: cudaMalloc 1 MiB
// three times, one cudaMemcpy of 4 KiB host to device, cudaFree all three: 7 calls, 3 MiB
// allocated and freed.
#include "workloads/cuda_min.h"

#include <cstdio>
#include <vector>

extern "C" [[gnu::visibility("default")]] int alpha_work() {
  void* p[3] = {};
  for (void*& q : p)
    if (int rc = cudaMalloc(&q, 1 << 20)) return std::fprintf(stderr, "alpha: cudaMalloc: %d\n", rc), 1;
  std::vector<char> host(4096, 1);
  if (int rc = cudaMemcpy(p[0], host.data(), host.size(), kCudaMemcpyHostToDevice))
    return std::fprintf(stderr, "alpha: cudaMemcpy: %d\n", rc), 1;
  for (void* q : p)
    if (int rc = cudaFree(q)) return std::fprintf(stderr, "alpha: cudaFree: %d\n", rc), 1;
  return 0;
}
