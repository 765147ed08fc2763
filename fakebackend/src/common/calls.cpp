// SPDX-License-Identifier: Apache-2.0
#include "common/calls.h"

#include <atomic>
#include <mutex>
#include <vector>

extern "C" {
__thread uint64_t* fg_tls_counts = nullptr;
__thread uintptr_t fg_tls_caller = 0;
alignas(64) uint64_t fg_global_counts[fg::kApiCount];
}

namespace fg::calls {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<uint64_t*> live;  // blocks of running threads
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: threads may exit during static destruction
  return *r;
}

// Folds the block into the global array when the thread exits.
struct ThreadBlock {
  uint64_t* counts = nullptr;
  ~ThreadBlock() {
    if (!counts) return;
    auto& r = registry();
    std::lock_guard lock(r.mu);
    for (std::size_t i = 0; i < kApiCount; ++i)
      if (counts[i]) __atomic_fetch_add(&fg_global_counts[i], counts[i], __ATOMIC_RELAXED);
    std::erase(r.live, counts);
    fg_tls_counts = nullptr;
    delete[] counts;
  }
};
FG_TLS thread_local ThreadBlock t_block;

}  // namespace

void attach_thread_slow() noexcept {
  auto* block = new (std::nothrow) uint64_t[kApiCount]();
  if (!block) return;  // the global counters still count this thread
  auto& r = registry();
  {
    std::lock_guard lock(r.mu);
    r.live.push_back(block);
  }
  t_block.counts = block;
  fg_tls_counts = block;
}

std::array<uint64_t, kApiCount> snapshot() {
  std::array<uint64_t, kApiCount> out{};
  auto& r = registry();
  std::lock_guard lock(r.mu);
  for (std::size_t i = 0; i < kApiCount; ++i) out[i] = __atomic_load_n(&fg_global_counts[i], __ATOMIC_RELAXED);
  // Other threads increment their blocks without atomics; a relaxed load of an aligned
  // 8-byte word is what x86 gives anyway, so a snapshot is at worst a few calls behind.
  for (uint64_t* block : r.live)
    for (std::size_t i = 0; i < kApiCount; ++i) out[i] += __atomic_load_n(&block[i], __ATOMIC_RELAXED);
  return out;
}

}  // namespace fg::calls
