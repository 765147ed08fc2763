// SPDX-License-Identifier: Apache-2.0
// Stream-ordered allocation and memory pools: cuMemAllocAsync, cuMemAllocFromPoolAsync,
// cuMemFreeAsync, cuMemPool*, cuDeviceGet/SetMemPool, cuDeviceGetDefaultMemPool and the
// CUDA 13 location-based cuMemGet/SetMemPool forms.
//
// Allocations are made at once (the caller sees the pointer immediately, as with the real
// driver) and booked like any device allocation, tagged with the pool id; frees run in
// stream order. Pool statistics follow a simple model of the real caching pool: used bytes
// are exact; reserved bytes are the used bytes plus what the pool keeps after frees, up to
// its release threshold (cuMemPoolTrimTo lowers it).
#include "driver/internal.h"

#include "core/graph.h"
#include "core/pool_ipc.h"

#include <mutex>
#include <unordered_map>

using namespace fg;
using namespace fg::drv;

namespace {

CUmemoryPool handle_of_pool(MemPool* p) noexcept { return reinterpret_cast<CUmemoryPool>(p); }

CUresult alloc_from(Backend& b, MemPool* pool, CUdeviceptr* dptr, size_t bytesize, CUstream hStream, bool ptsz) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  Stream* s = nullptr;
  if (CUresult r = stream_arg(b, hStream, ptsz, &s)) return r;
  if (bytesize == 0) {  // nothing to allocate: success and a null pointer, as a real H200 answers
    *dptr = 0;
    return CUDA_SUCCESS;
  }
  Context* ctx = s->ctx;
  if (!pool) pool = ctx->dev->current_pool.load();
  if (pool->dev != ctx->dev) return CUDA_ERROR_NOT_SUPPORTED;  // a pool of another device than the stream's
  // Stream capture (core/graph.h): the allocation becomes a graph allocation node; its memory
  // is made now, at the address the graph keeps.
  bool capturing = false;
  if (CUresult r = to_cu(graph::route(s, &capturing))) return r;
  if (capturing) {
    graph::Params node;
    node.type = graph::NodeType::MemAlloc;
    if (CUresult r = to_cu(graph::make_alloc(ctx, bytesize, ApiOrigin::Driver, &node.alloc))) return r;
    void* ptr = node.alloc->ptr;
    if (CUresult r = to_cu(graph::capture(s, std::move(node)))) return r;
    *dptr = dptr_of(ptr);
    return CUDA_SUCCESS;
  }
  void* p = nullptr;
  if (CUresult r = to_cu(b.mem_alloc(ctx, MemKind::Device, bytesize, ApiOrigin::Driver, 0, &p, pool->id))) return r;
  *dptr = dptr_of(p);
  return CUDA_SUCCESS;
}

CUresult alloc_async(CUdeviceptr* dptr, size_t bytesize, CUstream hStream, bool ptsz) {
  return api([&](Backend& b) { return alloc_from(b, nullptr, dptr, bytesize, hStream, ptsz); });
}

CUresult alloc_from_pool(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream, bool ptsz) {
  return with_handle(true, pool, pool_arg,
                     [&](Backend& b, MemPool* p) { return alloc_from(b, p, dptr, bytesize, hStream, ptsz); });
}

// The pointer is checked at once; the free itself happens in stream order.
CUresult free_async(CUdeviceptr dptr, CUstream hStream, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, hStream, ptsz, &s)) return r;
    if (dptr == 0) return CUDA_SUCCESS;  // free(NULL), as a real H200 answers
    void* p = ptr_of(dptr);
    if (pool_ipc::release(p)) return CUDA_SUCCESS;  // imported from another process's pool
    auto a = b.mem_find(p);
    if (!a || a->base != dptr || (a->kind != MemKind::Device && a->kind != MemKind::Managed))
      return CUDA_ERROR_INVALID_VALUE;
    auto free_node = [p] {  // what a capturing stream records
      graph::Params node;
      node.type = graph::NodeType::MemFree;
      node.free_ptr = p;
      return node;
    };
    if (CUresult r; captured(s, false, free_node, &r)) return r;
    Backend* bp = &b;
    return to_cu(b.stream_enqueue(s, [bp, p] {
      Allocation freed;
      const unsigned kinds = kind_bit(MemKind::Device) | kind_bit(MemKind::Managed);
      (void)bp->mem_free(p, kinds, ApiOrigin::Driver, true);
    }));
  });
}

CUresult check_pool_location(Backend& b, const CUmemLocation& loc, Device** dev) {
  return to_cu(b.check_location(loc.type, loc.id, false, dev));
}

// CUDA 13 location-based pool queries: device locations of pinned pools only.
struct PoolLocation {
  const CUmemLocation* location;
  CUmemAllocationType type;
};
CUresult location_pool(Backend& b, PoolLocation at, Device** dev) {
  if (!at.location) return CUDA_ERROR_INVALID_VALUE;
  if (at.type == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;
  if (at.type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  return check_pool_location(b, *at.location, dev);
}

// Makes `pool` the current pool of device `d`; it must be one of d's pools.
CUresult set_pool(Backend& b, Device* d, CUmemoryPool pool) {
  MemPool* p = nullptr;
  if (CUresult r = pool_arg(b, pool, &p)) return r;
  if (p->dev != d) return CUDA_ERROR_INVALID_DEVICE;
  d->current_pool.store(p);
  return CUDA_SUCCESS;
}

}  // namespace

namespace fg::drv {

CUresult pool_arg(Backend& b, CUmemoryPool h, MemPool** out) {
  auto* p = reinterpret_cast<MemPool*>(h);
  if (!h || !b.pool_valid(p)) return CUDA_ERROR_INVALID_VALUE;
  *out = p;
  return CUDA_SUCCESS;
}

}  // namespace fg::drv

// ---- stream-ordered allocation -------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return alloc_async(dptr, bytesize, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return alloc_async(dptr, bytesize, hStream, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                           CUstream hStream) {
  return alloc_from_pool(dptr, bytesize, pool, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                                CUstream hStream) {
  return alloc_from_pool(dptr, bytesize, pool, hStream, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return free_async(dptr, hStream, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return free_async(dptr, hStream, true);
}

// ---- pools ----------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  return api([&](Backend& b) -> CUresult {
    if (!pool || !poolProps) return CUDA_ERROR_INVALID_VALUE;
    if (poolProps->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) return CUDA_ERROR_NOT_SUPPORTED;
    if (poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
    const auto types = static_cast<unsigned>(poolProps->handleTypes);
    if (CUresult r = to_cu(Backend::check_handle_types(types))) return r;
    Device* dev = nullptr;
    if (CUresult r = check_pool_location(b, poolProps->location, &dev)) return r;
    MemPool* p = nullptr;
    if (CUresult r = to_cu(b.pool_create(dev, &p))) return r;
    p->handle_types = static_cast<unsigned>(types);  // for export (core/pool_ipc.h)
    *pool = handle_of_pool(p);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolDestroy(CUmemoryPool pool) {
  return with_handle(true, pool, pool_arg, [](Backend& b, MemPool* p) {
    if (p->is_default) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(b.pool_destroy(p));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return with_handle(value != nullptr, pool, pool_arg, [&](Backend&, MemPool* p) -> CUresult {
    std::lock_guard lock(p->mu);
    switch (static_cast<int>(attr)) {
      case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        p->reuse_follow_event = *static_cast<int*>(value) != 0;
        break;
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        p->reuse_allow_opportunistic = *static_cast<int*>(value) != 0;
        break;
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse_allow_internal = *static_cast<int*>(value) != 0;
        break;
      case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->release_threshold = *static_cast<uint64_t*>(value);
        p->reserved_current = std::max(p->used_current, std::min(p->reserved_current, p->release_threshold));
        break;
      case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:  // only a reset to the current value is allowed
        if (*static_cast<uint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
        p->reserved_high = p->reserved_current;
        break;
      case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*static_cast<uint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
        p->used_high = p->used_current;
        break;
      default: return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return with_handle(value != nullptr, pool, pool_arg, [&](Backend&, MemPool* p) -> CUresult {
    std::lock_guard lock(p->mu);
    switch (static_cast<int>(attr)) {
      case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: *static_cast<int*>(value) = p->reuse_follow_event; break;
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: *static_cast<int*>(value) = p->reuse_allow_opportunistic; break;
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *static_cast<int*>(value) = p->reuse_allow_internal;
        break;
      case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *static_cast<uint64_t*>(value) = p->release_threshold; break;
      case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *static_cast<uint64_t*>(value) = p->reserved_current; break;
      case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *static_cast<uint64_t*>(value) = p->reserved_high; break;
      case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *static_cast<uint64_t*>(value) = p->used_current; break;
      case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *static_cast<uint64_t*>(value) = p->used_high; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  return api([&](Backend& b) -> CUresult {
    MemPool* p = nullptr;
    if (CUresult r = pool_arg(b, pool, &p)) return r;
    std::lock_guard lock(p->mu);
    p->reserved_current = std::max<uint64_t>(p->used_current, std::min<uint64_t>(p->reserved_current, minBytesToKeep));
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  return api([&](Backend& b) -> CUresult {
    if (!map && count > 0) return CUDA_ERROR_INVALID_VALUE;
    MemPool* p = nullptr;
    if (CUresult r = pool_arg(b, pool, &p)) return r;
    for (size_t i = 0; i < count; ++i) {
      Device* d = nullptr;
      if (CUresult r = check_pool_location(b, map[i].location, &d)) return r;
      const int f = static_cast<int>(map[i].flags);
      if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
          f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return CUDA_ERROR_INVALID_VALUE;
      // The pool's own device always has read-write access.
      if (d == p->dev && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_DEVICE;
    }
    std::lock_guard lock(p->mu);
    for (size_t i = 0; i < count; ++i) p->access[map[i].location.id] = static_cast<int>(map[i].flags);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool,
                                                      CUmemLocation* location) {
  return with_handle(flags && location, memPool, pool_arg, [&](Backend& b, MemPool* p) -> CUresult {
    Device* d = nullptr;
    if (CUresult r = check_pool_location(b, *location, &d)) return r;
    if (d == p->dev) {
      *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      return CUDA_SUCCESS;
    }
    std::lock_guard lock(p->mu);
    auto it = p->access.find(d->ordinal);
    *flags = static_cast<CUmemAccess_flags>(it == p->access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second);
    return CUDA_SUCCESS;
  });
}

// ---- device pools -----------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  return query_handle(pool_out, dev, device_arg, [](Device* d) { return handle_of_pool(d->default_pool); });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return query_handle(pool, dev, device_arg, [](Device* d) { return handle_of_pool(d->current_pool.load()); });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return with_handle(true, dev, device_arg, [&](Backend& b, Device* d) { return set_pool(b, d, pool); });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location,
                                                          CUmemAllocationType type) {
  return query_handle(pool_out, PoolLocation{location, type}, location_pool,
                      [](Device* d) { return handle_of_pool(d->default_pool); });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location,
                                                   CUmemAllocationType type) {
  return query_handle(pool, PoolLocation{location, type}, location_pool,
                      [](Device* d) { return handle_of_pool(d->current_pool.load()); });
}

extern "C" FG_IMPL CUresult fgimpl_cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type,
                                                   CUmemoryPool pool) {
  return with_handle(true, PoolLocation{location, type}, location_pool,
                     [&](Backend& b, Device* d) { return set_pool(b, d, pool); });
}
