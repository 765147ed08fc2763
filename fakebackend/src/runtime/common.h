// SPDX-License-Identifier: Apache-2.0
// Shared by the CUDA Runtime API shims (libcudart.so.12 / .13): the fg::Status →
// cudaError_t mapping, the thread's last error, and the few helpers every entry point uses.
//
// Every runtime entry point has the same shape:
//
//   extern "C" FG_IMPL cudaError_t fgimpl_cudaFoo(...) {
//     return rt::api([&]() -> cudaError_t { ...validate, call the core... });
//   }
//
// rt::api() catches everything (no exception crosses the C boundary) and records any
// failure as the thread's last error, as every failing cudart call does.
#pragma once
#include "common/impl.h"
#include "core/backend.h"
#include "core/runtimes.h"
#include "core/versions.h"
#include "fakegpu/cudart_api.h"
#include "fakegpu/cuda_types.h"

#include <utility>

namespace fg::rt {

using fgapi::cudaError_t;

// Core status → runtime code. Calls whose real counterpart reports something more specific
// (cudaHostRegister overlap, cudaFree of an unknown pointer, ...) map at the call site.
constexpr cudaError_t to_cuda(Status s) noexcept {
  switch (s) {
    case Status::Ok: return fgapi::cudaSuccess;
    case Status::InvalidValue: return fgapi::cudaErrorInvalidValue;
    case Status::InvalidDevice: return fgapi::cudaErrorInvalidDevice;
    // CUDA_ERROR_INVALID_CONTEXT (201) surfaces in the runtime as cudaErrorDeviceUninitialized (201).
    case Status::InvalidContext: return fgapi::cudaErrorDeviceUninitialized;
    case Status::InvalidHandle: return fgapi::cudaErrorInvalidResourceHandle;
    // cudaFree/cudaFreeHost of an unknown or already freed pointer: "invalid argument".
    case Status::InvalidPointer: return fgapi::cudaErrorInvalidValue;
    case Status::OutOfMemory: return fgapi::cudaErrorMemoryAllocation;
    case Status::NotReady: return fgapi::cudaErrorNotReady;
    case Status::NotInitialized: return fgapi::cudaErrorInitializationError;
    case Status::NotFound: return fgapi::cudaErrorSymbolNotFound;
    case Status::NotSupported: return fgapi::cudaErrorNotSupported;
    case Status::NotPermitted: return fgapi::cudaErrorNotPermitted;
    case Status::AlreadyMapped: return fgapi::cudaErrorAlreadyMapped;
    case Status::ContextIsDestroyed: return fgapi::cudaErrorContextIsDestroyed;
    case Status::PeerAccessAlreadyEnabled: return fgapi::cudaErrorPeerAccessAlreadyEnabled;
    case Status::PeerAccessNotEnabled: return fgapi::cudaErrorPeerAccessNotEnabled;
    case Status::CaptureUnsupported: return fgapi::cudaErrorStreamCaptureUnsupported;
    case Status::CaptureInvalidated: return fgapi::cudaErrorStreamCaptureInvalidated;
    case Status::CaptureMerge: return fgapi::cudaErrorStreamCaptureMerge;
    case Status::CaptureUnmatched: return fgapi::cudaErrorStreamCaptureUnmatched;
    case Status::CaptureUnjoined: return fgapi::cudaErrorStreamCaptureUnjoined;
    case Status::CaptureIsolation: return fgapi::cudaErrorStreamCaptureIsolation;
    case Status::CaptureImplicit: return fgapi::cudaErrorStreamCaptureImplicit;
    case Status::CapturedEvent: return fgapi::cudaErrorCapturedEvent;
    case Status::CaptureWrongThread: return fgapi::cudaErrorStreamCaptureWrongThread;
    case Status::IllegalState: return fgapi::cudaErrorIllegalState;
    case Status::GraphExecUpdateFailure: return fgapi::cudaErrorGraphExecUpdateFailure;
    case Status::InvalidImage: return fgapi::cudaErrorInvalidKernelImage;
    case Status::NoBinaryForGpu: return fgapi::cudaErrorNoKernelImageForDevice;
    case Status::InvalidPtx: return fgapi::cudaErrorInvalidPtx;
    case Status::LaunchOutOfResources: return fgapi::cudaErrorLaunchOutOfResources;
    case Status::InvalidClusterSize: return fgapi::cudaErrorInvalidClusterSize;
    case Status::CooperativeLaunchTooLarge: return fgapi::cudaErrorCooperativeLaunchTooLarge;
    case Status::IllegalAddress: return fgapi::cudaErrorIllegalAddress;
    case Status::MisalignedAddress: return fgapi::cudaErrorMisalignedAddress;
    case Status::AssertFailed: return fgapi::cudaErrorAssert;
    case Status::LaunchFailed: return fgapi::cudaErrorLaunchFailure;
    case Status::Unknown: return fgapi::cudaErrorUnknown;
  }
  return fgapi::cudaErrorUnknown;
}

// Records a failure as the calling thread's last error (cudaGetLastError) and returns it.
inline cudaError_t ret(cudaError_t e) noexcept {
  if (e != fgapi::cudaSuccess) thread_state().last_error = static_cast<int>(e);
  return e;
}
inline cudaError_t ret(Status s) noexcept { return ret(to_cuda(s)); }

// The body of every entry point: exceptions become cudaErrorMemoryAllocation (bad_alloc) or
// cudaErrorUnknown, and any failure is recorded as the last error.
template <class F>
cudaError_t api(F&& body) noexcept {
  const cudaError_t e = ret(
      guarded<cudaError_t>(fgapi::cudaErrorMemoryAllocation, fgapi::cudaErrorUnknown, std::forward<F>(body)));
  runtimes::fake_used();  // after the body: the backend's own first lines (its devices) come first
  return e;
}

inline Backend& be() { return Backend::get(); }

// The context runtime calls work in: the current one (a driver context made current wins, as
// with the real runtime), else the current device's primary context, retained on first use.
// No devices at all → cudaErrorNoDevice.
cudaError_t context(Context** out);

// The body of the many entry points that work in that context: arguments failing `args_ok`
// (null out-pointers, bad flags) answer cudaErrorInvalidValue before the context is looked
// up, then body(ctx) runs; all of it under api().
template <class F>
cudaError_t api_ctx(bool args_ok, F&& body) noexcept {
  return api([&]() -> cudaError_t {
    if (!args_ok) return fgapi::cudaErrorInvalidValue;
    Context* ctx = nullptr;
    if (cudaError_t e = context(&ctx); e != fgapi::cudaSuccess) return e;
    return body(ctx);
  });
}

// A user stream handle → the core stream. 0 (and cudaStreamLegacy / cudaStreamPerThread)
// resolve to the default streams of the current context; `per_thread` is true for the
// _ptds/_ptsz entry points, where 0 means the per-thread default stream.
cudaError_t stream(fgapi::cudaStream_t handle, bool per_thread, Stream** out);

// The `count` bytes at `offset` of a registered __device__/__constant__ variable, named by the
// address of the host shadow __cudaRegisterVar registered (cudaMemcpyToSymbol, graph memcpy
// nodes): *where is its fake device storage there. cudaErrorInvalidSymbol for an unregistered
// variable, cudaErrorInvalidValue for a range past its end.
cudaError_t symbol_range(const void* symbol, size_t count, size_t offset, char** where);

// Device `ordinal`, or nullptr. Devices are fixed at initialisation.
inline Device* device(int ordinal) { return be().device(ordinal); }

// A device ordinal argument: cudaErrorNoDevice when there are no devices at all, else
// cudaErrorInvalidDevice for one out of range.
inline cudaError_t device_arg(int ordinal, Device** out) {
  if (be().device_count() == 0) return fgapi::cudaErrorNoDevice;
  Device* d = device(ordinal);
  if (!d) return fgapi::cudaErrorInvalidDevice;
  *out = d;
  return fgapi::cudaSuccess;
}

// A memory pool argument: null or not a live pool → cudaErrorInvalidValue.
inline cudaError_t pool_arg(fgapi::cudaMemPool_t handle, MemPool** out) {
  auto* p = reinterpret_cast<MemPool*>(handle);
  if (!p || !be().pool_valid(p)) return fgapi::cudaErrorInvalidValue;
  *out = p;
  return fgapi::cudaSuccess;
}

}  // namespace fg::rt
