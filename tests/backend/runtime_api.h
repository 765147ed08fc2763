// SPDX-License-Identifier: Apache-2.0
// The CUDA Runtime as a client sees it: libcudart.so.13 from FAKEGPU_TEST_LIBDIR, opened with
// dlopen, every entry point bound with dlvsym to its version node (libcudart.so.13, or
// libcudart.so.12 for the CUDA 12-only names), exactly as a program built with nvcc binds
// them. No toolkit is needed: the types are the backend's own (fakegpu/cuda_types.h).
#pragma once
#include "fakegpu/cuda_types.h"

#include <catch2/catch.hpp>

#include "backend/processes.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace rtt {

using namespace fgapi;

inline std::string libdir() {
  const char* d = std::getenv("FAKEGPU_TEST_LIBDIR");
  if (!d || !*d) throw std::runtime_error("FAKEGPU_TEST_LIBDIR is not set (run the tests through ctest)");
  return d;
}

struct Runtime {
  void* handle = nullptr;

  template <class F>
  void bind(F& fp, const char* name, const char* node = "libcudart.so.13") {
    fp = reinterpret_cast<F>(dlvsym(handle, name, node));
    if (!fp) throw std::runtime_error(std::string("missing export ") + name + "@" + node);
  }
#define RTT_BIND(name) bind(name, #name)
#define RTT_BIND12(name) bind(name, #name, "libcudart.so.12")

  // errors
  cudaError_t (*cudaGetLastError)();
  cudaError_t (*cudaPeekAtLastError)();
  const char* (*cudaGetErrorName)(cudaError_t);
  const char* (*cudaGetErrorString)(cudaError_t);
  // devices
  cudaError_t (*cudaGetDeviceCount)(int*);
  cudaError_t (*cudaGetDevice)(int*);
  cudaError_t (*cudaSetDevice)(int);
  cudaError_t (*cudaInitDevice)(int, unsigned, unsigned);
  cudaError_t (*cudaSetDeviceFlags)(unsigned);
  cudaError_t (*cudaGetDeviceFlags)(unsigned*);
  cudaError_t (*cudaChooseDevice)(int*, const cudaDeviceProp*);
  cudaError_t (*cudaDeviceGetByPCIBusId)(int*, const char*);
  cudaError_t (*cudaDeviceGetPCIBusId)(char*, int, int);
  cudaError_t (*cudaDeviceGetAttribute)(int*, cudaDeviceAttr, int);
  cudaError_t (*cudaDeviceGetP2PAttribute)(int*, cudaDeviceP2PAttr, int, int);
  cudaError_t (*cudaGetDeviceProperties)(cudaDeviceProp*, int);
  cudaError_t (*cudaGetDeviceProperties_v2)(void*, int);  // libcudart.so.12, 12.x layout
  cudaError_t (*cudaGetDeviceProperties12)(void*, int);   // cudaGetDeviceProperties@libcudart.so.12
  cudaError_t (*cudaDeviceGetLimit)(size_t*, cudaLimit);
  cudaError_t (*cudaDeviceSetLimit)(cudaLimit, size_t);
  cudaError_t (*cudaDeviceGetCacheConfig)(cudaFuncCache*);
  cudaError_t (*cudaDeviceSetCacheConfig)(cudaFuncCache);
  cudaError_t (*cudaDeviceGetStreamPriorityRange)(int*, int*);
  cudaError_t (*cudaDeviceSynchronize)();
  cudaError_t (*cudaDeviceReset)();
  cudaError_t (*cudaDeviceCanAccessPeer)(int*, int, int);
  cudaError_t (*cudaDeviceEnablePeerAccess)(int, unsigned);
  cudaError_t (*cudaDeviceDisablePeerAccess)(int);
  cudaError_t (*cudaDriverGetVersion)(int*);
  cudaError_t (*cudaRuntimeGetVersion)(int*);
  // memory
  cudaError_t (*cudaMalloc)(void**, size_t);
  cudaError_t (*cudaFree)(void*);
  cudaError_t (*cudaMallocPitch)(void**, size_t*, size_t, size_t);
  cudaError_t (*cudaMallocManaged)(void**, size_t, unsigned);
  cudaError_t (*cudaMallocHost)(void**, size_t);
  cudaError_t (*cudaHostAlloc)(void**, size_t, unsigned);
  cudaError_t (*cudaFreeHost)(void*);
  cudaError_t (*cudaHostRegister)(void*, size_t, unsigned);
  cudaError_t (*cudaHostUnregister)(void*);
  cudaError_t (*cudaHostGetDevicePointer)(void**, void*, unsigned);
  cudaError_t (*cudaHostGetFlags)(unsigned*, void*);
  cudaError_t (*cudaMemGetInfo)(size_t*, size_t*);
  cudaError_t (*cudaPointerGetAttributes)(cudaPointerAttributes*, const void*);
  cudaError_t (*cudaIpcGetMemHandle)(cudaIpcMemHandle_t*, void*);
  cudaError_t (*cudaIpcOpenMemHandle)(void**, cudaIpcMemHandle_t, unsigned);
  cudaError_t (*cudaIpcCloseMemHandle)(void*);
  cudaError_t (*cudaMallocAsync)(void**, size_t, cudaStream_t);
  cudaError_t (*cudaFreeAsync)(void*, cudaStream_t);
  cudaError_t (*cudaMallocFromPoolAsync)(void**, size_t, cudaMemPool_t, cudaStream_t);
  cudaError_t (*cudaDeviceGetDefaultMemPool)(cudaMemPool_t*, int);
  cudaError_t (*cudaDeviceGetMemPool)(cudaMemPool_t*, int);
  cudaError_t (*cudaDeviceSetMemPool)(int, cudaMemPool_t);
  cudaError_t (*cudaMemPoolCreate)(cudaMemPool_t*, const cudaMemPoolProps*);
  cudaError_t (*cudaMemPoolDestroy)(cudaMemPool_t);
  cudaError_t (*cudaMemPoolSetAttribute)(cudaMemPool_t, cudaMemPoolAttr, void*);
  cudaError_t (*cudaMemPoolGetAttribute)(cudaMemPool_t, cudaMemPoolAttr, void*);
  cudaError_t (*cudaMemPoolTrimTo)(cudaMemPool_t, size_t);
  cudaError_t (*cudaMemPoolSetAccess)(cudaMemPool_t, const cudaMemAccessDesc*, size_t);
  cudaError_t (*cudaMemPoolGetAccess)(cudaMemAccessFlags*, cudaMemPool_t, cudaMemLocation*);
  // copies
  cudaError_t (*cudaMemcpy)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpy_ptds)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyAsync)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpyAsync_ptsz)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpy2D)(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpy2DAsync)(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpy3D)(const cudaMemcpy3DParms*);
  cudaError_t (*cudaMemcpyPeer)(void*, int, const void*, int, size_t);
  cudaError_t (*cudaMemcpyPeerAsync)(void*, int, const void*, int, size_t, cudaStream_t);
  cudaError_t (*cudaMemcpyToSymbol)(const void*, const void*, size_t, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyFromSymbol)(void*, const void*, size_t, size_t, cudaMemcpyKind);
  cudaError_t (*cudaMemcpyToSymbolAsync)(const void*, const void*, size_t, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaMemcpyFromSymbolAsync)(void*, const void*, size_t, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*cudaGetSymbolAddress)(void**, const void*);
  cudaError_t (*cudaGetSymbolSize)(size_t*, const void*);
  cudaError_t (*cudaMemset)(void*, int, size_t);
  cudaError_t (*cudaMemsetAsync)(void*, int, size_t, cudaStream_t);
  cudaError_t (*cudaMemset2D)(void*, size_t, int, size_t, size_t);
  cudaError_t (*cudaMemset3D)(cudaPitchedPtr, int, cudaExtent);
  // streams
  cudaError_t (*cudaStreamCreate)(cudaStream_t*);
  cudaError_t (*cudaStreamCreateWithFlags)(cudaStream_t*, unsigned);
  cudaError_t (*cudaStreamCreateWithPriority)(cudaStream_t*, unsigned, int);
  cudaError_t (*cudaStreamDestroy)(cudaStream_t);
  cudaError_t (*cudaStreamQuery)(cudaStream_t);
  cudaError_t (*cudaStreamSynchronize)(cudaStream_t);
  cudaError_t (*cudaStreamSynchronize_ptsz)(cudaStream_t);
  cudaError_t (*cudaStreamWaitEvent)(cudaStream_t, cudaEvent_t, unsigned);
  cudaError_t (*cudaStreamAddCallback)(cudaStream_t, cudaStreamCallback_t, void*, unsigned);
  cudaError_t (*cudaLaunchHostFunc)(cudaStream_t, cudaHostFn_t, void*);
  cudaError_t (*cudaStreamGetPriority)(cudaStream_t, int*);
  cudaError_t (*cudaStreamGetFlags)(cudaStream_t, unsigned*);
  cudaError_t (*cudaStreamGetDevice)(cudaStream_t, int*);
  cudaError_t (*cudaStreamGetId)(cudaStream_t, unsigned long long*);
  cudaError_t (*cudaStreamIsCapturing)(cudaStream_t, cudaStreamCaptureStatus*);
  cudaError_t (*cudaStreamGetCaptureInfo)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*, cudaGraph_t*,
                                          const cudaGraphNode_t**, const void**, size_t*);
  cudaError_t (*cudaThreadExchangeStreamCaptureMode)(cudaStreamCaptureMode*);
  // events
  cudaError_t (*cudaEventCreate)(cudaEvent_t*);
  cudaError_t (*cudaEventCreateWithFlags)(cudaEvent_t*, unsigned);
  cudaError_t (*cudaEventRecord)(cudaEvent_t, cudaStream_t);
  cudaError_t (*cudaEventRecordWithFlags)(cudaEvent_t, cudaStream_t, unsigned);
  cudaError_t (*cudaEventQuery)(cudaEvent_t);
  cudaError_t (*cudaEventSynchronize)(cudaEvent_t);
  cudaError_t (*cudaEventDestroy)(cudaEvent_t);
  cudaError_t (*cudaEventElapsedTime)(float*, cudaEvent_t, cudaEvent_t);
  // modules and launches
  void** (*__cudaRegisterFatBinary)(void*);
  void (*__cudaRegisterFatBinaryEnd)(void**);
  void (*__cudaUnregisterFatBinary)(void**);
  void (*__cudaRegisterFunction)(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
  void (*__cudaRegisterVar)(void**, char*, char*, const char*, int, size_t, int, int);
  void (*__cudaRegisterManagedVar)(void**, void**, char*, const char*, int, size_t, int, int);
  char (*__cudaInitModule)(void**);
  unsigned (*__cudaPushCallConfiguration)(dim3, dim3, size_t, cudaStream_t);
  cudaError_t (*__cudaPopCallConfiguration)(dim3*, dim3*, size_t*, void*);
  cudaError_t (*cudaLaunchKernel)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
  cudaError_t (*cudaLaunchKernel_ptsz)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
  cudaError_t (*__cudaGetKernel)(cudaKernel_t*, const void*);
  cudaError_t (*__cudaLaunchKernel)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
  cudaError_t (*__cudaLaunchKernel_ptsz)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
  cudaError_t (*cudaLaunchKernelExC)(const cudaLaunchConfig_t*, const void*, void**);
  cudaError_t (*cudaLaunchCooperativeKernel)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
  cudaError_t (*cudaGetFuncBySymbol)(cudaFunction_t*, const void*);
  cudaError_t (*cudaGetKernel)(cudaKernel_t*, const void*);
  cudaError_t (*cudaFuncGetAttributes)(cudaFuncAttributes*, const void*);
  cudaError_t (*cudaFuncSetAttribute)(const void*, cudaFuncAttribute, int);
  cudaError_t (*cudaFuncSetCacheConfig)(const void*, cudaFuncCache);
  cudaError_t (*cudaFuncGetName)(const char**, const void*);
  cudaError_t (*cudaOccupancyMaxActiveBlocksPerMultiprocessor)(int*, const void*, int, size_t);
  cudaError_t (*cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(int*, const void*, int, size_t, unsigned);
  cudaError_t (*cudaOccupancyAvailableDynamicSMemPerBlock)(size_t*, const void*, int, int);
  // entry points and misc
  cudaError_t (*cudaGetDriverEntryPoint)(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*);
  cudaError_t (*cudaGetDriverEntryPointByVersion)(const char*, void**, unsigned, unsigned long long,
                                                  cudaDriverEntryPointQueryResult*);
  cudaError_t (*cudaProfilerStart)();
  cudaError_t (*cudaProfilerStop)();
  cudaError_t (*cudaGetExportTable)(const void**, const cudaUUID_t*);
  void* (*__cudaGetProcAddress)();
  cudaChannelFormatDesc (*cudaCreateChannelDesc)(int, int, int, int, cudaChannelFormatKind);
  // unified-memory hints and location-based pools
  cudaError_t (*cudaMemPrefetchAsync)(const void*, size_t, cudaMemLocation, unsigned, cudaStream_t);
  cudaError_t (*cudaMemAdvise)(const void*, size_t, cudaMemoryAdvise, cudaMemLocation);
  cudaError_t (*cudaStreamAttachMemAsync)(cudaStream_t, void*, size_t, unsigned);
  cudaError_t (*cudaMemGetDefaultMemPool)(cudaMemPool_t*, cudaMemLocation*, cudaMemAllocationType);
  cudaError_t (*cudaMemGetMemPool)(cudaMemPool_t*, cudaMemLocation*, cudaMemAllocationType);
  cudaError_t (*cudaMemSetMemPool)(cudaMemLocation*, cudaMemAllocationType, cudaMemPool_t);
  // libcudart.so.12 only: legacy ABIs and names
  cudaError_t (*cudaMemPrefetchAsync12)(const void*, size_t, int, cudaStream_t);  // plain @libcudart.so.12
  cudaError_t (*cudaMemAdvise12)(const void*, size_t, cudaMemoryAdvise, int);     // plain @libcudart.so.12
  cudaError_t (*cudaChooseDevice12)(int*, const void*);                           // plain @libcudart.so.12
  cudaError_t (*cudaStreamGetCaptureInfo12)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*);
  cudaError_t (*cudaStreamGetCaptureInfo_v2)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*, cudaGraph_t*,
                                             const cudaGraphNode_t**, size_t*);
  cudaError_t (*cudaEventElapsedTime_v2)(float*, cudaEvent_t, cudaEvent_t);
  cudaError_t (*cudaThreadSynchronize)();
  cudaError_t (*cudaThreadGetLimit)(size_t*, cudaLimit);
  cudaError_t (*cudaRuntimeGetVersion12)(int*);  // cudaRuntimeGetVersion@libcudart.so.12

  Runtime() {
    const std::string path = libdir() + "/libcudart.so.13";
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error(std::string("dlopen ") + path + ": " + dlerror());
    RTT_BIND(cudaGetLastError);
    RTT_BIND(cudaPeekAtLastError);
    RTT_BIND(cudaGetErrorName);
    RTT_BIND(cudaGetErrorString);
    RTT_BIND(cudaGetDeviceCount);
    RTT_BIND(cudaGetDevice);
    RTT_BIND(cudaSetDevice);
    RTT_BIND(cudaInitDevice);
    RTT_BIND(cudaSetDeviceFlags);
    RTT_BIND(cudaGetDeviceFlags);
    RTT_BIND(cudaChooseDevice);
    RTT_BIND(cudaDeviceGetByPCIBusId);
    RTT_BIND(cudaDeviceGetPCIBusId);
    RTT_BIND(cudaDeviceGetAttribute);
    RTT_BIND(cudaDeviceGetP2PAttribute);
    RTT_BIND(cudaGetDeviceProperties);
    RTT_BIND12(cudaGetDeviceProperties_v2);
    bind(cudaGetDeviceProperties12, "cudaGetDeviceProperties", "libcudart.so.12");
    RTT_BIND(cudaDeviceGetLimit);
    RTT_BIND(cudaDeviceSetLimit);
    RTT_BIND(cudaDeviceGetCacheConfig);
    RTT_BIND(cudaDeviceSetCacheConfig);
    RTT_BIND(cudaDeviceGetStreamPriorityRange);
    RTT_BIND(cudaDeviceSynchronize);
    RTT_BIND(cudaDeviceReset);
    RTT_BIND(cudaDeviceCanAccessPeer);
    RTT_BIND(cudaDeviceEnablePeerAccess);
    RTT_BIND(cudaDeviceDisablePeerAccess);
    RTT_BIND(cudaDriverGetVersion);
    RTT_BIND(cudaRuntimeGetVersion);
    RTT_BIND(cudaMalloc);
    RTT_BIND(cudaFree);
    RTT_BIND(cudaMallocPitch);
    RTT_BIND(cudaMallocManaged);
    RTT_BIND(cudaMallocHost);
    RTT_BIND(cudaHostAlloc);
    RTT_BIND(cudaFreeHost);
    RTT_BIND(cudaHostRegister);
    RTT_BIND(cudaHostUnregister);
    RTT_BIND(cudaHostGetDevicePointer);
    RTT_BIND(cudaHostGetFlags);
    RTT_BIND(cudaMemGetInfo);
    RTT_BIND(cudaPointerGetAttributes);
    RTT_BIND(cudaIpcGetMemHandle);
    RTT_BIND(cudaIpcOpenMemHandle);
    RTT_BIND(cudaIpcCloseMemHandle);
    RTT_BIND(cudaMallocAsync);
    RTT_BIND(cudaFreeAsync);
    RTT_BIND(cudaMallocFromPoolAsync);
    RTT_BIND(cudaDeviceGetDefaultMemPool);
    RTT_BIND(cudaDeviceGetMemPool);
    RTT_BIND(cudaDeviceSetMemPool);
    RTT_BIND(cudaMemPoolCreate);
    RTT_BIND(cudaMemPoolDestroy);
    RTT_BIND(cudaMemPoolSetAttribute);
    RTT_BIND(cudaMemPoolGetAttribute);
    RTT_BIND(cudaMemPoolTrimTo);
    RTT_BIND(cudaMemPoolSetAccess);
    RTT_BIND(cudaMemPoolGetAccess);
    RTT_BIND(cudaMemcpy);
    RTT_BIND(cudaMemcpy_ptds);
    RTT_BIND(cudaMemcpyAsync);
    RTT_BIND(cudaMemcpyAsync_ptsz);
    RTT_BIND(cudaMemcpy2D);
    RTT_BIND(cudaMemcpy2DAsync);
    RTT_BIND(cudaMemcpy3D);
    RTT_BIND(cudaMemcpyPeer);
    RTT_BIND(cudaMemcpyPeerAsync);
    RTT_BIND(cudaMemcpyToSymbol);
    RTT_BIND(cudaMemcpyFromSymbol);
    RTT_BIND(cudaMemcpyToSymbolAsync);
    RTT_BIND(cudaMemcpyFromSymbolAsync);
    RTT_BIND(cudaGetSymbolAddress);
    RTT_BIND(cudaGetSymbolSize);
    RTT_BIND(cudaMemset);
    RTT_BIND(cudaMemsetAsync);
    RTT_BIND(cudaMemset2D);
    RTT_BIND(cudaMemset3D);
    RTT_BIND(cudaStreamCreate);
    RTT_BIND(cudaStreamCreateWithFlags);
    RTT_BIND(cudaStreamCreateWithPriority);
    RTT_BIND(cudaStreamDestroy);
    RTT_BIND(cudaStreamQuery);
    RTT_BIND(cudaStreamSynchronize);
    RTT_BIND(cudaStreamSynchronize_ptsz);
    RTT_BIND(cudaStreamWaitEvent);
    RTT_BIND(cudaStreamAddCallback);
    RTT_BIND(cudaLaunchHostFunc);
    RTT_BIND(cudaStreamGetPriority);
    RTT_BIND(cudaStreamGetFlags);
    RTT_BIND(cudaStreamGetDevice);
    RTT_BIND(cudaStreamGetId);
    RTT_BIND(cudaStreamIsCapturing);
    RTT_BIND(cudaStreamGetCaptureInfo);
    RTT_BIND(cudaThreadExchangeStreamCaptureMode);
    RTT_BIND(cudaEventCreate);
    RTT_BIND(cudaEventCreateWithFlags);
    RTT_BIND(cudaEventRecord);
    RTT_BIND(cudaEventRecordWithFlags);
    RTT_BIND(cudaEventQuery);
    RTT_BIND(cudaEventSynchronize);
    RTT_BIND(cudaEventDestroy);
    RTT_BIND(cudaEventElapsedTime);
    RTT_BIND(__cudaRegisterFatBinary);
    RTT_BIND(__cudaRegisterFatBinaryEnd);
    RTT_BIND(__cudaUnregisterFatBinary);
    RTT_BIND(__cudaRegisterFunction);
    RTT_BIND(__cudaRegisterVar);
    RTT_BIND(__cudaRegisterManagedVar);
    RTT_BIND(__cudaInitModule);
    RTT_BIND(__cudaPushCallConfiguration);
    RTT_BIND(__cudaPopCallConfiguration);
    RTT_BIND(cudaLaunchKernel);
    RTT_BIND(cudaLaunchKernel_ptsz);
    RTT_BIND(__cudaGetKernel);
    RTT_BIND(__cudaLaunchKernel);
    RTT_BIND(__cudaLaunchKernel_ptsz);
    RTT_BIND(cudaLaunchKernelExC);
    RTT_BIND(cudaLaunchCooperativeKernel);
    RTT_BIND(cudaGetFuncBySymbol);
    RTT_BIND(cudaGetKernel);
    RTT_BIND(cudaFuncGetAttributes);
    RTT_BIND(cudaFuncSetAttribute);
    RTT_BIND(cudaFuncSetCacheConfig);
    RTT_BIND(cudaFuncGetName);
    RTT_BIND(cudaOccupancyMaxActiveBlocksPerMultiprocessor);
    RTT_BIND(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
    RTT_BIND(cudaOccupancyAvailableDynamicSMemPerBlock);
    RTT_BIND(cudaGetDriverEntryPoint);
    RTT_BIND(cudaGetDriverEntryPointByVersion);
    RTT_BIND(cudaProfilerStart);
    RTT_BIND(cudaProfilerStop);
    RTT_BIND(cudaGetExportTable);
    RTT_BIND(__cudaGetProcAddress);
    RTT_BIND(cudaCreateChannelDesc);
    RTT_BIND(cudaMemPrefetchAsync);
    RTT_BIND(cudaMemAdvise);
    RTT_BIND(cudaStreamAttachMemAsync);
    RTT_BIND(cudaMemGetDefaultMemPool);
    RTT_BIND(cudaMemGetMemPool);
    RTT_BIND(cudaMemSetMemPool);
    bind(cudaMemPrefetchAsync12, "cudaMemPrefetchAsync", "libcudart.so.12");
    bind(cudaMemAdvise12, "cudaMemAdvise", "libcudart.so.12");
    bind(cudaChooseDevice12, "cudaChooseDevice", "libcudart.so.12");
    bind(cudaStreamGetCaptureInfo12, "cudaStreamGetCaptureInfo", "libcudart.so.12");
    RTT_BIND12(cudaStreamGetCaptureInfo_v2);
    RTT_BIND12(cudaEventElapsedTime_v2);
    RTT_BIND12(cudaThreadSynchronize);
    RTT_BIND12(cudaThreadGetLimit);
    bind(cudaRuntimeGetVersion12, "cudaRuntimeGetVersion", "libcudart.so.12");
  }
#undef RTT_BIND
#undef RTT_BIND12
};

// One binding per process; the library stays loaded (its state is the fake GPUs).
inline Runtime& rt() {
  static Runtime* r = new Runtime;
  return *r;
}

// The tests run on the default device list (8 x a100-80gb) unless the environment chose
// another; exact profile values are only asserted on the default.
inline bool default_devices() {
  return !std::getenv("FAKEGPU_DEVICES") && !std::getenv("FAKEGPU_CONFIG") && !std::getenv("CUDA_VISIBLE_DEVICES");
}

inline int device_count() {
  int n = 0;
  rt().cudaGetDeviceCount(&n);
  return n;
}

// Clears the thread's last error, so each check starts clean.
inline void clear_error() { (void)rt().cudaGetLastError(); }

// The frame of a runtime test case, TEST_CASE_METHOD(rtt::Case, ...): `r` is the runtime,
// and the calling thread's last error is cleared when the case starts and when it ends.
struct Case {
  Runtime& r = rt();
  Case() { clear_error(); }
  ~Case() { clear_error(); }
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
};

// Host functions record their ids in order (they run on stream worker threads).
struct Order {
  std::mutex mu;
  std::vector<int> seen;
  std::vector<int> get() {
    std::lock_guard lock(mu);
    return seen;
  }
};
struct Step {
  Order* order;
  int id;
};
inline void record_step(void* p) {
  auto* s = static_cast<Step*>(p);
  std::lock_guard lock(s->order->mu);
  s->order->seen.push_back(s->id);
}

// Runs the hidden test case `name` of this test binary in a child process with `env`
// added to the environment; returns the child's exit status (0 = the case passed). Used
// where a case needs a fresh backend: another device list, a report file at exit.
inline int run_child_case(const std::string& name, const std::vector<std::string>& env) {
  return backend_test::wait_case(backend_test::spawn_case(name, env));
}

// Runs the hidden test case `name` in a child with FAKEGPU_ISOLATED=1 and FAKEGPU_REPORT
// naming a fresh file (and `env`), REQUIREs that it passed, and returns the report it wrote.
inline std::string child_report(const std::string& name, std::vector<std::string> env = {}) {
  const std::string path = backend_test::temp_file("fakegpu_report_");
  REQUIRE(!path.empty());
  env.push_back("FAKEGPU_REPORT=" + path);
  env.push_back("FAKEGPU_ISOLATED=1");
  const int status = run_child_case(name, env);
  const std::string text = backend_test::read_file(path);
  std::remove(path.c_str());
  REQUIRE(status == 0);
  return text;
}

}  // namespace rtt
