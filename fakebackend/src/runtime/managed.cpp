// SPDX-License-Identifier: Apache-2.0
// Unified-memory hints: cudaMemPrefetchAsync, cudaMemAdvise and cudaStreamAttachMemAsync, in
// their CUDA 13 form (a cudaMemLocation), the CUDA 12 plain form (an int device) and the
// 12.x _v2 names (the 13 form under another name).
//
// Managed memory is host memory here, resident everywhere at once: the hints have nothing to
// move or change. They are validated as the real ones are (the range must be managed
// memory, the location a device or the host, known flags) and otherwise succeed.
#include "runtime/common.h"

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;

namespace {

// [p, p+count) inside one managed allocation (cudaMallocManaged or a __managed__ variable).
cudaError_t managed_range(const void* p, size_t count) {
  if (!p || count == 0) return cudaErrorInvalidValue;
  auto a = be().mem_find(p);
  if (!a || a->kind != fg::MemKind::Managed) return cudaErrorInvalidValue;
  return a->holds(reinterpret_cast<uintptr_t>(p), count) ? cudaSuccess : cudaErrorInvalidValue;
}

// A prefetch / advice target: a device, the host, or a host NUMA node.
cudaError_t check_location(const cudaMemLocation& loc) {
  return fg::rt::to_cuda(be().check_location(loc.type, loc.id, true));
}

// CUDA 12's plain forms name the target as a device ordinal or cudaCpuDeviceId (-1).
cudaError_t device_location(int device, cudaMemLocation* out) {
  if (device == cudaCpuDeviceId) {
    *out = cudaMemLocation{cudaMemLocationTypeHost, 0};
    return cudaSuccess;
  }
  if (!be().device(device)) return cudaErrorInvalidDevice;
  *out = cudaMemLocation{cudaMemLocationTypeDevice, device};
  return cudaSuccess;
}

cudaError_t prefetch(const void* devPtr, size_t count, cudaMemLocation location, unsigned flags, cudaStream_t stream,
                     bool per_thread) {
  if (flags != 0) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (cudaError_t e = managed_range(devPtr, count); e != cudaSuccess) return e;
  return check_location(location);
}

cudaError_t prefetch12(const void* devPtr, size_t count, int dstDevice, cudaStream_t stream, bool per_thread) {
  cudaMemLocation loc{};
  if (cudaError_t e = device_location(dstDevice, &loc); e != cudaSuccess) return e;
  return prefetch(devPtr, count, loc, 0, stream, per_thread);
}

cudaError_t advise(const void* devPtr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location) {
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  if (cudaError_t e = managed_range(devPtr, count); e != cudaSuccess) return e;
  switch (advice) {
    case cudaMemAdviseSetReadMostly:
    case cudaMemAdviseUnsetReadMostly: return cudaSuccess;  // the location is ignored
    case cudaMemAdviseSetPreferredLocation:
    case cudaMemAdviseUnsetPreferredLocation:
    case cudaMemAdviseSetAccessedBy:
    case cudaMemAdviseUnsetAccessedBy: return check_location(location);
  }
  return cudaErrorInvalidValue;
}

cudaError_t advise12(const void* devPtr, size_t count, cudaMemoryAdvise advice, int device) {
  cudaMemLocation loc{};
  if (advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly) {
    if (cudaError_t e = device_location(device, &loc); e != cudaSuccess) return e;
  }
  return advise(devPtr, count, advice, loc);
}

// The allocation must be managed; length 0 or the whole allocation.
cudaError_t attach(cudaStream_t stream, void* devPtr, size_t length, unsigned flags, bool per_thread) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
    return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  auto a = devPtr ? be().mem_find(devPtr) : std::nullopt;
  if (!a || a->kind != fg::MemKind::Managed || a->base != reinterpret_cast<uintptr_t>(devPtr))
    return cudaErrorInvalidValue;
  if (length != 0 && length != a->size) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location,
                                                           unsigned int flags, cudaStream_t stream) {
  return api([&] { return prefetch(devPtr, count, location, flags, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count,
                                                                cudaMemLocation location, unsigned int flags,
                                                                cudaStream_t stream) {
  return api([&] { return prefetch(devPtr, count, location, flags, stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPrefetchAsync_v2(const void* devPtr, size_t count,
                                                              cudaMemLocation location, unsigned int flags,
                                                              cudaStream_t stream) {
  return api([&] { return prefetch(devPtr, count, location, flags, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemPrefetchAsync_v2_ptsz(const void* devPtr, size_t count,
                                                                   cudaMemLocation location, unsigned int flags,
                                                                   cudaStream_t stream) {
  return api([&] { return prefetch(devPtr, count, location, flags, stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaMemPrefetchAsync(const void* devPtr, size_t count, int dstDevice,
                                                               cudaStream_t stream) {
  return api([&] { return prefetch12(devPtr, count, dstDevice, stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count, int dstDevice,
                                                                    cudaStream_t stream) {
  return api([&] { return prefetch12(devPtr, count, dstDevice, stream, true); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                                                    cudaMemLocation location) {
  return api([&] { return advise(devPtr, count, advice, location); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaMemAdvise_v2(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                                                       cudaMemLocation location) {
  return api([&] { return advise(devPtr, count, advice, location); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                                                        int device) {
  return api([&] { return advise12(devPtr, count, advice, device); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length,
                                                               unsigned int flags) {
  return api([&] { return attach(stream, devPtr, length, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void* devPtr, size_t length,
                                                                    unsigned int flags) {
  return api([&] { return attach(stream, devPtr, length, flags, true); });
}
