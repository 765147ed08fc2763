// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the CUDA Driver API tests (test_driver_*.cpp): the library is dlopen()ed
// as libcuda.so.1 from $FAKEGPU_TEST_LIBDIR and every call goes through a dlsym()ed pointer
// whose type is the cuda.h 13.0 prototype declared below (so the tests need no toolkit).
//
//   CU(cuMemAlloc_v2)(&p, 64)        calls the export
//   CU_OK(CU(cuInit)(0))             REQUIRE success, printing the error name otherwise
//   CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAlloc_v2)(nullptr, 64))
//
// Expected numbers are those of the default configuration (8 x a100-80gb, DGX A100 PCI
// layout; fakebackend/src/core/device_model.cpp); tests that depend on it check
// default_config() first. ctest runs each test case in its own process (FAKEGPU_ISOLATED=1),
// but running the binary directly runs them all in one: every case restores what it changes
// (context stack, allocations) so the others see a clean driver.
#pragma once
#include <catch2/catch.hpp>

#include "fakegpu/cuda_types.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace drvtest {

using namespace fgapi;

// ---- prototypes (cuda.h 13.0) ------------------------------------------------------------------------
namespace sig {
CUresult cuInit(unsigned);
CUresult cuDriverGetVersion(int*);
CUresult cuGetErrorName(CUresult, const char**);
CUresult cuGetErrorString(CUresult, const char**);
CUresult cuDeviceGetCount(int*);
CUresult cuDeviceGet(CUdevice*, int);
CUresult cuDeviceGetName(char*, int, CUdevice);
CUresult cuDeviceTotalMem_v2(size_t*, CUdevice);
CUresult cuDeviceGetAttribute(int*, CUdevice_attribute, CUdevice);
CUresult cuDeviceGetUuid(CUuuid*, CUdevice);
CUresult cuDeviceGetUuid_v2(CUuuid*, CUdevice);
CUresult cuDeviceGetPCIBusId(char*, int, CUdevice);
CUresult cuDeviceGetByPCIBusId(CUdevice*, const char*);
CUresult cuDeviceComputeCapability(int*, int*, CUdevice);
CUresult cuDeviceGetProperties(CUdevprop*, CUdevice);
CUresult cuDeviceCanAccessPeer(int*, CUdevice, CUdevice);
CUresult cuDeviceGetP2PAttribute(int*, CUdevice_P2PAttribute, CUdevice, CUdevice);
CUresult cuCtxCreate(CUcontext*, unsigned, CUdevice);
CUresult cuCtxCreate_v2(CUcontext*, unsigned, CUdevice);
CUresult cuCtxCreate_v3(CUcontext*, CUexecAffinityParam*, int, unsigned, CUdevice);
CUresult cuCtxCreate_v4(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);
CUresult cuCtxDestroy_v2(CUcontext);
CUresult cuCtxPushCurrent_v2(CUcontext);
CUresult cuCtxPopCurrent_v2(CUcontext*);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxGetCurrent(CUcontext*);
CUresult cuCtxGetDevice(CUdevice*);
CUresult cuCtxGetDevice_v2(CUdevice*, CUcontext);
CUresult cuCtxSynchronize();
CUresult cuCtxSynchronize_v2(CUcontext);
CUresult cuCtxGetFlags(unsigned*);
CUresult cuCtxSetFlags(unsigned);
CUresult cuCtxGetLimit(size_t*, CUlimit);
CUresult cuCtxSetLimit(CUlimit, size_t);
CUresult cuCtxGetCacheConfig(CUfunc_cache*);
CUresult cuCtxSetCacheConfig(CUfunc_cache);
CUresult cuCtxGetApiVersion(CUcontext, unsigned*);
CUresult cuCtxGetId(CUcontext, unsigned long long*);
CUresult cuCtxGetStreamPriorityRange(int*, int*);
CUresult cuCtxEnablePeerAccess(CUcontext, unsigned);
CUresult cuCtxDisablePeerAccess(CUcontext);
CUresult cuDevicePrimaryCtxRetain(CUcontext*, CUdevice);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice);
CUresult cuDevicePrimaryCtxGetState(CUdevice, unsigned*, int*);
CUresult cuDevicePrimaryCtxSetFlags(CUdevice, unsigned);
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice, unsigned);
CUresult cuMemAlloc_v2(CUdeviceptr*, size_t);
CUresult cuMemAllocPitch_v2(CUdeviceptr*, size_t*, size_t, size_t, unsigned);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemGetInfo_v2(size_t*, size_t*);
CUresult cuMemAllocHost_v2(void**, size_t);
CUresult cuMemHostAlloc(void**, size_t, unsigned);
CUresult cuMemFreeHost(void*);
CUresult cuMemHostRegister_v2(void*, size_t, unsigned);
CUresult cuMemHostUnregister(void*);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr*, void*, unsigned);
CUresult cuMemHostGetFlags(unsigned*, void*);
CUresult cuMemAllocManaged(CUdeviceptr*, size_t, unsigned);
CUresult cuMemGetAddressRange_v2(CUdeviceptr*, size_t*, CUdeviceptr);
CUresult cuPointerGetAttribute(void*, CUpointer_attribute, CUdeviceptr);
CUresult cuPointerGetAttributes(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
CUresult cuIpcGetMemHandle(CUipcMemHandle*, CUdeviceptr);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr*, CUipcMemHandle, unsigned);
CUresult cuIpcCloseMemHandle(CUdeviceptr);
CUresult cuMemAdvise_v2(CUdeviceptr, size_t, CUmem_advise, CUmemLocation);
CUresult cuMemPrefetchAsync_v2(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream);
CUresult cuMemcpy(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t);
CUresult cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t);
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void*, size_t);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void*, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D*);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D*);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D*, CUstream);
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D*);
CUresult cuMemcpyPeer(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
CUresult cuMemcpyPeerAsync(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);
CUresult cuMemsetD16_v2(CUdeviceptr, unsigned short, size_t);
CUresult cuMemsetD32_v2(CUdeviceptr, unsigned int, size_t);
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD16Async(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemsetD32Async(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult cuMemsetD2D8_v2(CUdeviceptr, size_t, unsigned char, size_t, size_t);
CUresult cuMemsetD2D16_v2(CUdeviceptr, size_t, unsigned short, size_t, size_t);
CUresult cuMemsetD2D32_v2(CUdeviceptr, size_t, unsigned int, size_t, size_t);
CUresult cuMemsetD2D32Async(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);
CUresult cuMemCreate(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
CUresult cuMemRelease(CUmemGenericAllocationHandle);
CUresult cuMemAddressReserve(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
CUresult cuMemAddressFree(CUdeviceptr, size_t);
CUresult cuMemMap(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
CUresult cuMemUnmap(CUdeviceptr, size_t);
CUresult cuMemSetAccess(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
CUresult cuMemGetAccess(unsigned long long*, const CUmemLocation*, CUdeviceptr);
CUresult cuMemGetAllocationGranularity(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
CUresult cuMemExportToShareableHandle(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                      unsigned long long);
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp*, CUmemGenericAllocationHandle);
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle*, void*);
CUresult cuMemAllocAsync(CUdeviceptr*, size_t, CUstream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr*, size_t, CUstream);
CUresult cuMemFreeAsync(CUdeviceptr, CUstream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr*, size_t, CUmemoryPool, CUstream);
CUresult cuMemPoolCreate(CUmemoryPool*, const CUmemPoolProps*);
CUresult cuMemPoolDestroy(CUmemoryPool);
CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void*);
CUresult cuMemPoolGetAttribute(CUmemoryPool, CUmemPool_attribute, void*);
CUresult cuMemPoolTrimTo(CUmemoryPool, size_t);
CUresult cuMemPoolSetAccess(CUmemoryPool, const CUmemAccessDesc*, size_t);
CUresult cuMemPoolGetAccess(CUmemAccess_flags*, CUmemoryPool, CUmemLocation*);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool*, CUdevice);
CUresult cuDeviceGetMemPool(CUmemoryPool*, CUdevice);
CUresult cuDeviceSetMemPool(CUdevice, CUmemoryPool);
CUresult cuStreamCreate(CUstream*, unsigned);
CUresult cuStreamCreateWithPriority(CUstream*, unsigned, int);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuStreamQuery(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned);
CUresult cuStreamAddCallback(CUstream, CUstreamCallback, void*, unsigned);
CUresult cuLaunchHostFunc(CUstream, CUhostFn, void*);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void*);
CUresult cuStreamGetPriority(CUstream, int*);
CUresult cuStreamGetFlags(CUstream, unsigned*);
CUresult cuStreamGetCtx(CUstream, CUcontext*);
CUresult cuStreamGetId(CUstream, unsigned long long*);
CUresult cuStreamGetDevice(CUstream, CUdevice*);
CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus*);
CUresult cuStreamGetCaptureInfo_v3(CUstream, CUstreamCaptureStatus*, uint64_t*, CUgraph*, const CUgraphNode**,
                                   const void**, size_t*);
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode*);
CUresult cuStreamWriteValue32(CUstream, CUdeviceptr, uint32_t, unsigned);
CUresult cuStreamWriteValue32_v2(CUstream, CUdeviceptr, uint32_t, unsigned);
CUresult cuStreamWriteValue64_v2(CUstream, CUdeviceptr, uint64_t, unsigned);
CUresult cuStreamWaitValue32_v2(CUstream, CUdeviceptr, uint32_t, unsigned);
CUresult cuProfilerStart();
CUresult cuProfilerStop();
CUresult cuEventCreate(CUevent*, unsigned);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventRecordWithFlags(CUevent, CUstream, unsigned);
CUresult cuEventQuery(CUevent);
CUresult cuEventSynchronize(CUevent);
CUresult cuEventDestroy_v2(CUevent);
CUresult cuEventElapsedTime(float*, CUevent, CUevent);
CUresult cuEventElapsedTime_v2(float*, CUevent, CUevent);
CUresult cuModuleLoad(CUmodule*, const char*);
CUresult cuModuleLoadData(CUmodule*, const void*);
CUresult cuModuleLoadDataEx(CUmodule*, const void*, unsigned, CUjit_option*, void**);
CUresult cuModuleLoadFatBinary(CUmodule*, const void*);
CUresult cuModuleUnload(CUmodule);
CUresult cuModuleGetFunction(CUfunction*, CUmodule, const char*);
CUresult cuModuleGetGlobal_v2(CUdeviceptr*, size_t*, CUmodule, const char*);
CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode*);
CUresult cuLibraryLoadData(CUlibrary*, const void*, CUjit_option*, void**, unsigned, CUlibraryOption*, void**,
                           unsigned);
CUresult cuLibraryUnload(CUlibrary);
CUresult cuLibraryGetKernel(CUkernel*, CUlibrary, const char*);
CUresult cuLibraryGetModule(CUmodule*, CUlibrary);
CUresult cuKernelGetFunction(CUfunction*, CUkernel);
CUresult cuKernelGetAttribute(int*, CUfunction_attribute, CUkernel, CUdevice);
CUresult cuFuncGetAttribute(int*, CUfunction_attribute, CUfunction);
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int);
CUresult cuFuncSetCacheConfig(CUfunction, CUfunc_cache);
CUresult cuFuncGetName(const char**, CUfunction);
CUresult cuLinkCreate_v2(unsigned, CUjit_option*, void**, CUlinkState*);
CUresult cuLinkAddData_v2(CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*, void**);
CUresult cuLinkAddFile_v2(CUlinkState, CUjitInputType, const char*, unsigned, CUjit_option*, void**);
CUresult cuLinkComplete(CUlinkState, void**, size_t*);
CUresult cuLinkDestroy(CUlinkState);
CUresult cuGraphCreate(CUgraph*, unsigned);
CUresult cuGraphDestroy(CUgraph);
CUresult cuGraphAddEmptyNode(CUgraphNode*, CUgraph, const CUgraphNode*, size_t);
CUresult cuGraphInstantiateWithFlags(CUgraphExec*, CUgraph, unsigned long long);
CUresult cuGraphExecDestroy(CUgraphExec);
CUresult cuUserObjectCreate(CUuserObject*, void*, CUhostFn, unsigned, unsigned);
CUresult cuUserObjectRelease(CUuserObject, unsigned);
CUresult cuKernelGetName(const char**, CUkernel);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**);
CUresult cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult cuLaunchCooperativeKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   CUstream, void**);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int*, CUfunction, int, size_t);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int*, CUfunction, int, size_t, unsigned);
CUresult cuOccupancyMaxPotentialBlockSize(int*, int*, CUfunction, CUoccupancyB2DSize, size_t, int);
CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t*, CUfunction, int, int);
CUresult cuGetProcAddress(const char*, void**, int, uint64_t);
CUresult cuGetProcAddress_v2(const char*, void**, int, uint64_t, CUdriverProcAddressQueryResult*);
CUresult cuGetExportTable(const void**, const CUuuid*);
}  // namespace sig

// ---- loading -------------------------------------------------------------------------------------------
inline void* lib() {
  static void* h = [] {
    // Exact books need private devices and no report file, even where the runner's
    // environment did not say so (an explicit setting wins).
    setenv("FAKEGPU_ISOLATED", "1", 0);
    setenv("FAKEGPU_REPORT", "off", 0);
    const char* dir = std::getenv("FAKEGPU_TEST_LIBDIR");
    INFO("FAKEGPU_TEST_LIBDIR must name the directory holding libcuda.so.1");
    REQUIRE(dir != nullptr);
    const std::string path = std::string(dir) + "/libcuda.so.1";
    void* p = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen(" << path << "): " << (p ? "" : dlerror()));
    REQUIRE(p != nullptr);
    return p;
  }();
  return h;
}

inline void* address_of(const char* name) {
  static std::mutex mu;
  static std::unordered_map<std::string, void*> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  void* p = dlsym(lib(), name);
  if (!p) FAIL("dlsym(" << name << ") failed");
  cache.emplace(name, p);
  return p;
}

template <class F>
F* fn(const char* name) {
  return reinterpret_cast<F*>(address_of(name));
}

inline const char* err_name(CUresult r) {
  const char* s = nullptr;
  fn<decltype(sig::cuGetErrorName)>("cuGetErrorName")(r, &s);
  return s ? s : "(unknown CUresult)";
}

inline bool default_config() { return !std::getenv("FAKEGPU_DEVICES") && !std::getenv("FAKEGPU_CONFIG"); }

inline constexpr size_t kTwoMiB = 2ull << 20;

}  // namespace drvtest

#define CU(name) (::drvtest::fn<decltype(::drvtest::sig::name)>(#name))

#define CU_EQ(expected, call)                                                        \
  do {                                                                               \
    const ::fgapi::CUresult r_ = (call);                                             \
    INFO(#call << " -> " << static_cast<int>(r_) << " " << ::drvtest::err_name(r_)); \
    CHECK(r_ == (expected));                                                         \
  } while (0)
#define CU_OK(call)                                                                  \
  do {                                                                               \
    const ::fgapi::CUresult r_ = (call);                                             \
    INFO(#call << " -> " << static_cast<int>(r_) << " " << ::drvtest::err_name(r_)); \
    REQUIRE(r_ == ::fgapi::CUDA_SUCCESS);                                            \
  } while (0)

namespace drvtest {

// cuInit once; every later test starts from an initialised driver.
inline void init() { CU_OK(CU(cuInit)(0)); }

// Initialises the driver and empties the calling thread's context stack (earlier cases may
// leave a released primary).
inline void clear_stack() {
  init();
  for (int i = 0; i < 64; ++i) {
    CUcontext c = nullptr;
    CU_OK(CU(cuCtxGetCurrent)(&c));
    if (!c) return;
    CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
  }
  FAIL("context stack does not empty");
}

// A fresh context on `dev`, pushed on this thread's stack for the lifetime of the object
// and destroyed at the end (which also takes it off the stack). Set `ctx` to nullptr when
// the test destroys it itself.
struct Ctx {
  CUcontext ctx = nullptr;
  explicit Ctx(CUdevice dev = 0, unsigned flags = 0) {
    init();
    CU_OK(CU(cuCtxCreate_v2)(&ctx, flags, dev));
  }
  ~Ctx() {
    if (ctx) CU(cuCtxDestroy_v2)(ctx);
  }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
};

// `bytes` bytes of device memory in the current context, each set to `value` (the caller
// frees it with cuMemFree_v2).
inline CUdeviceptr alloc_filled(size_t bytes, unsigned char value) {
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, bytes));
  CU_OK(CU(cuMemsetD8_v2)(d, value, bytes));
  return d;
}

// Free bytes of the current context's device.
inline size_t free_bytes() {
  size_t f = 0, t = 0;
  CU_OK(CU(cuMemGetInfo_v2)(&f, &t));
  return f;
}

}  // namespace drvtest

#include "backend/processes.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace drvtest {

using backend_test::read_file;
using backend_test::spawn_case;
using backend_test::wait_case;

// Reruns one test case alone in a fresh process of this test binary (for cases that need
// a driver nobody has initialised yet); returns its status as wait_case() gives it. A rerun
// child that still finds the driver initialised fails instead of recursing.
inline int rerun_alone(const char* test_name) {
  if (std::getenv("FAKEGPU_TEST_RERUN")) {
    FAIL("the driver is initialised even in a fresh process");
    return -1;
  }
  return wait_case(spawn_case(test_name, {"FAKEGPU_TEST_RERUN=1"}));
}

// For a case about the driver before cuInit, named `test_name`: true when this process has
// not initialised the driver. Otherwise (every case in one process) the case is rerun alone
// in a fresh process, REQUIREd to pass there, and this returns false: the caller returns.
inline bool before_init_or_rerun(const char* test_name) {
  int n = -1;
  if (CU(cuDeviceGetCount)(&n) == CUDA_ERROR_NOT_INITIALIZED) return true;
  REQUIRE(rerun_alone(test_name) == 0);
  return false;
}

// Waits (bounded) until `path` exists; the peer process creates it by renaming.
inline bool wait_for_file(const std::string& path, int seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Writes a file atomically (write + rename), so a poller never sees it half written.
inline void publish_file(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << content;
  }
  REQUIRE(std::rename(tmp.c_str(), path.c_str()) == 0);
}

inline std::string to_hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<const unsigned char*>(p)[i];
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

inline void from_hex(const std::string& s, void* p, size_t n) {
  REQUIRE(s.size() >= 2 * n);
  for (size_t i = 0; i < n; ++i)
    static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
}

// A fresh private directory for files exchanged with a peer process.
inline std::string temp_dir() {
  char tmpl[] = "/tmp/fakegpu-drvtest-XXXXXX";
  const char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}

// A host function (&Gate::wait, &gate) that holds its stream until `open` is set; `ran`
// says that it has returned.
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> ran{false};
  static void wait(void* self) {
    auto* g = static_cast<Gate*>(self);
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    g->ran = true;
  }
};

// A helper case ("[.][driver-helper]") running as the peer process of a case: the two take
// turns through files in a fresh private directory, which the helper finds in
// FAKEGPU_TEST_IPC_DIR (peer_dir()).
struct Peer {
  std::string dir = temp_dir();
  pid_t pid = -1;
  explicit Peer(const char* helper_case) : pid(spawn_case(helper_case, {"FAKEGPU_TEST_IPC_DIR=" + dir})) {
    REQUIRE(pid > 0);
  }
  std::string path(const char* name) const { return dir + "/" + name; }
  // The bytes the peer published hex-encoded in the file `name`, once it has.
  template <class T>
  T await_hex(const char* name) const {
    REQUIRE(wait_for_file(path(name)));
    T value;
    from_hex(read_file(path(name)), &value, sizeof value);
    return value;
  }
  // Tells the peer "done", checks that it passed, and removes the directory.
  void finish() const {
    publish_file(path("done"), "1");
    CHECK(wait_case(pid) == 0);
    std::filesystem::remove_all(dir);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
};

// In a helper case: the directory its Peer shares with it.
inline std::string peer_dir() {
  const char* d = std::getenv("FAKEGPU_TEST_IPC_DIR");
  REQUIRE(d != nullptr);
  return d;
}

}  // namespace drvtest
