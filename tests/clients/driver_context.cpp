// SPDX-License-Identifier: Apache-2.0
// The seed tutorial's context program: two contexts made with cuCtxCreate, the per-thread
// context stack (push / pop / current), then the primary context. Adapted to CUDA 13,
// where cuCtxCreate is cuCtxCreate_v4(ctx, CUctxCreateParams*, flags, dev) (NULL params
// = the tutorial's call). Pointers differ between runs, so facts compare handles.
#include "drv_check.h"

#include <thread>

int main() {
  checkDriver(cuInit(0));
  CUcontext ctxA = nullptr;
  CUcontext ctxB = nullptr;
  CUdevice device = 0;
  checkDriver(cuCtxCreate(&ctxA, nullptr, CU_CTX_SCHED_AUTO, device));
  checkDriver(cuCtxCreate(&ctxB, nullptr, CU_CTX_SCHED_AUTO, device));
  std::printf("ctxA_set=%d\nctxB_set=%d\nctxA_is_not_ctxB=%d\n", ctxA != nullptr, ctxB != nullptr, ctxA != ctxB);

  // contexts stack: ctxB (top, current), ctxA
  CUcontext current_context = nullptr;
  checkDriver(cuCtxGetCurrent(&current_context));
  std::printf("current_is_ctxB=%d\n", current_context == ctxB);

  checkDriver(cuCtxPushCurrent(ctxA));
  checkDriver(cuCtxGetCurrent(&current_context));
  std::printf("after_push_current_is_ctxA=%d\n", current_context == ctxA);

  CUcontext popped_ctx = nullptr;
  checkDriver(cuCtxPopCurrent(&popped_ctx));
  checkDriver(cuCtxGetCurrent(&current_context));
  std::printf("popped_is_ctxA=%d\nafter_pop_current_is_ctxB=%d\n", popped_ctx == ctxA, current_context == ctxB);

  CUdevice ctx_dev = -1;
  checkDriver(cuCtxGetDevice(&ctx_dev));
  std::printf("ctx_device=%d\n", ctx_dev);

  // A context on another device is where allocations land.
  CUdevice dev2;
  checkDriver(cuDeviceGet(&dev2, 2));
  CUcontext ctx2 = nullptr;
  checkDriver(cuCtxCreate(&ctx2, nullptr, 0, dev2));
  checkDriver(cuCtxGetDevice(&ctx_dev));
  std::printf("ctx2_device=%d\n", ctx_dev);
  CUdeviceptr p = 0;
  checkDriver(cuMemAlloc(&p, 8 << 20));
  size_t free_b = 0, total_b = 0;
  checkDriver(cuMemGetInfo(&free_b, &total_b));
  std::printf("ctx2_used=%zu\n", total_b - free_b);
  checkDriver(cuCtxPopCurrent(&popped_ctx));
  std::printf("popped_is_ctx2=%d\n", popped_ctx == ctx2);
  checkDriver(cuMemGetInfo(&free_b, &total_b));  // back on device 0
  std::printf("ctxB_used=%zu\n", total_b - free_b);
  checkDriver(cuCtxPushCurrent(ctx2));
  checkDriver(cuMemFree(p));
  checkDriver(cuCtxPopCurrent(nullptr));

  // Another thread starts with an empty stack.
  CUcontext in_thread = reinterpret_cast<CUcontext>(1);
  CUresult get_res = CUDA_SUCCESS, alloc_res = CUDA_SUCCESS, set_res = CUDA_SUCCESS;
  CUdevice thread_dev = -1;
  std::thread t([&] {
    get_res = cuCtxGetCurrent(&in_thread);
    CUdeviceptr q = 0;
    alloc_res = cuMemAlloc(&q, 1024);
    set_res = cuCtxSetCurrent(ctxA);
    cuCtxGetDevice(&thread_dev);
  });
  t.join();
  fact_result("thread_get_current", get_res);
  std::printf("thread_current_is_null=%d\n", in_thread == nullptr);
  fact_result("thread_alloc_without_context", alloc_res);
  fact_result("thread_set_current", set_res);
  std::printf("thread_device=%d\n", thread_dev);
  checkDriver(cuCtxGetCurrent(&current_context));
  std::printf("main_current_still_ctxB=%d\n", current_context == ctxB);

  checkDriver(cuCtxDestroy(ctxA));
  checkDriver(cuCtxDestroy(ctxB));
  checkDriver(cuCtxDestroy(ctx2));

  // The primary context: one per device, shared, reference counted.
  CUcontext primary = nullptr, primary2 = nullptr;
  unsigned flags = 99;
  int active = -1;
  checkDriver(cuDevicePrimaryCtxGetState(device, &flags, &active));
  std::printf("primary_active_before=%d\n", active);
  checkDriver(cuDevicePrimaryCtxRetain(&primary, device));
  checkDriver(cuDevicePrimaryCtxRetain(&primary2, device));
  checkDriver(cuDevicePrimaryCtxGetState(device, &flags, &active));
  std::printf("primary_set=%d\nprimary_same_twice=%d\nprimary_active=%d\n", primary != nullptr, primary == primary2,
              active);
  checkDriver(cuCtxSetCurrent(primary));
  checkDriver(cuCtxGetDevice(&ctx_dev));
  std::printf("primary_device=%d\n", ctx_dev);
  checkDriver(cuDevicePrimaryCtxRelease(device));
  checkDriver(cuDevicePrimaryCtxGetState(device, &flags, &active));
  std::printf("primary_active_after_one_release=%d\n", active);
  checkDriver(cuCtxSetCurrent(nullptr));
  checkDriver(cuDevicePrimaryCtxRelease(device));
  checkDriver(cuDevicePrimaryCtxGetState(device, &flags, &active));
  std::printf("primary_active_after_two_releases=%d\n", active);
  return 0;
}
