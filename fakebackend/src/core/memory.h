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
// Each block has a record beside it in its arena (what was asked for, by whom, in which
// context): allocation and free write and clear it without a lock or a hash, and a
// pointer, exact or interior, finds its block's record through the chunk map in O(1).
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

  // Takes a block of at least a.size bytes and makes it a live allocation with a's size,
  // ctx, api, flags and pool. Returns nullptr when the address space is exhausted (the
  // caller reports OOM).
  void* allocate(const Allocation& a);
  // Ends the allocation whose base is exactly p if its kind is in the bit mask `kinds`
  // (1 << MemKind) and returns its record; the block stays taken until deallocate().
  // Unknown, interior, already freed or of another kind: nullopt, nothing changes.
  std::optional<Allocation> erase(uintptr_t p, unsigned kinds = ~0u) noexcept;
  // Returns an erased allocation's block for reuse.
  void deallocate(void* p, uint64_t span) noexcept;
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

  // Returns thread-cached blocks to the arena (thread exit).
  void flush_thread_cache(int cls, const uintptr_t* blocks, size_t n) noexcept;

 private:
  friend struct ThreadCaches;
  uint32_t take_chunks(uint32_t n);           // under mu_; UINT32_MAX when none
  void give_chunks(uint32_t first, uint32_t n);
  // Fills out[n..want) with blocks of class cls; returns the new count.
  size_t refill(int cls, uintptr_t* out, size_t n, size_t want);
  // The record of the block that starts exactly at p, with its span; nullptr if none.
  BlockRecord* record_of(uintptr_t p, uint64_t* span) const noexcept;
  Allocation to_allocation(uintptr_t p, uint64_t span, const BlockRecord& r) const noexcept;
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

  std::mutex mu_;                         // chunk allocator + class free lists
  uint32_t next_chunk_ = 0;               // never-used chunks start here
  std::vector<std::pair<uint32_t, uint32_t>> free_runs_;  // (first, count), sorted by first
  struct ClassState {
    std::vector<uintptr_t> free;          // freed blocks
    uintptr_t bump = 0, bump_end = 0;     // carving the current chunk
  } classes_[kClasses];
};

}  // namespace fg
