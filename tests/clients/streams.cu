// SPDX-License-Identifier: Apache-2.0
// Streams and events client: async copies and memset on a non-blocking stream, a launch
// on it, host functions and callbacks (their order), cross-stream waits, event timing and
// its errors, __constant__ / __device__ symbols, work on the default stream. Built twice:
// as is, and with --default-stream per-thread (then nvcc routes the default-stream calls
// to the _ptsz / _ptds entry points). Both builds must print the same facts, except
// per_thread_build. Mode event_then_query: see event_then_query().
#include "rt_check.h"

#include <cstring>

__constant__ float coef[4];
__device__ int counter;

__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] *= coef[0];
    atomicAdd(&counter, 1);
  }
}

namespace {
int order[8];
int order_len = 0;
void CUDART_CB note(void* tag) { order[order_len++] = static_cast<int>(reinterpret_cast<long>(tag)); }
void CUDART_CB note_cb(cudaStream_t, cudaError_t status, void* tag) {
  order[order_len++] = status == cudaSuccess ? static_cast<int>(reinterpret_cast<long>(tag)) : -1;
}
}  // namespace

// Mode "event_then_query": an event recorded last on a stream has completed, so the
// stream has no work left: cudaStreamQuery right after cudaEventSynchronize is cudaSuccess.
// Repeated, with a host function ahead of the record so the stream is busy when it is
// recorded.
void CUDART_CB noop(void*) {}
int event_then_query() {
  cudaStream_t s;
  cudaEvent_t e;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  int busy = 0;
  for (int i = 0; i < 3000; ++i) {
    CK(cudaLaunchHostFunc(s, noop, nullptr));
    CK(cudaEventRecord(e, s));
    CK(cudaEventSynchronize(e));
    busy += cudaStreamQuery(s) != cudaSuccess;
  }
  std::printf("stream_busy_after_its_last_event_completed=%d\n", busy);
  FACT_ERR("last_error", cudaGetLastError());
  CK(cudaEventDestroy(e));
  CK(cudaStreamDestroy(s));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "event_then_query") == 0) return event_then_query();
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  std::printf("per_thread_build=1\n");
#else
  std::printf("per_thread_build=0\n");
#endif
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  float *h = nullptr, *h2 = nullptr, *d = nullptr;
  CK(cudaMallocHost(&h, bytes));
  CK(cudaHostAlloc(&h2, bytes, cudaHostAllocDefault));
  CK(cudaMalloc(&d, bytes));
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i);
  std::memset(h2, 0, bytes);

  // Symbols round trip.
  const float c[4] = {2.0f, 0.5f, -1.0f, 3.25f};
  CK(cudaMemcpyToSymbol(coef, c, sizeof c));
  float c_back[4] = {};
  CK(cudaMemcpyFromSymbol(c_back, coef, sizeof c_back));
  std::printf("constant_roundtrip=%d\n", std::memcmp(c, c_back, sizeof c) == 0);
  const int start = 41;
  CK(cudaMemcpyToSymbol(counter, &start, sizeof start));
  float c_tail = 0.0f;
  CK(cudaMemcpyFromSymbol(&c_tail, coef, sizeof c_tail, 3 * sizeof(float)));
  std::printf("constant_offset3=%.2f\n", c_tail);
  size_t sym_size = 0;
  CK(cudaGetSymbolSize(&sym_size, coef));
  std::printf("constant_size=%zu\n", sym_size);

  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&s2));
  unsigned flags = 99;
  CK(cudaStreamGetFlags(s, &flags));
  std::printf("stream_flags=%u\n", flags);
  cudaEvent_t t0, t1, no_timing, never;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreateWithFlags(&t1, cudaEventDefault));
  CK(cudaEventCreateWithFlags(&no_timing, cudaEventDisableTiming));
  CK(cudaEventCreate(&never));

  CK(cudaEventRecord(t0, s));
  CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
  CK(cudaMemsetAsync(d, 0, 16, s));
  scale<<<n / 256, 256, 0, s>>>(d, n);
  CK(cudaGetLastError());
  CK(cudaLaunchHostFunc(s, note, reinterpret_cast<void*>(1)));
  CK(cudaMemcpyAsync(h2, d, bytes, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamAddCallback(s, note_cb, reinterpret_cast<void*>(2), 0));
  CK(cudaEventRecord(t1, s));
  CK(cudaStreamWaitEvent(s2, t1, 0));
  CK(cudaLaunchHostFunc(s2, note, reinterpret_cast<void*>(3)));
  CK(cudaEventRecord(no_timing, s2));
  CK(cudaStreamSynchronize(s2));
  CK(cudaEventSynchronize(t1));
  std::printf("host_fn_order=");
  for (int i = 0; i < order_len; ++i) std::printf(i ? ",%d" : "%d", order[i]);
  std::printf("\n");

  FACT_ERR("query_t1", cudaEventQuery(t1));
  FACT_ERR("query_never_recorded", cudaEventQuery(never));
  CK(cudaStreamSynchronize(s));
  FACT_ERR("query_stream", cudaStreamQuery(s));
  float ms = -1.0f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  std::printf("elapsed_nonneg=%d\n", ms >= 0.0f);
  FACT_ERR("elapsed_disable_timing", cudaEventElapsedTime(&ms, t0, no_timing));
  FACT_ERR("elapsed_never_recorded", cudaEventElapsedTime(&ms, t0, never));
  // Failed calls set the last error too; reading it resets it.
  FACT_ERR("last_error", cudaGetLastError());
  FACT_ERR("last_error_again", cudaGetLastError());

  // The kernel ran between the memset and the copy back: the input doubled, zeros first.
  std::printf("h2[0..3]=%.1f,%.1f,%.1f,%.1f\n", h2[0], h2[1], h2[2], h2[3]);
  std::printf("h2[4]=%.1f\nh2[last]=%.1f\n", h2[4], h2[n - 1]);

  // The default stream (legacy, or per-thread in the per-thread build) and the explicit
  // per-thread handle.
  float small[16];
  for (int i = 0; i < 16; ++i) small[i] = 100.0f + i;
  CK(cudaMemcpyAsync(d, small, sizeof small, cudaMemcpyHostToDevice, 0));
  CK(cudaMemsetAsync(d, 0, 4, 0));
  scale<<<1, 16>>>(d, 16);
  CK(cudaGetLastError());
  CK(cudaStreamWaitEvent(0, t1, 0));
  CK(cudaEventRecord(t0, 0));
  CK(cudaStreamSynchronize(0));
  FACT_ERR("query_default_stream", cudaStreamQuery(0));
  float back[16] = {};
  CK(cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDeviceToHost, cudaStreamPerThread));
  CK(cudaStreamSynchronize(cudaStreamPerThread));
  std::printf("default_stream_back=%.1f,%.1f,%.1f\n", back[0], back[1], back[15]);
  int cnt = 0;
  CK(cudaMemcpyFromSymbol(&cnt, counter, sizeof cnt));
  std::printf("counter=%d\n", cnt);

  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaEventDestroy(no_timing));
  CK(cudaEventDestroy(never));
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(s2));
  CK(cudaFree(d));
  CK(cudaFreeHost(h));
  CK(cudaFreeHost(h2));
  return 0;
}
