// SPDX-License-Identifier: Apache-2.0
// NVIDIA's shared runtime, loaded the way Python wheels and frameworks load it: a program
// that links no cudart dlopen()s the toolkit's libcudart.so.13 (FAKEGPU_NVIDIA_CUDART, its
// path at build time) and drives it; NVIDIA's runtime then loads libcuda.so.1, the fake
// driver. Device query, memory, streams, events and a captured graph, with exact facts;
// NVML (libnvidia-ml.so.1 from the fake) sees the same bytes.
#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void* g_cudart = nullptr;

// The runtime's entry point NAME, typed from its declaration (decltype does not reference it).
#define RT(name) (reinterpret_cast<decltype(&name)>(sym(#name)))

void* sym(const char* name) {
  void* p = dlsym(g_cudart, name);
  if (!p) {
    std::printf("missing_symbol=%s\n", name);
    std::exit(1);
  }
  return p;
}

const char* err(cudaError_t e) { return RT(cudaGetErrorName)(e); }

// NVML as nvml.h declares it (the toolkit ships no nvml.h).
struct NvmlMemory {
  unsigned long long total, free, used;
};
using NvmlInit = int (*)();
using NvmlHandle = int (*)(unsigned, void**);
using NvmlMemInfo = int (*)(void*, NvmlMemory*);

unsigned long long nvml_used(void* nvml) {
  void* dev = nullptr;
  NvmlMemory m{};
  reinterpret_cast<NvmlHandle>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"))(0, &dev);
  reinterpret_cast<NvmlMemInfo>(dlsym(nvml, "nvmlDeviceGetMemoryInfo"))(dev, &m);
  return m.used;
}

}  // namespace

int main() {
  g_cudart = dlopen(FAKEGPU_NVIDIA_CUDART, RTLD_NOW | RTLD_LOCAL);
  if (!g_cudart) {
    std::printf("dlopen=%s\n", dlerror());
    return 1;
  }
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!nvml || reinterpret_cast<NvmlInit>(dlsym(nvml, "nvmlInit_v2"))() != 0) {
    std::printf("nvml=%s\n", nvml ? "nvmlInit_v2 failed" : dlerror());
    return 1;
  }

  // Device query.
  int count = -1, version = -1;
  const char* version_result = err(RT(cudaRuntimeGetVersion)(&version));
  std::printf("runtime_version=%s:%d\n", version_result, version);
  const char* count_result = err(RT(cudaGetDeviceCount)(&count));
  std::printf("device_count=%s:%d\n", count_result, count);
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  std::printf("get_properties=%s\n", err(RT(cudaGetDeviceProperties)(&prop, 0)));
  std::printf("name=%s\n", prop.name);
  std::printf("totalGlobalMem=%zu\n", prop.totalGlobalMem);
  std::printf("cc=%d.%d\n", prop.major, prop.minor);
  std::printf("multiProcessorCount=%d\n", prop.multiProcessorCount);

  // Memory: an exact round trip, cudaMemGetInfo and NVML agree on the bytes in use.
  constexpr size_t kBytes = 3 << 20;
  std::vector<unsigned char> host(kBytes), back(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 131 + (i >> 12));
  void* a = nullptr;
  void* b = nullptr;
  std::printf("malloc_a=%s\n", err(RT(cudaMalloc)(&a, kBytes)));
  std::printf("malloc_b=%s\n", err(RT(cudaMalloc)(&b, kBytes)));
  std::printf("memcpy_htod=%s\n", err(RT(cudaMemcpy)(a, host.data(), kBytes, cudaMemcpyHostToDevice)));
  std::printf("memcpy_dtoh=%s\n", err(RT(cudaMemcpy)(back.data(), a, kBytes, cudaMemcpyDeviceToHost)));
  std::printf("roundtrip_exact=%d\n", host == back);
  size_t free_bytes = 0, total_bytes = 0;
  std::printf("mem_get_info=%s\n", err(RT(cudaMemGetInfo)(&free_bytes, &total_bytes)));
  std::printf("used_with_two_buffers=%zu\n", total_bytes - free_bytes);
  std::printf("nvml_used_with_two_buffers=%llu\n", nvml_used(nvml));

  // Streams and events.
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::printf("stream_create=%s\n", err(RT(cudaStreamCreateWithFlags)(&s, cudaStreamNonBlocking)));
  std::printf("event_create=%s\n", err(RT(cudaEventCreate)(&start)));
  RT(cudaEventCreate)(&stop);
  std::printf("event_record=%s\n", err(RT(cudaEventRecord)(start, s)));
  std::printf("memset_async=%s\n", err(RT(cudaMemsetAsync)(b, 0x11, kBytes, s)));
  RT(cudaEventRecord)(stop, s);
  std::printf("event_synchronize=%s\n", err(RT(cudaEventSynchronize)(stop)));
  float ms = -1;
  std::printf("elapsed=%s\n", err(RT(cudaEventElapsedTime)(&ms, start, stop)));
  std::printf("elapsed_nonneg=%d\n", ms >= 0);
  std::printf("stream_synchronize=%s\n", err(RT(cudaStreamSynchronize)(s)));

  // A graph captured from the stream: memset b to 0x5a, copy b into a; launched, a checked.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::printf("begin_capture=%s\n", err(RT(cudaStreamBeginCapture)(s, cudaStreamCaptureModeGlobal)));
  RT(cudaMemsetAsync)(b, 0x5a, kBytes, s);
  RT(cudaMemcpyAsync)(a, b, kBytes, cudaMemcpyDeviceToDevice, s);
  std::printf("end_capture=%s\n", err(RT(cudaStreamEndCapture)(s, &graph)));
  size_t nodes = 0;
  RT(cudaGraphGetNodes)(graph, nullptr, &nodes);
  std::printf("graph_nodes=%zu\n", nodes);
  std::printf("a_untouched_before_launch=%d\n",
              RT(cudaMemcpy)(back.data(), a, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess && back == host);
  std::printf("instantiate=%s\n", err(RT(cudaGraphInstantiate)(&exec, graph, 0)));
  std::printf("graph_launch=%s\n", err(RT(cudaGraphLaunch)(exec, s)));
  std::printf("graph_sync=%s\n", err(RT(cudaStreamSynchronize)(s)));
  RT(cudaMemcpy)(back.data(), a, kBytes, cudaMemcpyDeviceToHost);
  size_t fives = 0;
  for (unsigned char v : back) fives += v == 0x5a;
  std::printf("a_bytes_0x5a_after_launch=%zu\n", fives);
  RT(cudaGraphExecDestroy)(exec);
  RT(cudaGraphDestroy)(graph);
  RT(cudaEventDestroy)(start);
  RT(cudaEventDestroy)(stop);
  std::printf("stream_destroy=%s\n", err(RT(cudaStreamDestroy)(s)));

  std::printf("free_a=%s\n", err(RT(cudaFree)(a)));
  std::printf("free_b=%s\n", err(RT(cudaFree)(b)));
  RT(cudaMemGetInfo)(&free_bytes, &total_bytes);
  std::printf("used_after_free=%zu\n", total_bytes - free_bytes);
  std::printf("nvml_used_after_free=%llu\n", nvml_used(nvml));
  std::printf("last_error=%s\n", err(RT(cudaGetLastError)()));
  return 0;
}
