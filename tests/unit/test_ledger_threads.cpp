// SPDX-License-Identifier: Apache-2.0
// The device ledger under threads (the TSan build runs this): threads of one process book
// and release device, managed and host bytes on a device small enough that they keep
// reaching its capacity (the exact check under the device's lock), with a peak to watch,
// while another thread reads the books as NVML and fakegpu-trace do. The books stay exact.
#include "core/ledger.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <barrier>
#include <random>
#include <thread>
#include <vector>

using namespace fg::ledger;

namespace {
constexpr uint64_t kMiB = 1ull << 20;
}  // namespace

TEST_CASE("ledger: threads booking at capacity keep exact books while another reads them", "[ledger][threads]") {
  Ledger ledger("(private)", /*isolated=*/true);
  const uint8_t uuid[16] = {0xfe, 0xed, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  constexpr uint64_t kTotal = 64 * kMiB, kPeak = kTotal / 2;
  const uint32_t dev = ledger.register_device(uuid, kTotal, "Fake Test GPU", 0);

  // Six threads on the ledger's four shards: two pairs share a shard's lock. Each books
  // twice as often as it releases, up to 4 MiB at a time, so each alone would pass the
  // capacity within its first hundred bookings: every thread is refused at some point.
  constexpr int kThreads = 6, kIters = 2000;
  struct Booked {
    Kind kind;
    uint64_t bytes;
  };
  std::vector<std::vector<Booked>> live(kThreads);
  std::atomic<int> refused{0}, bad_high{0};
  std::barrier sync(kThreads + 1);
  std::atomic<bool> stop{false};
  std::atomic<int> other_processes{0};
  std::thread reader([&] {
    do {
      // What NVML's process list and fakegpu-trace read while the books change. (Their sum
      // may pass the total while quotas are in flight: the README's Reliability section.)
      (void)ledger.used(dev);
      if (ledger.processes(dev).size() > 1) ++other_processes;
    } while (!stop.load());
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      auto& mine = live[t];
      for (int i = 0; i < kIters; ++i) {
        if (!mine.empty() && rng() % 3 == 0) {
          const size_t k = rng() % mine.size();
          ledger.release(dev, mine[k].kind, mine[k].bytes);
          mine[k] = mine.back();
          mine.pop_back();
          continue;
        }
        const Kind kind = rng() % 4 == 0 ? kManaged : rng() % 5 == 0 ? kHost : kDevice;
        const uint64_t bytes = 1 + rng() % (4 * kMiB);
        uint64_t high = 0;
        if (!ledger.reserve(dev, kind, bytes, kPeak, &high)) {
          ++refused;
          continue;
        }
        if (high != 0 && high <= kPeak) ++bad_high;  // a high is reported only above the peak
        mine.push_back({kind, bytes});
      }
      sync.arrive_and_wait();  // the main thread checks the books
      sync.arrive_and_wait();
      for (const Booked& b : mine) ledger.release(dev, b.kind, b.bytes);
    });

  sync.arrive_and_wait();
  uint64_t held[kKinds] = {};
  for (const auto& v : live)
    for (const Booked& b : v) held[b.kind] += b.bytes;
  CHECK(ledger.mine(dev, kDevice) == held[kDevice]);
  CHECK(ledger.mine(dev, kManaged) == held[kManaged]);
  CHECK(ledger.mine(dev, kHost) == held[kHost]);
  CHECK(ledger.used(dev) == held[kDevice] + held[kManaged]);
  sync.arrive_and_wait();
  for (auto& th : threads) th.join();
  stop = true;
  reader.join();

  CHECK(refused.load() > 0);
  CHECK(bad_high.load() == 0);
  CHECK(other_processes.load() == 0);
  CHECK(ledger.mine(dev, kDevice) == 0);
  CHECK(ledger.mine(dev, kManaged) == 0);
  CHECK(ledger.mine(dev, kHost) == 0);
  CHECK(ledger.used(dev) == 0);
  // Capacity the threads' shards hold as unused quota does not refuse the whole device.
  CHECK(ledger.reserve(dev, kDevice, kTotal));
  CHECK_FALSE(ledger.reserve(dev, kDevice, 1));
  ledger.release(dev, kDevice, kTotal);
  CHECK(ledger.used(dev) == 0);
}
