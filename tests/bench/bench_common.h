// SPDX-License-Identifier: Apache-2.0
// What the backend benchmarks share: timing a loop, the median of rounds, and the baseline
// every allocation pair is compared with (malloc+free of the same size), so that every
// program measures it the same way.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <thread>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

// Nanoseconds per iteration of body(iters), run by `threads` threads at once.
template <class F>
double ns_per_iter(int threads, long iters, F&& body) {
  std::vector<std::thread> ts;
  const auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t) ts.emplace_back([&] { body(iters); });
  for (auto& t : ts) t.join();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(iters);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The baseline: k pairs of malloc+free of `bytes` (the compiler may not drop them).
inline void malloc_free_pairs(long k, size_t bytes) {
  for (long i = 0; i < k; ++i) {
    void* p = std::malloc(bytes);
    asm volatile("" ::"r"(p) : "memory");
    std::free(p);
  }
}

}  // namespace bench
