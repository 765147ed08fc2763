// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the CUDA Driver API shims (libcuda.so.1).
//
// Every implementation has the shape
//
//   extern "C" FG_IMPL CUresult fgimpl_cuFoo(...) {
//     return drv::api([&](Backend& b) -> CUresult { ... });
//   }
//
// drv::api() is the cuInit gate (CUDA_ERROR_NOT_INITIALIZED before a successful cuInit) and
// the exception barrier (std::bad_alloc -> CUDA_ERROR_OUT_OF_MEMORY, anything else ->
// CUDA_ERROR_UNKNOWN). The few calls that work before cuInit (cuInit, cuDriverGetVersion,
// cuGetErrorName/String, cuGetProcAddress) use drv::api_noinit().
//
// Handles: CUstream = fg::Stream*, CUevent = fg::Event*, CUmemoryPool = fg::MemPool*, each
// checked against the core's registry before it is dereferenced; CUcontext, CUmodule and
// CUfunction are numbers never reused (Backend::new_handle), looked up by number. Garbage
// and stale handles are answered with an error, never a crash.
#pragma once
#include "common/impl.h"
#include "core/backend.h"
#include "core/versions.h"
#include "fakegpu/cuda_api.h"
#include "fakegpu/cuda_types.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace fg::drv {

using namespace fgapi;

inline constexpr int kDriverVersion = version::kCudaDriver;  // cuDriverGetVersion

inline CUresult to_cu(Status s) noexcept {
  switch (s) {
    case Status::Ok: return CUDA_SUCCESS;
    case Status::InvalidValue: return CUDA_ERROR_INVALID_VALUE;
    case Status::InvalidDevice: return CUDA_ERROR_INVALID_DEVICE;
    case Status::InvalidContext: return CUDA_ERROR_INVALID_CONTEXT;
    case Status::InvalidHandle: return CUDA_ERROR_INVALID_HANDLE;
    case Status::InvalidPointer: return CUDA_ERROR_INVALID_VALUE;
    case Status::OutOfMemory: return CUDA_ERROR_OUT_OF_MEMORY;
    case Status::NotReady: return CUDA_ERROR_NOT_READY;
    case Status::NotInitialized: return CUDA_ERROR_NOT_INITIALIZED;
    case Status::NotFound: return CUDA_ERROR_NOT_FOUND;
    case Status::NotSupported: return CUDA_ERROR_NOT_SUPPORTED;
    case Status::NotPermitted: return CUDA_ERROR_NOT_PERMITTED;
    case Status::AlreadyMapped: return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    case Status::ContextIsDestroyed: return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    case Status::PeerAccessAlreadyEnabled: return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    case Status::PeerAccessNotEnabled: return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    case Status::CaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case Status::CaptureInvalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case Status::CaptureMerge: return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    case Status::CaptureUnmatched: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    case Status::CaptureUnjoined: return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    case Status::CaptureIsolation: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case Status::CaptureImplicit: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    case Status::CapturedEvent: return CUDA_ERROR_CAPTURED_EVENT;
    case Status::CaptureWrongThread: return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    case Status::IllegalState: return CUDA_ERROR_ILLEGAL_STATE;
    case Status::GraphExecUpdateFailure: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    case Status::InvalidImage: return CUDA_ERROR_INVALID_IMAGE;
    case Status::NoBinaryForGpu: return CUDA_ERROR_NO_BINARY_FOR_GPU;
    case Status::InvalidPtx: return CUDA_ERROR_INVALID_PTX;
    case Status::LaunchOutOfResources: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case Status::InvalidClusterSize: return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    case Status::CooperativeLaunchTooLarge: return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    case Status::IllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case Status::MisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case Status::AssertFailed: return CUDA_ERROR_ASSERT;
    case Status::LaunchFailed: return CUDA_ERROR_LAUNCH_FAILED;
    case Status::Unknown: return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_ERROR_UNKNOWN;
}

// The backend once cuInit has succeeded, else nullptr. Never initialises anything.
inline Backend* initialized_backend() noexcept {
  Backend* b = Backend::peek();
  return b && b->driver_initialized() ? b : nullptr;
}

template <class F>
CUresult api_noinit(F&& body) noexcept {
  return guarded<CUresult>(CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_UNKNOWN, std::forward<F>(body));
}

template <class F>
CUresult api(F&& body) noexcept {
  Backend* b = initialized_backend();
  if (!b) return CUDA_ERROR_NOT_INITIALIZED;
  return guarded<CUresult>(CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_UNKNOWN, [&]() -> CUresult { return body(*b); });
}

// The shape of a call on one handle: CUDA_ERROR_INVALID_VALUE unless `args_ok` (the checks of
// the other arguments, made first, as the driver does), then `lookup`'s code for a bad handle
// (device_arg, function_arg, ...), else body(b, object).
template <class Handle, class Obj, class Body>
CUresult with_handle(bool args_ok, Handle h, CUresult (*lookup)(Backend&, Handle, Obj**), Body&& body) noexcept {
  return api([&](Backend& b) -> CUresult {
    if (!args_ok) return CUDA_ERROR_INVALID_VALUE;
    Obj* o = nullptr;
    if (CUresult r = lookup(b, h, &o)) return r;
    return body(b, o);
  });
}

// The shape of a getter: a null `out` is CUDA_ERROR_INVALID_VALUE, a bad handle `lookup`'s
// code, else *out = value(object).
template <class T, class Handle, class Obj, class Value>
CUresult query_handle(T* out, Handle h, CUresult (*lookup)(Backend&, Handle, Obj**), Value&& value) noexcept {
  return with_handle(out != nullptr, h, lookup, [&](Backend&, Obj* o) {
    *out = value(o);
    return CUDA_SUCCESS;
  });
}

// ---- handles -----------------------------------------------------------------------------------
// A CUcontext is the context's handle number (Backend::context_of_handle); nullptr for a
// value that names no context.
inline Context* ctx_of(CUcontext h) noexcept {
  Backend* b = Backend::peek();
  return b ? b->context_of_handle(h) : nullptr;
}
inline CUcontext handle_of(const Context* c) noexcept { return static_cast<CUcontext>(Backend::handle_of(c)); }
inline Stream* stream_of(CUstream h) noexcept { return reinterpret_cast<Stream*>(h); }
inline Event* event_of(CUevent h) noexcept { return reinterpret_cast<Event*>(h); }
inline CUdeviceptr dptr_of(const void* p) noexcept { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
inline void* ptr_of(CUdeviceptr d) noexcept { return reinterpret_cast<void*>(static_cast<uintptr_t>(d)); }

// The calling thread's current context. CUDA_ERROR_INVALID_CONTEXT when there is none;
// CUDA_ERROR_CONTEXT_IS_DESTROYED when it was destroyed (by this or another thread) or is a
// primary context released to zero. A dead context on the stack is kept alive by the stack,
// so it is safe to inspect.
inline CUresult current(Backend& b, Context** out) noexcept {
  Context* c = b.current_ctx();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  if (!c->active.load(std::memory_order_acquire)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  *out = c;
  return CUDA_SUCCESS;
}

// A context argument: must be a live context.
inline CUresult context_arg(Backend& b, CUcontext h, Context** out) noexcept {
  if (!h) return CUDA_ERROR_INVALID_CONTEXT;
  Context* c = ctx_of(h);
  if (!b.ctx_valid(c)) return CUDA_ERROR_INVALID_CONTEXT;
  *out = c;
  return CUDA_SUCCESS;
}

// A context argument where NULL means "the current context".
inline CUresult context_or_current(Backend& b, CUcontext h, Context** out) noexcept {
  return h ? context_arg(b, h, out) : current(b, out);
}

// with_handle() and query_handle() on the calling thread's current context.
template <class Body>
CUresult with_current(bool args_ok, Body&& body) noexcept {
  return with_handle(args_ok, CUcontext{}, context_or_current, std::forward<Body>(body));
}
template <class T, class Value>
CUresult query_current(T* out, Value&& value) noexcept {
  return query_handle(out, CUcontext{}, context_or_current, std::forward<Value>(value));
}

inline CUresult device_arg(Backend& b, CUdevice d, Device** out) noexcept {
  Device* dev = b.device(static_cast<int>(d));
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  *out = dev;
  return CUDA_SUCCESS;
}

// Stream argument: NULL, CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2) are the current
// context's default streams (NULL is the per-thread one for the _ptsz/_ptds entry points);
// any other value must be a live stream, which carries its own context.
inline CUresult stream_arg(Backend& b, CUstream h, bool ptsz, Stream** out) noexcept {
  const uintptr_t v = reinterpret_cast<uintptr_t>(h);
  if (v <= 2) {
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    return to_cu(b.stream_resolve(h, ctx, out, ptsz));
  }
  Stream* s = stream_of(h);
  if (!b.stream_valid(s)) return CUDA_ERROR_INVALID_HANDLE;
  *out = s;
  return CUDA_SUCCESS;
}

inline CUresult event_arg(Backend& b, CUevent h, Event** out) noexcept {
  Event* e = event_of(h);
  if (!h || !b.event_valid(e)) return CUDA_ERROR_INVALID_HANDLE;
  *out = e;
  return CUDA_SUCCESS;
}

// Peer access is offered between two different devices of the same architecture, never
// from a device to itself (cuDeviceCanAccessPeer reports 0 there, as the real driver does).
inline bool peer_capable(const Device* a, const Device* b) noexcept {
  return a != b && a->model.cc_major == b->model.cc_major && a->model.cc_minor == b->model.cc_minor;
}

// Cache and shared-memory bank configurations (contexts, functions, kernels): one of the
// CUfunc_cache / CUsharedconfig values.
inline bool cache_config_ok(int c) noexcept {
  return c >= CU_FUNC_CACHE_PREFER_NONE && c <= CU_FUNC_CACHE_PREFER_EQUAL;
}
inline bool shmem_config_ok(int c) noexcept {
  return c >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE && c <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE;
}

constexpr unsigned kind_bit(MemKind k) noexcept { return 1u << static_cast<unsigned>(k); }

// Copies a NUL-terminated string into a caller buffer of `len` bytes, truncating.
inline void copy_string(char* dst, int len, const std::string& src) noexcept {
  if (len <= 0) return;
  const size_t n = std::min(src.size(), static_cast<size_t>(len - 1));
  src.copy(dst, n);
  dst[n] = '\0';
}

}  // namespace fg::drv
