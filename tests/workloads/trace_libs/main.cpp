// SPDX-License-Identifier: Apache-2.0
// trace_libs: API calls from a program and from two of its own shared libraries, for
// fakegpu-trace's per-library attribution (tests/integration/test_trace.py). The program
// itself: cudaMalloc 512 KiB and cudaFree it (2 calls); then libtrace_alpha.so's alpha_work
// (7 calls, 3 MiB) and libtrace_beta.so's beta_work (5 calls, 1 failing, 4 MiB). Prints
// "trace_libs done"; with the argument `hold`, then waits for stdin to close.
#include "workloads/cuda_min.h"

#include <cstdio>
#include <cstring>

extern "C" int alpha_work();
extern "C" int beta_work();

int main(int argc, char** argv) {
  void* p = nullptr;
  if (int rc = cudaMalloc(&p, 512 << 10)) return std::fprintf(stderr, "cudaMalloc: %d\n", rc), 1;
  if (int rc = cudaFree(p)) return std::fprintf(stderr, "cudaFree: %d\n", rc), 1;
  if (alpha_work() || beta_work()) return 1;
  std::puts("trace_libs done");
  std::fflush(stdout);
  if (argc > 1 && std::strcmp(argv[1], "hold") == 0)
    while (std::getchar() != EOF) {}
  return 0;
}
