// SPDX-License-Identifier: Apache-2.0
// Many threads switching devices while they allocate, copy and free: the books of every
// device stay exact (cudaMemGetInfo, which every process and NVML see).
#include "runtime_api.h"

#include <algorithm>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

using namespace rtt;

TEST_CASE_METHOD(Case, "threads switching devices keep every device's books exact", "[runtime][threads]") {
  const int ndev = std::min(device_count(), 4);
  REQUIRE(ndev >= 2);
  auto free_on = [&](int dev) {
    size_t f = 0, t = 0;
    REQUIRE(r.cudaSetDevice(dev) == cudaSuccess);
    REQUIRE(r.cudaMemGetInfo(&f, &t) == cudaSuccess);
    return f;
  };
  std::vector<size_t> before(ndev);
  for (int d = 0; d < ndev; ++d) before[d] = free_on(d);

  constexpr int kThreads = 8, kIters = 400;
  struct Held {
    void* p;
    size_t size;
    int dev;
  };
  std::vector<std::vector<Held>> kept(kThreads);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(77 + t);
      std::vector<Held> live;
      std::vector<unsigned char> in(512), out(512);
      for (int i = 0; i < kIters; ++i) {
        const int dev = static_cast<int>(rng() % ndev);  // a switch on (almost) every step
        if (r.cudaSetDevice(dev) != cudaSuccess) ++bad;
        if (!live.empty() && rng() % 3 == 0) {
          const size_t k = rng() % live.size();
          if (r.cudaFree(live[k].p) != cudaSuccess) ++bad;  // freed from whichever device is current
          live[k] = live.back();
          live.pop_back();
          continue;
        }
        const size_t size = 512 + rng() % (3u << 20);
        void* p = nullptr;
        if (r.cudaMalloc(&p, size) != cudaSuccess) {
          ++bad;
          continue;
        }
        std::fill(in.begin(), in.end(), static_cast<unsigned char>(t + i));
        if (r.cudaMemcpy(p, in.data(), in.size(), cudaMemcpyHostToDevice) != cudaSuccess ||
            r.cudaMemcpy(out.data(), p, out.size(), cudaMemcpyDeviceToHost) != cudaSuccess || out != in)
          ++bad;
        live.push_back({p, size, dev});
      }
      kept[t] = live;
    });
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);

  std::vector<size_t> held(ndev, 0);
  for (const auto& v : kept)
    for (const Held& h : v) held[h.dev] += h.size;
  for (int d = 0; d < ndev; ++d) CHECK(free_on(d) == before[d] - held[d]);
  for (const auto& v : kept)
    for (const Held& h : v) CHECK(r.cudaFree(h.p) == cudaSuccess);
  for (int d = 0; d < ndev; ++d) CHECK(free_on(d) == before[d]);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
}

// Threads reserve capacity in quota chunks; a chunk another thread holds unused must not
// refuse an allocation that fits: the whole device fits in one allocation, one byte more
// does not, and the device stays usable.
TEST_CASE_METHOD(Case, "capacity held as quota by an idle thread does not refuse what fits", "[runtime][threads]") {
  REQUIRE(r.cudaSetDevice(1) == cudaSuccess);
  size_t free0 = 0, total = 0;
  REQUIRE(r.cudaMemGetInfo(&free0, &total) == cudaSuccess);
  REQUIRE(free0 == total);  // nothing else on device 1 in this process
  std::thread other([&] {
    void* p = nullptr;
    if (r.cudaSetDevice(1) != cudaSuccess || r.cudaMalloc(&p, 1 << 20) != cudaSuccess || r.cudaFree(p) != cudaSuccess)
      FAIL_CHECK("helper thread could not allocate");
  });
  other.join();
  void* all = nullptr;
  CHECK(r.cudaMalloc(&all, total) == cudaSuccess);
  void* one = nullptr;
  CHECK(r.cudaMalloc(&one, 1) == cudaErrorMemoryAllocation);
  clear_error();
  size_t f = 1, t = 0;
  REQUIRE(r.cudaMemGetInfo(&f, &t) == cudaSuccess);
  CHECK(f == 0);
  CHECK(r.cudaFree(all) == cudaSuccess);
  REQUIRE(r.cudaMemGetInfo(&f, &t) == cudaSuccess);
  CHECK(f == total);
  CHECK(r.cudaMalloc(&one, 1) == cudaSuccess);
  CHECK(r.cudaFree(one) == cudaSuccess);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
}
