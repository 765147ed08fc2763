// SPDX-License-Identifier: Apache-2.0
// Device printf: output of each launch appears when the host synchronizes, between the
// host's own marker lines. The runner (run_kernel_tests.py) compares the lines between two
// markers with the expected ones as a multiset: the order of threads within a launch is not
// defined. Formats: %d %u %x %08.3f %s %c %lld %.2e %% and no arguments, 12 arguments, and 32
// lanes of a warp. The program itself checks only that every CUDA call succeeds.
#include "check.h"

__constant__ const char* c_words[3] = {"alpha", "beta", "gamma"};

__global__ void formats() {
  int b = blockIdx.x, t = threadIdx.x, i = b * 4 + t;
  printf("block %d thread %d: %d %u %x %08.3f %s %c %lld %.2e %%\n", b, t, i * 1000 - 3000,
         static_cast<unsigned>(i) * 3000000000u, static_cast<unsigned>(i) * 0x1234567u, i * 1.25f - 2.0f,
         c_words[i % 3], 'A' + i, static_cast<long long>(i) << 40, i * 12345.678);
}

__global__ void shapes() {
  int t = threadIdx.x;
  if (t == 0) printf("no arguments\n");
  if (t == 1) printf("twelve: %d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  printf("lane %02d of %d\n", t, blockDim.x);
}

static void marker(const char* text) {
  std::printf("== %s ==\n", text);
  std::fflush(stdout);
}

int main() {
  marker("launch 1");
  formats<<<2, 4>>>();
  CK_LAUNCH();
  kt::check("launch 1 synchronizes", cudaDeviceSynchronize() == cudaSuccess);
  std::fflush(stdout);
  marker("launch 2");
  shapes<<<1, 32>>>();
  CK_LAUNCH();
  kt::check("launch 2 synchronizes", cudaDeviceSynchronize() == cudaSuccess);
  std::fflush(stdout);
  marker("end");
  return kt::finish("printf");
}
