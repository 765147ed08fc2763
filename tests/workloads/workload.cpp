// SPDX-License-Identifier: Apache-2.0
// A small, exactly known GPU workload for the demo and the integration tests.
//
//   workload alloc DEVICE MIB [HOLD_MS|hold]   allocate MIB MiB on DEVICE, touch it, hold
//                                         (HOLD_MS, or with "hold" until stdin closes), free
//   workload leak DEVICE MIB              allocate and exit without freeing (a leak)
//   workload grow DEVICE STEP_MIB [hold]  allocate STEP_MIB chunks until out of memory, then free;
//                                         with "hold": start after one line on stdin (a start
//                                         gate for racing processes), free when stdin closes
//   workload churn DEVICE MIB             for ever: allocate 1..MIB MiB on DEVICE and on device 1,
//                                         keep up to 8 blocks, free the oldest (prints one line
//                                         "pid N: churning" first; for kill tests)
// Prints one line per action; exit status 0 on success.
#include "workloads/cuda_min.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <thread>
#include <vector>

namespace {
int check(int err, const char* what) {
  if (err != 0) std::fprintf(stderr, "workload: %s failed: %s\n", what, cudaGetErrorString(err));
  return err;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: workload alloc|leak|grow|churn DEVICE MIB [HOLD_MS|hold]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int dev = std::atoi(argv[2]);
  const size_t mib = std::strtoull(argv[3], nullptr, 10);
  const bool hold_until_eof = argc > 4 && std::string(argv[4]) == "hold";
  const int hold_ms = argc > 4 && !hold_until_eof ? std::atoi(argv[4]) : 0;
  if (check(cudaSetDevice(dev), "cudaSetDevice")) return 1;
  if (mode == "alloc" || mode == "leak") {
    void* p = nullptr;
    if (check(cudaMalloc(&p, mib << 20), "cudaMalloc")) return 1;
    std::vector<unsigned char> host(mib << 20, 0x5A);
    if (check(cudaMemcpy(p, host.data(), host.size(), kCudaMemcpyHostToDevice), "cudaMemcpy")) return 1;
    std::printf("pid %d: %zu MiB on device %d\n", static_cast<int>(getpid()), mib, dev);
    std::fflush(stdout);
    if (hold_ms) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    if (hold_until_eof)
      while (std::getchar() != EOF) {}
    if (mode == "alloc" && check(cudaFree(p), "cudaFree")) return 1;
    return 0;
  }
  if (mode == "grow") {
    if (hold_until_eof)
      for (int c = std::getchar(); c != '\n' && c != EOF;) c = std::getchar();
    std::vector<void*> held;
    for (;;) {
      void* p = nullptr;
      int err = cudaMalloc(&p, mib << 20);
      if (err == kCudaErrorMemoryAllocation) break;
      if (check(err, "cudaMalloc")) return 1;
      held.push_back(p);
      if (hold_ms) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    }
    std::printf("pid %d: device %d full after %zu x %zu MiB (out of memory, as expected)\n", static_cast<int>(getpid()),
                dev, held.size(), mib);
    std::fflush(stdout);
    if (hold_until_eof)
      while (std::getchar() != EOF) {}
    for (void* p : held) cudaFree(p);
    return 0;
  }
  if (mode == "churn") {
    std::vector<std::pair<int, void*>> held;
    std::printf("pid %d: churning\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    for (unsigned i = 0;; ++i) {
      const int d = i % 2 ? 1 : dev;
      if (check(cudaSetDevice(d), "cudaSetDevice")) return 1;
      void* p = nullptr;
      if (check(cudaMalloc(&p, (1 + i % mib) << 20), "cudaMalloc")) return 1;
      held.emplace_back(d, p);
      if (held.size() > 8) {
        if (check(cudaSetDevice(held.front().first), "cudaSetDevice") ||
            check(cudaFree(held.front().second), "cudaFree"))
          return 1;
        held.erase(held.begin());
      }
    }
  }
  std::fprintf(stderr, "workload: unknown mode %s\n", mode.c_str());
  return 2;
}
