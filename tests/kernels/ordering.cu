// SPDX-License-Identifier: Apache-2.0
// Stream order: kernels, cudaMemsetAsync, cudaMemcpyAsync (device to device and to pinned
// host memory) and cudaLaunchHostFunc in one stream, each step seeing the previous one's
// result; events (cudaEventSynchronize, cudaEventQuery); two streams ordered only by
// cudaStreamWaitEvent; a stream-captured graph (kernel + copy) replayed three times, each
// replay seeing the last one's result. No step waits on time: every wait is a CUDA
// synchronization.
#include "check.h"

#include <vector>

constexpr int kN = 1 << 16;

__global__ void add(int* x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}
__global__ void mul(int* x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= v;
}
__global__ void plus_index(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] + i;
}

struct Seen {
  const int* host;
  long long sum;
  int first, last;
};
static void CUDART_CB observe(void* p) {  // runs in stream order; no CUDA calls here
  Seen* s = static_cast<Seen*>(p);
  s->sum = 0;
  for (int i = 0; i < kN; ++i) s->sum += s->host[i];
  s->first = s->host[0], s->last = s->host[kN - 1];
}

static bool all_equal(const std::vector<int>& v, int (*want)(int)) {
  for (int i = 0; i < kN; ++i)
    if (v[i] != want(i)) return false;
  return true;
}

int main() {
  const int blocks = kN / 256;
  int *a, *b, *pinned;
  CK(cudaMalloc(&a, kN * sizeof(int)));
  CK(cudaMalloc(&b, kN * sizeof(int)));
  CK(cudaMallocHost(&pinned, kN * sizeof(int)));
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  // ---- one stream: memset, kernels, copies, a host function, in order
  Seen seen{pinned, -1, -1, -1};
  CK(cudaMemsetAsync(a, 0, kN * sizeof(int), s1));  // a = 0
  add<<<blocks, 256, 0, s1>>>(a, 5, kN);            // a = 5
  CK_LAUNCH();
  CK(cudaMemcpyAsync(b, a, kN * sizeof(int), cudaMemcpyDeviceToDevice, s1));  // b = 5
  mul<<<blocks, 256, 0, s1>>>(b, 3, kN);                                      // b = 15
  CK_LAUNCH();
  add<<<blocks, 256, 0, s1>>>(a, 1, kN);  // a = 6 (b keeps 15)
  CK_LAUNCH();
  CK(cudaMemcpyAsync(pinned, b, kN * sizeof(int), cudaMemcpyDeviceToHost, s1));
  CK(cudaLaunchHostFunc(s1, observe, &seen));
  CK(cudaMemsetAsync(b, 0xff, kN * sizeof(int), s1));  // b = -1, after the host function
  CK(cudaStreamSynchronize(s1));
  kt::checkf("host function sees the copy before it", seen.sum == 15ll * kN && seen.first == 15 && seen.last == 15,
             "sum %lld first %d last %d", seen.sum, seen.first, seen.last);
  std::vector<int> ha(kN), hb(kN);
  CK(cudaMemcpy(ha.data(), a, kN * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
  kt::check("kernels and memset in stream order: a = (0 + 5) + 1", all_equal(ha, [](int) { return 6; }));
  kt::check("memset after the host function: b = -1", all_equal(hb, [](int) { return -1; }));

  // ---- events
  cudaEvent_t done;
  CK(cudaEventCreate(&done));
  add<<<blocks, 256, 0, s1>>>(a, 10, kN);  // a = 16
  CK_LAUNCH();
  CK(cudaEventRecord(done, s1));
  CK(cudaEventSynchronize(done));
  kt::check("cudaEventQuery after cudaEventSynchronize is cudaSuccess", cudaEventQuery(done) == cudaSuccess);
  CK(cudaMemcpy(ha.data(), a, kN * sizeof(int), cudaMemcpyDeviceToHost));
  kt::check("the kernel before the event has run: a = 16", all_equal(ha, [](int) { return 16; }));

  // ---- two streams: s2 waits for s1's event, then reads what s1 wrote
  cudaEvent_t written;
  CK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
  for (int round = 0; round < 3; ++round) {
    mul<<<blocks, 256, 0, s1>>>(a, 2, kN);  // a = 32, 64, 128
    CK_LAUNCH();
    CK(cudaEventRecord(written, s1));
    CK(cudaStreamWaitEvent(s2, written, 0));
    plus_index<<<blocks, 256, 0, s2>>>(b, a, kN);  // b = a + i
    CK_LAUNCH();
    CK(cudaStreamSynchronize(s2));
    CK(cudaMemcpy(hb.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
    int expect = 16 << (round + 1);
    bool ok = true;
    for (int i = 0; i < kN && ok; ++i) ok = hb[i] == expect + i;
    char name[96];
    std::snprintf(name, sizeof name, "cudaStreamWaitEvent round %d: b = %d + i", round + 1, expect);
    kt::check(name, ok);
  }

  // ---- a captured graph: add 1 to a, copy a to b; replayed 3 times
  CK(cudaMemsetAsync(a, 0, kN * sizeof(int), s1));  // before the capture, in the same stream
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  add<<<blocks, 256, 0, s1>>>(a, 1, kN);
  CK(cudaMemcpyAsync(b, a, kN * sizeof(int), cudaMemcpyDeviceToDevice, s1));
  CK(cudaStreamEndCapture(s1, &graph));
  size_t nodes = 0;
  CK(cudaGraphGetNodes(graph, nullptr, &nodes));
  kt::check_eq("captured graph has 2 nodes", nodes, static_cast<size_t>(2));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 1; replay <= 3; ++replay) {
    CK(cudaGraphLaunch(exec, s1));
    CK(cudaStreamSynchronize(s1));
    CK(cudaMemcpy(hb.data(), b, kN * sizeof(int), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < kN && ok; ++i) ok = hb[i] == replay;
    char name[64];
    std::snprintf(name, sizeof name, "graph replay %d: b = %d", replay, replay);
    kt::check(name, ok);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(done));
  CK(cudaEventDestroy(written));
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
  CK(cudaFreeHost(pinned));
  CK(cudaFree(a));
  CK(cudaFree(b));
  return kt::finish("ordering");
}
