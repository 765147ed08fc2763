// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: streams (create/destroy/query/synchronize, callbacks, waits, properties,
// capture queries) and events (record/query/synchronize/elapsed time).
#include "backend/driver_test.h"

#include <atomic>
#include <vector>

using namespace drvtest;

namespace {

struct Order {
  std::mutex mu;
  std::vector<int> seen;
  void add(int v) {
    std::lock_guard lock(mu);
    seen.push_back(v);
  }
};
struct Step {
  Order* order;
  int value;
  static void run(void* self) {
    auto* s = static_cast<Step*>(self);
    s->order->add(s->value);
  }
};

struct CallbackSeen {
  CUstream stream = nullptr;
  CUresult status = CUDA_ERROR_UNKNOWN;
  std::atomic<int> calls{0};
};
void callback(CUstream s, CUresult status, void* user) {
  auto* seen = static_cast<CallbackSeen*>(user);
  seen->stream = s;
  seen->status = status;
  ++seen->calls;
}

CUstream bogus_stream() { return reinterpret_cast<CUstream>(uintptr_t{0xdeadbeef0}); }
CUevent bogus_event() { return reinterpret_cast<CUevent>(uintptr_t{0xdeadbeef0}); }

// What a create call, `create(&handle, flags)`, refuses: to run with no current context, to
// go without a place for the handle, and `bad_flags`.
template <class Handle>
void check_create_refusals(CUresult (*create)(Handle*, unsigned), unsigned bad_flags) {
  clear_stack();
  Handle h = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, create(&h, 0));
  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, create(&h, bad_flags));
}

}  // namespace

TEST_CASE("driver: stream create and destroy", "[driver]") {
  check_create_refusals(CU(cuStreamCreate), 2);
  Ctx ctx(0);
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  unsigned flags = 9;
  CU_OK(CU(cuStreamGetFlags)(s, &flags));
  CHECK(flags == CU_STREAM_NON_BLOCKING);
  int prio = 9;
  CU_OK(CU(cuStreamGetPriority)(s, &prio));
  CHECK(prio == 0);
  CUcontext c = nullptr;
  CU_OK(CU(cuStreamGetCtx)(s, &c));
  CHECK(c == ctx.ctx);
  CUdevice d = -1;
  CU_OK(CU(cuStreamGetDevice)(s, &d));
  CHECK(d == 0);
  unsigned long long id1 = 0, id2 = 0;
  CU_OK(CU(cuStreamGetId)(s, &id1));
  CUstream s2 = nullptr;
  CU_OK(CU(cuStreamCreateWithPriority)(&s2, 0, -3));
  CU_OK(CU(cuStreamGetId)(s2, &id2));
  CHECK(id1 != id2);
  CU_OK(CU(cuStreamGetPriority)(s2, &prio));
  CHECK(prio == -3);
  CU_OK(CU(cuStreamDestroy_v2)(s2));
  CU_OK(CU(cuStreamCreateWithPriority)(&s2, 0, -100));  // clamped to the greatest priority
  CU_OK(CU(cuStreamGetPriority)(s2, &prio));
  CHECK(prio == -5);
  CU_OK(CU(cuStreamDestroy_v2)(s2));
  CU_OK(CU(cuStreamCreateWithPriority)(&s2, 0, 7));  // ... and to the least
  CU_OK(CU(cuStreamGetPriority)(s2, &prio));
  CHECK(prio == 0);
  CU_OK(CU(cuStreamDestroy_v2)(s2));

  // The default streams have properties too.
  CU_OK(CU(cuStreamGetCtx)(nullptr, &c));
  CHECK(c == ctx.ctx);
  CU_OK(CU(cuStreamGetFlags)(CU_STREAM_LEGACY, &flags));
  CHECK(flags == 0);
  CU_OK(CU(cuStreamGetPriority)(CU_STREAM_PER_THREAD, &prio));
  CHECK(prio == 0);

  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamDestroy_v2)(s));  // twice
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamDestroy_v2)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamDestroy_v2)(CU_STREAM_LEGACY));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamDestroy_v2)(bogus_stream()));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamQuery)(s));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamSynchronize)(bogus_stream()));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamGetFlags)(s, &flags));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamGetFlags)(nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamGetPriority)(nullptr, nullptr));
  clear_stack();
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuStreamQuery)(nullptr));  // the NULL stream needs a context
}

TEST_CASE("driver: host functions and callbacks run in stream order", "[driver][threads]") {
  Ctx ctx(0);
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, 0));
  Order order;
  Gate gate;
  Step steps[] = {{&order, 1}, {&order, 2}, {&order, 3}};
  CallbackSeen seen;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuLaunchHostFunc)(s, &Step::run, &steps[0]));
  CU_OK(CU(cuStreamAddCallback)(s, &callback, &seen, 0));
  CU_OK(CU(cuLaunchHostFunc)(s, &Step::run, &steps[1]));
  CU_OK(CU(cuLaunchHostFunc)(s, &Step::run, &steps[2]));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(s));
  CHECK(order.seen.empty());
  gate.open = true;
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuStreamQuery)(s));
  CHECK(order.seen == std::vector<int>{1, 2, 3});
  CHECK(seen.calls == 1);
  CHECK(seen.stream == s);
  CHECK(seen.status == CUDA_SUCCESS);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamAddCallback)(s, &callback, &seen, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamAddCallback)(s, nullptr, &seen, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuLaunchHostFunc)(s, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuLaunchHostFunc)(bogus_stream(), &Step::run, &steps[0]));
  // Destroying a stream lets its queued work finish first.
  Gate gate2;
  Step last{&order, 4};
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate2));
  CU_OK(CU(cuLaunchHostFunc)(s, &Step::run, &last));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate2.open = true;
  });
  CU_OK(CU(cuStreamDestroy_v2)(s));
  opener.join();
  CHECK(order.seen == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("driver: events: record, query, synchronize, elapsed time", "[driver]") {
  check_create_refusals(CU(cuEventCreate), 0x10);
  Ctx ctx(0);
  CUevent e = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventCreate)(&e, CU_EVENT_INTERPROCESS));  // needs DISABLE_TIMING
  CUevent a = nullptr, b = nullptr, never = nullptr, notime = nullptr;
  CU_OK(CU(cuEventCreate)(&a, CU_EVENT_DEFAULT));
  CU_OK(CU(cuEventCreate)(&b, CU_EVENT_BLOCKING_SYNC));
  CU_OK(CU(cuEventCreate)(&never, 0));
  CU_OK(CU(cuEventCreate)(&notime, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS));
  CU_OK(CU(cuEventQuery)(never));  // never recorded: complete

  float ms = -1;
  CU_OK(CU(cuEventRecord)(a, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CU_OK(CU(cuEventRecord)(b, nullptr));
  CU_OK(CU(cuEventSynchronize)(b));
  CU_OK(CU(cuEventElapsedTime)(&ms, a, b));
  CHECK(ms >= 19.0f);
  CHECK(ms < 5000.0f);
  float ms2 = -1;
  CU_OK(CU(cuEventElapsedTime_v2)(&ms2, a, b));
  CHECK(ms2 == ms);
  CU_OK(CU(cuEventElapsedTime)(&ms2, b, a));
  CHECK(ms2 == -ms);
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventElapsedTime)(&ms, a, never));  // not recorded
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventElapsedTime_v2)(&ms, never, b));
  CU_OK(CU(cuEventRecord)(notime, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventElapsedTime)(&ms, a, notime));  // no timing
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventElapsedTime)(nullptr, a, b));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventElapsedTime)(&ms, a, bogus_event()));

  // A record behind pending work is not complete until the work is.
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuEventRecord)(b, s));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuEventQuery)(b));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuEventElapsedTime)(&ms, a, b));
  // Another stream waiting on it waits too.
  CUstream s2 = nullptr;
  CU_OK(CU(cuStreamCreate)(&s2, CU_STREAM_NON_BLOCKING));
  CU_OK(CU(cuStreamWaitEvent)(s2, b, 0));
  Order order;
  Step after{&order, 7};
  CU_OK(CU(cuLaunchHostFunc)(s2, &Step::run, &after));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(s2));
  CHECK(order.seen.empty());
  gate.open = true;
  CU_OK(CU(cuEventSynchronize)(b));
  CU_OK(CU(cuEventQuery)(b));
  CU_OK(CU(cuStreamSynchronize)(s2));
  CHECK(order.seen == std::vector<int>{7});
  CU_OK(CU(cuEventElapsedTime)(&ms, a, b));
  CHECK(ms >= 19.0f);

  CU_OK(CU(cuEventRecordWithFlags)(a, s, CU_EVENT_RECORD_EXTERNAL));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventRecordWithFlags)(a, s, 2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamWaitEvent)(s2, b, 2));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamWaitEvent)(s2, bogus_event(), 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamWaitEvent)(bogus_stream(), b, 0));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventRecord)(bogus_event(), s));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventRecord)(a, bogus_stream()));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventQuery)(bogus_event()));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventSynchronize)(nullptr));
  // Events and streams of different contexts do not mix.
  {
    Ctx other(0);
    CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventRecord)(a, nullptr));
  }

  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_OK(CU(cuStreamDestroy_v2)(s2));
  for (CUevent ev : {a, b, never, notime}) CU_OK(CU(cuEventDestroy_v2)(ev));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventDestroy_v2)(a));  // twice
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventQuery)(a));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventDestroy_v2)(nullptr));
}

TEST_CASE("driver: stream capture queries", "[driver]") {
  Ctx ctx(0);
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, 0));
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  CU_OK(CU(cuStreamIsCapturing)(s, &st));
  CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
  st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  CU_OK(CU(cuStreamIsCapturing)(nullptr, &st));
  CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
  uint64_t id = 5;
  CUgraph g = reinterpret_cast<CUgraph>(1);
  const CUgraphNode* deps = reinterpret_cast<const CUgraphNode*>(1);
  const void* edges = &id;
  size_t ndeps = 5;
  CU_OK(CU(cuStreamGetCaptureInfo_v3)(s, &st, &id, &g, &deps, &edges, &ndeps));
  CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
  CHECK(g == nullptr);
  CHECK(ndeps == 0);
  CU_OK(CU(cuStreamGetCaptureInfo_v3)(s, &st, nullptr, nullptr, nullptr, nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamIsCapturing)(s, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamIsCapturing)(bogus_stream(), &st));
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  CU_OK(CU(cuThreadExchangeStreamCaptureMode)(&mode));
  CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
  CU_OK(CU(cuThreadExchangeStreamCaptureMode)(&mode));
  CHECK(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
  mode = static_cast<CUstreamCaptureMode>(7);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuThreadExchangeStreamCaptureMode)(&mode));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuThreadExchangeStreamCaptureMode)(nullptr));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

TEST_CASE("driver: stream memory operations", "[driver]") {
  Ctx ctx(0);
  const CUdeviceptr flag = alloc_filled(64, 0);
  CU_OK(CU(cuStreamWriteValue32_v2)(nullptr, flag, 0xA1B2C3D4u, 0));
  CU_OK(CU(cuStreamWriteValue64_v2)(nullptr, flag + 8, 0x1122334455667788ull, 0));
  uint32_t w32 = 0;
  uint64_t w64 = 0;
  CU_OK(CU(cuMemcpyDtoH_v2)(&w32, flag, 4));
  CU_OK(CU(cuMemcpyDtoH_v2)(&w64, flag + 8, 8));
  CHECK(w32 == 0xA1B2C3D4u);
  CHECK(w64 == 0x1122334455667788ull);
  // The 8.0 entry points need CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, off as on real drivers.
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuStreamWriteValue32)(nullptr, flag, 1, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamWriteValue32_v2)(nullptr, flag + 2, 1, 0));   // misaligned
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamWriteValue32_v2)(nullptr, flag + 64, 1, 0));  // outside
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamWriteValue32_v2)(nullptr, flag, 1, 2));       // bad flags

  // A stream waiting on a value proceeds when another stream writes it.
  CUstream waiter = nullptr, writer = nullptr;
  CU_OK(CU(cuStreamCreate)(&waiter, CU_STREAM_NON_BLOCKING));
  CU_OK(CU(cuStreamCreate)(&writer, CU_STREAM_NON_BLOCKING));
  CU_OK(CU(cuStreamWaitValue32_v2)(waiter, flag + 16, 5, 0x1 /* EQ */));
  Order order;
  Step step{&order, 1};
  CU_OK(CU(cuLaunchHostFunc)(waiter, &Step::run, &step));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(waiter));
  CHECK(order.seen.empty());
  CU_OK(CU(cuStreamWriteValue32_v2)(writer, flag + 16, 5, 0));
  CU_OK(CU(cuStreamSynchronize)(waiter));
  CHECK(order.seen == std::vector<int>{1});
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuStreamWaitValue32_v2)(waiter, flag, 1, 7));
  // CU_STREAM_WAIT_VALUE_FLUSH needs CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES (0 on an H200).
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuStreamWaitValue32_v2)(waiter, flag, 1, 1u << 30));
  CU_OK(CU(cuStreamDestroy_v2)(waiter));
  CU_OK(CU(cuStreamDestroy_v2)(writer));
  CU_OK(CU(cuMemFree_v2)(flag));
  CU_OK(CU(cuProfilerStart)());
  CU_OK(CU(cuProfilerStop)());
}
