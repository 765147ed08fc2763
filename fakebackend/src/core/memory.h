// SPDX-License-Identifier: Apache-2.0
// Fake device memory: host memory reserved lazily per device, real bytes, unified addressing.
//
// Each (device, kind) has an Arena: one large address-space reservation backed by a memfd
// (MAP_SHARED | MAP_NORESERVE), so eight 80 GB devices cost nothing until touched, device
// pointers of different devices never overlap, and IPC handles can share the very bytes
// with another process. Blocks up to 2 MiB come from power-of-two size classes (512 B
// aligned, like the real allocator's >= 256 B) with per-thread caches; larger ones take
// whole 4 MiB chunks and give their pages back to the kernel when freed.
//
// The AllocTable maps every live allocation's base to its record; interior pointers are
// resolved through the arena's chunk map (O(1)).
#pragma once
#include "core/errors.h"
#include "core/ledger.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace fg {

struct Context;

// What a pointer is. Device/Managed/Host are booked in the ledger under the same kind.
enum class MemKind : uint8_t {
  Device = 0,     // cudaMalloc, cuMemAlloc, pitch, async/pool
  Managed = 1,    // cudaMallocManaged, cuMemAllocManaged, __managed__ variables
  Host = 2,       // pinned host: cudaMallocHost/HostAlloc, cuMemAllocHost/HostAlloc
  Registered = 3, // cudaHostRegister'd user memory (not booked)
  Vmm = 4,        // a cuMemMap'd range (booked by cuMemCreate)
  IpcMapped = 5,  // another process's allocation opened through an IPC handle (not booked)
};
const char* to_string(MemKind k) noexcept;

enum class ApiOrigin : uint8_t { Runtime = 0, Driver = 1, Internal = 2 };

struct Allocation {
  uintptr_t base = 0;
  uint64_t size = 0;        // requested bytes: what is booked and reported
  uint64_t span = 0;        // bytes taken from the arena (size class / whole chunks)
  int device = -1;          // visible ordinal; -1 for host memory not tied to a device
  MemKind kind = MemKind::Device;
  ApiOrigin api = ApiOrigin::Runtime;
  uint32_t flags = 0;       // host-alloc / register / attach flags as given
  Context* ctx = nullptr;   // owning context: destroying it frees the allocation
  class Arena* arena = nullptr;
  uint64_t pool = 0;        // memory pool id for async allocations (0 = none)
};

class Arena {
 public:
  // `id` indexes per-thread caches; `device` is -1 for the host arena.
  Arena(int id, int device, MemKind kind, uint64_t capacity);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  int id() const { return id_; }
  int device() const { return device_; }
  MemKind kind() const { return kind_; }
  uintptr_t begin() const { return base_; }
  uintptr_t end() const { return base_ + size_; }
  bool contains(uintptr_t p) const { return p >= base_ && p < base_ + size_; }
  int memfd() const { return fd_; }

  // Returns nullptr when the address space is exhausted (the caller reports OOM).
  void* allocate(uint64_t bytes, uint64_t* span);
  void deallocate(void* p, uint64_t span) noexcept;
  // Base of the block containing p, or 0 if p is in no carved block.
  uintptr_t block_base(uintptr_t p) const noexcept;

  static constexpr uint64_t kChunk = 4ull << 20;
  static constexpr int kMinClassShift = 9;   // 512 B
  static constexpr int kMaxClassShift = 21;  // 2 MiB
  static constexpr int kClasses = kMaxClassShift - kMinClassShift + 1;

  // Returns thread-cached blocks to the arena (thread exit).
  void flush_thread_cache(int cls, std::vector<uintptr_t>& blocks) noexcept;

 private:
  friend struct ThreadCaches;
  uint32_t take_chunks(uint32_t n);           // under mu_; UINT32_MAX when none
  void give_chunks(uint32_t first, uint32_t n);
  bool refill(int cls, std::vector<uintptr_t>& out, size_t want);

  int id_;
  int device_;
  MemKind kind_;
  int fd_ = -1;
  uintptr_t base_ = 0;
  uint64_t size_ = 0;
  uint32_t nchunks_ = 0;
  std::atomic<uint32_t>* chunk_info_ = nullptr;  // per chunk: type and class / run length

  std::mutex mu_;                         // chunk allocator + class free lists
  uint32_t next_chunk_ = 0;               // never-used chunks start here
  std::vector<std::pair<uint32_t, uint32_t>> free_runs_;  // (first, count), sorted by first
  struct ClassState {
    std::vector<uintptr_t> free;          // freed blocks
    uintptr_t bump = 0, bump_end = 0;     // carving the current chunk
  } classes_[kClasses];
};

// Registry of live allocations, sharded for concurrency.
class AllocTable {
 public:
  void insert(const Allocation& a);
  // Removes and returns the allocation whose base is exactly p and whose kind is in the
  // bit mask `kinds` (1 << MemKind); otherwise changes nothing.
  std::optional<Allocation> erase(uintptr_t p, unsigned kinds = ~0u);
  std::optional<Allocation> find_base(uintptr_t p) const;
  std::vector<Allocation> snapshot() const;
  void clear() noexcept;  // forgets every entry (forked child)
  size_t size() const;

 private:
  static constexpr int kShards = 256;
  struct Entry {
    uintptr_t key = 0;  // 0 = empty, 1 = tombstone
    Allocation a;
  };
  // A short critical section (one probe sequence): a spinlock costs one atomic exchange
  // where a mutex costs two read-modify-writes.
  struct SpinLock {
    std::atomic<bool> held{false};
    void lock() noexcept {
      while (held.exchange(true, std::memory_order_acquire))
        while (held.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
    void unlock() noexcept { held.store(false, std::memory_order_release); }
  };
  struct alignas(64) Shard {
    mutable SpinLock mu;
    std::vector<Entry> slots;
    size_t used = 0, tombs = 0;
  };
  // Block addresses are aligned (512 B .. 4 MiB) and regular, and a plain multiplicative
  // hash of them collided systematically (two threads' 1 MiB blocks on one shard, every
  // run): a full 64-bit finalizer (splitmix64) spreads every bit.
  static uint64_t mix(uintptr_t p) {
    uint64_t z = p >> 9;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // One mix per operation: its top 8 bits pick the shard (kShards = 256), its low bits the
  // slot within the shard.
  static size_t shard_of_mix(uint64_t h) { return h >> 56; }
  static size_t hash(uintptr_t p) { return mix(p); }
  void grow(Shard& s);
  Shard shards_[kShards];
};

}  // namespace fg
