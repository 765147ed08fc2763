// SPDX-License-Identifier: Apache-2.0
// Runtime streams and events: lifetimes, stream order of host functions and copies, event
// timing, waits, capture queries, and the errors for bad handles and flags.
#include "runtime_api.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using namespace rtt;

namespace {

const auto kBadStream = reinterpret_cast<cudaStream_t>(0xdead0);
const auto kBadEvent = reinterpret_cast<cudaEvent_t>(0xdead0);

// A host function that blocks its stream until released, so work queues behind it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  static void wait(void* self) {
    auto* g = static_cast<Gate*>(self);
    std::unique_lock lock(g->mu);
    g->cv.wait(lock, [g] { return g->open; });
  }
  void release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE_METHOD(Case, "stream creation, properties and destruction", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(s != nullptr);
  unsigned flags = 99;
  int prio = 99, dev = -1;
  unsigned long long id1 = 0, id2 = 0;
  CHECK(r.cudaStreamGetFlags(s, &flags) == cudaSuccess);
  CHECK(flags == cudaStreamDefault);
  CHECK(r.cudaStreamGetPriority(s, &prio) == cudaSuccess);
  CHECK(prio == 0);
  CHECK(r.cudaStreamGetDevice(s, &dev) == cudaSuccess);
  CHECK(dev == 0);
  CHECK(r.cudaStreamGetId(s, &id1) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s) == cudaSuccess);

  cudaStream_t nb = nullptr, hi = nullptr, lo = nullptr;
  REQUIRE(r.cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking) == cudaSuccess);
  CHECK(r.cudaStreamGetFlags(nb, &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
  CHECK(r.cudaStreamGetId(nb, &id2) == cudaSuccess);
  CHECK(id1 != id2);
  REQUIRE(r.cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, -5) == cudaSuccess);
  CHECK(r.cudaStreamGetPriority(hi, &prio) == cudaSuccess);
  CHECK(prio == -5);
  REQUIRE(r.cudaStreamCreateWithPriority(&lo, 0, -100) == cudaSuccess);  // clamped to the range
  CHECK(r.cudaStreamGetPriority(lo, &prio) == cudaSuccess);
  CHECK(prio == -5);

  // Default streams.
  CHECK(r.cudaStreamQuery(nullptr) == cudaSuccess);
  CHECK(r.cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  CHECK(r.cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess);
  CHECK(r.cudaStreamGetPriority(nullptr, &prio) == cudaSuccess);
  CHECK(prio == 0);
  CHECK(r.cudaStreamDestroy(nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamDestroy(cudaStreamLegacy) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamDestroy(cudaStreamPerThread) == cudaErrorInvalidResourceHandle);

  // Bad arguments.
  CHECK(r.cudaStreamCreate(nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamCreateWithFlags(&s, 2) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamGetFlags(s, nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamGetPriority(kBadStream, &prio) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamQuery(kBadStream) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamSynchronize(kBadStream) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaGetLastError() == cudaErrorInvalidResourceHandle);

  for (cudaStream_t x : {s, nb, hi, lo}) CHECK(r.cudaStreamDestroy(x) == cudaSuccess);
  CHECK(r.cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);  // destroyed twice
  CHECK(r.cudaStreamQuery(s) == cudaErrorInvalidResourceHandle);
}

TEST_CASE_METHOD(Case, "host functions and callbacks run in stream order", "[runtime]") {
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  Gate gate;
  Order order;
  std::vector<Step> steps;
  steps.reserve(8);
  for (int i = 0; i < 8; ++i) steps.push_back({&order, i});

  // Blocked behind the gate, the stream queues everything that follows.
  REQUIRE(r.cudaLaunchHostFunc(s, &Gate::wait, &gate) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s) == cudaErrorNotReady);
  CHECK(r.cudaGetLastError() == cudaErrorNotReady);
  const std::vector<unsigned char> src(1 << 16, 0x42);
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, src.size()) == cudaSuccess);
  REQUIRE(r.cudaLaunchHostFunc(s, record_step, &steps[0]) == cudaSuccess);
  REQUIRE(r.cudaMemcpyAsync(d, src.data(), src.size(), cudaMemcpyHostToDevice, s) == cudaSuccess);
  struct CbData {
    Step step;
    cudaStream_t stream;
    cudaStream_t seen = nullptr;
    cudaError_t status = cudaErrorUnknown;
  } cb{{&order, 1}, s};
  auto callback = [](cudaStream_t st, cudaError_t status, void* p) {
    auto* c = static_cast<CbData*>(p);
    c->seen = st;
    c->status = status;
    record_step(&c->step);
  };
  REQUIRE(r.cudaStreamAddCallback(s, callback, &cb, 0) == cudaSuccess);
  for (int i = 2; i < 8; ++i) REQUIRE(r.cudaLaunchHostFunc(s, record_step, &steps[i]) == cudaSuccess);
  {
    std::lock_guard lock(order.mu);
    CHECK(order.seen.empty());  // nothing ran past the gate
  }
  gate.release();
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s) == cudaSuccess);
  CHECK(order.seen == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(cb.seen == s);
  CHECK(cb.status == cudaSuccess);
  std::vector<unsigned char> back(src.size());
  REQUIRE(r.cudaMemcpy(back.data(), d, back.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == src);

  CHECK(r.cudaLaunchHostFunc(s, nullptr, nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamAddCallback(s, callback, &cb, 1) == cudaErrorInvalidValue);
  CHECK(r.cudaLaunchHostFunc(kBadStream, record_step, &steps[0]) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaFree(d) == cudaSuccess);
  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "a queued async copy from pageable memory is staged at the call", "[runtime]") {
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  Gate gate;
  REQUIRE(r.cudaLaunchHostFunc(s, &Gate::wait, &gate) == cudaSuccess);
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, 256) == cudaSuccess);
  {
    std::vector<unsigned char> temp(256, 0x99);  // gone before the stream reaches the copy
    REQUIRE(r.cudaMemcpyAsync(d, temp.data(), temp.size(), cudaMemcpyHostToDevice, s) == cudaSuccess);
    std::fill(temp.begin(), temp.end(), 0);
  }
  gate.release();
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  unsigned char back[256];
  REQUIRE(r.cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back[0] == 0x99);
  CHECK(back[255] == 0x99);
  CHECK(r.cudaFree(d) == cudaSuccess);
  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "events: record, query, synchronize, elapsed time", "[runtime]") {
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  cudaEvent_t a = nullptr, b = nullptr, c = nullptr;
  REQUIRE(r.cudaEventCreate(&a) == cudaSuccess);
  REQUIRE(r.cudaEventCreateWithFlags(&b, cudaEventBlockingSync) == cudaSuccess);
  REQUIRE(r.cudaEventCreate(&c) == cudaSuccess);
  CHECK(r.cudaEventQuery(a) == cudaSuccess);  // never recorded: complete
  CHECK(r.cudaEventSynchronize(a) == cudaSuccess);
  float ms = -1;
  CHECK(r.cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);  // not recorded

  REQUIRE(r.cudaEventRecord(a, s) == cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(r.cudaEventRecord(b, s) == cudaSuccess);
  REQUIRE(r.cudaEventRecordWithFlags(c, s, cudaEventRecordDefault) == cudaSuccess);
  REQUIRE(r.cudaEventSynchronize(c) == cudaSuccess);
  CHECK(r.cudaEventQuery(b) == cudaSuccess);
  REQUIRE(r.cudaEventElapsedTime(&ms, a, b) == cudaSuccess);
  CHECK(ms >= 19.0f);
  CHECK(ms < 5000.0f);
  float bc = -1;
  REQUIRE(r.cudaEventElapsedTime(&bc, b, c) == cudaSuccess);
  CHECK(bc >= 0.0f);
  float ac = -1;
  REQUIRE(r.cudaEventElapsedTime(&ac, a, c) == cudaSuccess);
  CHECK(ac >= ms);  // ordered
  CHECK(r.cudaEventElapsedTime(&ms, a, a) == cudaSuccess);
  CHECK(ms == 0.0f);

  // A record queued behind blocked work is not reached yet.
  Gate gate;
  REQUIRE(r.cudaLaunchHostFunc(s, &Gate::wait, &gate) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(c, s) == cudaSuccess);
  CHECK(r.cudaEventQuery(c) == cudaErrorNotReady);
  CHECK(r.cudaEventElapsedTime(&ms, a, c) == cudaErrorNotReady);
  // Another stream waiting on the event queues behind it too.
  cudaStream_t s2 = nullptr;
  REQUIRE(r.cudaStreamCreate(&s2) == cudaSuccess);
  REQUIRE(r.cudaStreamWaitEvent(s2, c, 0) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s2) == cudaErrorNotReady);
  gate.release();
  REQUIRE(r.cudaEventSynchronize(c) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s2) == cudaSuccess);
  CHECK(r.cudaEventQuery(c) == cudaSuccess);
  CHECK(r.cudaStreamQuery(s2) == cudaSuccess);

  // Events without timing, and bad arguments.
  cudaEvent_t nt = nullptr;
  REQUIRE(r.cudaEventCreateWithFlags(&nt, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(nt, nullptr) == cudaSuccess);
  REQUIRE(r.cudaEventSynchronize(nt) == cudaSuccess);
  CHECK(r.cudaEventElapsedTime(&ms, a, nt) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventElapsedTime(&ms, nt, a) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventElapsedTime(nullptr, a, b) == cudaErrorInvalidValue);
  CHECK(r.cudaEventCreateWithFlags(&nt, cudaEventInterprocess) == cudaErrorInvalidValue);  // needs DisableTiming
  CHECK(r.cudaEventCreateWithFlags(&nt, 0x80) == cudaErrorInvalidValue);
  CHECK(r.cudaEventCreate(nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaEventRecord(kBadEvent, s) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventRecord(a, kBadStream) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventRecordWithFlags(a, s, 4) == cudaErrorInvalidValue);
  CHECK(r.cudaEventQuery(kBadEvent) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventSynchronize(kBadEvent) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamWaitEvent(s, kBadEvent, 0) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamWaitEvent(s, a, 2) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamWaitEvent(kBadStream, a, 0) == cudaErrorInvalidResourceHandle);

  for (cudaEvent_t e : {a, b, c}) CHECK(r.cudaEventDestroy(e) == cudaSuccess);
  CHECK(r.cudaEventDestroy(nt) == cudaSuccess);
  CHECK(r.cudaEventDestroy(a) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaEventQuery(a) == cudaErrorInvalidResourceHandle);
  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
  CHECK(r.cudaStreamDestroy(s2) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "capture queries: nothing is ever capturing", "[runtime]") {
  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
  CHECK(r.cudaStreamIsCapturing(s, &st) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusNone);
  st = cudaStreamCaptureStatusActive;
  CHECK(r.cudaStreamIsCapturing(nullptr, &st) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusNone);
  CHECK(r.cudaStreamIsCapturing(s, nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamIsCapturing(kBadStream, &st) == cudaErrorInvalidResourceHandle);
  st = cudaStreamCaptureStatusActive;
  unsigned long long id = 0;
  CHECK(r.cudaStreamGetCaptureInfo(s, &st, &id, nullptr, nullptr, nullptr, nullptr) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusNone);
  CHECK(r.cudaStreamGetCaptureInfo(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == cudaErrorInvalidValue);

  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  REQUIRE(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
  mode = static_cast<cudaStreamCaptureMode>(3);
  CHECK(r.cudaThreadExchangeStreamCaptureMode(&mode) == cudaErrorInvalidValue);
  CHECK(r.cudaThreadExchangeStreamCaptureMode(nullptr) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "capture info through every ABI; elapsed time through _v2", "[runtime]") {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
  unsigned long long id = 0;
  CHECK(r.cudaStreamGetCaptureInfo12(nullptr, &st, &id) == cudaSuccess);  // 12.x v1: three arguments
  CHECK(st == cudaStreamCaptureStatusNone);
  st = cudaStreamCaptureStatusActive;
  CHECK(r.cudaStreamGetCaptureInfo_v2(nullptr, &st, nullptr, nullptr, nullptr, nullptr) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusNone);
  cudaEvent_t a = nullptr;
  REQUIRE(r.cudaEventCreate(&a) == cudaSuccess);
  REQUIRE(r.cudaEventRecord(a, nullptr) == cudaSuccess);
  REQUIRE(r.cudaEventSynchronize(a) == cudaSuccess);
  float ms = -1;
  CHECK(r.cudaEventElapsedTime_v2(&ms, a, a) == cudaSuccess);
  CHECK(ms == 0.0f);
  CHECK(r.cudaEventDestroy(a) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "threads use the runtime concurrently", "[runtime][threads]") {
  constexpr int kThreads = 8, kRounds = 50;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (r.cudaSetDevice(t % device_count()) != cudaSuccess) ++bad;
      cudaStream_t s = nullptr;
      if (r.cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) ++bad;
      std::vector<unsigned char> in(4096), out(4096);
      for (int round = 0; round < kRounds; ++round) {
        std::fill(in.begin(), in.end(), static_cast<unsigned char>(t * 31 + round));
        void* d = nullptr;
        if (r.cudaMalloc(&d, in.size()) != cudaSuccess) ++bad;
        if (r.cudaMemcpyAsync(d, in.data(), in.size(), cudaMemcpyHostToDevice, s) != cudaSuccess) ++bad;
        if (r.cudaMemcpyAsync_ptsz(out.data(), d, out.size(), cudaMemcpyDeviceToHost, s) != cudaSuccess) ++bad;
        if (r.cudaStreamSynchronize(s) != cudaSuccess) ++bad;
        if (out != in) ++bad;
        if (r.cudaFree(d) != cudaSuccess) ++bad;
      }
      if (r.cudaStreamDestroy(s) != cudaSuccess) ++bad;
      if (r.cudaGetLastError() != cudaSuccess) ++bad;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
}
