// SPDX-License-Identifier: Apache-2.0
// rt_facts: what the CUDA Runtime answers to ordinary and bad input, one "key=value" line per
// case (facts_harness.h runs each in a child process the parent restarts after a crash). Built
// like every nvcc client twice: with nvcc's static runtime (NVIDIA's, over whichever driver is
// there) and with -cudart shared (the fake's runtime). Run on a real GPU it records the ground
// truth (golden/h200.rt.facts); run_client_tests.py holds both fake builds to it.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "facts_harness.h"

using facts::Case;
using facts::fact;

namespace {

std::string err(cudaError_t e) { return cudaGetErrorName(e); }

// "value" when the call succeeded, else the error name; `v` is read after the call wrote it.
template <typename T>
std::string val_or(cudaError_t e, const T& v) {
  return e == cudaSuccess ? std::to_string(v) : err(e);
}

// The error the call left behind: cudaGetLastError after it (and resets it).
std::string last() { return err(cudaGetLastError()); }

// "CODE,last:LAST": a call's code, then the last error it left (read after the call: the
// operands of + are unsequenced, so the call is made before this function is entered).
std::string with_last(cudaError_t e) {
  std::string s = err(e);
  s += ",last:" + last();
  return s;
}
// The same, and the last error once more (a sticky error stays, others are gone).
std::string with_last_twice(cudaError_t e) {
  std::string s = with_last(e);
  s += ",again:" + last();
  return s;
}

__global__ void write_tid(int* out) { out[threadIdx.x] = static_cast<int>(threadIdx.x); }
__global__ void dyn_shared(int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = 1;
  __syncthreads();
  if (out) out[threadIdx.x] = s[threadIdx.x];
}
__device__ int g_small[4];

struct Block {
  void* p = nullptr;
  std::vector<unsigned char> host = std::vector<unsigned char>(1 << 16, 0x5A);
  Block() { cudaMalloc(&p, 4096); }
  ~Block() {
    if (p) cudaFree(p);
  }
  char* c() const { return static_cast<char*>(p); }
};

// The two events of an elapsed-time case, destroyed when the case has its answer.
struct EventPair {
  cudaEvent_t a = nullptr, b = nullptr;
  EventPair() = default;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
};

std::string launch(dim3 grid, dim3 block, size_t smem) {
  Block b;
  void* out = b.p;
  void* args[] = {&out};
  const cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(write_tid), grid, block, args, smem, nullptr);
  std::string s = "launch:" + with_last(e);
  s += ",sync:" + err(cudaDeviceSynchronize());
  return s;
}

std::vector<Case> runtime_cases() {
  std::vector<Case> c;
  // Each case starts with no error left over from the one before.
  auto add = [&](const char* k, std::function<std::string()> f, bool iso = false) {
    c.push_back({k,
                 [f = std::move(f)] {
                   cudaGetLastError();
                   return f();
                 },
                 iso});
  };
  constexpr size_t kHuge = ~size_t{0};

  // ---- device management ----
  add("get_device_count", [] {
    int n = -1;
    const cudaError_t e = cudaGetDeviceCount(&n);
    return val_or(e, n);
  });
  add("set_device.99", [] { return with_last(cudaSetDevice(99)); });
  add("set_device.minus_1", [] { return with_last(cudaSetDevice(-1)); });
  add("get_device_properties.99", [] {
    cudaDeviceProp p;
    return with_last(cudaGetDeviceProperties(&p, 99));
  });
  add("device_get_attribute.0", [] {
    int v = 0;
    return err(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(0), 0));
  });
  add("device_get_attribute.device_99", [] {
    int v = 0;
    return err(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 99));
  });
  add("device_get_attribute.null", [] { return err(cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0)); });
  add("device_can_access_peer.self", [] {
    int v = -1;
    const cudaError_t e = cudaDeviceCanAccessPeer(&v, 0, 0);
    return val_or(e, v);
  });
  add("device_get_limit.sync_depth", [] {
    size_t v = 0;
    const cudaError_t e = cudaDeviceGetLimit(&v, cudaLimitDevRuntimeSyncDepth);
    return val_or(e, v) + ",last:" + last();
  });
  add("device_get_limit.printf_fifo", [] {
    size_t v = 0;
    const cudaError_t e = cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize);
    return val_or(e, v);
  });
  add("device_set_limit.stack_1000", [] {
    const cudaError_t e = cudaDeviceSetLimit(cudaLimitStackSize, 1000);
    size_t v = 0;
    cudaDeviceGetLimit(&v, cudaLimitStackSize);
    cudaDeviceSetLimit(cudaLimitStackSize, 1024);
    return err(e) + "," + std::to_string(v);
  });
  add("mem_get_info.total", [] {
    size_t f = 0, t = 0;
    const cudaError_t e = cudaMemGetInfo(&f, &t);
    return val_or(e, t);
  });

  // ---- memory ----
  add("malloc.zero", [] {
    void* p = reinterpret_cast<void*>(1);
    const cudaError_t e = cudaMalloc(&p, 0);
    return err(e) + (e == cudaSuccess ? (p ? ",non-null" : ",null") : "");
  });
  add("malloc.null_out", [] { return with_last(cudaMalloc(nullptr, 16)); });
  add("malloc.size_max", [] {
    void* p = nullptr;
    return with_last_twice(cudaMalloc(&p, kHuge));
  });
  add("free.null", [] { return err(cudaFree(nullptr)); });
  add("free.bogus", [] { return with_last(cudaFree(reinterpret_cast<void*>(0x1234))); });
  add("free.twice", [] {
    void* p = nullptr;
    cudaMalloc(&p, 4096);
    cudaFree(p);
    return with_last(cudaFree(p));
  });
  add("free.interior", [] {
    void* p = nullptr;
    cudaMalloc(&p, 4096);
    const std::string s = err(cudaFree(static_cast<char*>(p) + 16));
    cudaFree(p);
    return s + ",last:" + last();
  });
  add("free_host.device_pointer", [] {
    Block b;
    return with_last(cudaFreeHost(b.p));
  });
  add("malloc_pitch.widths", [] {
    std::string s;
    for (size_t w : {size_t{1}, size_t{512}, size_t{513}, size_t{4096}}) {
      void* p = nullptr;
      size_t pitch = 0;
      const cudaError_t e = cudaMallocPitch(&p, &pitch, w, 4);
      if (p) cudaFree(p);
      facts::append(s, std::to_string(w), val_or(e, pitch));
    }
    return s;
  });
  add("malloc_pitch.zero", [] {
    void* p = nullptr;
    size_t pitch = 0;
    return err(cudaMallocPitch(&p, &pitch, 0, 0));
  });
  add("malloc_host.zero", [] {
    void* p = reinterpret_cast<void*>(1);
    const cudaError_t e = cudaMallocHost(&p, 0);
    return err(e) + (e == cudaSuccess ? (p ? ",non-null" : ",null") : "");
  });
  add("malloc_host.size_max", [] {
    void* p = nullptr;
    return with_last(cudaMallocHost(&p, kHuge));
  });
  add("host_alloc.bad_flags", [] {
    void* p = nullptr;
    return err(cudaHostAlloc(&p, 16, 0xFF));
  });
  add("malloc_managed.zero", [] {
    void* p = nullptr;
    return err(cudaMallocManaged(&p, 0));
  });
  add("malloc_managed.bad_flags", [] {
    void* p = nullptr;
    return err(cudaMallocManaged(&p, 16, 0));
  });
  add("malloc_async.zero", [] {
    void* p = reinterpret_cast<void*>(1);
    const cudaError_t e = cudaMallocAsync(&p, 0, nullptr);
    return err(e) + (e == cudaSuccess ? (p ? ",non-null" : ",null") : "");
  });
  add(
      "free_async.bogus",
      [] {
        const cudaError_t e = cudaFreeAsync(reinterpret_cast<void*>(0x1234), nullptr);
        return err(e) + ",sync:" + err(cudaDeviceSynchronize());
      },
      true);
  add("pointer_attributes.malloc", [] {
    std::vector<char> v(64);
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, v.data());
    return val_or(e, static_cast<int>(a.type));
  });
  add("pointer_attributes.device_interior", [] {
    Block b;
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, b.c() + 8);
    return e == cudaSuccess ? facts::pair(a.type, a.device) : err(e);
  });

  // ---- copies and memsets ----
  add("memcpy.htod_past_end", [] {
    Block b;
    return with_last(cudaMemcpy(b.p, b.host.data(), 8192, cudaMemcpyHostToDevice));
  });
  add("memcpy.dtoh_past_end", [] {
    Block b;
    return err(cudaMemcpy(b.host.data(), b.p, 8192, cudaMemcpyDeviceToHost));
  });
  add("memcpy.kind_99", [] {
    Block b;
    return err(cudaMemcpy(b.p, b.host.data(), 16, static_cast<cudaMemcpyKind>(99)));
  });
  add("memcpy.default_kind", [] {
    Block b;
    return err(cudaMemcpy(b.p, b.host.data(), 16, cudaMemcpyDefault));
  });
  add(
      "memcpy.wrong_kind_host_to_host_as_dtod",
      [] {
        std::vector<char> a(64), d(64);
        return with_last(cudaMemcpy(d.data(), a.data(), 16, cudaMemcpyDeviceToDevice));
      },
      true);
  add("memcpy.zero_bytes_null", [] { return err(cudaMemcpy(nullptr, nullptr, 0, cudaMemcpyHostToDevice)); });
  add(
      "memset.past_end",
      [] {
        Block b;
        const cudaError_t e = cudaMemset(b.p, 0, 8192);
        return err(e) + ",sync:" + err(cudaDeviceSynchronize());
      },
      true);
  add(
      "memset2d.width_over_pitch",
      [] {
        Block b;
        const cudaError_t e = cudaMemset2D(b.p, 64, 0, 128, 4);
        return err(e) + ",sync:" + err(cudaDeviceSynchronize());
      },
      true);
  add("memcpy_to_symbol.past_end", [] {
    int v[8] = {};
    return with_last(cudaMemcpyToSymbol(g_small, v, sizeof v));
  });
  add("get_symbol_address.not_a_symbol", [] {
    void* p = nullptr;
    static int host_only = 0;
    return with_last(cudaGetSymbolAddress(&p, host_only));
  });
  add("get_symbol_size.g_small", [] {
    size_t n = 0;
    const cudaError_t e = cudaGetSymbolSize(&n, g_small);
    return val_or(e, n);
  });

  // ---- streams and events ----
  add("stream_create.bad_flags", [] {
    cudaStream_t s = nullptr;
    return err(cudaStreamCreateWithFlags(&s, 99));
  });
  add("stream_create_with_priority.clamp", [] {
    std::string s;
    for (int want : {-10, -5, 0, 3}) {
      cudaStream_t st = nullptr;
      int got = 99;
      const cudaError_t e = cudaStreamCreateWithPriority(&st, cudaStreamDefault, want);
      if (e == cudaSuccess) {
        cudaStreamGetPriority(st, &got);
        cudaStreamDestroy(st);
      }
      facts::append(s, std::to_string(want), val_or(e, got));
    }
    return s;
  });
  add("device_get_stream_priority_range", [] {
    int lo = 0, hi = 0;
    const cudaError_t e = cudaDeviceGetStreamPriorityRange(&lo, &hi);
    return e == cudaSuccess ? facts::pair(lo, hi) : err(e);
  });
  add("stream_query.default", [] { return err(cudaStreamQuery(nullptr)); });
  add("event_create.bad_flags", [] {
    cudaEvent_t e = nullptr;
    return err(cudaEventCreateWithFlags(&e, 99));
  });
  add("event_query.unrecorded", [] {
    cudaEvent_t e = nullptr;
    cudaEventCreate(&e);
    const std::string s = err(cudaEventQuery(e));
    cudaEventDestroy(e);
    return s;
  });
  add("event_elapsed.unrecorded", [] {
    EventPair p;
    cudaEventCreate(&p.a);
    cudaEventCreate(&p.b);
    float ms = 0;
    return with_last(cudaEventElapsedTime(&ms, p.a, p.b));
  });
  add("event_elapsed.disable_timing", [] {
    EventPair p;
    cudaEventCreateWithFlags(&p.a, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&p.b, cudaEventDisableTiming);
    cudaEventRecord(p.a);
    cudaEventRecord(p.b);
    cudaDeviceSynchronize();
    float ms = 0;
    return err(cudaEventElapsedTime(&ms, p.a, p.b));
  });

  // ---- kernels ----
  add("func_get_attributes", [] {
    cudaFuncAttributes a{};
    const cudaError_t e = cudaFuncGetAttributes(&a, write_tid);
    if (e != cudaSuccess) return err(e);
    return "max_threads:" + std::to_string(a.maxThreadsPerBlock) + ",shared:" + std::to_string(a.sharedSizeBytes) +
           ",local:" + std::to_string(a.localSizeBytes) +
           ",max_dyn_shared:" + std::to_string(a.maxDynamicSharedSizeBytes) + ",ptx:" + std::to_string(a.ptxVersion) +
           ",binary:" + std::to_string(a.binaryVersion) + ",regs:" + std::to_string(a.numRegs);
  });
  add("occupancy.blocks_per_sm", [] {
    std::string s;
    for (int bs : {32, 128, 256, 1024}) {
      int n = 0;
      const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dyn_shared, bs, 0);
      facts::append(s, std::to_string(bs), val_or(e, n));
    }
    int n = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dyn_shared, 256, 64 * 1024);
    return s + ",256+64KiB:" + val_or(e, n);
  });
  add("occupancy.available_dynamic_smem", [] {
    return facts::per_grid_shape([](int blocks, int threads) {
      size_t n = 0;
      const cudaError_t e = cudaOccupancyAvailableDynamicSMemPerBlock(&n, dyn_shared, blocks, threads);
      return val_or(e, n);
    });
  });
  add("occupancy.max_potential_block_size", [] {
    int grid = 0, block = 0;
    const cudaError_t e = cudaOccupancyMaxPotentialBlockSize(&grid, &block, dyn_shared, 0, 0);
    return e == cudaSuccess ? facts::pair(grid, block) : err(e);
  });
  add("launch.ok_1024", [] { return launch(dim3(1), dim3(1024), 0); });
  add("launch.block_1025", [] { return launch(dim3(1), dim3(1025), 0); });
  add("launch.block_z_65", [] { return launch(dim3(1), dim3(1, 1, 65), 0); });
  add("launch.grid_zero", [] { return launch(dim3(0), dim3(32), 0); });
  add("launch.grid_y_65536", [] { return launch(dim3(1, 65536), dim3(1), 0); });
  add("launch.smem_48k_plus_1", [] { return launch(dim3(1), dim3(32), 48 * 1024 + 1); });
  add("launch.triple_chevron_block_1025", [] {
    Block b;
    write_tid<<<1, 1025>>>(static_cast<int*>(b.p));
    return "peek:" + with_last_twice(cudaPeekAtLastError());
  });
  add(
      "launch.illegal_address",
      [] {
        write_tid<<<1, 32>>>(reinterpret_cast<int*>(8));
        std::string s = "last:" + last();
        s += ",sync:" + with_last(cudaDeviceSynchronize());
        void* p = nullptr;
        return s + ",then_malloc:" + err(cudaMalloc(&p, 16));
      },
      true);

  // ---- graphs, IPC, errors ----
  add("graph.empty_launch", [] {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t x = nullptr;
    cudaError_t e = cudaGraphCreate(&g, 0);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&x, g, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(x, nullptr);
    const std::string s = err(e) + ",sync:" + err(cudaStreamSynchronize(nullptr));
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
    return s;
  });
  add("ipc_get_mem_handle.device", [] {
    Block b;
    cudaIpcMemHandle_t h;
    return err(cudaIpcGetMemHandle(&h, b.p));
  });
  add("ipc_get_mem_handle.host", [] {
    void* p = nullptr;
    cudaMallocHost(&p, 4096);
    cudaIpcMemHandle_t h;
    const std::string s = with_last(cudaIpcGetMemHandle(&h, p));
    cudaFreeHost(p);
    return s;
  });
  add("get_error_name.9999", [] { return std::string(cudaGetErrorName(static_cast<cudaError_t>(9999))); });
  add("get_error_string.9999", [] { return std::string(cudaGetErrorString(static_cast<cudaError_t>(9999))); });
  add(
      "device_reset.then_malloc",
      [] {
        const cudaError_t r = cudaDeviceReset();
        void* p = nullptr;
        const cudaError_t m = cudaMalloc(&p, 16);
        if (p) cudaFree(p);
        return err(r) + "," + err(m);
      },
      true);
  return c;
}

}  // namespace

int main() {
  // The runtime initialises itself at its first call, in each child.
  return facts::run_cases(runtime_cases(), [](size_t) { return cudaSetDevice(0) == cudaSuccess; });
}
