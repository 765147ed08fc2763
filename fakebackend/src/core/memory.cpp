// SPDX-License-Identifier: Apache-2.0
// Memory: allocation and free (booked in the ledger, announced to the observer), pointer
// lookup, registered host memory, the range rule, copies and sets, and what is free.
#include "core/backend.h"

#include "common/calls.h"
#include "common/log.h"
#include "core/usdt.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace fg {

void Backend::publish_arena(Arena* a) {  // under arena_mu_
  const size_t n = arena_count_.load(std::memory_order_relaxed);
  arena_list_[n].store(a, std::memory_order_relaxed);
  arena_count_.store(n + 1, std::memory_order_release);
}

Arena* Backend::create_arena(Device* dev, MemKind kind) {
  const int k = kind == MemKind::Managed ? 1 : 0;
  std::lock_guard lock(arena_mu_);
  Arena* a = dev->arenas[k].load(std::memory_order_relaxed);
  if (a) return a;
  try {
    a = new Arena(dev->ordinal * 2 + k + 1, dev->ordinal, kind, dev->model.total_memory);
  } catch (const std::exception& e) {
    FG_LOG(Error, Core, "device %d: %s", dev->ordinal, e.what());
    return nullptr;
  }
  publish_arena(a);
  dev->arenas[k].store(a, std::memory_order_release);
  return a;
}

std::vector<std::pair<uintptr_t, uint64_t>> Backend::live_ranges() {
  std::vector<std::pair<uintptr_t, uint64_t>> out;
  for (const Allocation& a : live_allocations()) out.emplace_back(a.base, a.size);
  std::lock_guard lock(mu_);
  for (const auto& [base, a] : registered_) out.emplace_back(base, a.size);
  return out;
}

std::vector<Allocation> Backend::live_allocations() const {
  std::vector<Allocation> out;
  const size_t n = arena_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) arena_list_[i].load(std::memory_order_relaxed)->live(out);
  return out;
}

Arena* Backend::host_arena() {
  Arena* a = host_arena_.load(std::memory_order_acquire);
  if (a) return a;
  std::lock_guard lock(arena_mu_);
  a = host_arena_.load(std::memory_order_relaxed);
  if (a) return a;
  try {
    // Pinned host memory is bounded by the host, not by a device: reserve generously.
    a = new Arena(0, -1, MemKind::Host, 1ull << 40);
  } catch (const std::exception& e) {
    FG_LOG(Error, Core, "pinned host memory: %s", e.what());
    return nullptr;
  }
  publish_arena(a);
  host_arena_.store(a, std::memory_order_release);
  return a;
}

void Backend::raise_peak(Device* dev, uint64_t peak, uint64_t high) noexcept {
  while (high > peak && !dev->peak.compare_exchange_weak(peak, high, std::memory_order_relaxed)) {}
}

uint64_t Backend::held(const Device* dev) const noexcept {
  return ledger_->mine(dev->ledger_index, ledger::kDevice) + ledger_->mine(dev->ledger_index, ledger::kManaged);
}

Status Backend::mem_alloc(Context* ctx, MemKind kind, uint64_t size, ApiOrigin api, uint32_t flags, void** out,
                          uint64_t pool) {
  if (!out || size == 0) return Status::InvalidValue;
  // After a kernel's failure the context is unusable, as on a GPU: its sticky error.
  if (Status st = sticky_fault(ctx); st != Status::Ok) return st;
  calls::attach_thread();
  Device* dev = ctx ? ctx->dev : nullptr;
  const bool on_device = kind == MemKind::Device || kind == MemKind::Managed;
  if (on_device && !dev) return Status::InvalidContext;
  const int ord = on_device ? dev->ordinal : -1;
  // Host allocations are booked under the current device's ledger row (kind host) so that
  // per-process pinned usage is visible; they never count against capacity.
  Device* book_dev = dev ? dev : device(0);
  if (!book_reserve(book_dev, kind, size)) {
    FG_USDT_ALLOC(ord, 0, size, static_cast<int>(kind), kUsdtOutOfMemory, static_cast<int>(api));
    return Status::OutOfMemory;
  }
  Allocation a;
  a.size = size;
  a.api = api;
  a.flags = flags;
  a.ctx = on_device ? ctx : nullptr;
  a.pool = pool;
  Arena* ar = on_device ? arena(dev, kind) : host_arena();
  void* p = ar ? ar->allocate(a) : nullptr;
  if (!p) {
    book_release(book_dev, kind, size);
    FG_USDT_ALLOC(ord, 0, size, static_cast<int>(kind), kUsdtOutOfMemory, static_cast<int>(api));
    return Status::OutOfMemory;
  }
  if (pool) pool_note(pool, static_cast<int64_t>(size));
  FG_USDT_ALLOC(ord, reinterpret_cast<uintptr_t>(p), size, static_cast<int>(kind), 0, static_cast<int>(api));
  *out = p;
  return Status::Ok;
}

Status Backend::mem_free(void* p, unsigned kinds, ApiOrigin api, bool ordered) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  Arena* owner = arena_of(b);
  if (owner && !ordered && queued_work_.load(std::memory_order_acquire) != 0) {
    if (auto a = owner->find_base(b); a && a->ctx && ctx_valid(a->ctx)) ctx_sync(a->ctx);
  }
  Allocation gone;
  if (!owner || !owner->erase(b, kinds, &gone)) {  // unknown, interior, already freed or of another kind
    FG_USDT_FREE(-1, b, 0, -1, kUsdtInvalidValue, static_cast<int>(api));
    return Status::InvalidPointer;
  }
  give_back(gone);
  if (!announced_at_exit(b))
    FG_USDT_FREE(gone.device, b, gone.size, static_cast<int>(gone.kind), 0, static_cast<int>(api));
  return Status::Ok;
}

bool Backend::forget_announced(uintptr_t base) noexcept {
  std::lock_guard lock(exit_mu_);
  return exit_announced_.erase(base) != 0;
}

std::optional<Allocation> Backend::mem_find(const void* p) noexcept {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (!u) return std::nullopt;
  try {
    if (Arena* owner = arena_of(u)) {
      uintptr_t base = owner->block_base(u);
      if (!base) return std::nullopt;
      auto a = owner->find_base(base);
      if (a && u < a->base + a->size) return a;
      return std::nullopt;
    }
    {
      std::lock_guard lock(mu_);
      auto it = registered_.upper_bound(u);
      if (it != registered_.begin()) {
        --it;
        if (u < it->second.base + it->second.size) return it->second;
      }
    }
    if (auto find = range_find_.load(std::memory_order_acquire)) {
      Allocation a;
      if (find(p, &a)) return a;
    }
  } catch (...) {}
  return std::nullopt;
}

Status Backend::host_register(void* p, size_t size, unsigned flags) {
  if (!p || size == 0 || !user_range(reinterpret_cast<uintptr_t>(p), size)) return Status::InvalidValue;
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(mu_);
  auto it = registered_.lower_bound(b);
  if (it != registered_.end() && it->first < b + size) return Status::AlreadyMapped;
  if (it != registered_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.base + prev->second.size > b) return Status::AlreadyMapped;
  }
  Allocation a;
  a.base = b;
  a.size = size;
  a.kind = MemKind::Registered;
  a.flags = flags;
  a.device = -1;
  registered_.emplace(b, a);
  return Status::Ok;
}

Status Backend::host_unregister(void* p) {
  std::lock_guard lock(mu_);
  auto it = registered_.find(reinterpret_cast<uintptr_t>(p));
  if (it == registered_.end() || it->second.kind != MemKind::Registered) return Status::InvalidPointer;
  registered_.erase(it);
  return Status::Ok;
}

bool Backend::is_device_range(const void* p, size_t n) noexcept {
  auto a = mem_find(p);
  if (!a) return false;
  return a->holds(reinterpret_cast<uintptr_t>(p), n);
}

// A range that starts in an allocation and runs past its end is the bug the real driver
// reports as an invalid argument.
bool Backend::range_ok(const void* p, size_t n, bool write) noexcept {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  if (!u || !user_range(u, n)) return false;
  if (n == 0) return true;
  if (auto check = range_check_.load(std::memory_order_acquire)) {
    switch (check(p, n, write)) {
      case RangeCheck::Ok: return true;
      case RangeCheck::Bad: return false;
      case RangeCheck::NotMine: break;
    }
  }
  auto a = mem_find(p);
  if (!a) return !mem_find(reinterpret_cast<const void*>(u + n - 1));
  return a->holds(u, n);
}

Status Backend::copy(void* dst, const void* src, size_t n) noexcept {
  if (n == 0) return Status::Ok;
  if (!range_ok(dst, n, true) || !range_ok(src, n, false)) return Status::InvalidValue;
  std::memmove(dst, src, n);
  return Status::Ok;
}

Status Backend::copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t height) noexcept {
  if (width == 0 || height == 0) return Status::Ok;
  if (width > dpitch || width > spitch) return Status::InvalidValue;
  size_t dspan = 0, sspan = 0;
  if (!span_2d(dpitch, width, height, &dspan) || !span_2d(spitch, width, height, &sspan) ||
      !range_ok(dst, dspan, true) || !range_ok(src, sspan, false))
    return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  for (size_t r = 0; r < height; ++r) std::memmove(d + r * dpitch, s + r * spitch, width);
  return Status::Ok;
}

Status Backend::set(void* dst, int value, size_t n) noexcept {
  if (n == 0) return Status::Ok;
  if (!range_ok(dst, n, true)) return Status::InvalidValue;
  std::memset(dst, value, n);
  return Status::Ok;
}

Status Backend::set_pattern(void* dst, const void* pattern, size_t elem, size_t count) noexcept {
  if (count == 0) return Status::Ok;
  if (reinterpret_cast<uintptr_t>(dst) % elem != 0) return Status::InvalidValue;
  size_t bytes = 0;
  if (__builtin_mul_overflow(elem, count, &bytes) || !range_ok(dst, bytes, true)) return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  for (size_t i = 0; i < count; ++i) std::memcpy(d + i * elem, pattern, elem);
  return Status::Ok;
}

Status Backend::set_2d(void* dst, size_t pitch, const void* pattern, size_t elem, size_t width_elems,
                       size_t height) noexcept {
  if (width_elems == 0 || height == 0) return Status::Ok;
  size_t width = 0, span = 0;
  if (__builtin_mul_overflow(width_elems, elem, &width) || width > pitch) return Status::InvalidValue;
  if (!span_2d(pitch, width, height, &span) || !range_ok(dst, span, true)) return Status::InvalidValue;
  auto* d = static_cast<char*>(dst);
  for (size_t r = 0; r < height; ++r)
    for (size_t i = 0; i < width_elems; ++i) std::memcpy(d + r * pitch + i * elem, pattern, elem);
  return Status::Ok;
}

void Backend::mem_info(Device* dev, uint64_t* free_bytes, uint64_t* total_bytes) noexcept {
  ledger_->reap_dead();
  const uint64_t total = ledger_->total(dev->ledger_index);
  const uint64_t used = std::min(ledger_->used(dev->ledger_index), total);
  if (free_bytes) *free_bytes = total - used;
  if (total_bytes) *total_bytes = total;
}

Status Backend::check_location(int type, int id, bool host_ok, Device** dev) noexcept {
  constexpr int kDevice = 1, kHost = 2, kHostNumaCurrent = 4;  // CU_MEM_LOCATION_TYPE_*, cudaMemLocationType*
  if (type == kDevice) {
    Device* d = device(id);
    if (dev) *dev = d;
    return d ? Status::Ok : Status::InvalidDevice;
  }
  if (type >= kHost && type <= kHostNumaCurrent) return host_ok ? Status::Ok : Status::NotSupported;
  return Status::InvalidValue;
}

Status Backend::check_handle_types(unsigned types) noexcept {
  constexpr unsigned kPosixFd = 1, kKnown = 0xf;  // POSIX fd, Win32, Win32 KMT, fabric
  if (types & ~kKnown) return Status::InvalidValue;
  return types & ~kPosixFd ? Status::NotSupported : Status::Ok;
}

}  // namespace fg
