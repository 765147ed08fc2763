// SPDX-License-Identifier: Apache-2.0
// Runtime events: creation, recording in stream order, queries, synchronisation and timing.
// An event's timestamp is the host time at which its record was reached in its stream, so
// elapsed times are real, non-negative for events recorded in order, and ordered.
#include "runtime/capture.h"

#include <mutex>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;
using fg::rt::to_cuda;

namespace {

constexpr unsigned kEventFlags = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;

cudaError_t create(cudaEvent_t* event, unsigned flags) {
  if (!event) return cudaErrorInvalidValue;
  if (flags & ~kEventFlags) return cudaErrorInvalidValue;
  // Interprocess events must not time (the real runtime rejects the combination).
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return cudaErrorInvalidValue;
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  fg::Event* ev = nullptr;
  if (fg::Status s = be().event_create(ctx, flags, &ev); s != fg::Status::Ok) return to_cuda(s);
  *event = reinterpret_cast<cudaEvent_t>(ev);
  return cudaSuccess;
}

cudaError_t valid_event(cudaEvent_t event, fg::Event** out) {
  auto* ev = reinterpret_cast<fg::Event*>(event);
  if (!be().event_valid(ev)) return cudaErrorInvalidResourceHandle;
  *out = ev;
  return cudaSuccess;
}

// op(ev) on a valid event. Waiting on or querying an event recorded in an ongoing capture is
// refused first (core/graph.h).
template <class Op>
cudaError_t on_event(cudaEvent_t event, bool waits, Op op) {
  fg::Event* ev = nullptr;
  if (cudaError_t e = valid_event(event, &ev); e != cudaSuccess) return e;
  if (waits) {
    if (fg::Status st = fg::graph::check_event(ev); st != fg::Status::Ok) return to_cuda(st);
  }
  return to_cuda(op(ev));
}

cudaError_t record(cudaEvent_t event, cudaStream_t stream, unsigned flags, bool per_thread) {
  if (flags & ~cudaEventRecordExternal) return cudaErrorInvalidValue;
  fg::Event* ev = nullptr;
  if (cudaError_t e = valid_event(event, &ev); e != cudaSuccess) return e;
  fg::Stream* s = nullptr;
  if (cudaError_t e = fg::rt::stream(stream, per_thread, &s); e != cudaSuccess) return e;
  // Captured as an event record node.
  auto in_capture = [&] { return fg::rt::add_node(s, fg::rt::event_node(fg::graph::NodeType::EventRecord, ev)); };
  if (cudaError_t e; (flags & cudaEventRecordExternal) && fg::rt::captured(s, in_capture, &e)) return e;
  return to_cuda(be().event_record(ev, s));
}

}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaEventCreate(cudaEvent_t* event) {
  return api([&] { return create(event, cudaEventDefault); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return api([&] { return create(event, flags); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return api([&] { return record(event, stream, 0, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return api([&] { return record(event, stream, 0, true); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                               unsigned int flags) {
  return api([&] { return record(event, stream, flags, false); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                                    unsigned int flags) {
  return api([&] { return record(event, stream, flags, true); });
}

// cudaSuccess once every record of the event has been reached (or it was never recorded),
// else cudaErrorNotReady.
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventQuery(cudaEvent_t event) {
  return api([&] { return on_event(event, true, [](fg::Event* ev) { return be().event_query(ev); }); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaEventSynchronize(cudaEvent_t event) {
  return api([&] { return on_event(event, true, [](fg::Event* ev) { return be().event_sync(ev); }); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaEventDestroy(cudaEvent_t event) {
  return api([&] { return on_event(event, false, [](fg::Event* ev) { return be().event_destroy(ev); }); });
}

namespace {
// Milliseconds between the two records. Events created with cudaEventDisableTiming, or not
// recorded yet, are invalid handles for timing; records not reached yet are cudaErrorNotReady.
cudaError_t elapsed(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return cudaErrorInvalidValue;
  fg::Event* a = nullptr;
  fg::Event* b = nullptr;
  if (cudaError_t e = valid_event(start, &a); e != cudaSuccess) return e;
  if (cudaError_t e = valid_event(end, &b); e != cudaSuccess) return e;
  if ((a->flags | b->flags) & cudaEventDisableTiming) return cudaErrorInvalidResourceHandle;
  if (a == b) {
    // One event against itself: 0 ms once recorded (the core's two-event path would lock
    // the same mutex twice).
    std::lock_guard lock(a->mu);
    if (!a->recorded) return cudaErrorInvalidResourceHandle;
    if (a->pending) return cudaErrorNotReady;
    *ms = 0.0f;
    return cudaSuccess;
  }
  return to_cuda(be().event_elapsed(a, b, ms));
}
}  // namespace

// CUDA 13's cudaEventElapsedTime (both nodes) and 12.8's cudaEventElapsedTime_v2 share the
// signature and, here, the semantics.
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return api([&] { return elapsed(ms, start, end); });
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaEventElapsedTime_v2(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return api([&] { return elapsed(ms, start, end); });
}

// ---- interprocess events ------------------------------------------------------------------------
// The driver's rules (driver/stream_event.cpp), in the runtime's codes: an event without
// cudaEventInterprocess → cudaErrorInvalidResourceHandle; a handle opened in the process
// that made it → cudaErrorDeviceUninitialized (201, "invalid device context").
extern "C" FG_IMPL cudaError_t fgimpl_cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  return api([&]() -> cudaError_t {
    if (!handle || !event) return cudaErrorInvalidValue;
    fg::Event* ev = nullptr;
    if (cudaError_t e = valid_event(event, &ev); e != cudaSuccess) return e;
    static_assert(sizeof(cudaIpcEventHandle_t) == 64);
    return to_cuda(be().event_ipc_handle(ev, reinterpret_cast<unsigned char*>(handle->reserved)));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  return fg::rt::api_ctx(event, [&](fg::Context* ctx) -> cudaError_t {
    fg::Event* ev = nullptr;
    if (fg::Status s = be().event_ipc_open(ctx, reinterpret_cast<const unsigned char*>(handle.reserved), &ev);
        s != fg::Status::Ok)
      return to_cuda(s);
    *event = reinterpret_cast<cudaEvent_t>(ev);
    return cudaSuccess;
  });
}
