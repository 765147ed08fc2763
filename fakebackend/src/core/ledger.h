// SPDX-License-Identifier: Apache-2.0
// The host-wide device ledger: this process's side of the shared segment whose format
// fakegpu/ledger_format.h defines (attach or create it, register devices, book and release
// bytes, reclaim dead processes' slots).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "fakegpu/ledger_format.h"

namespace fg::ledger {

struct ProcessUsage {
  int pid;
  std::string comm;
  uint64_t used[kKinds];  // for one device
};

class Ledger {
 public:
  // Attaches to (creating if needed) the ledger at `path`, or a private one if `isolated`.
  // Throws FatalError with a message naming the problem and the fix.
  Ledger(const std::string& path, bool isolated);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const std::string& path() const { return path_; }

  // Finds or adds the device with this uuid; returns its ledger index. Throws on a
  // conflicting capacity for the same uuid or a full device table.
  // `ordinal` is the device's index inside this process (-1: registered for NVML only).
  uint32_t register_device(const uint8_t uuid[16], uint64_t total, const std::string& name, int ordinal = -1);

  // Books `bytes` of `kind` on ledger device `dev` for this process. Device and managed
  // bytes count against capacity: returns false (nothing booked) only when they do not fit
  // beside what every process holds. If the booking may lift this process's device +
  // managed bytes above `peak`, *high gets that total (else 0).
  // The common case (device or managed bytes within this shard's quota, no new high, the
  // peak out of reach) runs inline; everything else in reserve_slow().
  bool reserve(uint32_t dev, Kind kind, uint64_t bytes, uint64_t peak = UINT64_MAX, uint64_t* high = nullptr) noexcept;
  void release(uint32_t dev, Kind kind, uint64_t bytes) noexcept;
  // What this process holds of `kind` on ledger device `dev` (exact).
  uint64_t mine(uint32_t dev, Kind kind) const noexcept;

  uint64_t used(uint32_t dev) const noexcept;  // device + managed, all live processes (exact)
  uint64_t total(uint32_t dev) const noexcept;

  // Reclaims the slots of processes that died without cleaning up; returns how many.
  int reap_dead() noexcept;
  // Live processes holding anything (or registered) on ledger device `dev`.
  std::vector<ProcessUsage> processes(uint32_t dev);

  // Returns everything this process booked and frees its slot (clean exit).
  void release_process() noexcept;
  // Gives a forked child its own slot (it holds nothing) on the parent's devices.
  void after_fork_child() noexcept;

 private:
  bool reserve_slow(uint32_t dev, Kind kind, uint64_t bytes, uint64_t peak, uint64_t* high) noexcept;
  void release_slow(uint32_t dev, Kind kind, uint64_t bytes) noexcept;
  // This thread's shard with its lock held, or nullptr (no slot or shard yet, or the lock
  // is taken: the slow paths wait for it).
  Shard* try_lock_my_shard() noexcept;
  void claim_slot();
  bool referenced(uint32_t dev, int except_slot) const noexcept;
  int collect_unused() noexcept;  // frees device entries no live process uses
  bool wait_not_busy(std::atomic<uint64_t>& state, uint64_t* w) noexcept;
  void mark_device(uint32_t dev, int ordinal) noexcept;
  inline Shard& my_shard() noexcept;
  bool take(uint32_t dev, uint64_t n) noexcept;  // quota from the device counter
  bool take_exact(uint32_t dev, uint64_t n, uint64_t bytes, const Shard* mine) noexcept;  // at capacity
  uint64_t slot_used(const ProcSlot& s, uint32_t dev) const noexcept;                     // device + managed
  void empty_slot(ProcSlot& s) noexcept;  // returns its quotas, zeroes its books
  void init_header() noexcept;
  void attach_shared();
  int create_published(unsigned mode);  // fd of the new ledger, or -2 if another process won
  void map_and_validate(int fd);
  ProcSlot& slot() noexcept;

  std::string path_;
  bool isolated_ = false;
  void* base_ = nullptr;
  size_t size_ = 0;
  Header* hdr_ = nullptr;
  DeviceEntry* devs_ = nullptr;
  ProcSlot* procs_ = nullptr;
  std::atomic<int> slot_{-1};
  // Peak checks (reserve()). highs_sum_: Σ of this process's shards' `high`, per device; it
  // bounds what the other shards can hold now and is written only when a shard reaches a new
  // high, so a steady alloc/free loop never writes it. peek_: per shard (used under its
  // lock), what the other shards held at its last look, and how many checks to wait before
  // the next look that the bound alone asks for (doubling while looks find nothing new).
  std::atomic<uint64_t> highs_sum_[kMaxDevices] = {};
  struct alignas(64) Peek {
    uint64_t others_seen[kMaxDevices];
    uint16_t wait[kMaxDevices];
    uint16_t backoff[kMaxDevices];
  };
  Peek peek_[kShards] = {};
  std::vector<std::pair<uint32_t, int>> my_devices_;  // entries this process registered, with ordinals
};

// The shard of this thread's process slot its books go to (thread i: i % kShards), -1 until
// its first booking. An int in initial-exec TLS: the library's TLS must stay tiny.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local int t_shard;

[[gnu::always_inline]] inline Shard* Ledger::try_lock_my_shard() noexcept {
  const int i = slot_.load(std::memory_order_acquire), k = t_shard;
  if (i < 0 || k < 0) return nullptr;
  Shard& sh = procs_[i].shards[k];
  return sh.lock.exchange(1, std::memory_order_acquire) ? nullptr : &sh;
}

[[gnu::always_inline]] inline bool Ledger::reserve(uint32_t dev, Kind kind, uint64_t bytes, uint64_t peak,
                                                   uint64_t* high) noexcept {
  if (kind == kHost) return reserve_slow(dev, kind, bytes, peak, high);
  Shard* sh = try_lock_my_shard();
  if (!sh) return reserve_slow(dev, kind, bytes, peak, high);
  const uint64_t now = sh->used[dev][kind].load(std::memory_order_relaxed) + bytes;
  const uint64_t total = now + sh->used[dev][kind ^ 1].load(std::memory_order_relaxed);  // device + managed
  // Within quota, below this shard's high, and the others' highs cannot lift the process
  // past the peak (reserve_slow() explains the bound).
  const uint64_t mine_high = sh->high[dev];
  if (total > sh->quota[dev].load(std::memory_order_relaxed) || total > mine_high ||
      total + (highs_sum_[dev].load(std::memory_order_relaxed) - mine_high) > peak) {
    sh->lock.store(0, std::memory_order_release);
    return reserve_slow(dev, kind, bytes, peak, high);
  }
  sh->used[dev][kind].store(now, std::memory_order_relaxed);
  sh->lock.store(0, std::memory_order_release);
  if (high) *high = 0;
  return true;
}

[[gnu::always_inline]] inline void Ledger::release(uint32_t dev, Kind kind, uint64_t bytes) noexcept {
  Shard* sh = kind == kHost ? nullptr : try_lock_my_shard();
  if (!sh) return release_slow(dev, kind, bytes);
  const uint64_t now = sh->used[dev][kind].load(std::memory_order_relaxed) - bytes;
  // A shard keeps at most two chunks it does not use (release_slow() gives back the rest).
  if (sh->quota[dev].load(std::memory_order_relaxed) >
      now + sh->used[dev][kind ^ 1].load(std::memory_order_relaxed) + 2 * kQuotaChunk) {
    sh->lock.store(0, std::memory_order_release);
    return release_slow(dev, kind, bytes);
  }
  sh->used[dev][kind].store(now, std::memory_order_relaxed);
  sh->lock.store(0, std::memory_order_release);
}

// Default path: $FAKEGPU_LEDGER, else /dev/shm/fakegpu-<uid>.v<kVersion>.ledger.
std::string default_path();

}  // namespace fg::ledger
