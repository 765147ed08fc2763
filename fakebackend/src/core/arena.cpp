// SPDX-License-Identifier: Apache-2.0
#include "core/arena.h"

#include "common/calls.h"
#include "common/log.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/falloc.h>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace fg {

// ---- per-thread block caches ----------------------------------------------------------------
namespace {
constexpr size_t kRefill = 8;

// Anonymous memory for a side table: zero-filled, pages made on first touch.
void* map_table(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
size_t class_records_bytes(int cls) { return sizeof(BlockRecord) * (Arena::kChunk >> (cls + Arena::kMinClassShift)); }
}  // namespace

ThreadCaches::~ThreadCaches() {
  for (auto*& s : slots) {
    if (!s) continue;
    for (int c = 0; c < Arena::kClasses; ++c)
      if (s->count[c]) s->arena->flush_thread_cache(c, s->blocks[c], s->count[c]);
    delete s;
    s = nullptr;
  }
}

ThreadCaches::PerArena* ThreadCaches::create(Arena* a) {
  PerArena*& s = slots[a->id()];
  delete s;  // an arena re-created after fork reuses the id
  s = new (std::nothrow) PerArena;
  if (s) {
    s->arena = a;
    s->serial = a->serial_;
  }
  return s;
}

// Only pointers live in TLS: the library uses initial-exec TLS (the trampolines' counter
// pointer), which puts all of its TLS in the small static block a dlopen'ed library gets.
// The hot path reads a trivial pointer (a thread_local with a destructor is reached through
// a guard variable of the default TLS model: a __tls_get_addr call per use); the owner,
// which frees the caches at thread exit, is touched only when they are created.
// Frees can come after the thread's TLS destructors have run: NVIDIA's runtime releases
// its contexts from an atexit handler, after the main thread's thread_local objects are
// gone. The owner then clears the pointer and marks the thread, which hands out no cache:
// the block goes straight to its arena. (The mark is a separate trivial object: stores
// into a dying object's own members are dead to the compiler.)
FG_TLS constinit thread_local ThreadCaches* t_caches = nullptr;
namespace {
FG_TLS thread_local bool t_caches_gone = false;
struct ThreadCachesOwner {
  ~ThreadCachesOwner() {
    t_caches_gone = true;
    delete t_caches;
    t_caches = nullptr;
  }
};
FG_TLS thread_local ThreadCachesOwner t_caches_owner;

[[gnu::noinline]] ThreadCaches* create_thread_caches() {
  if (t_caches_gone) return nullptr;
  asm volatile("" ::"r"(&t_caches_owner));  // the first use registers its destructor
  t_caches = new ThreadCaches;
  return t_caches;
}
inline ThreadCaches* thread_caches() {
  ThreadCaches* c = t_caches;
  return c ? c : create_thread_caches();
}
}  // namespace

// ---- Arena -------------------------------------------------------------------------------------
namespace {
std::atomic<uint64_t> g_arena_serial{0};
}

Arena::Arena(int id, int device, MemKind kind, uint64_t capacity)
    : id_(id), device_(device), kind_(kind), serial_(g_arena_serial.fetch_add(1, std::memory_order_relaxed) + 1) {
  // Address space: capacity plus a quarter for size-class rounding and fragmentation, so
  // the ledger's byte count, not the address space, is what limits a device.
  uint64_t va = capacity + capacity / 4 + (64ull << 20);
  va = (va + kChunk - 1) / kChunk * kChunk;
  size_ = va;
  nchunks_ = static_cast<uint32_t>(va / kChunk);
  char name[48];
  std::snprintf(name, sizeof name, "fakegpu-%s-%d", to_string(kind), device);
  fd_ = ::memfd_create(name, MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("memfd_create failed: ") + std::strerror(errno));
  if (::ftruncate(fd_, static_cast<off_t>(va)) != 0) {
    int e = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("cannot size device memory file: ") + std::strerror(e));
  }
  void* p = ::mmap(nullptr, va, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("cannot reserve ") + std::to_string(va >> 20) +
                             " MiB of address space for fake device memory (" + std::strerror(e) +
                             "; check ulimit -v and vm.overcommit_memory)");
  }
  base_ = reinterpret_cast<uintptr_t>(p);
  // Side tables, one entry per chunk, touched only where chunks are used.
  chunk_info_ = static_cast<std::atomic<uint32_t>*>(map_table(sizeof(std::atomic<uint32_t>) * nchunks_));
  class_records_ = static_cast<std::atomic<BlockRecord*>*>(map_table(sizeof(std::atomic<BlockRecord*>) * nchunks_));
  head_records_ = static_cast<BlockRecord*>(map_table(sizeof(BlockRecord) * nchunks_));
  if (!chunk_info_ || !class_records_ || !head_records_) {
    unmap();
    throw std::runtime_error(std::string("cannot map the chunk tables: ") + std::strerror(ENOMEM));
  }
}

Arena::~Arena() {
  // This thread's cached blocks of this arena go with it (arenas live as long as the
  // process; tests destroy theirs on the thread that used them).
  if (t_caches) {
    ThreadCaches::PerArena*& s = t_caches->slots[id_];
    if (s && s->serial == serial_) {
      delete s;
      s = nullptr;
    }
  }
  unmap();
}

void Arena::unmap() noexcept {
  if (class_records_) {
    for (uint32_t c = 0; c < nchunks_; ++c)
      if (BlockRecord* r = class_records_[c].load(std::memory_order_relaxed))
        ::munmap(r, class_records_bytes(static_cast<int>(chunk_info_[c].load() & ~kTypeMask)));
    ::munmap(class_records_, sizeof(std::atomic<BlockRecord*>) * nchunks_);
  }
  if (head_records_) ::munmap(head_records_, sizeof(BlockRecord) * nchunks_);
  if (chunk_info_) ::munmap(chunk_info_, sizeof(std::atomic<uint32_t>) * nchunks_);
  if (base_) ::munmap(reinterpret_cast<void*>(base_), size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = 0;
  fd_ = -1;
  class_records_ = nullptr;
  head_records_ = nullptr;
  chunk_info_ = nullptr;
}

uint32_t Arena::take_chunks(uint32_t n) {
  // Best fit among freed runs, else fresh chunks.
  size_t best = free_runs_.size();
  for (size_t i = 0; i < free_runs_.size(); ++i)
    if (free_runs_[i].second >= n && (best == free_runs_.size() || free_runs_[i].second < free_runs_[best].second))
      best = i;
  if (best != free_runs_.size()) {
    auto [first, count] = free_runs_[best];
    if (count == n)
      free_runs_.erase(free_runs_.begin() + static_cast<long>(best));
    else
      free_runs_[best] = {first + n, count - n};
    return first;
  }
  if (nchunks_ - next_chunk_ < n) return UINT32_MAX;
  uint32_t first = next_chunk_;
  next_chunk_ += n;
  return first;
}

void Arena::give_chunks(uint32_t first, uint32_t n) {
  // Insert sorted and coalesce with neighbours; a run ending at next_chunk_ shrinks it.
  auto it = std::lower_bound(free_runs_.begin(), free_runs_.end(), std::make_pair(first, 0u));
  it = free_runs_.insert(it, {first, n});
  if (it + 1 != free_runs_.end() && it->first + it->second == (it + 1)->first) {
    it->second += (it + 1)->second;
    free_runs_.erase(it + 1);
  }
  if (it != free_runs_.begin() && (it - 1)->first + (it - 1)->second == it->first) {
    (it - 1)->second += it->second;
    it = free_runs_.erase(it) - 1;
  }
  if (it->first + it->second == next_chunk_) {
    next_chunk_ = it->first;
    free_runs_.erase(it);
  }
}

ThreadCaches::PerArena* Arena::cache_or_new() {
  if (ThreadCaches::PerArena* pa = my_cache()) return pa;
  ThreadCaches* caches = thread_caches();
  return caches ? caches->create(this) : nullptr;
}

size_t Arena::refill(int cls, uintptr_t* out, size_t n, size_t want) {
  const uint64_t bsize = 1ull << (cls + kMinClassShift);
  std::lock_guard lock(mu_);
  ClassState& cs = classes_[cls];
  while (n < want && !cs.free.empty()) {
    out[n++] = cs.free.back();
    cs.free.pop_back();
  }
  while (n < want) {
    if (cs.bump == cs.bump_end) {
      uint32_t c = take_chunks(1);
      if (c == UINT32_MAX) break;
      // A class chunk keeps its class for good: its records are made once, and published
      // before the chunk map names the class (lookups read the map first).
      void* r = map_table(class_records_bytes(cls));
      if (!r) {
        give_chunks(c, 1);
        break;
      }
      class_records_[c].store(static_cast<BlockRecord*>(r), std::memory_order_release);
      chunk_info_[c].store(kChunkSmall | static_cast<uint32_t>(cls), std::memory_order_release);
      cs.bump = base_ + c * kChunk;
      cs.bump_end = cs.bump + kChunk;
    }
    out[n++] = cs.bump;
    cs.bump += bsize;
  }
  return n;
}

void* Arena::allocate_slow(const Allocation& a) {
  uintptr_t b;
  BlockRecord* r;
  if (a.size <= (1ull << kMaxClassShift)) {
    const int cls = class_of(a.size);
    ThreadCaches::PerArena* pa = cache_or_new();
    if (pa) {
      uint32_t& n = pa->count[cls];
      if (n == 0 && (n = static_cast<uint32_t>(refill(cls, pa->blocks[cls], 0, kRefill))) == 0) return nullptr;
      b = pa->blocks[cls][--n];
    } else if (refill(cls, &b, 0, 1) == 0) {  // the thread's cache is gone (exit handlers)
      return nullptr;
    }
    const uint64_t off = b - base_;
    r = &class_records_[off / kChunk].load(std::memory_order_relaxed)[(off % kChunk) >> (cls + kMinClassShift)];
  } else {
    const uint64_t n64 = a.size / kChunk + (a.size % kChunk != 0);  // no wrap-around near 2^64
    if (n64 >= (1u << 30)) return nullptr;
    const uint32_t n = static_cast<uint32_t>(n64);
    std::lock_guard lock(mu_);
    uint32_t first = take_chunks(n);
    if (first == UINT32_MAX) return nullptr;
    for (uint32_t i = 1; i < n; ++i) chunk_info_[first + i].store(kChunkTail | i, std::memory_order_release);
    chunk_info_[first].store(kChunkHead | n, std::memory_order_release);
    b = base_ + first * kChunk;
    r = &head_records_[first];
  }
  r->publish(a);
  return reinterpret_cast<void*>(b);
}

std::optional<Allocation> Arena::find_base(uintptr_t p) const noexcept {
  uint64_t span = 0;
  const BlockRecord* r = record_of(p, &span);
  if (!r) return std::nullopt;
  const uint64_t st = r->state.load(std::memory_order_acquire);
  if (!(st & 1)) return std::nullopt;
  Allocation a;
  to_allocation(p, span, *r, &a);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (r->state.load(std::memory_order_relaxed) != st) return std::nullopt;  // freed meanwhile
  return a;
}

void Arena::live(std::vector<Allocation>& out) const {
  uint32_t end;
  {
    std::lock_guard lock(mu_);
    end = next_chunk_;
  }
  for (uint32_t c = 0; c < end; ++c) {
    const uint32_t info = chunk_info_[c].load(std::memory_order_acquire);
    const uintptr_t chunk_base = base_ + uint64_t{c} * kChunk;
    if ((info & kTypeMask) == kChunkHead) {
      if (auto a = find_base(chunk_base)) out.push_back(*a);
    } else if ((info & kTypeMask) == kChunkSmall) {
      const uint64_t bsize = 1ull << ((info & ~kTypeMask) + kMinClassShift);
      for (uintptr_t b = chunk_base; b < chunk_base + kChunk; b += bsize)
        if (auto a = find_base(b)) out.push_back(*a);
    }
  }
}

void Arena::deallocate_slow(void* p, uint64_t span) noexcept {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  if (span <= (1ull << kMaxClassShift)) {
    const int cls = class_of(span);
    ThreadCaches::PerArena* pa = cache_or_new();
    if (!pa) {
      flush_thread_cache(cls, &b, 1);
      return;
    }
    uint32_t& n = pa->count[cls];
    if (n == ThreadCaches::kCacheMax) {  // full: the older half goes back to the arena
      flush_thread_cache(cls, pa->blocks[cls], ThreadCaches::kCacheMax / 2);
      std::memmove(pa->blocks[cls], pa->blocks[cls] + ThreadCaches::kCacheMax / 2,
                   sizeof(uintptr_t) * (ThreadCaches::kCacheMax / 2));
      n = ThreadCaches::kCacheMax / 2;
    }
    pa->blocks[cls][n++] = b;
    return;
  }
  // Whole chunks: give the pages back (the memfd keeps its size; the hole reads as zeros).
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(b - base_),
                  static_cast<off_t>(span)) != 0)
    ::madvise(p, span, MADV_DONTNEED);
  const uint32_t first = static_cast<uint32_t>((b - base_) / kChunk);
  const uint32_t n = static_cast<uint32_t>(span / kChunk);
  std::lock_guard lock(mu_);
  for (uint32_t i = 0; i < n; ++i) chunk_info_[first + i].store(kChunkFree, std::memory_order_relaxed);
  try {
    give_chunks(first, n);
  } catch (...) {
    // Could not record the free run: those chunks stay unused (address space only).
  }
}

void Arena::flush_thread_cache(int cls, const uintptr_t* blocks, size_t n) noexcept {
  try {
    std::lock_guard lock(mu_);
    auto& gl = classes_[cls].free;
    gl.insert(gl.end(), blocks, blocks + n);
  } catch (...) {
    // Out of memory for the free list itself: those blocks are simply not reused.
  }
}

uintptr_t Arena::block_base(uintptr_t p) const noexcept {
  if (!contains(p)) return 0;
  const uint32_t c = static_cast<uint32_t>((p - base_) / kChunk);
  const uint32_t info = chunk_info_[c].load(std::memory_order_acquire);
  const uintptr_t chunk_base = base_ + c * kChunk;
  switch (info & kTypeMask) {
    case kChunkSmall: {
      const uint64_t bsize = 1ull << ((info & ~kTypeMask) + kMinClassShift);
      return chunk_base + (p - chunk_base) / bsize * bsize;
    }
    case kChunkHead: return chunk_base;
    case kChunkTail: return chunk_base - (info & ~kTypeMask) * kChunk;
    default: return 0;
  }
}

}  // namespace fg
