// SPDX-License-Identifier: Apache-2.0
// Streams and events: create/destroy, query/synchronize, cross-stream waits, host
// callbacks, stream properties, event record/query/synchronize/elapsed time; with the _ptsz
// twins whose NULL stream is the per-thread default stream. Stream capture (begin/end, the
// capture queries) is in driver/graph.cpp; here, work on a capturing stream becomes graph
// nodes and synchronisation follows the capture rules (core/graph.h).
//
// Work runs in stream order on the core's per-stream queue (core/backend.h): at once when
// nothing is queued, behind a pending host function or event wait otherwise.
#include "driver/internal.h"

#include "core/graph.h"

#include <chrono>
#include <thread>

using namespace fg;
using namespace fg::drv;

namespace {

// User streams only: the default-stream sentinels (NULL, CU_STREAM_LEGACY,
// CU_STREAM_PER_THREAD) cannot be destroyed.
CUresult stream_destroy(CUstream h) {
  return api([&](Backend& b) -> CUresult {
    if (reinterpret_cast<uintptr_t>(h) <= 2) return CUDA_ERROR_INVALID_HANDLE;
    Stream* s = stream_of(h);
    if (!b.stream_valid(s)) return CUDA_ERROR_INVALID_HANDLE;
    return to_cu(b.stream_destroy(s));
  });
}

CUresult stream_create(CUstream* phStream, unsigned flags, int priority) {
  return api([&](Backend& b) -> CUresult {
    if (!phStream || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING))) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    if (!ctx->dev->model.attributes[attr::STREAM_PRIORITIES_SUPPORTED]) priority = 0;
    Stream* s = nullptr;
    if (CUresult r = to_cu(b.stream_create(ctx, flags, priority, &s))) return r;
    *phStream = reinterpret_cast<CUstream>(s);
    return CUDA_SUCCESS;
  });
}

CUresult query(CUstream h, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    if (CUresult r = to_cu(graph::check_sync(s))) return r;
    return b.stream_idle(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

CUresult synchronize(CUstream h, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    if (CUresult r = to_cu(graph::check_sync(s))) return r;
    return to_cu(b.stream_sync(s));
  });
}

// True when the capture of `s` took an event record or wait node (*r: the call's result).
bool captured_event(Stream* s, graph::NodeType type, Event* ev, CUresult* r) {
  auto node = [&] {
    graph::Params p;
    p.type = type;
    p.event = ev;
    return p;
  };
  return captured(s, false, node, r);
}

CUresult wait_event(CUstream h, CUevent e, unsigned flags, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    Event* ev = nullptr;
    if (CUresult r = event_arg(b, e, &ev)) return r;
    if (CUresult r; (flags & CU_EVENT_WAIT_EXTERNAL) && captured_event(s, graph::NodeType::WaitEvent, ev, &r)) return r;
    return to_cu(b.stream_wait_event(s, ev));
  });
}

CUresult add_callback(CUstream h, CUstreamCallback cb, void* userData, unsigned flags, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    return to_cu(b.stream_host_func(s, [cb, h, userData] { cb(h, CUDA_SUCCESS, userData); }));
  });
}

CUresult host_func(CUstream h, CUhostFn fn, void* userData, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    auto host_node = [&] {  // what a capturing stream records: the function and its argument
      graph::Params p;
      p.type = graph::NodeType::Host;
      p.host.fn = fn;
      p.host.user = userData;
      return p;
    };
    if (CUresult r; captured(s, false, host_node, &r)) return r;
    return to_cu(b.stream_host_func(s, [fn, userData] { fn(userData); }));
  });
}

// Reads one property of a resolved stream.
template <class T, class Get>
CUresult stream_property(CUstream h, bool ptsz, T* out, Get get) {
  return api([&](Backend& b) -> CUresult {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    *out = get(s);
    return CUDA_SUCCESS;
  });
}

CUresult get_ctx_v2(CUstream h, CUcontext* pctx, CUgreenCtx* pGreenCtx, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (!pctx || !pGreenCtx) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    *pctx = handle_of(s->ctx);
    *pGreenCtx = nullptr;  // no green contexts
    return CUDA_SUCCESS;
  });
}

CUresult event_create(CUevent* phEvent, unsigned flags) {
  return api([&](Backend& b) -> CUresult {
    constexpr unsigned kMask = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (flags & ~kMask)) return CUDA_ERROR_INVALID_VALUE;
    // An interprocess event must not record timing.
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    Event* e = nullptr;
    if (CUresult r = to_cu(b.event_create(ctx, flags, &e))) return r;
    *phEvent = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
  });
}

CUresult event_record(CUevent e, CUstream h, unsigned flags, bool ptsz) {
  return api([&](Backend& b) -> CUresult {
    if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    Event* ev = nullptr;
    if (CUresult r = event_arg(b, e, &ev)) return r;
    Stream* s = nullptr;
    if (CUresult r = stream_arg(b, h, ptsz, &s)) return r;
    if (s->ctx != ev->ctx) return CUDA_ERROR_INVALID_HANDLE;  // event and stream of different contexts
    if (CUresult r; (flags & CU_EVENT_RECORD_EXTERNAL) && captured_event(s, graph::NodeType::EventRecord, ev, &r))
      return r;
    return to_cu(b.event_record(ev, s));
  });
}

// Queries or waits for an event, as the capture rules allow (core/graph.h).
CUresult event_wait(CUevent h, Status (Backend::*op)(Event*)) {
  return with_handle(true, h, event_arg, [&](Backend& b, Event* e) -> CUresult {
    if (CUresult r = to_cu(graph::check_event(e))) return r;
    return to_cu((b.*op)(e));
  });
}

CUresult event_destroy(CUevent e) {
  return api([&](Backend& b) -> CUresult {
    Event* ev = nullptr;
    if (CUresult r = event_arg(b, e, &ev)) return r;
    return to_cu(b.event_destroy(ev));
  });
}

// Both events must have been recorded (else INVALID_HANDLE) and completed (else NOT_READY);
// events created with CU_EVENT_DISABLE_TIMING carry no time stamp (INVALID_HANDLE).
CUresult elapsed(float* ms, CUevent start, CUevent end) {
  return api([&](Backend& b) -> CUresult {
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    Event *a = nullptr, *z = nullptr;
    if (CUresult r = event_arg(b, start, &a)) return r;
    if (CUresult r = event_arg(b, end, &z)) return r;
    if ((a->flags | z->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    return to_cu(b.event_elapsed(a, z, ms));
  });
}

}  // namespace

// ---- stream memory operations --------------------------------------------------------------------------
namespace {

// cuda.h values (CUstreamWaitValue_flags / CUstreamWriteValue_flags).
constexpr unsigned kWaitGeq = 0x0, kWaitEq = 0x1, kWaitAnd = 0x2, kWaitNor = 0x3, kWaitFlush = 1u << 30;
constexpr unsigned kWriteNoMemoryBarrier = 0x1;

// The v1 entry points (8.0/9.0) work only where CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1
// is set (off by default on real drivers too); the _v2 ones (11.7) always.
CUresult mem_op_stream(Backend& b, CUstream h, bool ptsz, bool v1, size_t width, Stream** s) {
  if (CUresult r = stream_arg(b, h, ptsz, s)) return r;
  const auto& at = (*s)->ctx->dev->model.attributes;
  if (v1 && !at[attr::CAN_USE_STREAM_MEM_OPS_V1]) return CUDA_ERROR_NOT_SUPPORTED;
  if (width == 8 && !at[v1 ? attr::CAN_USE_64_BIT_STREAM_MEM_OPS_V1 : attr::CAN_USE_64_BIT_STREAM_MEM_OPS])
    return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

CUresult write_value(CUstream h, CUdeviceptr addr, uint64_t value, size_t width, unsigned flags, bool ptsz, bool v1) {
  return api([&](Backend& b) -> CUresult {
    if (flags & ~kWriteNoMemoryBarrier) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = mem_op_stream(b, h, ptsz, v1, width, &s)) return r;
    if (addr % width != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_side(b, ptr_of(addr), width, true, true)) return r;
    void* p = ptr_of(addr);
    return to_cu(b.stream_enqueue(s, [p, value, width] {
      if (width == 4)
        __atomic_store_n(static_cast<uint32_t*>(p), static_cast<uint32_t>(value), __ATOMIC_SEQ_CST);
      else
        __atomic_store_n(static_cast<uint64_t*>(p), value, __ATOMIC_SEQ_CST);
    }));
  });
}

// The wait blocks the stream (on its worker thread) until the condition holds.
CUresult wait_value(CUstream h, CUdeviceptr addr, uint64_t value, size_t width, unsigned flags, bool ptsz, bool v1) {
  return api([&](Backend& b) -> CUresult {
    const unsigned cond = flags & ~kWaitFlush;
    if (cond > kWaitNor) return CUDA_ERROR_INVALID_VALUE;
    Stream* s = nullptr;
    if (CUresult r = mem_op_stream(b, h, ptsz, v1, width, &s)) return r;
    const auto& at = s->ctx->dev->model.attributes;
    if (cond == kWaitNor && !at[attr::CAN_USE_STREAM_WAIT_VALUE_NOR]) return CUDA_ERROR_NOT_SUPPORTED;
    // The flush needs platform support (cuda.h: CU_STREAM_WAIT_VALUE_FLUSH "can be queried
    // with CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES"), which an H200 reports absent.
    if ((flags & kWaitFlush) && !at[attr::CAN_FLUSH_REMOTE_WRITES]) return CUDA_ERROR_NOT_SUPPORTED;
    if (addr % width != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_side(b, ptr_of(addr), width, true, false)) return r;
    const void* p = ptr_of(addr);
    return to_cu(b.stream_host_func(s, [p, value, width, cond] {
      const uint64_t mask = width == 4 ? 0xFFFFFFFFull : ~0ull;
      for (;;) {
        const uint64_t v = width == 4 ? __atomic_load_n(static_cast<const uint32_t*>(p), __ATOMIC_SEQ_CST)
                                      : __atomic_load_n(static_cast<const uint64_t*>(p), __ATOMIC_SEQ_CST);
        const uint64_t want = value & mask;
        const bool met = cond == kWaitGeq
                             ? width == 4 ? static_cast<int32_t>(v - want) >= 0 : static_cast<int64_t>(v - want) >= 0
                         : cond == kWaitEq  ? v == want
                         : cond == kWaitAnd ? (v & want) != 0
                                            : ((~(v | want)) & mask) != 0;
        if (met) return;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }));
  });
}

}  // namespace

#define FG_MEMOP(name, impl, T, width, v1)                                                                      \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUstream s, CUdeviceptr addr, T value, unsigned int flags) {        \
    return impl(s, addr, value, width, flags, false, v1);                                                       \
  }                                                                                                             \
  extern "C" FG_IMPL CUresult fgimpl_##name##_ptsz(CUstream s, CUdeviceptr addr, T value, unsigned int flags) { \
    return impl(s, addr, value, width, flags, true, v1);                                                        \
  }
FG_MEMOP(cuStreamWriteValue32, write_value, uint32_t, 4, true)
FG_MEMOP(cuStreamWriteValue32_v2, write_value, uint32_t, 4, false)
FG_MEMOP(cuStreamWriteValue64, write_value, uint64_t, 8, true)
FG_MEMOP(cuStreamWriteValue64_v2, write_value, uint64_t, 8, false)
FG_MEMOP(cuStreamWaitValue32, wait_value, uint32_t, 4, true)
FG_MEMOP(cuStreamWaitValue32_v2, wait_value, uint32_t, 4, false)
FG_MEMOP(cuStreamWaitValue64, wait_value, uint64_t, 8, true)
FG_MEMOP(cuStreamWaitValue64_v2, wait_value, uint64_t, 8, false)
#undef FG_MEMOP

// ---- streams -------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return stream_create(phStream, Flags, 0);
}
// Priorities outside [greatest, least] = [-5, 0] are clamped, as the real driver does.
extern "C" FG_IMPL CUresult fgimpl_cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return stream_create(phStream, flags, priority);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamDestroy(CUstream hStream) { return stream_destroy(hStream); }
extern "C" FG_IMPL CUresult fgimpl_cuStreamDestroy_v2(CUstream hStream) { return stream_destroy(hStream); }

extern "C" FG_IMPL CUresult fgimpl_cuStreamQuery(CUstream hStream) { return query(hStream, false); }
extern "C" FG_IMPL CUresult fgimpl_cuStreamQuery_ptsz(CUstream hStream) { return query(hStream, true); }
extern "C" FG_IMPL CUresult fgimpl_cuStreamSynchronize(CUstream hStream) { return synchronize(hStream, false); }
extern "C" FG_IMPL CUresult fgimpl_cuStreamSynchronize_ptsz(CUstream hStream) { return synchronize(hStream, true); }

extern "C" FG_IMPL CUresult fgimpl_cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return wait_event(hStream, hEvent, Flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return wait_event(hStream, hEvent, Flags, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData,
                                                       unsigned int flags) {
  return add_callback(hStream, callback, userData, flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void* userData,
                                                            unsigned int flags) {
  return add_callback(hStream, callback, userData, flags, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return host_func(hStream, fn, userData, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData) {
  return host_func(hStream, fn, userData, true);
}

#define FG_STREAM_GETTER(name, T, expr)                                               \
  extern "C" FG_IMPL CUresult fgimpl_##name(CUstream hStream, T* out) {               \
    return stream_property(hStream, false, out, [](Stream* s) -> T { return expr; }); \
  }                                                                                   \
  extern "C" FG_IMPL CUresult fgimpl_##name##_ptsz(CUstream hStream, T* out) {        \
    return stream_property(hStream, true, out, [](Stream* s) -> T { return expr; });  \
  }
FG_STREAM_GETTER(cuStreamGetPriority, int, s->priority)
FG_STREAM_GETTER(cuStreamGetFlags, unsigned int, s->flags)
FG_STREAM_GETTER(cuStreamGetCtx, CUcontext, handle_of(s->ctx))
FG_STREAM_GETTER(cuStreamGetId, unsigned long long, s->id)
FG_STREAM_GETTER(cuStreamGetDevice, CUdevice, s->ctx->dev->ordinal)
#undef FG_STREAM_GETTER

extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return get_ctx_v2(hStream, pCtx, pGreenCtx, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return get_ctx_v2(hStream, pCtx, pGreenCtx, true);
}

// ---- events --------------------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return event_create(phEvent, Flags);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventRecord(CUevent hEvent, CUstream hStream) {
  return event_record(hEvent, hStream, 0, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return event_record(hEvent, hStream, 0, true);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return event_record(hEvent, hStream, flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return event_record(hEvent, hStream, flags, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuEventQuery(CUevent hEvent) { return event_wait(hEvent, &Backend::event_query); }

extern "C" FG_IMPL CUresult fgimpl_cuEventSynchronize(CUevent hEvent) {
  return event_wait(hEvent, &Backend::event_sync);
}

extern "C" FG_IMPL CUresult fgimpl_cuEventDestroy(CUevent hEvent) { return event_destroy(hEvent); }
extern "C" FG_IMPL CUresult fgimpl_cuEventDestroy_v2(CUevent hEvent) { return event_destroy(hEvent); }

extern "C" FG_IMPL CUresult fgimpl_cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed(pMilliseconds, hStart, hEnd);
}
extern "C" FG_IMPL CUresult fgimpl_cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed(pMilliseconds, hStart, hEnd);
}

// ---- interprocess events ---------------------------------------------------------------------------
// The shared state is core/event_ipc.h. An event without CU_EVENT_INTERPROCESS has no handle:
// CUDA_ERROR_INVALID_HANDLE, the answer NVIDIA's driver gives there (HIP's parameter tests,
// which also run over CUDA, accept only the invalid-handle code or HIP's own
// invalid-configuration code for it: ROCm/HIP tests/catch/multiproc/hipIpcEventHandle.cc).
extern "C" FG_IMPL CUresult fgimpl_cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  return api([&](Backend& b) -> CUresult {
    if (!pHandle || !event) return CUDA_ERROR_INVALID_VALUE;
    Event* e = nullptr;
    if (CUresult r = event_arg(b, event, &e)) return r;
    return to_cu(b.event_ipc_handle(e, reinterpret_cast<unsigned char*>(pHandle->reserved)));
  });
}

// Opening a handle in the process that made it is CUDA_ERROR_INVALID_CONTEXT, as for memory
// handles (NVIDIA's driver answers "invalid device context" there: ROCm/hip pull 1984, run
// over CUDA 10; pytorch/pytorch pull 15974).
extern "C" FG_IMPL CUresult fgimpl_cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  return api([&](Backend& b) -> CUresult {
    if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult r = current(b, &ctx)) return r;
    Event* e = nullptr;
    if (CUresult r = to_cu(b.event_ipc_open(ctx, reinterpret_cast<const unsigned char*>(handle.reserved), &e)))
      return r;
    *phEvent = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
  });
}
