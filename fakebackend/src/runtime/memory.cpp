// SPDX-License-Identifier: Apache-2.0
// Runtime memory management: device, pitched, managed and pinned host allocations, host
// registration, pointer attributes, memory info, IPC handles, stream-ordered allocation
// and memory pools.
#include "runtime/capture.h"
#include "core/pool_ipc.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

using namespace fgapi;
using fg::Allocation;
using fg::MemKind;
using fg::rt::api;
using fg::rt::api_ctx;
using fg::rt::be;
using fg::rt::device_arg;
using fg::rt::pool_arg;
using fg::rt::to_cuda;

namespace {

constexpr unsigned bit(MemKind k) { return 1u << static_cast<unsigned>(k); }
constexpr unsigned kDeviceKinds = bit(MemKind::Device) | bit(MemKind::Managed);

constexpr unsigned kHostAllocFlags = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
constexpr unsigned kHostRegisterFlags = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                                        cudaHostRegisterReadOnly;

// Allocating and freeing calls: api_ctx, then refused as potentially unsafe while a stream
// captures (core/graph.h).
template <class F>
cudaError_t api_unsafe(bool args_ok, F&& body) noexcept {
  return api_ctx(args_ok, [&](fg::Context* ctx) -> cudaError_t {
    if (cudaError_t e = to_cuda(fg::graph::check_unsafe()); e != cudaSuccess) return e;
    return body(ctx);
  });
}

// size 0 succeeds with a null pointer, as the real allocating calls do.
cudaError_t allocate(fg::Context* ctx, MemKind kind, size_t size, unsigned flags, void** out) {
  if (size == 0) {
    *out = nullptr;
    return cudaSuccess;
  }
  return to_cuda(be().mem_alloc(ctx, kind, size, fg::ApiOrigin::Runtime, flags, out));
}

// The runtime's context on `dev`: its primary context, retained once like cudaSetDevice does.
cudaError_t primary_ctx(fg::Device* dev, fg::Context** out) {
  {
    std::lock_guard lock(dev->primary_mu);
    if (dev->primary && dev->primary_refs > 0) {
      *out = dev->primary;
      return cudaSuccess;
    }
  }
  return to_cuda(be().primary_retain(dev, out));
}

// Frees p (exact base, kinds); the core waits for the work queued on its context first and
// books pool allocations.
cudaError_t free_kinds(void* p, unsigned kinds) { return to_cuda(be().mem_free(p, kinds, fg::ApiOrigin::Runtime)); }

cudaError_t alloc_from_pool(void** ptr, size_t size, fg::MemPool* pool, fg::Context* ctx) {
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  if (ctx->dev != pool->dev) {
    if (cudaError_t e = primary_ctx(pool->dev, &ctx); e != cudaSuccess) return e;
  }
  void* p = nullptr;
  fg::Status s = be().mem_alloc(ctx, MemKind::Device, size, fg::ApiOrigin::Runtime, 0, &p, pool->id);
  if (s != fg::Status::Ok) return to_cuda(s);
  *ptr = p;
  return cudaSuccess;
}

}  // namespace

// ---- device memory ----------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaMalloc(void** devPtr, size_t size) {
  return api_unsafe(devPtr, [&](fg::Context* ctx) { return allocate(ctx, MemKind::Device, size, 0, devPtr); });
}

// nullptr is a no-op; an unknown, interior or already freed pointer is an invalid argument.
extern "C" FG_IMPL cudaError_t fgimpl_cudaFree(void* devPtr) {
  return api_unsafe(true, [&](fg::Context*) -> cudaError_t {
    if (!devPtr) return cudaSuccess;
    if (fg::pool_ipc::release(devPtr)) return cudaSuccess;  // imported from another process's pool
    return free_kinds(devPtr, kDeviceKinds);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  return api_unsafe(devPtr && pitch, [&](fg::Context* ctx) -> cudaError_t {
    size_t p = 0, bytes = 0;
    if (!fg::pitched_size(width, height, &p, &bytes)) return cudaErrorMemoryAllocation;
    *pitch = p;
    return allocate(ctx, MemKind::Device, bytes, 0, devPtr);
  });
}

// Size 0 is documented as invalid, but NVIDIA's runtime answers success (a real H200).
extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  const bool flags_ok = flags == cudaMemAttachGlobal || flags == cudaMemAttachHost;
  return api_unsafe(devPtr && flags_ok,
                    [&](fg::Context* ctx) { return allocate(ctx, MemKind::Managed, size, flags, devPtr); });
}

// ---- pinned host memory ---------------------------------------------------------------------------

namespace {
cudaError_t host_alloc(void** ptr, size_t size, unsigned flags) {
  return api_unsafe(ptr && !(flags & ~kHostAllocFlags),
                    [&](fg::Context* ctx) { return allocate(ctx, MemKind::Host, size, flags, ptr); });
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocHost(void** ptr, size_t size) { return host_alloc(ptr, size, 0); }

extern "C" FG_IMPL cudaError_t fgimpl_cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return host_alloc(pHost, size, flags);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaFreeHost(void* ptr) {
  return api_unsafe(true, [&](fg::Context*) -> cudaError_t {
    if (!ptr) return cudaSuccess;
    return free_kinds(ptr, bit(MemKind::Host));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return api_ctx(ptr && size != 0 && !(flags & ~kHostRegisterFlags), [&](fg::Context*) -> cudaError_t {
    auto a = be().mem_find(ptr);
    if (a) {
      // Pinned or registered already: "part or all of the requested memory range is already
      // mapped"; device memory cannot be registered.
      return a->kind == MemKind::Host || a->kind == MemKind::Registered ? cudaErrorHostMemoryAlreadyRegistered
                                                                        : cudaErrorInvalidValue;
    }
    fg::Status s = be().host_register(ptr, size, flags);
    if (s == fg::Status::AlreadyMapped) return cudaErrorHostMemoryAlreadyRegistered;
    return to_cuda(s);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaHostUnregister(void* ptr) {
  return api_ctx(ptr, [&](fg::Context*) {
    return be().host_unregister(ptr) == fg::Status::Ok ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
  });
}

// With unified addressing the device address of pinned, registered or managed memory is the
// host address itself.
extern "C" FG_IMPL cudaError_t fgimpl_cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return api_ctx(pDevice && pHost && flags == 0, [&](fg::Context*) -> cudaError_t {
    auto a = be().mem_find(pHost);
    if (!a || (a->kind != MemKind::Host && a->kind != MemKind::Registered && a->kind != MemKind::Managed))
      return cudaErrorInvalidValue;
    *pDevice = pHost;
    return cudaSuccess;
  });
}

// Only for cudaHostAlloc/cudaMallocHost memory; cudaHostAllocMapped is implied under UVA.
extern "C" FG_IMPL cudaError_t fgimpl_cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  return api_ctx(pFlags && pHost, [&](fg::Context*) -> cudaError_t {
    auto a = be().mem_find(pHost);
    if (!a || a->kind != MemKind::Host) return cudaErrorInvalidValue;
    *pFlags = a->flags | cudaHostAllocMapped;
    return cudaSuccess;
  });
}

// ---- information ----------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemGetInfo(size_t* free, size_t* total) {
  return api_ctx(free && total, [&](fg::Context* ctx) {
    uint64_t f = 0, t = 0;
    be().mem_info(ctx->dev, &f, &t);
    *free = f;
    *total = t;
    return cudaSuccess;
  });
}

// CUDA 11+ rules: memory CUDA does not know is reported as cudaMemoryTypeUnregistered with
// success (device cudaInvalidDeviceId, no device alias); device memory has no host alias;
// pinned, registered and managed memory have both (the same address, unified addressing).
extern "C" FG_IMPL cudaError_t fgimpl_cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  return api_ctx(attributes, [&](fg::Context* ctx) {
    auto a = be().mem_find(ptr);
    std::memset(attributes, 0, sizeof *attributes);
    void* p = const_cast<void*>(ptr);
    int type = cudaMemoryTypeUnregistered;
    int device = cudaInvalidDeviceId;
    void* dev_alias = nullptr;
    void* host_alias = p;
    if (a) {
      // Host memory is tied to the device that was current at allocation; the core does not
      // record it, so report the current device.
      const int cur = ctx->dev->ordinal;
      switch (a->kind) {
        case MemKind::Device:
        case MemKind::Vmm:
        case MemKind::IpcMapped:
          type = cudaMemoryTypeDevice, device = a->device >= 0 ? a->device : cur, dev_alias = p, host_alias = nullptr;
          break;
        case MemKind::Managed:
          type = cudaMemoryTypeManaged, device = a->device >= 0 ? a->device : cur, dev_alias = p;
          break;
        case MemKind::Host: type = cudaMemoryTypeHost, device = cur, dev_alias = p; break;
        case MemKind::Registered:
          // cudaHostRegister'd ranges have no device; the storage of __device__/__constant__
          // variables (registered by the core with a device) is device memory.
          if (a->device >= 0)
            type = cudaMemoryTypeDevice, device = a->device, dev_alias = p, host_alias = nullptr;
          else
            type = cudaMemoryTypeHost, device = cur, dev_alias = p;
          break;
        case MemKind::Unknown: break;  // no allocation has it
      }
    }
    attributes->type = static_cast<cudaMemoryType>(type);
    attributes->device = device;
    attributes->devicePointer = dev_alias;
    attributes->hostPointer = host_alias;
    return cudaSuccess;
  });
}

// ---- IPC ------------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
  return api_ctx(handle && devPtr, [&](fg::Context*) {
    static_assert(sizeof(cudaIpcMemHandle_t) == 64);
    return to_cuda(be().ipc_export(devPtr, reinterpret_cast<unsigned char*>(handle)));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle,
                                                           unsigned int flags) {
  return api_ctx(devPtr && !(flags & ~cudaIpcMemLazyEnablePeerAccess), [&](fg::Context*) {
    unsigned char bytes[64];
    std::memcpy(bytes, &handle, sizeof bytes);
    return to_cuda(be().ipc_open(bytes, devPtr));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaIpcCloseMemHandle(void* devPtr) {
  return api_ctx(devPtr, [&](fg::Context*) { return to_cuda(be().ipc_close(devPtr)); });
}

// ---- stream-ordered allocation ----------------------------------------------------------------------
// Allocation happens at once (the memory is valid before the stream reaches the call, which
// is indistinguishable for correct programs); the free is ordered after the stream's work.

namespace {
// Stream capture (core/graph.h): on a capturing stream a stream-ordered allocation becomes a
// graph allocation node (its memory is made now, at the address the graph keeps) and a
// stream-ordered free becomes a free node. True when the capture took the call.
bool captured_alloc(fg::Stream* s, size_t size, void** out, cudaError_t* e) {
  auto in_capture = [&]() -> cudaError_t {
    if (size == 0) {
      *out = nullptr;
      return cudaSuccess;
    }
    fg::graph::Params p;
    p.type = fg::graph::NodeType::MemAlloc;
    if (fg::Status st = fg::graph::make_alloc(s->ctx, size, fg::ApiOrigin::Runtime, &p.alloc); st != fg::Status::Ok)
      return to_cuda(st);
    void* ptr = p.alloc->ptr;
    const cudaError_t added = fg::rt::add_node(s, std::move(p));
    if (added == cudaSuccess) *out = ptr;
    return added;
  };
  return fg::rt::captured(s, in_capture, e);
}

bool captured_free(fg::Stream* s, void* ptr, cudaError_t* e) {
  auto in_capture = [&] {
    fg::graph::Params p;
    p.type = fg::graph::NodeType::MemFree;
    p.free_ptr = ptr;
    return fg::rt::add_node(s, std::move(p));
  };
  return fg::rt::captured(s, in_capture, e);
}

cudaError_t malloc_async(void** devPtr, size_t size, cudaStream_t hStream, bool per_thread) {
  if (!devPtr) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(hStream, per_thread, &s); e != cudaSuccess) return e;
  if (cudaError_t e; captured_alloc(s, size, devPtr, &e)) return e;
  fg::MemPool* pool = s->ctx->dev->current_pool.load();
  return alloc_from_pool(devPtr, size, pool, s->ctx);
}

cudaError_t malloc_from_pool_async(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream,
                                   bool per_thread) {
  if (!ptr) return cudaErrorInvalidValue;
  fg::MemPool* pool = nullptr;
  if (cudaError_t e = pool_arg(memPool, &pool); e != cudaSuccess) return e;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (cudaError_t e; captured_alloc(s, size, ptr, &e)) return e;
  return alloc_from_pool(ptr, size, pool, s->ctx);
}

cudaError_t free_async(void* devPtr, cudaStream_t hStream, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(hStream, per_thread, &s); e != cudaSuccess) return e;
  if (!devPtr) return cudaSuccess;
  if (fg::pool_ipc::release(devPtr)) return cudaSuccess;  // imported from another process's pool
  fg::Backend& b = be();
  auto a = b.mem_find(devPtr);
  if (!a || a->base != reinterpret_cast<uintptr_t>(devPtr) || !(kDeviceKinds & bit(a->kind)))
    return cudaErrorInvalidValue;
  if (cudaError_t e; captured_free(s, devPtr, &e)) return e;
  return to_cuda(
      b.stream_enqueue(s, [devPtr] { (void)be().mem_free(devPtr, kDeviceKinds, fg::ApiOrigin::Runtime, true); }));
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return api([&] { return malloc_async(devPtr, size, hStream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  return api([&] { return malloc_async(devPtr, size, hStream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                                              cudaStream_t stream) {
  return api([&] { return malloc_from_pool_async(ptr, size, memPool, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                                                   cudaStream_t stream) {
  return api([&] { return malloc_from_pool_async(ptr, size, memPool, stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return api([&] { return free_async(devPtr, hStream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return api([&] { return free_async(devPtr, hStream, true); });
}

// ---- memory pools -------------------------------------------------------------------------------------

namespace {
// The getters' answer: the device's default pool, or the pool it allocates from now.
cudaMemPool_t pool_handle(const fg::Device* d, bool current) {
  return reinterpret_cast<cudaMemPool_t>(current ? d->current_pool.load() : d->default_pool);
}

// The device's pool for cudaMallocAsync from now on: a pool serves the device it was made for.
cudaError_t set_pool(fg::Device* d, cudaMemPool_t memPool) {
  fg::MemPool* p = nullptr;
  if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
  if (p->dev != d) return cudaErrorInvalidValue;
  d->current_pool.store(p);
  return cudaSuccess;
}

cudaError_t device_pool(cudaMemPool_t* memPool, int device, bool current) {
  if (!memPool) return cudaErrorInvalidValue;
  fg::Device* d = nullptr;
  if (cudaError_t e = device_arg(device, &d); e != cudaSuccess) return e;
  *memPool = pool_handle(d, current);
  return cudaSuccess;
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  return api([&] { return device_pool(memPool, device, false); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  return api([&] { return device_pool(memPool, device, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    fg::Device* d = nullptr;
    if (cudaError_t e = device_arg(device, &d); e != cudaSuccess) return e;
    return set_pool(d, memPool);
  });
}

// CUDA 13's location-based forms of the three calls above. Only device-located pinned
// pools exist here; host, host-NUMA and managed pools are not modelled.
namespace {
cudaError_t pool_location(const cudaMemLocation* location, cudaMemAllocationType type, fg::Device** out) {
  if (!location) return cudaErrorInvalidValue;
  if (type != cudaMemAllocationTypePinned && type != cudaMemAllocationTypeManaged) return cudaErrorInvalidValue;
  if (location->type != cudaMemLocationTypeDevice) {
    return location->type == cudaMemLocationTypeHost || location->type == cudaMemLocationTypeHostNuma ||
                   location->type == cudaMemLocationTypeHostNumaCurrent
               ? cudaErrorNotSupported
               : cudaErrorInvalidValue;
  }
  if (type != cudaMemAllocationTypePinned) return cudaErrorNotSupported;
  return device_arg(location->id, out);
}

cudaError_t location_pool(cudaMemPool_t* memPool, const cudaMemLocation* location, cudaMemAllocationType type,
                          bool current) {
  if (!memPool) return cudaErrorInvalidValue;
  fg::Device* d = nullptr;
  if (cudaError_t e = pool_location(location, type, &d); e != cudaSuccess) return e;
  *memPool = pool_handle(d, current);
  return cudaSuccess;
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemGetDefaultMemPool(cudaMemPool_t* memPool, cudaMemLocation* location,
                                                               cudaMemAllocationType type) {
  return api([&] { return location_pool(memPool, location, type, false); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemGetMemPool(cudaMemPool_t* memPool, cudaMemLocation* location,
                                                        cudaMemAllocationType type) {
  return api([&] { return location_pool(memPool, location, type, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemSetMemPool(cudaMemLocation* location, cudaMemAllocationType type,
                                                        cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    fg::Device* d = nullptr;
    if (cudaError_t e = pool_location(location, type, &d); e != cudaSuccess) return e;
    return set_pool(d, memPool);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolCreate(cudaMemPool_t* memPool, const cudaMemPoolProps* poolProps) {
  return api([&]() -> cudaError_t {
    if (!memPool || !poolProps) return cudaErrorInvalidValue;
    if (poolProps->allocType != cudaMemAllocationTypePinned) return cudaErrorInvalidValue;
    const auto types = static_cast<unsigned>(poolProps->handleTypes);
    if (fg::Status s = fg::Backend::check_handle_types(types); s != fg::Status::Ok) return to_cuda(s);
    fg::Device* d = nullptr;
    if (fg::Status s = be().check_location(poolProps->location.type, poolProps->location.id, false, &d);
        s != fg::Status::Ok)
      return to_cuda(s);
    fg::MemPool* p = nullptr;
    if (fg::Status s = be().pool_create(d, &p); s != fg::Status::Ok) return to_cuda(s);
    p->handle_types = types;  // for export (core/pool_ipc.h)
    *memPool = reinterpret_cast<cudaMemPool_t>(p);
    return cudaSuccess;
  });
}

// Allocations still outstanding stay valid (the real pool releases its memory once they are
// freed); default pools cannot be destroyed.
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolDestroy(cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    if (p->is_default) return cudaErrorInvalidValue;
    return to_cuda(be().pool_destroy(p));
  });
}

namespace {
// The attribute calls: op(pool) under the pool's lock, for a valid pool and a non-null value.
template <class Op>
cudaError_t pool_attribute(cudaMemPool_t memPool, void* value, Op op) noexcept {
  return api([&]() -> cudaError_t {
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    if (!value) return cudaErrorInvalidValue;
    std::lock_guard lock(p->mu);
    return op(p);
  });
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr,
                                                              void* value) {
  return pool_attribute(memPool, value, [&](fg::MemPool* p) -> cudaError_t {
    switch (attr) {
      case cudaMemPoolReuseFollowEventDependencies:
        p->reuse_follow_event = *static_cast<int*>(value) != 0;
        return cudaSuccess;
      case cudaMemPoolReuseAllowOpportunistic:
        p->reuse_allow_opportunistic = *static_cast<int*>(value) != 0;
        return cudaSuccess;
      case cudaMemPoolReuseAllowInternalDependencies:
        p->reuse_allow_internal = *static_cast<int*>(value) != 0;
        return cudaSuccess;
      case cudaMemPoolAttrReleaseThreshold:
        p->release_threshold = *static_cast<uint64_t*>(value);
        p->reserved_current = std::max(p->used_current, std::min(p->reserved_current, p->release_threshold));
        return cudaSuccess;
      // The high-water marks can only be reset, to the current value, by writing 0.
      case cudaMemPoolAttrReservedMemHigh:
        if (*static_cast<uint64_t*>(value) != 0) return cudaErrorInvalidValue;
        p->reserved_high = p->reserved_current;
        return cudaSuccess;
      case cudaMemPoolAttrUsedMemHigh:
        if (*static_cast<uint64_t*>(value) != 0) return cudaErrorInvalidValue;
        p->used_high = p->used_current;
        return cudaSuccess;
      default: return cudaErrorInvalidValue;  // read-only or unknown
    }
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr,
                                                              void* value) {
  return pool_attribute(memPool, value, [&](fg::MemPool* p) -> cudaError_t {
    switch (attr) {
      case cudaMemPoolReuseFollowEventDependencies:
        *static_cast<int*>(value) = p->reuse_follow_event;
        return cudaSuccess;
      case cudaMemPoolReuseAllowOpportunistic:
        *static_cast<int*>(value) = p->reuse_allow_opportunistic;
        return cudaSuccess;
      case cudaMemPoolReuseAllowInternalDependencies:
        *static_cast<int*>(value) = p->reuse_allow_internal;
        return cudaSuccess;
      case cudaMemPoolAttrReleaseThreshold: *static_cast<uint64_t*>(value) = p->release_threshold; return cudaSuccess;
      case cudaMemPoolAttrReservedMemCurrent: *static_cast<uint64_t*>(value) = p->reserved_current; return cudaSuccess;
      case cudaMemPoolAttrReservedMemHigh: *static_cast<uint64_t*>(value) = p->reserved_high; return cudaSuccess;
      case cudaMemPoolAttrUsedMemCurrent: *static_cast<uint64_t*>(value) = p->used_current; return cudaSuccess;
      case cudaMemPoolAttrUsedMemHigh: *static_cast<uint64_t*>(value) = p->used_high; return cudaSuccess;
      default: return cudaErrorInvalidValue;
    }
  });
}

// Gives back what is reserved beyond minBytesToKeep and not in use.
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  return api([&]() -> cudaError_t {
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    std::lock_guard lock(p->mu);
    p->reserved_current = std::max<uint64_t>(p->used_current, std::min<uint64_t>(p->reserved_current, minBytesToKeep));
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolSetAccess(cudaMemPool_t memPool, const cudaMemAccessDesc* descList,
                                                           size_t count) {
  return api([&]() -> cudaError_t {
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    if (count && !descList) return cudaErrorInvalidValue;
    // Validate everything first: the call applies all descriptors or none.
    for (size_t i = 0; i < count; ++i) {
      const auto& d = descList[i];
      const cudaMemAccessFlags flags = d.flags;
      if (d.location.type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
      if (!be().device(d.location.id)) return cudaErrorInvalidDevice;
      // Device pools grant read-write or nothing; the owner keeps read-write.
      if (flags != cudaMemAccessFlagsProtNone && flags != cudaMemAccessFlagsProtReadWrite) return cudaErrorInvalidValue;
      if (d.location.id == p->dev->ordinal && flags != cudaMemAccessFlagsProtReadWrite) return cudaErrorInvalidDevice;
    }
    std::lock_guard lock(p->mu);
    for (size_t i = 0; i < count; ++i) p->access[descList[i].location.id] = static_cast<int>(descList[i].flags);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t memPool,
                                                           cudaMemLocation* location) {
  return api([&]() -> cudaError_t {
    fg::MemPool* p = nullptr;
    if (cudaError_t e = pool_arg(memPool, &p); e != cudaSuccess) return e;
    if (!flags || !location) return cudaErrorInvalidValue;
    if (location->type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
    if (!be().device(location->id)) return cudaErrorInvalidDevice;
    int f = cudaMemAccessFlagsProtNone;
    if (location->id == p->dev->ordinal) {
      f = cudaMemAccessFlagsProtReadWrite;  // the owning device always has access
    } else {
      std::lock_guard lock(p->mu);
      auto it = p->access.find(location->id);
      if (it != p->access.end()) f = it->second;
    }
    *flags = static_cast<cudaMemAccessFlags>(f);
    return cudaSuccess;
  });
}
