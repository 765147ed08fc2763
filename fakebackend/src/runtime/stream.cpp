// SPDX-License-Identifier: Apache-2.0
// Runtime streams: creation and destruction, queries and synchronisation, waits on events,
// host callbacks (run on the stream's worker thread, in stream order) and stream properties.
// Stream capture (cudaStreamBeginCapture …, the capture queries) is in runtime/graph.cpp;
// here, work on a capturing stream becomes graph nodes and synchronisation follows the
// capture rules (core/graph.h).
#include "runtime/capture.h"

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::to_cuda;

namespace {

bool is_default_handle(cudaStream_t h) { return reinterpret_cast<uintptr_t>(h) <= cudaStreamPerThreadValue; }

cudaError_t create(cudaStream_t* pStream, unsigned flags, int priority) {
  if (!pStream) return cudaErrorInvalidValue;
  if (flags & ~cudaStreamNonBlocking) return cudaErrorInvalidValue;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  fg::Stream* s = nullptr;
  if (fg::Status st = be().stream_create(ctx, flags, priority, &s); st != fg::Status::Ok) return to_cuda(st);
  *pStream = reinterpret_cast<cudaStream_t>(s);
  return cudaSuccess;
}

cudaError_t query(cudaStream_t stream, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (fg::Status st = fg::graph::check_sync(s); st != fg::Status::Ok) return to_cuda(st);
  return be().stream_idle(s) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t synchronize(cudaStream_t stream, bool per_thread) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  if (fg::Status st = fg::graph::check_sync(s); st != fg::Status::Ok) return to_cuda(st);
  return to_cuda(be().stream_sync(s));
}

cudaError_t wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags, bool per_thread) {
  if (flags & ~cudaEventWaitExternal) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  auto* ev = reinterpret_cast<fg::Event*>(event);
  if (!be().event_valid(ev)) return cudaErrorInvalidResourceHandle;
  // Captured as an event wait node.
  auto in_capture = [&] { return fg::rt::add_node(s, fg::rt::event_node(fg::graph::NodeType::WaitEvent, ev)); };
  if (cudaError_t e; (flags & cudaEventWaitExternal) && fg::rt::captured(s, in_capture, &e)) return e;
  return to_cuda(be().stream_wait_event(s, ev));
}

// Callbacks receive the handle the caller passed (0 stays 0) and cudaSuccess: no earlier
// work on a fake stream can fail.
cudaError_t add_callback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned flags,
                         bool per_thread) {
  if (!callback || flags != 0) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return to_cuda(be().stream_host_func(s, [callback, stream, userData] { callback(stream, cudaSuccess, userData); }));
}

cudaError_t launch_host_func(cudaStream_t stream, cudaHostFn_t fn, void* userData, bool per_thread) {
  if (!fn) return cudaErrorInvalidValue;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  auto in_capture = [&] {  // a host node (function and argument)
    fg::graph::Params p;
    p.type = fg::graph::NodeType::Host;
    p.host.fn = fn;
    p.host.user = userData;
    return fg::rt::add_node(s, std::move(p));
  };
  if (cudaError_t e; fg::rt::captured(s, in_capture, &e)) return e;
  return to_cuda(be().stream_host_func(s, [fn, userData] { fn(userData); }));
}

template <class F>
cudaError_t with_stream(cudaStream_t stream, bool per_thread, F&& f) {
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  return f(s);
}

cudaError_t get_priority(cudaStream_t stream, int* priority, bool per_thread) {
  if (!priority) return cudaErrorInvalidValue;
  return with_stream(stream, per_thread, [&](fg::Stream* s) {
    *priority = s->priority;
    return cudaSuccess;
  });
}

cudaError_t get_flags(cudaStream_t stream, unsigned* flags, bool per_thread) {
  if (!flags) return cudaErrorInvalidValue;
  return with_stream(stream, per_thread, [&](fg::Stream* s) {
    *flags = s->flags;
    return cudaSuccess;
  });
}

cudaError_t get_device(cudaStream_t stream, int* device, bool per_thread) {
  if (!device) return cudaErrorInvalidValue;
  return with_stream(stream, per_thread, [&](fg::Stream* s) {
    *device = s->ctx->dev->ordinal;
    return cudaSuccess;
  });
}

cudaError_t get_id(cudaStream_t stream, unsigned long long* id, bool per_thread) {
  if (!id) return cudaErrorInvalidValue;
  return with_stream(stream, per_thread, [&](fg::Stream* s) {
    *id = s->id;
    return cudaSuccess;
  });
}

}  // namespace

// ---- creation / destruction -----------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamCreate(cudaStream_t* pStream) {
  return api([&] { return create(pStream, cudaStreamDefault, 0); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return api([&] { return create(pStream, flags, 0); });
}

// Priorities outside [greatest -5, least 0] are clamped, as the real call does.
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags,
                                                                   int priority) {
  return api([&] { return create(pStream, flags, priority); });
}

// Pending work completes first; the default streams cannot be destroyed.
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamDestroy(cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (is_default_handle(stream)) return cudaErrorInvalidResourceHandle;
    return to_cuda(be().stream_destroy(reinterpret_cast<fg::Stream*>(stream)));
  });
}

// ---- queries, synchronisation, ordering ----------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamQuery(cudaStream_t stream) {
  return api([&] { return query(stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamQuery_ptsz(cudaStream_t stream) {
  return api([&] { return query(stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamSynchronize(cudaStream_t stream) {
  return api([&] { return synchronize(stream, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return api([&] { return synchronize(stream, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return api([&] { return wait_event(stream, event, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                               unsigned int flags) {
  return api([&] { return wait_event(stream, event, flags, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                                            void* userData, unsigned int flags) {
  return api([&] { return add_callback(stream, callback, userData, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                                                 void* userData, unsigned int flags) {
  return api([&] { return add_callback(stream, callback, userData, flags, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return api([&] { return launch_host_func(stream, fn, userData, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return api([&] { return launch_host_func(stream, fn, userData, true); });
}

// ---- properties ------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  return api([&] { return get_priority(hStream, priority, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetPriority_ptsz(cudaStream_t hStream, int* priority) {
  return api([&] { return get_priority(hStream, priority, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  return api([&] { return get_flags(hStream, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int* flags) {
  return api([&] { return get_flags(hStream, flags, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  return api([&] { return get_device(hStream, device, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetDevice_ptsz(cudaStream_t hStream, int* device) {
  return api([&] { return get_device(hStream, device, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  return api([&] { return get_id(hStream, streamId, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long* streamId) {
  return api([&] { return get_id(hStream, streamId, true); });
}
