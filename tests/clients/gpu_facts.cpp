// SPDX-License-Identifier: Apache-2.0
// gpu_facts: what the CUDA driver and NVML answer about device 0, and the codes they give to
// bad input, one "key=value" line each. Run on a real GPU it records the ground truth the
// fake is held to (tests/clients/golden/*.facts); run on the fake (fakegpu-run -d PROFILE) it
// prints the same keys, and run_client_tests.py compares the two.
//
// Everything is reached through dlopen (libcuda.so.1, libnvidia-ml.so.1), so one binary runs
// against NVIDIA's driver of any version and against the fake. The driver cases run in a
// child process that the parent restarts after a case that crashes it, hangs (20 s) or
// leaves the context unusable: such a case is printed as "crash:SIGNAME" / "hang", which is
// itself a fact (the real driver crashes on some bad handles; the fake must not).
//
//   gpu_facts              all sections
//   gpu_facts --only KEY   one case, in this process (to debug it)
#include <cuda.h>
#include "facts_harness.h"
#include <fakegpu/nvml_types.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace fgapi;
using facts::Case;
using facts::fact;

namespace {

void* g_cuda = nullptr;
void* g_nvml = nullptr;

template <typename F>
F sym(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

// Driver entry points: one list, declared and resolved once per process.
#define GPU_FACTS_DRIVER(X)                                                                                     \
  X(cuInit, unsigned)                                                                                           \
  X(cuDriverGetVersion, int*)                                                                                   \
  X(cuDeviceGetCount, int*)                                                                                     \
  X(cuDeviceGet, CUdevice*, int)                                                                                \
  X(cuDeviceGetName, char*, int, CUdevice)                                                                      \
  X(cuDeviceTotalMem_v2, size_t*, CUdevice)                                                                     \
  X(cuDeviceGetAttribute, int*, CUdevice_attribute, CUdevice)                                                   \
  X(cuDeviceGetPCIBusId, char*, int, CUdevice)                                                                  \
  X(cuDeviceCanAccessPeer, int*, CUdevice, CUdevice)                                                            \
  X(cuDevicePrimaryCtxRetain, CUcontext*, CUdevice)                                                             \
  X(cuDevicePrimaryCtxGetState, CUdevice, unsigned*, int*)                                                      \
  X(cuCtxSetCurrent, CUcontext)                                                                                 \
  X(cuCtxGetLimit, size_t*, CUlimit)                                                                            \
  X(cuCtxGetStreamPriorityRange, int*, int*)                                                                    \
  X(cuCtxGetCacheConfig, CUfunc_cache*)                                                                         \
  X(cuCtxGetApiVersion, CUcontext, unsigned*)                                                                   \
  X(cuCtxSynchronize)                                                                                           \
  X(cuMemGetInfo_v2, size_t*, size_t*)                                                                          \
  X(cuMemAlloc_v2, CUdeviceptr*, size_t)                                                                        \
  X(cuMemFree_v2, CUdeviceptr)                                                                                  \
  X(cuMemAllocPitch_v2, CUdeviceptr*, size_t*, size_t, size_t, unsigned)                                        \
  X(cuMemAllocHost_v2, void**, size_t)                                                                          \
  X(cuMemFreeHost, void*)                                                                                       \
  X(cuMemHostAlloc, void**, size_t, unsigned)                                                                   \
  X(cuMemAllocManaged, CUdeviceptr*, size_t, unsigned)                                                          \
  X(cuMemHostRegister_v2, void*, size_t, unsigned)                                                              \
  X(cuMemHostUnregister, void*)                                                                                 \
  X(cuMemGetAddressRange_v2, CUdeviceptr*, size_t*, CUdeviceptr)                                                \
  X(cuPointerGetAttribute, void*, CUpointer_attribute, CUdeviceptr)                                             \
  X(cuMemcpyHtoD_v2, CUdeviceptr, const void*, size_t)                                                          \
  X(cuMemcpyDtoH_v2, void*, CUdeviceptr, size_t)                                                                \
  X(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, size_t)                                                          \
  X(cuMemcpy2D_v2, const CUDA_MEMCPY2D*)                                                                        \
  X(cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t)                                                          \
  X(cuMemsetD32_v2, CUdeviceptr, unsigned, size_t)                                                              \
  X(cuMemsetD2D8_v2, CUdeviceptr, size_t, unsigned char, size_t, size_t)                                        \
  X(cuMemGetAllocationGranularity, size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)       \
  X(cuMemCreate, CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long)         \
  X(cuMemRelease, CUmemGenericAllocationHandle)                                                                 \
  X(cuMemAddressReserve, CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)                         \
  X(cuMemAddressFree, CUdeviceptr, size_t)                                                                      \
  X(cuDeviceGetDefaultMemPool, CUmemoryPool*, CUdevice)                                                         \
  X(cuMemPoolGetAttribute, CUmemoryPool, CUmemPool_attribute, void*)                                            \
  X(cuMemAllocAsync, CUdeviceptr*, size_t, CUstream)                                                            \
  X(cuMemFreeAsync, CUdeviceptr, CUstream)                                                                      \
  X(cuIpcGetMemHandle, CUipcMemHandle*, CUdeviceptr)                                                            \
  X(cuStreamCreate, CUstream*, unsigned)                                                                        \
  X(cuStreamDestroy_v2, CUstream)                                                                               \
  X(cuStreamQuery, CUstream)                                                                                    \
  X(cuStreamSynchronize, CUstream)                                                                              \
  X(cuStreamGetPriority, CUstream, int*)                                                                        \
  X(cuStreamGetFlags, CUstream, unsigned*)                                                                      \
  X(cuEventCreate, CUevent*, unsigned)                                                                          \
  X(cuEventDestroy_v2, CUevent)                                                                                 \
  X(cuEventRecord, CUevent, CUstream)                                                                           \
  X(cuEventQuery, CUevent)                                                                                      \
  X(cuEventSynchronize, CUevent)                                                                                \
  X(cuEventElapsedTime_v2, float*, CUevent, CUevent)                                                            \
  X(cuModuleLoadData, CUmodule*, const void*)                                                                   \
  X(cuModuleUnload, CUmodule)                                                                                   \
  X(cuModuleGetFunction, CUfunction*, CUmodule, const char*)                                                    \
  X(cuModuleGetGlobal_v2, CUdeviceptr*, size_t*, CUmodule, const char*)                                         \
  X(cuFuncGetAttribute, int*, CUfunction_attribute, CUfunction)                                                 \
  X(cuFuncSetAttribute, CUfunction, CUfunction_attribute, int)                                                  \
  X(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
    void**, void**)                                                                                             \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, int*, CUfunction, int, size_t)                                 \
  X(cuOccupancyAvailableDynamicSMemPerBlock, size_t*, CUfunction, int, int)                                     \
  X(cuOccupancyMaxPotentialBlockSize, int*, int*, CUfunction, CUoccupancyB2DSize, size_t, int)                  \
  X(cuGetErrorName, CUresult, const char**)                                                                     \
  X(cuGetExportTable, const void**, const CUuuid*)                                                              \
  X(cuCtxSetLimit, CUlimit, size_t)                                                                             \
  X(cuStreamCreateWithPriority, CUstream*, unsigned, int)                                                       \
  X(cuIpcOpenMemHandle_v2, CUdeviceptr*, CUipcMemHandle, unsigned)                                              \
  /* end */

#define DECLARE(name, ...)                     \
  using name##_fn = CUresult (*)(__VA_ARGS__); \
  name##_fn p_##name = nullptr;
GPU_FACTS_DRIVER(DECLARE)
#undef DECLARE

bool load_driver() {
  g_cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!g_cuda) return false;
#define RESOLVE(name, ...) p_##name = sym<name##_fn>(g_cuda, #name);
  GPU_FACTS_DRIVER(RESOLVE)
#undef RESOLVE
  return p_cuInit && p_cuGetErrorName;
}

std::string err(CUresult r) {
  const char* n = nullptr;
  if (!p_cuGetErrorName || p_cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) return "CUresult(" + std::to_string(r) + ")";
  return n;
}

// "value" when the call succeeded, else the error name. `v` is taken by reference so that it
// is read after the call in the same argument list has written it.
template <typename T>
std::string val_or(CUresult r, const T& v) {
  return r == CUDA_SUCCESS ? std::to_string(v) : err(r);
}

// A 4 KiB device block and a host buffer, the operands of most memory cases.
struct Block {
  CUdeviceptr p = 0;
  std::vector<unsigned char> host = std::vector<unsigned char>(1 << 16, 0x5A);
  Block() { p_cuMemAlloc_v2(&p, 4096); }
  ~Block() {
    if (p) p_cuMemFree_v2(p);
  }
};

// PTX any driver since CUDA 11.8 JITs: one kernel that writes its thread index, one that
// uses dynamic shared memory, a __device__ global.
const char* kPtx = R"(
.version 7.8
.target sm_80
.address_size 64
.global .align 4 .b8 g_data[256];
.visible .entry write_tid(.param .u64 out) {
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r1;
  ret;
}
.extern .shared .align 4 .b8 dyn[];
.visible .entry use_dyn(.param .u64 out) {
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, dyn;
  st.shared.u32 [%r2], %r1;
  bar.sync 0;
  ret;
}
)";

CUmodule g_mod = nullptr;
CUfunction g_fn = nullptr;

std::string launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem) {
  Block b;
  void* args[] = {&b.p};
  CUresult r = p_cuLaunchKernel(g_fn, gx, gy, gz, bx, by, bz, smem, nullptr, args, nullptr);
  if (r != CUDA_SUCCESS) return err(r);
  return "launch:" + err(r) + ",sync:" + err(p_cuCtxSynchronize());
}

// cuMemcpy2D of 4 rows of `width` bytes from host rows 64 bytes apart into a block, rows
// `dst_pitch` apart.
std::string copy_2d_into_block(size_t dst_pitch, size_t width) {
  Block b;
  CUDA_MEMCPY2D m{};
  m.srcMemoryType = CU_MEMORYTYPE_HOST;
  m.srcHost = b.host.data();
  m.srcPitch = 64;
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstDevice = b.p;
  m.dstPitch = dst_pitch;
  m.WidthInBytes = width;
  m.Height = 4;
  return err(p_cuMemcpy2D_v2(&m));
}

// A stream created and destroyed again.
CUstream destroyed_stream() {
  CUstream s = nullptr;
  p_cuStreamCreate(&s, 0);
  p_cuStreamDestroy_v2(s);
  return s;
}

// What `call` answers for an event created and never recorded.
std::string on_unrecorded_event(CUresult (*call)(CUevent)) {
  CUevent e = nullptr;
  p_cuEventCreate(&e, 0);
  std::string s = err(call(e));
  p_cuEventDestroy_v2(e);
  return s;
}

// cuEventElapsedTime between two events created with `flags`, of which the first `recorded`
// (0, 1 or 2) were recorded and waited for.
std::string elapsed_between(unsigned flags, int recorded) {
  CUevent a = nullptr, b = nullptr;
  p_cuEventCreate(&a, flags);
  p_cuEventCreate(&b, flags);
  if (recorded >= 1) p_cuEventRecord(a, nullptr);
  if (recorded >= 2) p_cuEventRecord(b, nullptr);
  if (recorded >= 1) p_cuCtxSynchronize();
  float ms = 0;
  std::string s = err(p_cuEventElapsedTime_v2(&ms, a, b));
  p_cuEventDestroy_v2(a);
  p_cuEventDestroy_v2(b);
  return s;
}

// The CUuuid whose 16 bytes `text` spells in hex, in order ("-" between groups is skipped).
CUuuid uuid_of(const char* text) {
  CUuuid u{};
  int i = 0;
  for (const char* c = text; *c && i < 16; ++c) {
    if (*c == '-') continue;
    u.bytes[i++] = static_cast<char>(std::stoi(std::string(c, 2), nullptr, 16));
    ++c;
  }
  return u;
}

// What cuModuleLoadData answers for `image`.
std::string load_error(const void* image) {
  CUmodule m = nullptr;
  return err(p_cuModuleLoadData(&m, image));
}

std::vector<Case> driver_cases() {
  std::vector<Case> c;
  auto add = [&](const char* k, std::function<std::string()> f, bool iso = false) {
    c.push_back({k, std::move(f), iso});
  };
  constexpr size_t kHuge = ~size_t{0};

  // ---- allocation ----
  add("mem_alloc.zero", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAlloc_v2(&p, 0));
  });
  add("mem_alloc.null_out", [] { return err(p_cuMemAlloc_v2(nullptr, 16)); });
  add("mem_alloc.size_max", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAlloc_v2(&p, kHuge));
  });
  add("mem_alloc.total_plus_one", [] {
    size_t f = 0, t = 0;
    p_cuMemGetInfo_v2(&f, &t);
    CUdeviceptr p = 0;
    return err(p_cuMemAlloc_v2(&p, t + 1));
  });
  add("mem_alloc.alignment", [] {
    CUdeviceptr a = 0, b = 0;
    p_cuMemAlloc_v2(&a, 1);
    p_cuMemAlloc_v2(&b, 1);
    std::string s = "a%512=" + std::to_string(a % 512) + ",b%512=" + std::to_string(b % 512);
    p_cuMemFree_v2(a);
    p_cuMemFree_v2(b);
    return s;
  });
  add("mem_free.null", [] { return err(p_cuMemFree_v2(0)); });
  add("mem_free.bogus", [] { return err(p_cuMemFree_v2(0x1234)); });
  add("mem_free.twice", [] {
    CUdeviceptr p = 0;
    p_cuMemAlloc_v2(&p, 4096);
    p_cuMemFree_v2(p);
    return err(p_cuMemFree_v2(p));
  });
  add("mem_free.interior", [] {
    CUdeviceptr p = 0;
    p_cuMemAlloc_v2(&p, 4096);
    std::string s = err(p_cuMemFree_v2(p + 16));
    p_cuMemFree_v2(p);
    return s;
  });
  add("mem_alloc_pitch.100x10x4", [] {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    CUresult r = p_cuMemAllocPitch_v2(&p, &pitch, 100, 10, 4);
    if (p) p_cuMemFree_v2(p);
    return val_or(r, pitch);
  });
  add("mem_alloc_pitch.widths", [] {
    std::string s;
    for (unsigned elem : {4u, 8u, 16u})
      for (size_t w : {1, 512, 513, 4096}) {
        CUdeviceptr p = 0;
        size_t pitch = 0;
        CUresult r = p_cuMemAllocPitch_v2(&p, &pitch, w, 4, elem);
        if (p) p_cuMemFree_v2(p);
        facts::append(s, std::to_string(w) + "x" + std::to_string(elem), val_or(r, pitch));
      }
    return s;
  });
  add("mem_get_info.delta", [] {
    std::string s;
    for (size_t n : {size_t{1}, size_t{1} << 20, (size_t{1} << 21) + 1, size_t{1} << 30}) {
      size_t f0 = 0, f1 = 0, t = 0;
      p_cuMemGetInfo_v2(&f0, &t);
      CUdeviceptr p = 0;
      CUresult r = p_cuMemAlloc_v2(&p, n);
      p_cuMemGetInfo_v2(&f1, &t);
      if (p) p_cuMemFree_v2(p);
      facts::append(s, std::to_string(n), r == CUDA_SUCCESS ? std::to_string(f0 - f1) : err(r));
    }
    return s;
  });
  add("mem_alloc_pitch.elem3", [] {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    return err(p_cuMemAllocPitch_v2(&p, &pitch, 100, 10, 3));
  });
  add("mem_alloc_pitch.width_max", [] {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    return err(p_cuMemAllocPitch_v2(&p, &pitch, kHuge, 2, 4));
  });
  add("mem_alloc_pitch.zero", [] {
    CUdeviceptr p = 0;
    size_t pitch = 0;
    return err(p_cuMemAllocPitch_v2(&p, &pitch, 0, 0, 4));
  });
  add("mem_alloc_host.size_max", [] {
    void* h = nullptr;
    return err(p_cuMemAllocHost_v2(&h, kHuge));
  });
  add("mem_alloc_host.zero", [] {
    void* h = nullptr;
    CUresult r = p_cuMemAllocHost_v2(&h, 0);
    if (r == CUDA_SUCCESS && h) p_cuMemFreeHost(h);
    return err(r);
  });
  add("mem_alloc_host.zero_pointer", [] {
    void* h = reinterpret_cast<void*>(1);
    CUresult r = p_cuMemAllocHost_v2(&h, 0);
    std::string v = r == CUDA_SUCCESS ? (h ? "non-null" : "null") : err(r);
    if (r == CUDA_SUCCESS && h) p_cuMemFreeHost(h);
    return v;
  });
  add(
      "mem_free_host.bogus",
      [] {
        static char buf[64];
        return err(p_cuMemFreeHost(buf));
      },
      true);
  add("mem_host_alloc.bad_flags", [] {
    void* h = nullptr;
    return err(p_cuMemHostAlloc(&h, 16, 0xFF));
  });
  add("mem_host_alloc.size_max", [] {
    void* h = nullptr;
    return err(p_cuMemHostAlloc(&h, kHuge, 0));
  });
  add("mem_alloc_managed.zero", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAllocManaged(&p, 0, CU_MEM_ATTACH_GLOBAL));
  });
  add("mem_alloc_managed.bad_flags", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAllocManaged(&p, 16, 0));
  });
  add("mem_alloc_managed.size_max", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAllocManaged(&p, kHuge, CU_MEM_ATTACH_GLOBAL));
  });
  add("mem_host_register.unaligned", [] {
    static char buf[8192];
    CUresult r = p_cuMemHostRegister_v2(buf + 1, 100, 0);
    if (r == CUDA_SUCCESS) p_cuMemHostUnregister(buf + 1);
    return err(r);
  });
  add("mem_host_register.twice", [] {
    void* h = aligned_alloc(4096, 8192);
    CUresult a = p_cuMemHostRegister_v2(h, 8192, 0);
    CUresult b = p_cuMemHostRegister_v2(h, 8192, 0);
    p_cuMemHostUnregister(h);
    std::free(h);
    return err(a) + "," + err(b);
  });
  add("mem_host_unregister.never", [] {
    static char buf[64];
    return err(p_cuMemHostUnregister(buf));
  });
  add("mem_get_address_range.interior", [] {
    Block b;
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult r = p_cuMemGetAddressRange_v2(&base, &size, b.p + 100);
    return r == CUDA_SUCCESS ? "offset=" + std::to_string(b.p + 100 - base) + ",size=" + std::to_string(size) : err(r);
  });
  add("mem_get_address_range.one_past_end", [] {
    Block b;
    CUdeviceptr base = 0;
    size_t size = 0;
    return err(p_cuMemGetAddressRange_v2(&base, &size, b.p + 4096));
  });
  add("pointer_attr.memory_type.device", [] {
    Block b;
    unsigned t = 0;
    return val_or(p_cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b.p), t);
  });
  add("pointer_attr.memory_type.malloc", [] {
    std::vector<char> v(64);
    unsigned t = 0;
    return val_or(
        p_cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(v.data())), t);
  });
  add("pointer_attr.range_size.interior", [] {
    Block b;
    size_t s = 0;
    return val_or(p_cuPointerGetAttribute(&s, CU_POINTER_ATTRIBUTE_RANGE_SIZE, b.p + 8), s);
  });

  // ---- copies and memsets ----
  add("memcpy_htod.past_end", [] {
    Block b;
    return err(p_cuMemcpyHtoD_v2(b.p, b.host.data(), 8192));
  });
  add("memcpy_htod.interior_past_end", [] {
    Block b;
    return err(p_cuMemcpyHtoD_v2(b.p + 4000, b.host.data(), 200));
  });
  add("memcpy_htod.size_max", [] {
    Block b;
    return err(p_cuMemcpyHtoD_v2(b.p, b.host.data(), kHuge));
  });
  add("memcpy_htod.null_host", [] {
    Block b;
    return err(p_cuMemcpyHtoD_v2(b.p, nullptr, 16));
  });
  add("memcpy_htod.zero_bytes", [] {
    Block b;
    return err(p_cuMemcpyHtoD_v2(b.p, b.host.data(), 0));
  });
  add("memcpy_dtoh.past_end", [] {
    Block b;
    return err(p_cuMemcpyDtoH_v2(b.host.data(), b.p, 8192));
  });
  add("memcpy_dtod.overlap", [] {
    Block b;
    return err(p_cuMemcpyDtoD_v2(b.p + 1, b.p, 100));
  });
  add("memcpy_dtod.bogus_src", [] {
    Block b;
    return err(p_cuMemcpyDtoD_v2(b.p, 0x1000, 16));
  });
  add(
      "memset_d8.past_end",
      [] {
        Block b;
        return err(p_cuMemsetD8_v2(b.p, 0, 8192));
      },
      true);
  add(
      "memset_d8.size_max",
      [] {
        Block b;
        CUresult r = p_cuMemsetD8_v2(b.p, 0, kHuge);
        return err(r) + ",sync:" + err(p_cuCtxSynchronize());
      },
      true);
  add(
      "memset_d32.misaligned",
      [] {
        Block b;
        return err(p_cuMemsetD32_v2(b.p + 1, 0, 4));
      },
      true);
  add(
      "memset_d32.wrapping_count",
      [] {
        Block b;
        return err(p_cuMemsetD32_v2(b.p, 0, kHuge / 2));
      },
      true);
  add(
      "memset_d2d8.pitch_wrap",
      [] {
        Block b;
        return err(p_cuMemsetD2D8_v2(b.p, kHuge / 2, 0, 16, 4));
      },
      true);
  add(
      "memset_d2d8.width_over_pitch",
      [] {
        Block b;
        return err(p_cuMemsetD2D8_v2(b.p, 64, 0, 128, 4));
      },
      true);
  add(
      "memcpy_2d.height_wrap", [] { return copy_2d_into_block(kHuge / 2, 16); }, true);
  add(
      "memcpy_2d.width_over_pitch", [] { return copy_2d_into_block(64, 128); }, true);

  // ---- VMM, pools, IPC ----
  add("vmm.granularity", [] {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t mn = 0, rec = 0;
    CUresult a = p_cuMemGetAllocationGranularity(&mn, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUresult b = p_cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    return val_or(a, mn) + "," + val_or(b, rec);
  });
  add("vmm.create_unaligned", [] {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h = 0;
    CUresult r = p_cuMemCreate(&h, 4096, &prop, 0);
    if (r == CUDA_SUCCESS) p_cuMemRelease(h);
    return err(r);
  });
  add("vmm.reserve_unaligned", [] {
    CUdeviceptr p = 0;
    CUresult r = p_cuMemAddressReserve(&p, 4096, 0, 0, 0);
    if (r == CUDA_SUCCESS) p_cuMemAddressFree(p, 4096);
    return err(r);
  });
  add("pool.default.release_threshold", [] {
    CUmemoryPool pool = nullptr;
    CUresult r = p_cuDeviceGetDefaultMemPool(&pool, 0);
    if (r != CUDA_SUCCESS) return err(r);
    unsigned long long v = 0;
    return val_or(p_cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v), v);
  });
  add("mem_alloc_async.zero", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAllocAsync(&p, 0, nullptr));
  });
  add("mem_alloc_async.size_max", [] {
    CUdeviceptr p = 0;
    return err(p_cuMemAllocAsync(&p, kHuge, nullptr));
  });
  add(
      "mem_free_async.bogus",
      [] {
        CUresult r = p_cuMemFreeAsync(0x1234, nullptr);
        return err(r) + ",sync:" + err(p_cuCtxSynchronize());
      },
      true);
  add("ipc_get_mem_handle.device", [] {
    Block b;
    CUipcMemHandle h;
    return err(p_cuIpcGetMemHandle(&h, b.p));
  });
  add("ipc_open_mem_handle.same_process", [] {
    Block b;
    CUipcMemHandle h;
    p_cuIpcGetMemHandle(&h, b.p);
    CUdeviceptr q = 0;
    return err(p_cuIpcOpenMemHandle_v2(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  });
  add("ipc_get_mem_handle.interior", [] {
    Block b;
    CUipcMemHandle h;
    return err(p_cuIpcGetMemHandle(&h, b.p + 64));
  });

  // ---- streams and events ----
  add("stream_create.bad_flags", [] {
    CUstream s = nullptr;
    return err(p_cuStreamCreate(&s, 99));
  });
  add("stream_default.priority_flags", [] {
    int pr = -1;
    unsigned fl = 99;
    CUresult a = p_cuStreamGetPriority(nullptr, &pr);
    CUresult b = p_cuStreamGetFlags(nullptr, &fl);
    return val_or(a, pr) + "," + val_or(b, fl);
  });
  add("stream_create_with_priority.clamp", [] {
    std::string s;
    for (int want : {-10, -5, 0, 3}) {
      CUstream st = nullptr;
      int got = 99;
      CUresult r = p_cuStreamCreateWithPriority(&st, 0, want);
      if (r == CUDA_SUCCESS) {
        p_cuStreamGetPriority(st, &got);
        p_cuStreamDestroy_v2(st);
      }
      facts::append(s, std::to_string(want), val_or(r, got));
    }
    return s;
  });
  add(
      "stream_destroy.twice", [] { return err(p_cuStreamDestroy_v2(destroyed_stream())); }, true);
  add(
      "stream_query.destroyed", [] { return err(p_cuStreamQuery(destroyed_stream())); }, true);
  add("event_create.bad_flags", [] {
    CUevent e = nullptr;
    return err(p_cuEventCreate(&e, 99));
  });
  add("event_query.unrecorded", [] { return on_unrecorded_event(p_cuEventQuery); });
  add("event_synchronize.unrecorded", [] { return on_unrecorded_event(p_cuEventSynchronize); });
  add("event_elapsed.unrecorded", [] { return elapsed_between(0, 0); });
  add("event_elapsed.one_recorded", [] { return elapsed_between(0, 1); });
  add("event_elapsed.disable_timing", [] { return elapsed_between(CU_EVENT_DISABLE_TIMING, 2); });

  // ---- devices ----
  add("device_get.99", [] {
    CUdevice d = 0;
    return err(p_cuDeviceGet(&d, 99));
  });
  add("device_get.minus_1", [] {
    CUdevice d = 0;
    return err(p_cuDeviceGet(&d, -1));
  });
  add("device_attr.0", [] {
    int v = 0;
    return err(p_cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(0), 0));
  });
  add("device_attr.max", [] {
    int v = 0;
    return err(p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0));
  });
  add("device_attr.null_out", [] { return err(p_cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0)); });
  add("device_attr.device_99", [] {
    int v = 0;
    return err(p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99));
  });
  add("device_can_access_peer.self", [] {
    int v = -1;
    return val_or(p_cuDeviceCanAccessPeer(&v, 0, 0), v);
  });
  add("device_name.len_4", [] {
    char n[8] = "xxxxxxx";
    CUresult r = p_cuDeviceGetName(n, 4, 0);
    return r == CUDA_SUCCESS ? std::string(n, strnlen(n, 4)) + "|" + std::to_string(strnlen(n, 8)) : err(r);
  });

  // ---- modules and launches ----
  add("module_load.garbage", [] { return load_error("hello, world"); });
  add("module_load.empty_string", [] { return load_error(""); });
  add("module_load.elf_junk", [] {
    static unsigned char elf[256] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    return load_error(elf);
  });
  add("module_load.fatbin_no_entries", [] {
    // fatbin header: magic 0xBA55ED50, version 1, header size 16, payload size 0
    static uint32_t fb[8] = {0xBA55ED50u, 0x00100001u, 0, 0};
    return load_error(fb);
  });
  add("module_load.bad_ptx",
      [] { return load_error(".version 7.8\n.target sm_80\n.address_size 64\nthis is not ptx;\n"); });
  add("module_load.ptx_future_target", [] { return load_error(".version 7.8\n.target sm_200\n.address_size 64\n"); });
  add("module_load.ptx", [] {
    CUresult r = p_cuModuleLoadData(&g_mod, kPtx);
    if (r == CUDA_SUCCESS) r = p_cuModuleGetFunction(&g_fn, g_mod, "write_tid");
    return err(r);
  });
  add("module_load.null_image", [] {
    CUmodule m = nullptr;
    return err(p_cuModuleLoadData(&m, nullptr));
  });
  add("module_get_function.null_module", [] {
    CUfunction f = nullptr;
    return err(p_cuModuleGetFunction(&f, nullptr, "write_tid"));
  });
  add("module_get_function.missing", [] {
    CUfunction f = nullptr;
    return err(p_cuModuleGetFunction(&f, g_mod, "nope"));
  });
  add("module_get_global.g_data", [] {
    CUdeviceptr p = 0;
    size_t s = 0;
    return val_or(p_cuModuleGetGlobal_v2(&p, &s, g_mod, "g_data"), s);
  });
  add("func_attr", [] {
    std::string s;
    const std::pair<const char*, CUfunction_attribute> attrs[] = {
        {"max_threads", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {"shared", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
        {"const", CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
        {"local", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
        {"ptx", CU_FUNC_ATTRIBUTE_PTX_VERSION},
        {"binary", CU_FUNC_ATTRIBUTE_BINARY_VERSION},
        {"max_dyn_shared", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
        {"carveout", CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT},
        {"regs", CU_FUNC_ATTRIBUTE_NUM_REGS},
    };
    for (auto& [n, a] : attrs) {
      int v = 0;
      facts::append(s, n, val_or(p_cuFuncGetAttribute(&v, a, g_fn), v));
    }
    return s;
  });
  add("launch.ok_1024", [] { return launch(1, 1, 1, 1024, 1, 1, 0); });
  add("launch.block_1025", [] { return launch(1, 1, 1, 1025, 1, 1, 0); });
  add("launch.block_z_65", [] { return launch(1, 1, 1, 1, 1, 65, 0); });
  add("launch.block_zero", [] { return launch(1, 1, 1, 0, 1, 1, 0); });
  add("launch.grid_zero", [] { return launch(0, 1, 1, 32, 1, 1, 0); });
  add("launch.grid_y_65536", [] { return launch(1, 65536, 1, 1, 1, 1, 0); });
  add("launch.grid_x_2p31", [] { return launch(0x80000000u, 1, 1, 1, 1, 1, 0); });
  add("launch.smem_48k", [] { return launch(1, 1, 1, 32, 1, 1, 48 * 1024); });
  add("launch.smem_48k_plus_1", [] { return launch(1, 1, 1, 32, 1, 1, 48 * 1024 + 1); });
  add("func_set_attr.max_dyn_shared", [] {
    int optin = 0;
    p_cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
    CUresult a = p_cuFuncSetAttribute(g_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
    CUresult b = p_cuFuncSetAttribute(g_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1);
    std::string s = err(a) + "," + err(b);
    s += ",launch_optin:" + launch(1, 1, 1, 32, 1, 1, optin);
    s += ",launch_optin_plus_1:" + launch(1, 1, 1, 32, 1, 1, optin + 1);
    p_cuFuncSetAttribute(g_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0);
    return s;
  });
  add("occupancy.blocks_per_sm", [] {
    std::string s;
    for (int bs : {32, 64, 128, 256, 512, 1024}) {
      int n = 0;
      facts::append(s, std::to_string(bs), val_or(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, g_fn, bs, 0), n));
    }
    int n = 0;
    s += ",256+64KiB:" + val_or(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, g_fn, 256, 64 * 1024), n);
    return s;
  });
  add("occupancy.available_dynamic_smem", [] {
    return facts::per_grid_shape([](int blocks, int threads) {
      size_t n = 0;
      const CUresult r = p_cuOccupancyAvailableDynamicSMemPerBlock(&n, g_fn, blocks, threads);
      return val_or(r, n);
    });
  });
  add("mem_free_async.null", [] {
    const CUresult r = p_cuMemFreeAsync(0, nullptr);
    return err(r);
  });
  add("occupancy.max_potential_block_size", [] {
    int grid = 0, block = 0;
    CUresult r = p_cuOccupancyMaxPotentialBlockSize(&grid, &block, g_fn, nullptr, 0, 0);
    return r == CUDA_SUCCESS ? facts::pair(grid, block) : err(r);
  });
  add(
      "launch.illegal_address",
      [] {
        CUdeviceptr bad = 8;
        void* args[] = {&bad};
        CUresult r = p_cuLaunchKernel(g_fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
        std::string s = "launch:" + err(r) + ",sync:" + err(p_cuCtxSynchronize());
        CUdeviceptr p = 0;
        s += ",then_alloc:" + err(p_cuMemAlloc_v2(&p, 16));
        return s;
      },
      true);
  add(
      "module_unload.twice",
      [] {
        CUmodule m = nullptr;
        p_cuModuleLoadData(&m, kPtx);
        p_cuModuleUnload(m);
        return err(p_cuModuleUnload(m));
      },
      true);

  // ---- context ----
  add("ctx.limits", [] {
    std::string s;
    for (int l = 0; l < CU_LIMIT_MAX; ++l) {
      size_t v = 0;
      facts::append(s, std::to_string(l), val_or(p_cuCtxGetLimit(&v, static_cast<CUlimit>(l)), v));
    }
    return s;
  });
  add("ctx.set_limit.stack_1000", [] {
    CUresult r = p_cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1000);
    size_t v = 0;
    p_cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE);
    p_cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024);
    return err(r) + "," + std::to_string(v);
  });
  add("ctx.set_limit.printf_fifo_zero", [] { return err(p_cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 0)); });
  add("ctx.stream_priority_range", [] {
    int lo = 0, hi = 0;
    CUresult r = p_cuCtxGetStreamPriorityRange(&lo, &hi);
    return r == CUDA_SUCCESS ? facts::pair(lo, hi) : err(r);
  });
  add("ctx.cache_config", [] {
    CUfunc_cache c{};
    CUresult r = p_cuCtxGetCacheConfig(&c);
    return val_or(r, static_cast<int>(c));
  });
  add("ctx.primary_state", [] {
    unsigned fl = 0;
    int active = 0;
    CUresult r = p_cuDevicePrimaryCtxGetState(0, &fl, &active);
    return r == CUDA_SUCCESS ? facts::pair(fl, active) : err(r);
  });
  add(
      "ctx.none_current.mem_alloc",
      [] {
        p_cuCtxSetCurrent(nullptr);
        CUdeviceptr p = 0;
        const CUresult r = p_cuMemAlloc_v2(&p, 16);
        return err(r) + ",sync:" + err(p_cuCtxSynchronize());
      },
      true);
  return c;
}

void print_device_facts() {
  int v = 0;
  fact("drv.version", val_or(p_cuDriverGetVersion(&v), v));
  int n = 0;
  fact("drv.device_count", val_or(p_cuDeviceGetCount(&n), n));
  char name[256] = {};
  CUresult r = p_cuDeviceGetName(name, sizeof name, 0);
  fact("drv.name", r == CUDA_SUCCESS ? name : err(r));
  size_t total = 0;
  fact("drv.total_mem", val_or(p_cuDeviceTotalMem_v2(&total, 0), total));
  char bus[64] = {};
  r = p_cuDeviceGetPCIBusId(bus, sizeof bus, 0);
  fact("drv.pci_bus_id", r == CUDA_SUCCESS ? bus : err(r));
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int x = 0;
    fact("drv.attr." + std::to_string(a), val_or(p_cuDeviceGetAttribute(&x, static_cast<CUdevice_attribute>(a), 0), x));
  }
  // The driver's private export tables: word 0 is the table's size in bytes, except for
  // context-local storage (no size word; only its presence is printed).
  struct Id {
    const char* name;
    const char* uuid;  // the table's CUuuid bytes in order, as hex
    bool sized;
  };
  const Id ids[] = {
      {"cudart_interface", "6bd5fb6c-5bf4-e74a-8987-d93912fd9df9", true},
      {"tools_callback_hooks", "a094798c-2e74-2e74-93f2-0800200c0a66", true},
      {"tools_tls", "42d85a81-23f6-cb47-8298-f6e78a3aecdc", true},
      {"context_local_storage", "c693336e-1121-df11-a8c3-68f355d89593", false},
      {"context_checks", "263e8860-7cd2-6143-92f6-bbd5006dfa7e", true},
      {"integrity_check", "d4082055-bde6-704b-8d34-ba123e66e1f2", true},
      {"log_sink", "f8cff951-2146-8b4e-b9e2-fb469e7c0dd9", true},
      {"tools_context", "21318c60-9714-3248-8ca6-41ff7324c8f2", true},
      {"tools_module", "6e163fbe-b958-444d-835c-e182aff1991e", true},
      {"compute_cache", "da9151d3-3ae6-cc41-a5c0-4f26d533e328", true},
      {"cluster", "1734dc26-800d-4745-8726-c0f1e7dd8bca", true},
  };
  for (const Id& e : ids) {
    const void* t = nullptr;
    const CUuuid id = uuid_of(e.uuid);
    CUresult er = p_cuGetExportTable ? p_cuGetExportTable(&t, &id) : CUDA_ERROR_NOT_FOUND;
    std::string s = err(er);
    if (er == CUDA_SUCCESS && t && e.sized) s = "size=" + std::to_string(*static_cast<const uint64_t*>(t));
    fact(std::string("drv.export_table.") + e.name, s);
  }
}

// Sets up a fresh child for the driver cases: device 0's primary context current, the module
// loaded again for a child that starts after module_load.ptx.
bool driver_setup(size_t first) {
  CUresult r = p_cuInit(0);
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (r == CUDA_SUCCESS) r = p_cuDeviceGet(&dev, 0);
  if (r == CUDA_SUCCESS) r = p_cuDevicePrimaryCtxRetain(&ctx, dev);
  if (r == CUDA_SUCCESS) r = p_cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "gpu_facts: driver set-up failed: %s\n", err(r).c_str());
    return false;
  }
  if (first == 0) print_device_facts();
  if (first > 0 && !g_mod) {
    if (p_cuModuleLoadData(&g_mod, kPtx) == CUDA_SUCCESS) p_cuModuleGetFunction(&g_fn, g_mod, "write_tid");
  }
  return true;
}

// ---- NVML ----------------------------------------------------------------------------------
template <typename... A>
using NvFn = nvmlReturn_t (*)(A...);

std::string nverr(nvmlReturn_t r) {
  auto f = sym<const char* (*)(nvmlReturn_t)>(g_nvml, "nvmlErrorString");
  return "NVML(" + std::to_string(static_cast<int>(r)) + (f ? std::string(":") + f(r) : "") + ")";
}

template <typename T>
std::string nv_val(nvmlReturn_t r, const T& v) {
  return r == NVML_SUCCESS ? std::to_string(v) : nverr(r);
}

// "a,b" for an NVML query that answers two values of type T for device `d`.
template <typename T>
std::string nv_pair(nvmlDevice_t d, const char* fn) {
  auto f = sym<NvFn<nvmlDevice_t, T*, T*>>(g_nvml, fn);
  if (!f) return "missing";
  T a = 0, b = 0;
  const nvmlReturn_t r = f(d, &a, &b);
  return r == NVML_SUCCESS ? facts::pair(a, b) : nverr(r);
}

void print_nvml_facts() {
  g_nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!g_nvml) {
    fact("nvml", "absent");
    return;
  }
#define NV(name, ...) auto name = sym<NvFn<__VA_ARGS__>>(g_nvml, #name)
  NV(nvmlInit_v2);
  if (!nvmlInit_v2) return;
  fact("nvml.init", nverr(nvmlInit_v2()));
  char s[256];
  NV(nvmlSystemGetDriverVersion, char*, unsigned);
  fact("nvml.driver_version", nvmlSystemGetDriverVersion(s, sizeof s) == NVML_SUCCESS ? s : "error");
  NV(nvmlSystemGetNVMLVersion, char*, unsigned);
  fact("nvml.nvml_version", nvmlSystemGetNVMLVersion(s, sizeof s) == NVML_SUCCESS ? s : "error");
  NV(nvmlSystemGetCudaDriverVersion_v2, int*);
  int cv = 0;
  fact("nvml.cuda_driver_version", nv_val(nvmlSystemGetCudaDriverVersion_v2(&cv), cv));
  NV(nvmlDeviceGetHandleByIndex_v2, unsigned, nvmlDevice_t*);
  nvmlDevice_t d = nullptr;
  nvmlReturn_t hr = nvmlDeviceGetHandleByIndex_v2(0, &d);
  fact("nvml.handle0", nverr(hr));
  if (hr != NVML_SUCCESS) return;

  NV(nvmlDeviceGetName, nvmlDevice_t, char*, unsigned);
  fact("nvml.name", nvmlDeviceGetName(d, s, sizeof s) == NVML_SUCCESS ? s : "error");
  NV(nvmlDeviceGetBrand, nvmlDevice_t, nvmlBrandType_t*);
  nvmlBrandType_t brand{};
  nvmlReturn_t r = nvmlDeviceGetBrand(d, &brand);
  fact("nvml.brand", nv_val(r, static_cast<int>(brand)));
  NV(nvmlDeviceGetArchitecture, nvmlDevice_t, unsigned*);
  unsigned u = 0;
  fact("nvml.architecture", nv_val(nvmlDeviceGetArchitecture(d, &u), u));
  NV(nvmlDeviceGetCudaComputeCapability, nvmlDevice_t, int*, int*);
  int ma = 0, mi = 0;
  r = nvmlDeviceGetCudaComputeCapability(d, &ma, &mi);
  fact("nvml.cc", r == NVML_SUCCESS ? std::to_string(ma) + "." + std::to_string(mi) : nverr(r));
  NV(nvmlDeviceGetMemoryInfo, nvmlDevice_t, nvmlMemory_t*);
  nvmlMemory_t m{};
  r = nvmlDeviceGetMemoryInfo(d, &m);
  fact("nvml.memory.total", nv_val(r, m.total));
  fact("nvml.memory.used_plus_free", nv_val(r, m.used + m.free));
  NV(nvmlDeviceGetMemoryInfo_v2, nvmlDevice_t, nvmlMemory_v2_t*);
  nvmlMemory_v2_t m2{};
  m2.version = nvmlMemory_v2;
  r = nvmlDeviceGetMemoryInfo_v2(d, &m2);
  fact("nvml.memory_v2.total", nv_val(r, m2.total));
  fact("nvml.memory_v2.reserved", nv_val(r, m2.reserved));
  fact("nvml.memory_v2.used_plus_free", nv_val(r, m2.used + m2.free));
  NV(nvmlDeviceGetBAR1MemoryInfo, nvmlDevice_t, nvmlBAR1Memory_t*);
  nvmlBAR1Memory_t bar1{};
  fact("nvml.bar1.total", nv_val(nvmlDeviceGetBAR1MemoryInfo(d, &bar1), bar1.bar1Total));
  NV(nvmlDeviceGetPciInfo_v3, nvmlDevice_t, nvmlPciInfo_t*);
  nvmlPciInfo_t pci{};
  r = nvmlDeviceGetPciInfo_v3(d, &pci);
  fact("nvml.pci.device_id", nv_val(r, pci.pciDeviceId));
  fact("nvml.pci.subsystem_id", nv_val(r, pci.pciSubSystemId));
  fact("nvml.pci.bus_id", r == NVML_SUCCESS ? pci.busId : nverr(r));

  // One unsigned value, or an enum (the same 4 bytes; every value asked for here is >= 0).
  auto uint_fact = [&](const char* key, const char* fn) {
    auto f = sym<NvFn<nvmlDevice_t, unsigned*>>(g_nvml, fn);
    unsigned x = 0;
    fact(key, f ? nv_val(f(d, &x), x) : "missing");
  };
  uint_fact("nvml.max_pcie_link_generation", "nvmlDeviceGetMaxPcieLinkGeneration");
  uint_fact("nvml.max_pcie_link_width", "nvmlDeviceGetMaxPcieLinkWidth");
  uint_fact("nvml.gpu_max_pcie_link_generation", "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  uint_fact("nvml.curr_pcie_link_generation", "nvmlDeviceGetCurrPcieLinkGeneration");
  uint_fact("nvml.curr_pcie_link_width", "nvmlDeviceGetCurrPcieLinkWidth");
  uint_fact("nvml.power_limit", "nvmlDeviceGetPowerManagementLimit");
  uint_fact("nvml.power_default_limit", "nvmlDeviceGetPowerManagementDefaultLimit");
  uint_fact("nvml.power_enforced_limit", "nvmlDeviceGetEnforcedPowerLimit");
  uint_fact("nvml.power_usage", "nvmlDeviceGetPowerUsage");
  uint_fact("nvml.fan_speed", "nvmlDeviceGetFanSpeed");
  uint_fact("nvml.num_fans", "nvmlDeviceGetNumFans");
  uint_fact("nvml.num_gpu_cores", "nvmlDeviceGetNumGpuCores");
  uint_fact("nvml.memory_bus_width", "nvmlDeviceGetMemoryBusWidth");
  uint_fact("nvml.minor_number", "nvmlDeviceGetMinorNumber");
  uint_fact("nvml.max_mig_device_count", "nvmlDeviceGetMaxMigDeviceCount");
  uint_fact("nvml.multi_gpu_board", "nvmlDeviceGetMultiGpuBoard");
  uint_fact("nvml.board_id", "nvmlDeviceGetBoardId");
  uint_fact("nvml.pcie_replay_counter", "nvmlDeviceGetPcieReplayCounter");
  uint_fact("nvml.irq_num", "nvmlDeviceGetIrqNum");
  uint_fact("nvml.pcie_speed", "nvmlDeviceGetPcieSpeed");
  uint_fact("nvml.pcie_link_max_speed", "nvmlDeviceGetPcieLinkMaxSpeed");
  uint_fact("nvml.adaptive_clock_status", "nvmlDeviceGetAdaptiveClockInfoStatus");
  fact("nvml.power_constraints", nv_pair<unsigned>(d, "nvmlDeviceGetPowerManagementLimitConstraints"));
  NV(nvmlDeviceGetTemperatureThreshold, nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned*);
  for (int t = 0; t < 8; ++t) {
    unsigned x = 0;
    fact("nvml.temp_threshold." + std::to_string(t),
         nv_val(nvmlDeviceGetTemperatureThreshold(d, static_cast<nvmlTemperatureThresholds_t>(t), &x), x));
  }
  NV(nvmlDeviceGetClockInfo, nvmlDevice_t, nvmlClockType_t, unsigned*);
  NV(nvmlDeviceGetMaxClockInfo, nvmlDevice_t, nvmlClockType_t, unsigned*);
  NV(nvmlDeviceGetApplicationsClock, nvmlDevice_t, nvmlClockType_t, unsigned*);
  NV(nvmlDeviceGetDefaultApplicationsClock, nvmlDevice_t, nvmlClockType_t, unsigned*);
  NV(nvmlDeviceGetMaxCustomerBoostClock, nvmlDevice_t, nvmlClockType_t, unsigned*);
  for (int c = 0; c < NVML_CLOCK_COUNT; ++c) {
    auto ct = static_cast<nvmlClockType_t>(c);
    unsigned x = 0;
    std::string k = std::to_string(c);
    fact("nvml.max_clock." + k, nv_val(nvmlDeviceGetMaxClockInfo(d, ct, &x), x));
    fact("nvml.app_clock." + k, nv_val(nvmlDeviceGetApplicationsClock(d, ct, &x), x));
    fact("nvml.default_app_clock." + k, nv_val(nvmlDeviceGetDefaultApplicationsClock(d, ct, &x), x));
    fact("nvml.max_customer_boost_clock." + k, nv_val(nvmlDeviceGetMaxCustomerBoostClock(d, ct, &x), x));
    fact("nvml.clock." + k, nv_val(nvmlDeviceGetClockInfo(d, ct, &x), x));
  }
  NV(nvmlDeviceGetSupportedMemoryClocks, nvmlDevice_t, unsigned*, unsigned*);
  unsigned count = 0;
  r = nvmlDeviceGetSupportedMemoryClocks(d, &count, nullptr);
  fact("nvml.supported_memory_clocks.query", nverr(r) + ",count=" + std::to_string(count));
  uint_fact("nvml.performance_state", "nvmlDeviceGetPerformanceState");
  uint_fact("nvml.compute_mode", "nvmlDeviceGetComputeMode");
  uint_fact("nvml.persistence_mode", "nvmlDeviceGetPersistenceMode");
  uint_fact("nvml.display_mode", "nvmlDeviceGetDisplayMode");
  uint_fact("nvml.display_active", "nvmlDeviceGetDisplayActive");
  uint_fact("nvml.accounting_mode", "nvmlDeviceGetAccountingMode");
  uint_fact("nvml.retired_pages_pending", "nvmlDeviceGetRetiredPagesPendingStatus");
  fact("nvml.ecc_mode", nv_pair<int>(d, "nvmlDeviceGetEccMode"));
  fact("nvml.mig_mode", nv_pair<unsigned>(d, "nvmlDeviceGetMigMode"));
  NV(nvmlDeviceGetTemperature, nvmlDevice_t, int, unsigned*);
  unsigned temp = 0;
  fact("nvml.temperature.query", nverr(nvmlDeviceGetTemperature(d, 0, &temp)));
  NV(nvmlDeviceGetUtilizationRates, nvmlDevice_t, nvmlUtilization_t*);
  nvmlUtilization_t ut{};
  fact("nvml.utilization.query", nverr(nvmlDeviceGetUtilizationRates(d, &ut)));
  NV(nvmlDeviceGetTotalEnergyConsumption, nvmlDevice_t, unsigned long long*);
  unsigned long long e = 0;
  fact("nvml.total_energy.query", nverr(nvmlDeviceGetTotalEnergyConsumption(d, &e)));
  auto str_fact = [&](const char* key, const char* fn) {
    auto f = sym<NvFn<nvmlDevice_t, char*, unsigned>>(g_nvml, fn);
    char b[256] = {};
    nvmlReturn_t rr = f ? f(d, b, sizeof b) : NVML_ERROR_FUNCTION_NOT_FOUND;
    fact(key, rr == NVML_SUCCESS ? "ok" : nverr(rr));
  };
  str_fact("nvml.serial.query", "nvmlDeviceGetSerial");
  str_fact("nvml.board_part_number.query", "nvmlDeviceGetBoardPartNumber");
  str_fact("nvml.vbios_version.query", "nvmlDeviceGetVbiosVersion");
  str_fact("nvml.inforom_image_version.query", "nvmlDeviceGetInforomImageVersion");
  NV(nvmlDeviceGetEncoderCapacity, nvmlDevice_t, int, unsigned*);
  unsigned cap = 0;
  fact("nvml.encoder_capacity.h264", nv_val(nvmlDeviceGetEncoderCapacity(d, 0, &cap), cap));
  NV(nvmlDeviceGetComputeRunningProcesses_v3, nvmlDevice_t, unsigned*, void*);
  unsigned np = 0;
  r = nvmlDeviceGetComputeRunningProcesses_v3(d, &np, nullptr);  // before np is read
  fact("nvml.compute_processes.query_null", nverr(r) + ",count=" + std::to_string(np));
  NV(nvmlDeviceGetNvLinkState, nvmlDevice_t, unsigned, int*);
  std::string links;
  for (unsigned l = 0; l < 20; ++l) {
    int st = 0;
    nvmlReturn_t lr = nvmlDeviceGetNvLinkState(d, l, &st);
    links += (l ? "," : "") + (lr == NVML_SUCCESS ? std::to_string(st) : std::to_string(static_cast<int>(lr)) + "!");
  }
  fact("nvml.nvlink_state", links);
  NV(nvmlDeviceGetAttributes_v2, nvmlDevice_t, nvmlDeviceAttributes_t*);
  nvmlDeviceAttributes_t at{};
  r = nvmlDeviceGetAttributes_v2(d, &at);
  fact("nvml.attributes.multiprocessor_count", nv_val(r, at.multiprocessorCount));
  fact("nvml.attributes.memory_size_mb", nv_val(r, at.memorySizeMB));
  // Bad input.
  nvmlDevice_t none = nullptr;
  fact("nvml.bad.handle_99", nverr(nvmlDeviceGetHandleByIndex_v2(99, &none)));
  fact("nvml.bad.name_len_4", nverr(nvmlDeviceGetName(d, s, 4)));
  fact("nvml.bad.memory_null", nverr(nvmlDeviceGetMemoryInfo(d, nullptr)));
  nvmlMemory_v2_t bad{};
  bad.version = 2;
  fact("nvml.bad.memory_v2_version_2", nverr(nvmlDeviceGetMemoryInfo_v2(d, &bad)));
  fact("nvml.bad.clock_type_9", nv_val(nvmlDeviceGetClockInfo(d, static_cast<nvmlClockType_t>(9), &u), u));
  fact("nvml.bad.handle_null_name", nverr(nvmlDeviceGetName(nullptr, s, sizeof s)));
#undef NV
}

}  // namespace

int main(int argc, char** argv) {
  if (!load_driver()) {
    std::fprintf(stderr, "gpu_facts: cannot load libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  if (argc == 3 && std::strcmp(argv[1], "--only") == 0) {
    std::vector<Case> cases = driver_cases();
    p_cuInit(0);
    CUcontext ctx = nullptr;
    p_cuDevicePrimaryCtxRetain(&ctx, 0);
    p_cuCtxSetCurrent(ctx);
    for (auto& c : cases) {
      if (std::strcmp(c.key, "module_load.ptx") == 0 || std::strcmp(c.key, argv[2]) == 0)
        fact(std::string("case.") + c.key, c.run());
    }
    return 0;
  }
  // NVML first, in a child: the parent never initialises a driver before forking.
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    print_nvml_facts();
    std::fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st)) std::printf("nvml=crash\n");
  std::fflush(stdout);
  return facts::run_cases(driver_cases(), driver_setup);
}
