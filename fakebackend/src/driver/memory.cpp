// SPDX-License-Identifier: Apache-2.0
// Memory: device, pitched, managed and pinned host allocations, host registration,
// address-range and pointer-attribute queries, managed-memory hints, legacy IPC handles.
//
// Bytes are real (host memory behind unified addresses, core/memory.h), so a device pointer
// is also a valid host address: cuMemHostGetDevicePointer and CU_POINTER_ATTRIBUTE_*_POINTER
// return the pointer itself, as the real driver does under unified addressing.
#include "driver/internal.h"

#include "core/graph.h"
#include "core/pool_ipc.h"

#include <cstring>
#include <mutex>
#include <unordered_set>

using namespace fg;
using namespace fg::drv;

namespace {

[[gnu::always_inline]] inline CUresult alloc(Backend& b, MemKind kind, size_t bytes, unsigned flags, void** out) {
  Context* ctx = nullptr;
  if (CUresult r = current(b, &ctx)) return r;
  // Allocating is potentially unsafe while a stream captures (core/graph.h).
  if (CUresult r = to_cu(graph::check_unsafe())) return r;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(b.mem_alloc(ctx, kind, bytes, ApiOrigin::Driver, flags, out));
}

// Module globals are registered with the core as Registered ranges tied to a device;
// user memory registered with cuMemHostRegister has device -1.
bool is_device_memory(const Allocation& a) noexcept {
  switch (a.kind) {
    case MemKind::Device:
    case MemKind::IpcMapped:
    case MemKind::Vmm: return true;
    case MemKind::Registered: return a.device >= 0;
    default: return false;
  }
}

// cuPointerSetAttribute(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) marks, by allocation base.
struct SyncMemops {
  std::mutex mu;
  std::unordered_set<uintptr_t> bases;
};
SyncMemops& sync_memops() {
  static auto* s = new SyncMemops;
  return *s;
}

// Everything a pointer attribute can report, gathered once.
struct PointerInfo {
  bool known = false;
  bool vmm = false;
  Allocation a;  // core allocation (when !vmm)
  vmm::Info v;   // VMM mapping (when vmm)
};

PointerInfo describe(Backend& b, CUdeviceptr ptr) {
  PointerInfo pi;
  // Virtual-memory ranges first: the core also reports them (as a plain Vmm allocation),
  // but only this module knows their reservations, handles and access.
  if (vmm::find(ptr_of(ptr), &pi.v)) {
    pi.known = true;
    pi.vmm = true;
  } else if (auto a = b.mem_find(ptr_of(ptr))) {
    pi.known = true;
    pi.a = *a;
  }
  return pi;
}

// Size in bytes of each attribute's value (cuda.h 13.0); 0 = unknown attribute.
size_t attribute_size(int attr) noexcept {
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return 8;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return 16;  // CUDA_POINTER_ATTRIBUTE_P2P_TOKENS
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return 4;  // booleans are written as 32-bit values
    default: return 0;
  }
}

template <class T>
void put(void* data, T v) {
  std::memcpy(data, &v, sizeof v);
}

// Writes one attribute of a known pointer. Booleans and enums are 32-bit, as the real
// driver writes them (NVIDIA's own callers pass int / unsigned int).
CUresult get_attribute(Backend& b, const PointerInfo& pi, int attr, CUdeviceptr ptr, void* data) {
  Context* cur = b.current_ctx();
  if (cur && !cur->active.load(std::memory_order_acquire)) cur = nullptr;
  const bool vmm = pi.vmm;
  const Allocation& a = pi.a;
  const bool device_mem = vmm || is_device_memory(a);
  const int device = vmm ? pi.v.device : a.device >= 0 ? a.device : cur ? cur->dev->ordinal : 0;
  const uintptr_t base = vmm ? pi.v.map_base : a.base;
  const uint64_t size = vmm ? pi.v.map_size : a.size;
  if (vmm && !pi.v.mapped && attr != CU_POINTER_ATTRIBUTE_MAPPED && attr != CU_POINTER_ATTRIBUTE_RANGE_START_ADDR &&
      attr != CU_POINTER_ATTRIBUTE_RANGE_SIZE)
    return CUDA_ERROR_INVALID_VALUE;  // reserved address space with nothing behind it
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: {
      Context* c = vmm ? nullptr : a.ctx;
      if (!c) c = cur;
      if (!c) return CUDA_ERROR_INVALID_VALUE;
      put(data, handle_of(c));
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      put<unsigned>(data, device_mem || a.kind == MemKind::Managed ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: put(data, ptr); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (device_mem) return CUDA_ERROR_INVALID_VALUE;  // no host mapping of device memory
      put(data, ptr_of(ptr));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: {
      auto& s = sync_memops();
      std::lock_guard lock(s.mu);
      put<unsigned>(data, s.bases.count(base) ? 1u : 0u);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      put<unsigned long long>(data, vmm ? pi.v.handle : base);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put<unsigned>(data, !vmm && a.kind == MemKind::Managed); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put<int>(data, device); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      put<unsigned>(data, !vmm && a.kind == MemKind::Device && a.pool == 0);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: put<CUdeviceptr>(data, vmm ? pi.v.res_base : base); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: put<size_t>(data, vmm ? pi.v.res_size : size); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED: put<unsigned>(data, vmm ? pi.v.mapped : 1u); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      put<unsigned long long>(data, vmm ? pi.v.handle_types : 0ull);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: {
      Device* d = b.device(device);
      put<unsigned>(data, device_mem && d && d->model.attributes[attr::GPU_DIRECT_RDMA_SUPPORTED] ? 1u : 0u);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      put<unsigned>(data, vmm ? pi.v.access : static_cast<unsigned>(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      put(data, static_cast<void*>(!vmm && a.pool ? b.pool_by_id(a.pool) : nullptr));
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put<size_t>(data, size); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put<CUdeviceptr>(data, base); return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put<unsigned>(data, 0u); return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult host_register(void* p, size_t bytesize, unsigned flags) {
  return api([&](Backend& b) -> CUresult {
    constexpr unsigned kMask = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                               CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || bytesize == 0 || (flags & ~kMask)) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    if (auto a = b.mem_find(p))
      return a->kind == MemKind::Host || a->kind == MemKind::Registered ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                                                                        : CUDA_ERROR_INVALID_VALUE;
    return to_cu(b.host_register(p, bytesize, flags));
  });
}

CUresult ipc_open(CUdeviceptr* pdptr, const CUipcMemHandle& handle, unsigned flags) {
  return api([&](Backend& b) -> CUresult {
    if (!pdptr || (flags & ~static_cast<unsigned>(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    void* p = nullptr;
    if (CUresult r = to_cu(b.ipc_open(reinterpret_cast<const unsigned char*>(handle.reserved), &p))) return r;
    *pdptr = dptr_of(p);
    return CUDA_SUCCESS;
  });
}

// Managed-memory hints: the range must lie in one managed allocation; nothing moves.
CUresult managed_range(Backend& b, CUdeviceptr p, size_t count) {
  if (count == 0) return CUDA_ERROR_INVALID_VALUE;
  auto a = b.mem_find(ptr_of(p));
  if (!a || a->kind != MemKind::Managed || !a->holds(p, count)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult location_ok(Backend& b, const CUmemLocation& loc) { return to_cu(b.check_location(loc.type, loc.id, true)); }

CUresult prefetch(CUdeviceptr devPtr, size_t count, CUstream hStream, bool ptsz, const CUmemLocation* loc, int dev) {
  return api([&](Backend& b) -> CUresult {
    if (CUresult r = managed_range(b, devPtr, count)) return r;
    if (loc) {
      if (CUresult r = location_ok(b, *loc)) return r;
    } else if (dev != CU_DEVICE_CPU && !b.device(dev)) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    Stream* s = nullptr;
    return stream_arg(b, hStream, ptsz, &s);
  });
}

CUresult advise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, const CUmemLocation* loc, int dev) {
  return api([&](Backend& b) -> CUresult {
    const int adv = static_cast<int>(advice);
    if (adv < CU_MEM_ADVISE_SET_READ_MOSTLY || adv > CU_MEM_ADVISE_UNSET_ACCESSED_BY) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = managed_range(b, devPtr, count)) return r;
    if (loc) return location_ok(b, *loc);
    if (dev != CU_DEVICE_CPU && !b.device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
  });
}

}  // namespace

// ---- device memory -------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return api([&](Backend& b) -> CUresult {
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    void* p = nullptr;
    if (CUresult r = alloc(b, MemKind::Device, bytesize, 0, &p)) return r;
    *dptr = dptr_of(p);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes,
                                                      size_t Height, unsigned int ElementSizeBytes) {
  return api([&](Backend& b) -> CUresult {
    if (!dptr || !pPitch) return CUDA_ERROR_INVALID_VALUE;
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
    if (WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    if (WidthInBytes > static_cast<size_t>(ctx->dev->model.attributes[attr::MAX_PITCH]))
      return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = 0, bytes = 0;
    if (!pitched_size(WidthInBytes, Height, &pitch, &bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
    void* p = nullptr;
    if (CUresult r = alloc(b, MemKind::Device, bytes, 0, &p)) return r;
    *dptr = dptr_of(p);
    *pPitch = pitch;
    return CUDA_SUCCESS;
  });
}

// cuMemFree frees device, pitched, managed and stream-ordered allocations.
// Frees need no current context: like the real driver, the owner is found from the pointer
// (numba's cuda.close() frees after popping its context).
extern "C" FG_IMPL CUresult fgimpl_cuMemFree_v2(CUdeviceptr dptr) {
  return api([&](Backend& b) -> CUresult {
    if (dptr == 0) return CUDA_SUCCESS;                        // as the real driver (and cudaFree)
    if (CUresult r = to_cu(graph::check_unsafe())) return r;   // unsafe during capture (core/graph.h)
    if (pool_ipc::release(ptr_of(dptr))) return CUDA_SUCCESS;  // imported from another process's pool
    return to_cu(b.mem_free(ptr_of(dptr), kind_bit(MemKind::Device) | kind_bit(MemKind::Managed), ApiOrigin::Driver));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetInfo_v2(size_t* free, size_t* total) {
  return api([&](Backend& b) -> CUresult {
    if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    uint64_t f = 0, t = 0;
    b.mem_info(ctx->dev, &f, &t);
    *free = f;
    *total = t;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  return api([&](Backend& b) -> CUresult {
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    if (!ctx->dev->model.attributes[attr::MANAGED_MEMORY]) return CUDA_ERROR_NOT_SUPPORTED;
    void* p = nullptr;
    if (CUresult r = alloc(b, MemKind::Managed, bytesize, flags, &p)) return r;
    *dptr = dptr_of(p);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  return api([&](Backend& b) -> CUresult {
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    uintptr_t base = 0;
    uint64_t size = 0;
    vmm::Info v;
    if (auto a = b.mem_find(ptr_of(dptr))) {
      base = a->base;
      size = a->size;
    } else if (vmm::find(ptr_of(dptr), &v) && v.mapped) {
      base = v.map_base;
      size = v.map_size;
    } else {
      return CUDA_ERROR_NOT_FOUND;
    }
    if (pbase) *pbase = static_cast<CUdeviceptr>(base);
    if (psize) *psize = size;
    return CUDA_SUCCESS;
  });
}

// ---- pinned host memory --------------------------------------------------------------------------
namespace {
// Zero bytes of pinned memory: success and a null pointer (a real H200 answers so, and the
// runtime's cudaMallocHost does the same).
CUresult host_alloc(Backend& b, void** pp, size_t bytesize, unsigned flags) {
  if (bytesize == 0) {
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    *pp = nullptr;
    return CUDA_SUCCESS;
  }
  return alloc(b, MemKind::Host, bytesize, flags, pp);
}
}  // namespace

extern "C" FG_IMPL CUresult fgimpl_cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return api([&](Backend& b) -> CUresult {
    if (!pp) return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(b, pp, bytesize, 0);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return api([&](Backend& b) -> CUresult {
    constexpr unsigned kMask = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || (Flags & ~kMask)) return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(b, pp, bytesize, Flags);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemFreeHost(void* p) {
  return api([&](Backend& b) -> CUresult {
    if (!p) return CUDA_SUCCESS;                              // free(NULL) semantics, as the real driver
    if (CUresult r = to_cu(graph::check_unsafe())) return r;  // unsafe during capture (core/graph.h)
    return to_cu(b.mem_free(p, kind_bit(MemKind::Host), ApiOrigin::Driver));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
  return host_register(p, bytesize, Flags);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return host_register(p, bytesize, Flags);
}

extern "C" FG_IMPL CUresult fgimpl_cuMemHostUnregister(void* p) {
  return api([&](Backend& b) -> CUresult {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return b.host_unregister(p) == Status::Ok ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return api([&](Backend& b) -> CUresult {
    if (!pdptr || !p || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    auto a = b.mem_find(p);
    if (!a ||
        !(a->kind == MemKind::Host || a->kind == MemKind::Managed || (a->kind == MemKind::Registered && a->device < 0)))
      return CUDA_ERROR_INVALID_VALUE;
    *pdptr = dptr_of(p);  // unified addressing: the same address on both sides
    return CUDA_SUCCESS;
  });
}

// Unified addressing maps every pinned allocation into the device space, so DEVICEMAP is
// always reported along with the flags given at allocation.
extern "C" FG_IMPL CUresult fgimpl_cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  return api([&](Backend& b) -> CUresult {
    if (!pFlags || !p) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    auto a = b.mem_find(p);
    if (!a || a->kind != MemKind::Host) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = a->flags | CU_MEMHOSTALLOC_DEVICEMAP;
    return CUDA_SUCCESS;
  });
}

// ---- pointer attributes --------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  return api([&](Backend& b) -> CUresult {
    if (!data || attribute_size(static_cast<int>(attribute)) == 0) return CUDA_ERROR_INVALID_VALUE;
    const PointerInfo pi = describe(b, ptr);
    if (!pi.known) return CUDA_ERROR_INVALID_VALUE;
    return get_attribute(b, pi, static_cast<int>(attribute), ptr, data);
  });
}

// Unlike cuPointerGetAttribute, an unknown pointer is not an error: every value gets its
// "null" default, except DEVICE_ORDINAL -2 and HOST_POINTER the pointer itself (ordinary
// host memory, which cudaPointerGetAttributes reports as unregistered with that host
// pointer; NVIDIA's runtime takes both from here).
extern "C" FG_IMPL CUresult fgimpl_cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes,
                                                          void** data, CUdeviceptr ptr) {
  return api([&](Backend& b) -> CUresult {
    if (numAttributes == 0 || !attributes || !data) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numAttributes; ++i)
      if (attribute_size(static_cast<int>(attributes[i])) == 0 || !data[i]) return CUDA_ERROR_INVALID_VALUE;
    const PointerInfo pi = describe(b, ptr);
    for (unsigned i = 0; i < numAttributes; ++i) {
      const int at = static_cast<int>(attributes[i]);
      std::memset(data[i], 0, attribute_size(at));
      if (!pi.known) {
        if (at == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) put<int>(data[i], -2);
        if (at == CU_POINTER_ATTRIBUTE_HOST_POINTER) put(data[i], ptr_of(ptr));
        continue;
      }
      // Attributes that do not apply to this pointer keep their zero default.
      (void)get_attribute(b, pi, at, ptr, data[i]);
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuPointerSetAttribute(const void* value, CUpointer_attribute attribute,
                                                         CUdeviceptr ptr) {
  return api([&](Backend& b) -> CUresult {
    if (!value || static_cast<int>(attribute) != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) return CUDA_ERROR_INVALID_VALUE;
    auto a = b.mem_find(ptr_of(ptr));
    if (!a || !is_device_memory(*a)) return CUDA_ERROR_INVALID_VALUE;
    unsigned v = 0;
    std::memcpy(&v, value, sizeof v);
    auto& s = sync_memops();
    std::lock_guard lock(s.mu);
    if (v)
      s.bases.insert(a->base);
    else
      s.bases.erase(a->base);
    return CUDA_SUCCESS;
  });
}

// ---- managed-memory hints ------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  return advise(devPtr, count, advice, nullptr, device);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                                  CUmemLocation location) {
  return advise(devPtr, count, advice, &location, 0);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                                      CUstream hStream) {
  return prefetch(devPtr, count, hStream, false, nullptr, dstDevice);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                                           CUstream hStream) {
  return prefetch(devPtr, count, hStream, true, nullptr, dstDevice);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                                         unsigned int flags, CUstream hStream) {
  if (flags != 0) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return prefetch(devPtr, count, hStream, false, &location, 0);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                                              unsigned int flags, CUstream hStream) {
  if (flags != 0) return initialized_backend() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return prefetch(devPtr, count, hStream, true, &location, 0);
}

// ---- legacy IPC ----------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  return api([&](Backend& b) -> CUresult {
    if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    return to_cu(b.ipc_export(ptr_of(dptr), reinterpret_cast<unsigned char*>(pHandle->reserved)));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  return ipc_open(pdptr, handle, Flags);
}
extern "C" FG_IMPL CUresult fgimpl_cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                                         unsigned int Flags) {
  return ipc_open(pdptr, handle, Flags);
}

extern "C" FG_IMPL CUresult fgimpl_cuIpcCloseMemHandle(CUdeviceptr dptr) {
  return api([&](Backend& b) -> CUresult {
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    return to_cu(b.ipc_close(ptr_of(dptr)));
  });
}
