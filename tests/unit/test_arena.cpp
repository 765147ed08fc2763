// SPDX-License-Identifier: Apache-2.0
// The arena's per-block records: what cudaFree, pointer queries and the exit report rely on.
#include "core/arena.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <thread>
#include <vector>

using fg::Allocation;
using fg::Arena;
using fg::MemKind;

namespace {
constexpr uint64_t kMiB = 1ull << 20;

Allocation request(uint64_t size, uint64_t pool = 0) {
  Allocation a;
  a.size = size;
  a.api = fg::ApiOrigin::Driver;
  a.flags = 7;
  a.pool = pool;
  return a;
}
unsigned bit(MemKind k) { return 1u << static_cast<unsigned>(k); }
}  // namespace

TEST_CASE("arena: an allocation's record comes back whole from find_base and erase", "[arena]") {
  Arena arena(1, 0, MemKind::Device, 256 * kMiB);
  for (uint64_t size : {uint64_t{1}, uint64_t{1000}, kMiB, 2 * kMiB, 5 * kMiB}) {
    CAPTURE(size);
    void* p = arena.allocate(request(size, 42));
    REQUIRE(p != nullptr);
    const uintptr_t b = reinterpret_cast<uintptr_t>(p);
    const uint64_t span = size <= 512 ? 512 : size <= 2 * kMiB ? std::bit_ceil(size) : 8 * kMiB;
    auto found = arena.find_base(b);
    REQUIRE(found);
    CHECK(found->base == b);
    CHECK(found->size == size);
    CHECK(found->span == span);
    CHECK(found->device == 0);
    CHECK(found->kind == MemKind::Device);
    CHECK(found->api == fg::ApiOrigin::Driver);
    CHECK(found->flags == 7u);
    CHECK(found->pool == 42u);
    CHECK(found->arena == &arena);
    CHECK(arena.block_base(b + size - 1) == b);

    Allocation gone;
    REQUIRE(arena.erase(b, ~0u, &gone));
    CHECK(gone.base == b);
    CHECK(gone.size == size);
    CHECK(gone.span == span);
    CHECK(gone.pool == 42u);
    CHECK_FALSE(arena.find_base(b));
    CHECK_FALSE(arena.erase(b, ~0u, &gone));  // a second free finds nothing
    arena.deallocate(p, gone.span);
  }
}

TEST_CASE("arena: interior pointers, other kinds and foreign addresses are not bases", "[arena]") {
  Arena arena(1, 0, MemKind::Device, 256 * kMiB);
  void* small = arena.allocate(request(kMiB));
  void* large = arena.allocate(request(9 * kMiB));
  const uintptr_t s = reinterpret_cast<uintptr_t>(small), l = reinterpret_cast<uintptr_t>(large);
  Allocation gone;
  CHECK_FALSE(arena.erase(s + 512, ~0u, &gone));
  CHECK_FALSE(arena.erase(l + Arena::kChunk, ~0u, &gone));  // a tail chunk of the large block
  CHECK_FALSE(arena.erase(s, bit(MemKind::Host) | bit(MemKind::Managed), &gone));
  CHECK_FALSE(arena.erase(arena.end(), ~0u, &gone));
  CHECK_FALSE(arena.erase(arena.begin() + 200 * kMiB, ~0u, &gone));  // never carved
  // None of that ended either allocation.
  CHECK(arena.find_base(s));
  CHECK(arena.find_base(l));
  CHECK(arena.erase(s, bit(MemKind::Device), &gone));
  CHECK(arena.erase(l, bit(MemKind::Device), &gone));
}

TEST_CASE("arena: live lists exactly the allocations not yet erased", "[arena]") {
  Arena arena(1, 0, MemKind::Managed, 256 * kMiB);
  std::vector<uintptr_t> bases;
  for (uint64_t size : {uint64_t{512}, uint64_t{4096}, kMiB, 3 * kMiB})
    bases.push_back(reinterpret_cast<uintptr_t>(arena.allocate(request(size))));
  Allocation gone;
  REQUIRE(arena.erase(bases[1], ~0u, &gone));
  std::vector<Allocation> live;
  arena.live(live);
  std::vector<uintptr_t> got;
  for (const Allocation& a : live) got.push_back(a.base);
  std::sort(got.begin(), got.end());
  std::vector<uintptr_t> want = {bases[0], bases[2], bases[3]};
  std::sort(want.begin(), want.end());
  CHECK(got == want);
  for (const Allocation& a : live) CHECK(a.kind == MemKind::Managed);
}

TEST_CASE("arena: of two threads freeing one block, exactly one wins", "[arena][threads]") {
  Arena arena(1, 0, MemKind::Device, 256 * kMiB);
  constexpr int kRounds = 2000;
  int wins[2] = {0, 0};
  for (int round = 0; round < kRounds; ++round) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(arena.allocate(request(kMiB)));
    std::atomic<int> go{0};
    bool won[2] = {false, false};
    auto racer = [&](int i) {
      go.fetch_add(1);
      while (go.load() < 2) {}
      Allocation gone;
      won[i] = arena.erase(b, ~0u, &gone);
    };
    std::thread t0(racer, 0), t1(racer, 1);
    t0.join();
    t1.join();
    REQUIRE(won[0] != won[1]);
    wins[0] += won[0];
    wins[1] += won[1];
    arena.deallocate(reinterpret_cast<void*>(b), kMiB);
  }
  CHECK(wins[0] + wins[1] == kRounds);
}
