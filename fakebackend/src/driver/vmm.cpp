// SPDX-License-Identifier: Apache-2.0
// Virtual memory management: cuMemCreate / cuMemRelease, cuMemAddressReserve / Free,
// cuMemMap / cuMemUnmap, cuMemSetAccess / cuMemGetAccess, granularity, POSIX-fd export and
// import, properties and handle retention.
//
// The model maps one-to-one onto Linux virtual memory:
//   physical allocation (CUmemGenericAllocationHandle) = a memfd of that size, booked
//       against the device in the host-wide ledger (kind device) and in Device::used;
//   reservation (cuMemAddressReserve)                   = a PROT_NONE anonymous mapping;
//   cuMemMap                                            = MAP_FIXED | MAP_SHARED of the memfd
//       over part of a reservation, still PROT_NONE;
//   cuMemSetAccess                                      = mprotect (read / read-write);
//   cuMemUnmap                                          = a fresh PROT_NONE mapping in place;
//   cuMemExportToShareableHandle(POSIX fd)              = dup of the memfd, whose name
//       ("fakegpu-vmm:<GPU uuid>:<handle types>") lets an importer recover the device.
// Two mappings of one handle therefore alias the same bytes, and an exported fd shares
// them with another process, as on a real GPU.
//
// Lifetime: a physical allocation is freed (unbooked, memfd closed) when every
// cuMemRelease owed for it has happened (one for cuMemCreate / import, one per
// cuMemRetainAllocationHandle) and no mapping uses it any more.
//
// The core's allocation table does not know these ranges; vmm::find / vmm::check
// (internal.h) let copies, memsets and pointer queries accept them.
#include "driver/internal.h"

#include "common/log.h"
#include "core/usdt.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <string>
#include <vector>

using namespace fg;
using namespace fg::drv;

namespace {

// cuMemGetAllocationGranularity, minimum and recommended: 2 MiB, as on every current GPU.
constexpr uint64_t kGranularity = 2ull << 20;
constexpr const char* kMemfdPrefix = "fakegpu-vmm:";

struct Phys {
  int fd = -1;
  uint64_t size = 0;
  int device = -1;
  CUmemAllocationProp prop{};
  int owed = 1;         // cuMemRelease calls still due
  int maps = 0;         // mapping pieces using it
  bool booked = false;  // counted against the device (imports are not: the exporter pays)
  dev_t st_dev = 0;     // identity of the memfd, to recognise our own exports on import
  ino_t st_ino = 0;
};

struct Mapping {
  uint64_t size = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;             // into the physical allocation
  std::map<int, unsigned> access;  // device -> CUmemAccess_flags
};

struct Reservation {
  uint64_t size = 0;
  std::map<uintptr_t, Mapping> maps;  // by base address
};

struct State {
  std::mutex mu;
  std::unordered_map<uint64_t, Phys> phys;
  std::map<uintptr_t, Reservation> res;  // by base address
  uint64_t next_handle = 1;
  std::atomic<size_t> nres{0};  // lets copies skip the lock when VMM is unused
};
State& state() {
  static auto* s = new State;  // never destroyed: used from atexit-time API calls
  return *s;
}

bool aligned(uint64_t v) noexcept { return v % kGranularity == 0; }

int host_prot(unsigned access) noexcept {
  if ((access & CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    return PROT_READ | PROT_WRITE;
  if (access & CU_MEM_ACCESS_FLAGS_PROT_READ) return PROT_READ;
  return PROT_NONE;
}

// The widest access any device has: what the host-side mapping must allow.
unsigned widest(const Mapping& m) noexcept {
  unsigned w = 0;
  for (const auto& [dev, f] : m.access) w |= f;
  return w;
}

// Reservation containing p (under the lock), or nullptr.
std::pair<const uintptr_t, Reservation>* reservation_of(State& s, uintptr_t p) {
  auto it = s.res.upper_bound(p);
  if (it == s.res.begin()) return nullptr;
  --it;
  return p < it->first + it->second.size ? &*it : nullptr;
}

// Whether [p, p + n) lies in the reservation r (which holds p), without wrapping.
bool inside(const std::pair<const uintptr_t, Reservation>& r, uintptr_t p, size_t n) {
  return n <= r.second.size && p - r.first <= r.second.size - n;
}

// Mapping containing p inside r, or end().
std::map<uintptr_t, Mapping>::iterator mapping_of(Reservation& r, uintptr_t p) {
  auto it = r.maps.upper_bound(p);
  if (it == r.maps.begin()) return r.maps.end();
  --it;
  return p < it->first + it->second.size ? it : r.maps.end();
}

// Mapping containing p (under the lock), or nullptr.
Mapping* mapped_at(State& s, uintptr_t p) {
  auto* r = reservation_of(s, p);
  if (!r) return nullptr;
  auto it = mapping_of(r->second, p);
  return it == r->second.maps.end() ? nullptr : &it->second;
}

// Splits a mapping `keep` bytes in; the rest becomes a mapping of its own, returned.
std::map<uintptr_t, Mapping>::iterator split_mapping(State& s, Reservation& r,
                                                     std::map<uintptr_t, Mapping>::iterator it, uint64_t keep) {
  Mapping rest = it->second;
  rest.size -= keep;
  rest.offset += keep;
  it->second.size = keep;
  ++s.phys[rest.handle].maps;
  return r.maps.emplace(it->first + keep, rest).first;
}

// Collects the mappings that tile [p, p+n) exactly, splitting the first and last at p and
// p+n when `split` is set (boundaries must be granularity-aligned). Returns false when a
// byte of the range is not mapped or a needed split is not allowed.
bool tile(State& s, Reservation& r, uintptr_t p, uint64_t n, bool split, std::vector<uintptr_t>* out) {
  uintptr_t at = p;
  const uintptr_t end = p + n;
  while (at < end) {
    auto it = mapping_of(r, at);
    if (it == r.maps.end()) return false;
    if (it->first < at) {  // starts before the range: split off the head
      if (!split) return false;
      it = split_mapping(s, r, it, at - it->first);
    }
    if (it->first + it->second.size > end) {  // runs past the range: split off the tail
      if (!split) return false;
      split_mapping(s, r, it, end - it->first);
    }
    out->push_back(it->first);
    at = it->first + it->second.size;
  }
  return true;
}

// Frees a physical allocation nobody needs any more (under the lock).
void maybe_destroy(Backend& b, State& s, uint64_t handle) {
  auto it = s.phys.find(handle);
  if (it == s.phys.end() || it->second.owed > 0 || it->second.maps > 0) return;
  Phys& ph = it->second;
  ::close(ph.fd);
  if (ph.booked) {
    if (Device* dev = b.device(ph.device)) b.book_release(dev, MemKind::Vmm, ph.size);
  }
  FG_USDT_FREE(ph.device, handle, ph.size, static_cast<int>(MemKind::Vmm), 0, static_cast<int>(ApiOrigin::Driver));
  s.phys.erase(it);
}

// Replaces [p, p+n) by inaccessible reserved address space.
bool unmap_range(uintptr_t p, uint64_t n) {
  void* m = ::mmap(reinterpret_cast<void*>(p), n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                   -1, 0);
  return m != MAP_FAILED;
}

CUresult check_prop(Backend& b, const CUmemAllocationProp* prop, Device** dev) {
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  if (prop->type == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = to_cu(b.check_location(prop->location.type, prop->location.id, false, dev))) return r;
  return to_cu(Backend::check_handle_types(static_cast<unsigned>(prop->requestedHandleTypes)));
}

CUresult check_location(Backend& b, const CUmemLocation& loc) {
  return to_cu(b.check_location(loc.type, loc.id, false));
}

}  // namespace

// ---- queries used by the other domains ---------------------------------------------------------------
namespace fg::drv::vmm {

bool find(const void* p, Info* out) noexcept {
  State& s = state();
  if (s.nres.load(std::memory_order_acquire) == 0) return false;
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(s.mu);
  auto* r = reservation_of(s, u);
  if (!r) return false;
  *out = Info{};
  out->res_base = r->first;
  out->res_size = r->second.size;
  auto it = mapping_of(r->second, u);
  if (it == r->second.maps.end()) return true;
  out->mapped = true;
  out->map_base = it->first;
  out->map_size = it->second.size;
  out->handle = it->second.handle;
  auto ph = s.phys.find(it->second.handle);
  if (ph != s.phys.end()) {
    out->device = ph->second.device;
    out->handle_types = static_cast<uint64_t>(ph->second.prop.requestedHandleTypes);
    auto acc = it->second.access.find(ph->second.device);
    out->access = acc == it->second.access.end() ? 0 : acc->second;
  }
  return true;
}

Range check(const void* p, size_t n, bool write) noexcept {
  State& s = state();
  if (s.nres.load(std::memory_order_acquire) == 0) return Range::NotVmm;
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(s.mu);
  auto* r = reservation_of(s, u);
  if (!r) return Range::NotVmm;
  if (u + n > r->first + r->second.size) return Range::Bad;
  const unsigned need = write ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_READ;
  uintptr_t at = u;
  while (at < u + n) {
    auto it = mapping_of(r->second, at);
    if (it == r->second.maps.end() || (widest(it->second) & need) != need) return Range::Bad;
    at = it->first + it->second.size;
  }
  return Range::Ok;
}

}  // namespace fg::drv::vmm

namespace {
// Lets the core (and so the runtime's copies and pointer queries) see mapped ranges.
void install_range_provider(Backend& b) {
  static std::once_flag once;
  std::call_once(once, [&b] {
    Backend::RangeProvider p;
    p.check = [](const void* ptr, size_t n, bool write) noexcept {
      switch (fg::drv::vmm::check(ptr, n, write)) {
        case fg::drv::vmm::Range::Ok: return Backend::RangeCheck::Ok;
        case fg::drv::vmm::Range::Bad: return Backend::RangeCheck::Bad;
        case fg::drv::vmm::Range::NotVmm: break;
      }
      return Backend::RangeCheck::NotMine;
    };
    p.find = [](const void* ptr, Allocation* out) noexcept {
      fg::drv::vmm::Info info;
      if (!fg::drv::vmm::find(ptr, &info) || !info.mapped) return false;
      *out = Allocation{};
      out->base = info.map_base;
      out->size = info.map_size;
      out->span = info.map_size;
      out->device = info.device;
      out->kind = MemKind::Vmm;
      out->api = ApiOrigin::Driver;
      return true;
    };
    b.set_range_provider(p);
  });
}
}  // namespace

// ---- physical allocations --------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                               const CUmemAllocationProp* prop, unsigned long long flags) {
  return api([&](Backend& b) -> CUresult {
    if (!handle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Device* dev = nullptr;
    if (CUresult r = check_prop(b, prop, &dev)) return r;
    if (size == 0 || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
    if (!b.book_reserve(dev, MemKind::Vmm, size)) {
      FG_USDT_ALLOC(dev->ordinal, 0, size, static_cast<int>(MemKind::Vmm), kUsdtOutOfMemory,
                    static_cast<int>(ApiOrigin::Driver));
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    char name[96];
    std::snprintf(name, sizeof name, "%s%s:%d", kMemfdPrefix, dev->model.uuid_str.c_str(),
                  static_cast<int>(prop->requestedHandleTypes));
    const int fd = ::memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      if (fd >= 0) ::close(fd);
      b.book_release(dev, MemKind::Vmm, size);
      FG_LOG(Warn, Driver, "cuMemCreate: cannot create %zu bytes of backing memory (%s)", size, std::strerror(errno));
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct stat st {};
    ::fstat(fd, &st);
    State& s = state();
    std::lock_guard lock(s.mu);
    const uint64_t h = s.next_handle++;
    Phys ph;
    ph.fd = fd;
    ph.size = size;
    ph.device = dev->ordinal;
    ph.prop = *prop;
    ph.booked = true;
    ph.st_dev = st.st_dev;
    ph.st_ino = st.st_ino;
    s.phys.emplace(h, ph);
    FG_USDT_ALLOC(dev->ordinal, h, size, static_cast<int>(MemKind::Vmm), 0, static_cast<int>(ApiOrigin::Driver));
    *handle = h;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemRelease(CUmemGenericAllocationHandle handle) {
  return api([&](Backend& b) -> CUresult {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.phys.find(handle);
    if (it == s.phys.end() || it->second.owed == 0) return CUDA_ERROR_INVALID_VALUE;
    --it->second.owed;
    maybe_destroy(b, s, handle);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                                 CUmemAllocationGranularity_flags option) {
  return api([&](Backend& b) -> CUresult {
    if (!granularity) return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
      return CUDA_ERROR_INVALID_VALUE;
    Device* dev = nullptr;
    if (CUresult r = check_prop(b, prop, &dev)) return r;
    *granularity = kGranularity;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                                          CUmemGenericAllocationHandle handle) {
  return api([&](Backend&) -> CUresult {
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.phys.find(handle);
    if (it == s.phys.end()) return CUDA_ERROR_INVALID_VALUE;
    *prop = it->second.prop;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  return api([&](Backend&) -> CUresult {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mu);
    Mapping* m = mapped_at(s, reinterpret_cast<uintptr_t>(addr));
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    ++s.phys[m->handle].owed;
    *handle = m->handle;
    return CUDA_SUCCESS;
  });
}

// ---- address reservations ------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                                       CUdeviceptr addr, unsigned long long flags) {
  return api([&](Backend& b) -> CUresult {
    if (!ptr || flags != 0 || size == 0 || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
    if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;  // a power of two (or 0 = default)
    const uint64_t align = std::max<uint64_t>(alignment, kGranularity);
    constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    uintptr_t base = 0;
    // The requested address is a hint, as in the real driver: used when free and aligned.
    if (addr && addr % align == 0) {
      void* m = ::mmap(ptr_of(addr), size, PROT_NONE, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
      if (m != MAP_FAILED) {
        if (reinterpret_cast<uintptr_t>(m) == addr)
          base = addr;
        else
          ::munmap(m, size);  // kernels before 4.17 treat the flag as a hint
      }
    }
    if (!base) {
      if (size > SIZE_MAX - align) return CUDA_ERROR_OUT_OF_MEMORY;
      void* m = ::mmap(nullptr, size + align, PROT_NONE, kFlags, -1, 0);
      if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
      const uintptr_t raw = reinterpret_cast<uintptr_t>(m);
      base = (raw + align - 1) / align * align;
      if (base > raw) ::munmap(m, base - raw);
      const uintptr_t end = raw + size + align;
      if (end > base + size) ::munmap(reinterpret_cast<void*>(base + size), end - (base + size));
    }
    State& s = state();
    std::lock_guard lock(s.mu);
    Reservation r;
    r.size = size;
    s.res.emplace(base, std::move(r));
    s.nres.fetch_add(1, std::memory_order_release);
    install_range_provider(b);
    *ptr = static_cast<CUdeviceptr>(base);
    return CUDA_SUCCESS;
  });
}

// Mappings still in the range are unmapped first (the real driver requires the caller to
// have done so; tolerating it keeps the books right either way).
extern "C" FG_IMPL CUresult fgimpl_cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return api([&](Backend& b) -> CUresult {
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.res.find(static_cast<uintptr_t>(ptr));
    if (it == s.res.end() || it->second.size != size) return CUDA_ERROR_INVALID_VALUE;
    std::vector<uint64_t> handles;
    for (auto& [base, m] : it->second.maps) handles.push_back(m.handle);
    ::munmap(ptr_of(ptr), size);
    s.res.erase(it);
    s.nres.fetch_sub(1, std::memory_order_release);
    for (uint64_t h : handles) {
      --s.phys[h].maps;
      maybe_destroy(b, s, h);
    }
    return CUDA_SUCCESS;
  });
}

// ---- mapping -----------------------------------------------------------------------------------------
// offset is accepted when granularity-aligned (cuda.h: "currently must be zero").
extern "C" FG_IMPL CUresult fgimpl_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                            CUmemGenericAllocationHandle handle, unsigned long long flags) {
  return api([&](Backend&) -> CUresult {
    if (flags != 0 || size == 0 || !aligned(size) || !aligned(ptr) || !aligned(offset)) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mu);
    auto ph = s.phys.find(handle);
    if (ph == s.phys.end() || ph->second.owed == 0) return CUDA_ERROR_INVALID_VALUE;
    if (offset > ph->second.size || size > ph->second.size - offset) return CUDA_ERROR_INVALID_VALUE;
    auto* r = reservation_of(s, static_cast<uintptr_t>(ptr));
    if (!r || !inside(*r, static_cast<uintptr_t>(ptr), size)) return CUDA_ERROR_INVALID_VALUE;
    // Nothing may be mapped in the range yet.
    auto next = r->second.maps.lower_bound(static_cast<uintptr_t>(ptr));
    if (next != r->second.maps.end() && next->first < ptr + size) return CUDA_ERROR_INVALID_VALUE;
    if (mapping_of(r->second, static_cast<uintptr_t>(ptr)) != r->second.maps.end()) return CUDA_ERROR_INVALID_VALUE;
    void* m = ::mmap(ptr_of(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->second.fd, static_cast<off_t>(offset));
    if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    Mapping map;
    map.size = size;
    map.handle = handle;
    map.offset = offset;
    r->second.maps.emplace(static_cast<uintptr_t>(ptr), std::move(map));
    ++ph->second.maps;
    return CUDA_SUCCESS;
  });
}

// The range must consist of whole mappings (cuda.h: no sub-range of a mapping).
extern "C" FG_IMPL CUresult fgimpl_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return api([&](Backend& b) -> CUresult {
    if (size == 0 || !aligned(size) || !aligned(ptr)) return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    std::lock_guard lock(s.mu);
    auto* r = reservation_of(s, static_cast<uintptr_t>(ptr));
    if (!r || !inside(*r, static_cast<uintptr_t>(ptr), size)) return CUDA_ERROR_INVALID_VALUE;
    std::vector<uintptr_t> pieces;
    if (!tile(s, r->second, static_cast<uintptr_t>(ptr), size, false, &pieces)) return CUDA_ERROR_INVALID_VALUE;
    if (!unmap_range(static_cast<uintptr_t>(ptr), size)) return CUDA_ERROR_UNKNOWN;
    for (uintptr_t base : pieces) {
      auto it = r->second.maps.find(base);
      const uint64_t h = it->second.handle;
      r->second.maps.erase(it);
      --s.phys[h].maps;
      maybe_destroy(b, s, h);
    }
    return CUDA_SUCCESS;
  });
}

// ---- access --------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                                  size_t count) {
  return api([&](Backend& b) -> CUresult {
    if (!desc || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
      if (CUresult r = check_location(b, desc[i].location)) return r;
      const int f = static_cast<int>(desc[i].flags);
      if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
          f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return CUDA_ERROR_INVALID_VALUE;
    }
    State& s = state();
    std::lock_guard lock(s.mu);
    auto* r = reservation_of(s, static_cast<uintptr_t>(ptr));
    if (!r || !inside(*r, static_cast<uintptr_t>(ptr), size)) return CUDA_ERROR_INVALID_VALUE;
    // Check coverage first so that a refused call changes nothing.
    const bool edges_ok = aligned(ptr) && aligned(size);
    {
      uintptr_t at = static_cast<uintptr_t>(ptr);
      while (at < ptr + size) {
        auto it = mapping_of(r->second, at);
        if (it == r->second.maps.end()) return CUDA_ERROR_INVALID_VALUE;
        if (!edges_ok && (it->first < ptr || it->first + it->second.size > ptr + size)) return CUDA_ERROR_INVALID_VALUE;
        at = it->first + it->second.size;
      }
    }
    std::vector<uintptr_t> pieces;
    if (!tile(s, r->second, static_cast<uintptr_t>(ptr), size, true, &pieces)) return CUDA_ERROR_INVALID_VALUE;
    for (uintptr_t base : pieces) {
      Mapping& m = r->second.maps.at(base);
      for (size_t i = 0; i < count; ++i) m.access[desc[i].location.id] = static_cast<unsigned>(desc[i].flags);
      if (::mprotect(ptr_of(base), m.size, host_prot(widest(m))) != 0) return CUDA_ERROR_UNKNOWN;
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location,
                                                  CUdeviceptr ptr) {
  return api([&](Backend& b) -> CUresult {
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_location(b, *location)) return r;
    State& s = state();
    std::lock_guard lock(s.mu);
    Mapping* m = mapped_at(s, static_cast<uintptr_t>(ptr));
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    auto acc = m->access.find(location->id);
    *flags = acc == m->access.end() ? 0 : acc->second;
    return CUDA_SUCCESS;
  });
}

// ---- sharing ------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemExportToShareableHandle(void* shareableHandle,
                                                                CUmemGenericAllocationHandle handle,
                                                                CUmemAllocationHandleType handleType,
                                                                unsigned long long flags) {
  return api([&](Backend&) -> CUresult {
    if (!shareableHandle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      return handleType == CU_MEM_HANDLE_TYPE_WIN32 || handleType == CU_MEM_HANDLE_TYPE_WIN32_KMT ||
                     handleType == CU_MEM_HANDLE_TYPE_FABRIC
                 ? CUDA_ERROR_NOT_SUPPORTED
                 : CUDA_ERROR_INVALID_VALUE;
    }
    State& s = state();
    std::lock_guard lock(s.mu);
    auto it = s.phys.find(handle);
    if (it == s.phys.end() || it->second.owed == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!(it->second.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
      return CUDA_ERROR_INVALID_VALUE;  // not requested at cuMemCreate
    const int fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *static_cast<int*>(shareableHandle) = fd;
    return CUDA_SUCCESS;
  });
}

// osHandle carries the fd value itself (the API's convention for POSIX fds). The caller
// keeps ownership of its fd; the new handle holds its own duplicate.
extern "C" FG_IMPL CUresult fgimpl_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                                  CUmemAllocationHandleType shHandleType) {
  return api([&](Backend& b) -> CUresult {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      return shHandleType == CU_MEM_HANDLE_TYPE_WIN32 || shHandleType == CU_MEM_HANDLE_TYPE_WIN32_KMT ||
                     shHandleType == CU_MEM_HANDLE_TYPE_FABRIC
                 ? CUDA_ERROR_NOT_SUPPORTED
                 : CUDA_ERROR_INVALID_VALUE;
    }
    const intptr_t fdv = reinterpret_cast<intptr_t>(osHandle);
    if (fdv < 0 || fdv > INT_MAX) return CUDA_ERROR_INVALID_VALUE;
    const int fd = static_cast<int>(fdv);
    // Only our own memfds are importable: the name says which device the bytes belong to.
    char link[64], target[256];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    if (n <= 0) return CUDA_ERROR_INVALID_VALUE;
    target[n] = '\0';
    const std::string t(target);
    const std::string prefix = std::string("/memfd:") + kMemfdPrefix;
    if (t.rfind(prefix, 0) != 0) return CUDA_ERROR_INVALID_VALUE;
    const std::string rest = t.substr(prefix.size());  // "<GPU-uuid>:<types> (deleted)"
    const size_t colon = rest.find(':');
    if (colon == std::string::npos) return CUDA_ERROR_INVALID_VALUE;
    const std::string uuid = rest.substr(0, colon);
    const int types = std::atoi(rest.c_str() + colon + 1);
    Device* dev = nullptr;
    for (int i = 0; i < b.device_count() && !dev; ++i)
      if (b.device(i)->model.uuid_str == uuid) dev = b.device(i);
    if (!dev) return CUDA_ERROR_INVALID_DEVICE;  // the exporter's GPU is not visible here
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0 || !aligned(static_cast<uint64_t>(st.st_size)))
      return CUDA_ERROR_INVALID_VALUE;
    State& s = state();
    {
      // An allocation of this very process comes back as the same handle (one more
      // cuMemRelease owed), so it stays one allocation in the books.
      std::lock_guard lock(s.mu);
      for (auto& [h, ph] : s.phys)
        if (ph.st_dev == st.st_dev && ph.st_ino == st.st_ino && ph.owed + ph.maps > 0) {
          ++ph.owed;
          *handle = h;
          return CUDA_SUCCESS;
        }
    }
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    Phys ph;
    ph.fd = own;
    ph.size = static_cast<uint64_t>(st.st_size);
    ph.device = dev->ordinal;
    ph.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    ph.prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(types);
    ph.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ph.prop.location.id = dev->ordinal;
    ph.booked = false;
    ph.st_dev = st.st_dev;
    ph.st_ino = st.st_ino;
    std::lock_guard lock(s.mu);
    const uint64_t h = s.next_handle++;
    s.phys.emplace(h, ph);
    *handle = h;
    return CUDA_SUCCESS;
  });
}
