// SPDX-License-Identifier: Apache-2.0
// Arenas: where fake device memory lives. Host memory reserved lazily per device, real bytes,
// unified addressing.
//
// Each (device, kind) has an Arena: one large address-space reservation backed by a memfd
// (MAP_SHARED | MAP_NORESERVE), so eight 80 GB devices cost nothing until touched, device
// pointers of different devices never overlap, and IPC handles can share the very bytes
// with another process. Blocks up to 2 MiB come from power-of-two size classes (512 B
// aligned, like the real allocator's >= 256 B) with per-thread caches; larger ones take
// whole 4 MiB chunks and give their pages back to the kernel when freed.
//
// Each block has a record beside it in its arena (what was asked for, by whom, in which
// context): allocation and free write and clear it without a lock or a hash, and a
// pointer, exact or interior, finds its block's record through the chunk map in O(1).
#pragma once
#include "common/calls.h"
#include "core/errors.h"
#include "core/ledger.h"
#include "core/memory.h"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace fg {

// What the arena keeps per block, beside the block's address, span, kind and device (which
// its position tells). Written by the thread that took the block, before it publishes it.
struct alignas(64) BlockRecord {  // one cache line: neighbouring blocks belong to other threads
  // Even while the block is free, odd while it is allocated; each allocation and each free
  // adds one, so a reader that sees the same value before and after copying the fields
  // copied one allocation's record, and exactly one of two racing frees wins.
  std::atomic<uint64_t> state{0};
  std::atomic<uint64_t> size{0};
  std::atomic<uint64_t> pool{0};
  std::atomic<Context*> ctx{nullptr};
  std::atomic<uint32_t> flags{0};
  std::atomic<uint8_t> api{0};

  // Makes the block a live allocation with a's size, pool, ctx, flags and api. The block
  // came through a lock or this thread's cache from the free that ended its last
  // allocation: the release fence orders these stores after that free for the readers
  // (find_base), which check the state on both sides of their copy.
  void publish(const Allocation& a) noexcept {
    std::atomic_thread_fence(std::memory_order_release);
    size.store(a.size, std::memory_order_relaxed);
    pool.store(a.pool, std::memory_order_relaxed);
    ctx.store(a.ctx, std::memory_order_relaxed);
    flags.store(a.flags, std::memory_order_relaxed);
    api.store(static_cast<uint8_t>(a.api), std::memory_order_relaxed);
    state.store(state.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
};

// A thread keeps up to kCacheMax freed blocks per (arena, class): allocation and free then
// touch no shared state beyond the ledger. The caches go back to their arenas when the
// thread exits.
class Arena;
struct ThreadCaches {
  static constexpr uint32_t kCacheMax = 32;
  static constexpr int kMaxArenas = 2 * ledger::kMaxDevices + 1;
  struct PerArena {
    Arena* arena = nullptr;
    uint64_t serial = 0;      // the arena's: a new arena may reuse a freed one's address
    uint32_t count[13] = {};  // Arena::kClasses
    uintptr_t blocks[13][kCacheMax];
  };
  PerArena* slots[kMaxArenas] = {};
  ~ThreadCaches();
  [[gnu::noinline]] PerArena* create(Arena* a);  // nullptr if no memory
};
// This thread's caches; nullptr until its first allocation.
FG_TLS extern constinit thread_local ThreadCaches* t_caches;

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

  // Takes a block of at least a.size bytes and makes it a live allocation with a's size,
  // ctx, api, flags and pool. Returns nullptr when the address space is exhausted (the
  // caller reports OOM). A block in this thread's cache is taken inline.
  inline void* allocate(const Allocation& a);
  // Ends the allocation whose base is exactly p if its kind is in the bit mask `kinds`
  // (1 << MemKind) and returns true with its record in *out; the block stays taken until
  // deallocate(). Unknown, interior, already freed or of another kind: false, nothing changes.
  // (Filled in place: a returned optional<Allocation> is copied through the stack in pieces
  // that the loads after them cannot forward, a stall per field on this hot path.)
  inline bool erase(uintptr_t p, unsigned kinds, Allocation* out) noexcept;
  // Returns an erased allocation's block for reuse (inline into this thread's cache).
  inline void deallocate(void* p, uint64_t span) noexcept;
  // The live allocation whose base is exactly p.
  std::optional<Allocation> find_base(uintptr_t p) const noexcept;
  // Base of the block containing p, or 0 if p is in no carved block.
  uintptr_t block_base(uintptr_t p) const noexcept;
  // Appends every live allocation.
  void live(std::vector<Allocation>& out) const;

  static constexpr uint64_t kChunk = 4ull << 20;
  static constexpr int kMinClassShift = 9;   // 512 B
  static constexpr int kMaxClassShift = 21;  // 2 MiB
  static constexpr int kClasses = kMaxClassShift - kMinClassShift + 1;
  static int class_of(uint64_t bytes) {
    return bytes <= (1ull << kMinClassShift) ? 0 : static_cast<int>(std::bit_width(bytes - 1)) - kMinClassShift;
  }

  // Returns thread-cached blocks to the arena (thread exit).
  void flush_thread_cache(int cls, const uintptr_t* blocks, size_t n) noexcept;

  // chunk_info encoding: type in the top two bits.
  static constexpr uint32_t kChunkFree = 0;
  static constexpr uint32_t kChunkSmall = 1u << 30;  // low bits: class
  static constexpr uint32_t kChunkHead = 2u << 30;   // low bits: run length in chunks
  static constexpr uint32_t kChunkTail = 3u << 30;   // low bits: distance back to the head
  static constexpr uint32_t kTypeMask = 3u << 30;

 private:
  friend struct ThreadCaches;
  uint32_t take_chunks(uint32_t n);  // under mu_; UINT32_MAX when none
  void give_chunks(uint32_t first, uint32_t n);
  // Fills out[n..want) with blocks of class cls; returns the new count.
  size_t refill(int cls, uintptr_t* out, size_t n, size_t want);
  void* allocate_slow(const Allocation& a);
  void deallocate_slow(void* p, uint64_t span) noexcept;
  ThreadCaches::PerArena* my_cache() const noexcept {  // this thread's, if it has one
    ThreadCaches* tc = t_caches;
    ThreadCaches::PerArena* pa = tc ? tc->slots[id_] : nullptr;
    return pa && pa->serial == serial_ ? pa : nullptr;
  }
  // This thread's cache, made on first use; nullptr once the thread's caches are gone (exit
  // handlers) or without memory for one.
  ThreadCaches::PerArena* cache_or_new();
  // The record of the block that starts exactly at p, with its span; nullptr if none.
  inline BlockRecord* record_of(uintptr_t p, uint64_t* span) const noexcept;
  inline void to_allocation(uintptr_t p, uint64_t span, const BlockRecord& r, Allocation* a) const noexcept;
  void unmap() noexcept;  // every mapping and the memfd (destructor, failed constructor)

  int id_;
  int device_;
  MemKind kind_;
  uint64_t serial_;  // unique per arena in this process
  int fd_ = -1;
  uintptr_t base_ = 0;
  uint64_t size_ = 0;
  uint32_t nchunks_ = 0;
  std::atomic<uint32_t>* chunk_info_ = nullptr;  // per chunk: type and class / run length
  // Records: a chunk of a size class points to one record per block (set once, when the
  // chunk is first carved: class chunks are never given back); the head chunk of a large
  // block uses its own entry of head_records_.
  std::atomic<BlockRecord*>* class_records_ = nullptr;
  BlockRecord* head_records_ = nullptr;

  mutable std::mutex mu_;                                 // chunk allocator + class free lists
  uint32_t next_chunk_ = 0;                               // never-used chunks start here
  std::vector<std::pair<uint32_t, uint32_t>> free_runs_;  // (first, count), sorted by first
  struct ClassState {
    std::vector<uintptr_t> free;       // freed blocks
    uintptr_t bump = 0, bump_end = 0;  // carving the current chunk
  } classes_[kClasses];
};

static_assert(Arena::kClasses == 13, "ThreadCaches::PerArena sizes its arrays by the class count");

[[gnu::always_inline]] inline void* Arena::allocate(const Allocation& a) {
  if (a.size <= (1ull << kMaxClassShift)) {
    if (ThreadCaches::PerArena* pa = my_cache()) {
      const int cls = class_of(a.size);
      if (uint32_t n = pa->count[cls]) {
        const uintptr_t b = pa->blocks[cls][--n];
        pa->count[cls] = n;
        const uint64_t off = b - base_;
        class_records_[off / kChunk].load(std::memory_order_relaxed)[(off % kChunk) >> (cls + kMinClassShift)].publish(
            a);
        return reinterpret_cast<void*>(b);
      }
    }
  }
  return allocate_slow(a);
}

[[gnu::always_inline]] inline void Arena::deallocate(void* p, uint64_t span) noexcept {
  if (span <= (1ull << kMaxClassShift)) {
    if (ThreadCaches::PerArena* pa = my_cache()) {
      const int cls = std::countr_zero(span) - kMinClassShift;  // spans of classes are powers of two
      if (const uint32_t n = pa->count[cls]; n < ThreadCaches::kCacheMax) {
        pa->blocks[cls][n] = reinterpret_cast<uintptr_t>(p);
        pa->count[cls] = n + 1;
        return;
      }
    }
  }
  deallocate_slow(p, span);
}

[[gnu::always_inline]] inline BlockRecord* Arena::record_of(uintptr_t p, uint64_t* span) const noexcept {
  if (!contains(p)) return nullptr;
  const uint64_t off = p - base_;
  const uint64_t c = off / kChunk;
  const uint32_t info = chunk_info_[c].load(std::memory_order_acquire);
  switch (info & kTypeMask) {
    case kChunkSmall: {
      const int shift = static_cast<int>(info & ~kTypeMask) + kMinClassShift;
      const uint64_t in = off % kChunk;
      if (in & ((1ull << shift) - 1)) return nullptr;  // interior
      *span = 1ull << shift;
      return &class_records_[c].load(std::memory_order_acquire)[in >> shift];
    }
    case kChunkHead:
      if (off % kChunk) return nullptr;
      *span = (info & ~kTypeMask) * kChunk;
      return &head_records_[c];
    default: return nullptr;
  }
}

[[gnu::always_inline]] inline void Arena::to_allocation(uintptr_t p, uint64_t span, const BlockRecord& r,
                                                        Allocation* a) const noexcept {
  a->base = p;
  a->size = r.size.load(std::memory_order_relaxed);
  a->span = span;
  a->device = device_;
  a->kind = kind_;
  a->api = static_cast<ApiOrigin>(r.api.load(std::memory_order_relaxed));
  a->flags = r.flags.load(std::memory_order_relaxed);
  a->ctx = r.ctx.load(std::memory_order_relaxed);
  a->arena = const_cast<Arena*>(this);
  a->pool = r.pool.load(std::memory_order_relaxed);
}

[[gnu::always_inline]] inline bool Arena::erase(uintptr_t p, unsigned kinds, Allocation* out) noexcept {
  if (!(kinds & (1u << static_cast<unsigned>(kind_)))) return false;
  uint64_t span = 0;
  BlockRecord* r = record_of(p, &span);
  if (!r) return false;
  uint64_t st = r->state.load(std::memory_order_acquire);
  if (!(st & 1)) return false;
  // The fields cannot change while the state stays st: winning the exchange proves the copy.
  to_allocation(p, span, *r, out);
  return r->state.compare_exchange_strong(st, st + 1, std::memory_order_acq_rel);
}

}  // namespace fg
