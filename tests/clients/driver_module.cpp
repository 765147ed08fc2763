// SPDX-License-Identifier: Apache-2.0
// Driver-API module client (after the census probe drvapi_probe.c): PTX loaded with
// cuModuleLoadData, kernels looked up and launched with cuLaunchKernel on a stream between
// two events, globals, cuGetProcAddress. Modes:
//   driver_module              everything above
//   driver_module initializers the initial value of a PTX global
#include "drv_check.h"

#include <cstring>
#include <dlfcn.h>
#include <string>

namespace {
const char kPtx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .global .align 4 .u32 g_counter = 42;\n"
    ".visible .global .align 8 .b8 g_table[24];\n"
    ".visible .entry k(.param .u64 p)\n{\n\tret;\n}\n"
    ".visible .entry k2(.param .u64 p, .param .u32 n)\n{\n\tret;\n}\n";
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  checkDriver(cuInit(0));
  CUcontext ctx;
  CUdevice dev;
  checkDriver(cuDeviceGet(&dev, 0));
  checkDriver(cuDevicePrimaryCtxRetain(&ctx, dev));
  checkDriver(cuCtxPushCurrent(ctx));
  CUmodule mod;
  checkDriver(cuModuleLoadData(&mod, kPtx));

  if (mode == "initializers") {
    CUdeviceptr g = 0;
    size_t size = 0;
    checkDriver(cuModuleGetGlobal(&g, &size, mod, "g_counter"));
    unsigned v = 0;
    checkDriver(cuMemcpyDtoH(&v, g, sizeof v));
    std::printf("g_counter=%u\n", v);
    return 0;
  }

  CUfunction fn, fn2, missing = nullptr;
  checkDriver(cuModuleGetFunction(&fn, mod, "k"));
  checkDriver(cuModuleGetFunction(&fn2, mod, "k2"));
  fact_result("get_missing_function", cuModuleGetFunction(&missing, mod, "not_there"));

  CUdeviceptr g = 0, t = 0;
  size_t gsize = 0, tsize = 0;
  checkDriver(cuModuleGetGlobal(&g, &gsize, mod, "g_counter"));
  checkDriver(cuModuleGetGlobal(&t, &tsize, mod, "g_table"));
  std::printf("g_counter_size=%zu\ng_table_size=%zu\n", gsize, tsize);
  unsigned value = 7;
  checkDriver(cuMemcpyHtoD(g, &value, sizeof value));
  value = 0;
  checkDriver(cuMemcpyDtoH(&value, g, sizeof value));
  std::printf("g_counter_after_write=%u\n", value);
  fact_result("get_missing_global", cuModuleGetGlobal(&g, &gsize, mod, "nope"));

  CUdeviceptr d;
  checkDriver(cuMemAlloc(&d, 1 << 20));
  CUstream s;
  CUevent e0, e1;
  checkDriver(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  checkDriver(cuEventCreate(&e0, 0));
  checkDriver(cuEventCreate(&e1, 0));
  checkDriver(cuEventRecord(e0, s));
  void* args[] = {&d};
  checkDriver(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  unsigned n = 5;
  void* args2[] = {&d, &n};
  for (int i = 0; i < 4; ++i) checkDriver(cuLaunchKernel(fn2, 80, 1, 1, 256, 1, 1, 0, s, args2, nullptr));
  fact_result("launch_block_too_big", cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, s, args, nullptr));
  checkDriver(cuEventRecord(e1, s));
  checkDriver(cuStreamSynchronize(s));
  fact_result("event_query", cuEventQuery(e1));
  float ms = -1;
  checkDriver(cuEventElapsedTime(&ms, e0, e1));
  std::printf("elapsed_nonneg=%d\n", ms >= 0.0f);

  // cuGetProcAddress hands out the same functions the library exports.
  void* self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult q;
  checkDriver(cuGetProcAddress("cuMemAlloc", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
  std::printf("proc_cuMemAlloc_is_v2=%d\nproc_query=%d\n", pfn && pfn == dlsym(self, "cuMemAlloc_v2"),
              static_cast<int>(q));
  checkDriver(cuGetProcAddress("cuCtxCreate", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
  std::printf("proc_cuCtxCreate_13000_is_v4=%d\n", pfn && pfn == dlsym(self, "cuCtxCreate_v4"));
  checkDriver(cuGetProcAddress("cuCtxCreate", &pfn, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &q));
  std::printf("proc_cuCtxCreate_3020_is_v2=%d\n", pfn && pfn == dlsym(self, "cuCtxCreate_v2"));
  checkDriver(cuGetProcAddress("cuMemcpyAsync", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
  std::printf("proc_cuMemcpyAsync_ptsz=%d\n", pfn && pfn == dlsym(self, "cuMemcpyAsync_ptsz"));
  pfn = reinterpret_cast<void*>(1);
  fact_result("proc_unknown", cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
  std::printf("proc_unknown_query=%d\nproc_unknown_null=%d\n", static_cast<int>(q), pfn == nullptr);

  checkDriver(cuEventDestroy(e0));
  checkDriver(cuEventDestroy(e1));
  checkDriver(cuStreamDestroy(s));
  checkDriver(cuMemFree(d));
  checkDriver(cuModuleUnload(mod));
  checkDriver(cuCtxPopCurrent(nullptr));
  checkDriver(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
