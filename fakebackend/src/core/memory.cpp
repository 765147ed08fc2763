// SPDX-License-Identifier: Apache-2.0
#include "core/memory.h"

#include "common/calls.h"
#include "common/log.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

namespace fg {

const char* to_string(MemKind k) noexcept {
  switch (k) {
    case MemKind::Device: return "device";
    case MemKind::Managed: return "managed";
    case MemKind::Host: return "host";
    case MemKind::Registered: return "registered";
    case MemKind::Vmm: return "vmm";
    case MemKind::IpcMapped: return "ipc";
  }
  return "?";
}

// ---- per-thread block caches ----------------------------------------------------------------
// A thread keeps up to kCacheMax freed blocks per (arena, class); alloc/free then touch no
// shared state beyond the ledger. Caches go back to their arenas when the thread exits.
namespace {
constexpr size_t kCacheMax = 32;
constexpr size_t kRefill = 8;
constexpr int kMaxArenas = 2 * ledger::kMaxDevices + 1;

// chunk_info encoding: type in the top two bits.
constexpr uint32_t kChunkFree = 0;
constexpr uint32_t kChunkSmall = 1u << 30;  // low bits: class
constexpr uint32_t kChunkHead = 2u << 30;   // low bits: run length in chunks
constexpr uint32_t kChunkTail = 3u << 30;   // low bits: distance back to the head
constexpr uint32_t kTypeMask = 3u << 30;

int class_of(uint64_t bytes) {
  if (bytes <= (1ull << Arena::kMinClassShift)) return 0;
  return static_cast<int>(std::bit_width(bytes - 1)) - Arena::kMinClassShift;
}
}  // namespace

struct ThreadCaches {
  struct PerArena {
    Arena* arena = nullptr;
    std::vector<uintptr_t> blocks[Arena::kClasses];
  };
  PerArena* slots[kMaxArenas] = {};
  ~ThreadCaches() {
    for (auto*& s : slots) {
      if (!s) continue;
      for (int c = 0; c < Arena::kClasses; ++c)
        if (!s->blocks[c].empty()) s->arena->flush_thread_cache(c, s->blocks[c]);
      delete s;
      s = nullptr;
    }
  }
  std::vector<uintptr_t>& of(Arena* a, int cls) {
    PerArena*& s = slots[a->id()];
    if (!s || s->arena != a) {
      delete s;  // an arena re-created after fork reuses the id
      s = new PerArena;
      s->arena = a;
      for (auto& v : s->blocks) v.reserve(kCacheMax);
    }
    return s->blocks[cls];
  }
};
namespace {
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
FG_TLS thread_local ThreadCaches* t_caches = nullptr;
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
}

// ---- Arena -------------------------------------------------------------------------------------
Arena::Arena(int id, int device, MemKind kind, uint64_t capacity) : id_(id), device_(device), kind_(kind) {
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
  void* ci = ::mmap(nullptr, sizeof(std::atomic<uint32_t>) * nchunks_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (ci == MAP_FAILED) {
    ::munmap(p, va);
    ::close(fd_);
    throw std::runtime_error("cannot map the chunk table");
  }
  chunk_info_ = static_cast<std::atomic<uint32_t>*>(ci);
}

Arena::~Arena() {
  if (base_) ::munmap(reinterpret_cast<void*>(base_), size_);
  if (chunk_info_) ::munmap(chunk_info_, sizeof(std::atomic<uint32_t>) * nchunks_);
  if (fd_ >= 0) ::close(fd_);
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

bool Arena::refill(int cls, std::vector<uintptr_t>& out, size_t want) {
  const uint64_t bsize = 1ull << (cls + kMinClassShift);
  std::lock_guard lock(mu_);
  ClassState& cs = classes_[cls];
  while (out.size() < want && !cs.free.empty()) {
    out.push_back(cs.free.back());
    cs.free.pop_back();
  }
  while (out.size() < want) {
    if (cs.bump == cs.bump_end) {
      uint32_t c = take_chunks(1);
      if (c == UINT32_MAX) break;
      chunk_info_[c].store(kChunkSmall | static_cast<uint32_t>(cls), std::memory_order_release);
      cs.bump = base_ + c * kChunk;
      cs.bump_end = cs.bump + kChunk;
    }
    out.push_back(cs.bump);
    cs.bump += bsize;
  }
  return !out.empty();
}

void* Arena::allocate(uint64_t bytes, uint64_t* span) {
  if (bytes <= (1ull << kMaxClassShift)) {
    const int cls = class_of(bytes);
    std::vector<uintptr_t> one;  // the thread's cache is gone (exit handlers): one block
    ThreadCaches* caches = thread_caches();
    auto& cache = caches ? caches->of(this, cls) : one;
    if (cache.empty() && !refill(cls, cache, caches ? kRefill : 1)) return nullptr;
    uintptr_t b = cache.back();
    cache.pop_back();
    *span = 1ull << (cls + kMinClassShift);
    return reinterpret_cast<void*>(b);
  }
  const uint64_t n64 = (bytes + kChunk - 1) / kChunk;
  if (n64 >= (1u << 30)) return nullptr;
  const uint32_t n = static_cast<uint32_t>(n64);
  std::lock_guard lock(mu_);
  uint32_t first = take_chunks(n);
  if (first == UINT32_MAX) return nullptr;
  chunk_info_[first].store(kChunkHead | n, std::memory_order_release);
  for (uint32_t i = 1; i < n; ++i) chunk_info_[first + i].store(kChunkTail | i, std::memory_order_release);
  *span = n64 * kChunk;
  return reinterpret_cast<void*>(base_ + first * kChunk);
}

void Arena::deallocate(void* p, uint64_t span) noexcept {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  if (span <= (1ull << kMaxClassShift)) {
    const int cls = class_of(span);
    try {
      ThreadCaches* caches = thread_caches();
      if (!caches) {
        std::lock_guard lock(mu_);
        classes_[cls].free.push_back(b);
        return;
      }
      auto& cache = caches->of(this, cls);
      cache.push_back(b);
      if (cache.size() > kCacheMax) {
        std::lock_guard lock(mu_);
        auto& gl = classes_[cls].free;
        gl.insert(gl.end(), cache.end() - kCacheMax / 2, cache.end());
        cache.resize(cache.size() - kCacheMax / 2);
      }
    } catch (...) {
      // Out of memory for the cache itself: the block is simply not reused.
    }
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

void Arena::flush_thread_cache(int cls, std::vector<uintptr_t>& blocks) noexcept {
  try {
    std::lock_guard lock(mu_);
    auto& gl = classes_[cls].free;
    gl.insert(gl.end(), blocks.begin(), blocks.end());
  } catch (...) {
  }
  blocks.clear();
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

// ---- AllocTable --------------------------------------------------------------------------------
void AllocTable::grow(Shard& s) {
  std::vector<Entry> old = std::move(s.slots);
  const size_t cap = old.empty() ? 64 : (s.used * 4 > old.size() ? old.size() * 2 : old.size());
  s.slots.assign(cap, Entry{});
  s.used = 0;
  s.tombs = 0;
  for (auto& e : old) {
    if (e.key <= 1) continue;
    size_t i = hash(e.key) & (cap - 1);
    while (s.slots[i].key != 0) i = (i + 1) & (cap - 1);
    s.slots[i] = e;
    ++s.used;
  }
}

void AllocTable::insert(const Allocation& a) {
  const uint64_t h = mix(a.base);
  Shard& s = shards_[shard_of_mix(h)];
  std::lock_guard lock(s.mu);
  if ((s.used + s.tombs + 1) * 2 > s.slots.size()) grow(s);
  const size_t mask = s.slots.size() - 1;
  size_t i = h & mask;
  while (s.slots[i].key > 1) i = (i + 1) & mask;
  if (s.slots[i].key == 1) --s.tombs;
  s.slots[i].key = a.base;
  s.slots[i].a = a;
  ++s.used;
}

std::optional<Allocation> AllocTable::erase(uintptr_t p, unsigned kinds) {
  if (p <= 1) return std::nullopt;
  const uint64_t h = mix(p);
  Shard& s = shards_[shard_of_mix(h)];
  std::lock_guard lock(s.mu);
  if (s.slots.empty()) return std::nullopt;
  const size_t mask = s.slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (s.slots[i].key == 0) return std::nullopt;
    if (s.slots[i].key == p) {
      if (!(kinds & (1u << static_cast<unsigned>(s.slots[i].a.kind)))) return std::nullopt;
      Allocation a = s.slots[i].a;
      s.slots[i].key = 1;
      --s.used;
      ++s.tombs;
      return a;
    }
  }
}

std::optional<Allocation> AllocTable::find_base(uintptr_t p) const {
  if (p <= 1) return std::nullopt;
  const uint64_t h = mix(p);
  const Shard& s = shards_[shard_of_mix(h)];
  std::lock_guard lock(s.mu);
  if (s.slots.empty()) return std::nullopt;
  const size_t mask = s.slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (s.slots[i].key == 0) return std::nullopt;
    if (s.slots[i].key == p) return s.slots[i].a;
  }
}

std::vector<Allocation> AllocTable::snapshot() const {
  std::vector<Allocation> out;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (const Entry& e : s.slots)
      if (e.key > 1) out.push_back(e.a);
  }
  return out;
}

void AllocTable::clear() noexcept {
  for (Shard& s : shards_) {
    s.mu.unlock();  // a parent thread may have held it at fork time
    for (Entry& e : s.slots) e.key = 0;
    s.used = 0;
    s.tombs = 0;
  }
}

size_t AllocTable::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.used;
  }
  return n;
}

}  // namespace fg
