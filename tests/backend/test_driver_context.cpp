// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: contexts, the per-thread context stack, primary contexts, flags, limits,
// peer access, and "destroying a context frees its memory".
#include "backend/driver_test.h"

#include <thread>

using namespace drvtest;

namespace {
// A pointer-sized value that is no context (what Numba passes as the new CUDA 13 argument).
CUcontext garbage() { return reinterpret_cast<CUcontext>(uintptr_t{0x7f3a5c0ffee0}); }

int device_count() {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  return n;
}
}  // namespace

TEST_CASE("driver: context create and destroy", "[driver]") {
  clear_stack();
  const int n = device_count();
  CUcontext c = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxCreate_v2)(nullptr, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuCtxCreate_v2)(&c, 0, n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuCtxCreate_v2)(&c, 0, -1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxCreate_v2)(&c, 0x100, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxCreate_v2)(&c, CU_CTX_SCHED_SPIN | CU_CTX_SCHED_YIELD, 0));

  // Creation makes the context current.
  CU_OK(CU(cuCtxCreate_v2)(&c, CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST, n - 1));
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == c);
  CUdevice d = -1;
  CU_OK(CU(cuCtxGetDevice)(&d));
  CHECK(d == n - 1);
  CU_OK(CU(cuCtxDestroy_v2)(c));
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);  // a destroyed current context is popped

  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxDestroy_v2)(c));  // twice
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxDestroy_v2)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxDestroy_v2)(garbage()));

  // The other creation ABIs.
  CU_OK(CU(cuCtxCreate)(&c, 0, 0));
  CU_OK(CU(cuCtxDestroy_v2)(c));
  CU_OK(CU(cuCtxCreate_v3)(&c, nullptr, 0, 0, 0));
  CU_OK(CU(cuCtxDestroy_v2)(c));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxCreate_v3)(&c, nullptr, 1, 0, 0));
  CUexecAffinityParam aff{};
  aff.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  aff.param.smCount.val = 8;
  CU_EQ(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, CU(cuCtxCreate_v3)(&c, &aff, 1, 0, 0));
  CU_OK(CU(cuCtxCreate_v4)(&c, nullptr, 0, 0));
  CU_OK(CU(cuCtxDestroy_v2)(c));
  CUctxCreateParams params{};
  CU_OK(CU(cuCtxCreate_v4)(&c, &params, 0, 0));
  CU_OK(CU(cuCtxDestroy_v2)(c));
  params.execAffinityParams = &aff;
  params.numExecAffinityParams = 1;
  CU_EQ(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, CU(cuCtxCreate_v4)(&c, &params, 0, 0));
  CUctxCigParam cig{};
  params = CUctxCreateParams{};
  params.cigParams = &cig;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuCtxCreate_v4)(&c, &params, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxCreate_v4)(nullptr, nullptr, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuCtxCreate_v4)(&c, nullptr, 0, n));
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);
}

TEST_CASE("driver: the context stack", "[driver]") {
  clear_stack();
  CUcontext a = nullptr, b = nullptr, cur = nullptr, popped = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&a, 0, 0));
  CU_OK(CU(cuCtxCreate_v2)(&b, 0, 0));
  CHECK(a != b);
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == b);
  CU_OK(CU(cuCtxPopCurrent_v2)(&popped));
  CHECK(popped == b);
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == a);
  CU_OK(CU(cuCtxPopCurrent_v2)(&popped));
  CHECK(popped == a);
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxPopCurrent_v2)(&popped));  // empty
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);

  // Push / set: cuCtxSetCurrent replaces the top, NULL removes it.
  CU_OK(CU(cuCtxPushCurrent_v2)(a));
  CU_OK(CU(cuCtxPushCurrent_v2)(b));
  CU_OK(CU(cuCtxSetCurrent)(a));
  CU_OK(CU(cuCtxPopCurrent_v2)(&popped));
  CHECK(popped == a);
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == a);  // the bottom entry
  CU_OK(CU(cuCtxSetCurrent)(nullptr));
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);
  CU_OK(CU(cuCtxSetCurrent)(nullptr));  // nothing to unbind: still fine
  CU_OK(CU(cuCtxSetCurrent)(b));
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == b);
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));  // the popped handle is optional

  // The stack is per thread.
  CU_OK(CU(cuCtxPushCurrent_v2)(a));
  CUcontext other = garbage();
  auto get_current = CU(cuCtxGetCurrent);
  std::thread([&] { get_current(&other); }).join();
  CHECK(other == nullptr);
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));

  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetCurrent)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxPushCurrent_v2)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxPushCurrent_v2)(garbage()));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSetCurrent)(garbage()));
  CU_OK(CU(cuCtxDestroy_v2)(a));
  CU_OK(CU(cuCtxDestroy_v2)(b));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxPushCurrent_v2)(a));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSetCurrent)(b));
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);
}

TEST_CASE("driver: a context destroyed by another thread is reported as destroyed", "[driver][threads]") {
  Ctx ctx(0);
  auto destroy = CU(cuCtxDestroy_v2);
  CUresult r = CUDA_ERROR_UNKNOWN;
  std::thread([&] { r = destroy(ctx.ctx); }).join();
  CHECK(r == CUDA_SUCCESS);
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == ctx.ctx);  // still on this thread's stack
  CUdevice d = 0;
  CU_EQ(CUDA_ERROR_CONTEXT_IS_DESTROYED, CU(cuCtxGetDevice)(&d));
  CUdeviceptr p = 0;
  CU_EQ(CUDA_ERROR_CONTEXT_IS_DESTROYED, CU(cuMemAlloc_v2)(&p, 64));
  CU_EQ(CUDA_ERROR_CONTEXT_IS_DESTROYED, CU(cuCtxSynchronize)());
  ctx.ctx = nullptr;  // already gone
  clear_stack();      // the dead handle stays on this thread's stack until popped
}

TEST_CASE("driver: cuCtxGetDevice_v2 and cuCtxSynchronize_v2 take the old argument lists", "[driver]") {
  clear_stack();
  CUdevice d = -1;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetDevice)(&d));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetDevice_v2)(&d, garbage()));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSynchronize_v2)(garbage()));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSynchronize)());

  const int n = device_count();
  Ctx ctx(n - 1);
  CUcontext other = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&other, 0, 0));
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));  // ctx is current again, `other` lives
  // Numba: cuCtxGetDevice_v2(&dev) with whatever sits in the second argument register.
  CU_OK(CU(cuCtxGetDevice_v2)(&d, garbage()));
  CHECK(d == n - 1);
  CU_OK(CU(cuCtxGetDevice_v2)(&d, nullptr));
  CHECK(d == n - 1);
  CU_OK(CU(cuCtxGetDevice_v2)(&d, other));  // a real second argument is honoured
  CHECK(d == 0);
  CU_OK(CU(cuCtxSynchronize_v2)(garbage()));
  CU_OK(CU(cuCtxSynchronize_v2)(other));
  CU_OK(CU(cuCtxSynchronize_v2)(nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetDevice_v2)(nullptr, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetDevice)(nullptr));
  CU_OK(CU(cuCtxDestroy_v2)(other));
}

TEST_CASE("driver: context flags, limits, cache configuration, ids", "[driver]") {
  clear_stack();
  unsigned flags = 0;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetFlags)(&flags));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxSetFlags)(0));
  size_t v = 0;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetLimit)(&v, CU_LIMIT_STACK_SIZE));

  Ctx ctx(0, CU_CTX_SCHED_BLOCKING_SYNC);
  CU_OK(CU(cuCtxGetFlags)(&flags));
  CHECK(flags == CU_CTX_SCHED_BLOCKING_SYNC);
  CU_OK(CU(cuCtxSetFlags)(CU_CTX_SCHED_SPIN | CU_CTX_SYNC_MEMOPS));
  CU_OK(CU(cuCtxGetFlags)(&flags));
  CHECK(flags == (CU_CTX_SCHED_SPIN | CU_CTX_SYNC_MEMOPS));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxSetFlags)(0x1000));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetFlags)(nullptr));

  // Limits: the real driver's defaults (as a real H200 reports them, for this device's 108
  // SMs and 30 MiB persisting-L2 maximum), settable per context.
  if (default_config()) {
    const struct {
      CUlimit l;
      size_t v;
    } defaults[] = {{CU_LIMIT_STACK_SIZE, 1024},
                    {CU_LIMIT_PRINTF_FIFO_SIZE, 108u << 16},
                    {CU_LIMIT_MALLOC_HEAP_SIZE, 8u << 20},
                    {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, 2048},
                    {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 64},
                    {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 9437184},
                    {CU_LIMIT_CIG_ENABLED, 0}};
    for (const auto& d : defaults) {
      INFO("limit " << static_cast<int>(d.l));
      CU_OK(CU(cuCtxGetLimit)(&v, d.l));
      CHECK(v == d.v);
    }
  }
  CU_EQ(CUDA_ERROR_UNSUPPORTED_LIMIT, CU(cuCtxGetLimit)(&v, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH));
  CU_EQ(CUDA_ERROR_UNSUPPORTED_LIMIT, CU(cuCtxSetLimit)(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, 4));
  CU_EQ(CUDA_ERROR_UNSUPPORTED_LIMIT, CU(cuCtxGetLimit)(&v, CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED));
  CU_OK(CU(cuCtxSetLimit)(CU_LIMIT_STACK_SIZE, 4096));
  CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_STACK_SIZE));
  CHECK(v == 4096);
  // A stack for every resident thread that no device memory holds; the limit stays.
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuCtxSetLimit)(CU_LIMIT_STACK_SIZE, SIZE_MAX));
  CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_STACK_SIZE));
  CHECK(v == 4096);
  CU_OK(CU(cuCtxSetLimit)(CU_LIMIT_MALLOC_HEAP_SIZE, 64u << 20));
  CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
  CHECK(v == (64u << 20));
  if (default_config()) {
    CU_OK(CU(cuCtxSetLimit)(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, size_t{1} << 40));
    CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    CHECK(v == 31457280);  // clamped to CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
    CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_SHMEM_SIZE));
    CHECK(v == 166912);
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxSetLimit)(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 256));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxSetLimit)(CU_LIMIT_SHMEM_SIZE, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxSetLimit)(CU_LIMIT_MAX, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetLimit)(&v, CU_LIMIT_MAX));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetLimit)(nullptr, CU_LIMIT_STACK_SIZE));
  CU_EQ(CUDA_ERROR_UNSUPPORTED_LIMIT, CU(cuCtxSetLimit)(CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED, 1));

  // Limits belong to the context.
  {
    Ctx second(0);
    CU_OK(CU(cuCtxGetLimit)(&v, CU_LIMIT_STACK_SIZE));
    CHECK(v == 1024);
  }

  CUfunc_cache cfg = CU_FUNC_CACHE_PREFER_EQUAL;
  CU_OK(CU(cuCtxGetCacheConfig)(&cfg));
  CHECK(cfg == CU_FUNC_CACHE_PREFER_NONE);
  CU_OK(CU(cuCtxSetCacheConfig)(CU_FUNC_CACHE_PREFER_L1));
  CU_OK(CU(cuCtxGetCacheConfig)(&cfg));
  CHECK(cfg == CU_FUNC_CACHE_PREFER_L1);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxSetCacheConfig)(static_cast<CUfunc_cache>(4)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetCacheConfig)(nullptr));

  unsigned api = 0;
  CU_OK(CU(cuCtxGetApiVersion)(nullptr, &api));
  CHECK(api == 3020);
  CU_OK(CU(cuCtxGetApiVersion)(ctx.ctx, &api));
  CHECK(api == 3020);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetApiVersion)(ctx.ctx, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetApiVersion)(garbage(), &api));

  unsigned long long id1 = 0, id2 = 0, id3 = 0;
  CU_OK(CU(cuCtxGetId)(ctx.ctx, &id1));
  CU_OK(CU(cuCtxGetId)(nullptr, &id2));
  CHECK(id1 == id2);
  CUcontext other = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&other, 0, 0));
  CU_OK(CU(cuCtxGetId)(other, &id3));
  CHECK(id3 != id1);
  CU_OK(CU(cuCtxDestroy_v2)(other));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxGetId)(other, &id3));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxGetId)(ctx.ctx, nullptr));

  int least = 99, greatest = 99;
  CU_OK(CU(cuCtxGetStreamPriorityRange)(&least, &greatest));
  CHECK(least == 0);
  CHECK(greatest == -5);
  CU_OK(CU(cuCtxGetStreamPriorityRange)(nullptr, nullptr));
}

TEST_CASE("driver: primary contexts", "[driver]") {
  clear_stack();
  const int n = device_count();
  const CUdevice dev = n - 1;
  CU_OK(CU(cuDevicePrimaryCtxReset_v2)(dev));  // a known state, whatever ran before
  unsigned flags = 99;
  int active = 99;
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(active == 0);
  CU_OK(CU(cuDevicePrimaryCtxSetFlags_v2)(dev, 0));

  CUcontext p1 = nullptr, p2 = nullptr;
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p1, dev));
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p2, dev));
  CHECK(p1 == p2);
  CUcontext cur = nullptr;
  CU_OK(CU(cuCtxGetCurrent)(&cur));
  CHECK(cur == nullptr);  // retaining does not make it current
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(active == 1);
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxDestroy_v2)(p1));  // primaries are released, not destroyed

  // Flags: v2 applies while active, v1 refuses.
  CU_OK(CU(cuDevicePrimaryCtxSetFlags_v2)(dev, CU_CTX_SCHED_BLOCKING_SYNC));
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(flags == CU_CTX_SCHED_BLOCKING_SYNC);
  CU_EQ(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, CU(cuDevicePrimaryCtxSetFlags)(dev, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDevicePrimaryCtxSetFlags_v2)(dev, 0x1000));
  CU_OK(CU(cuCtxSetCurrent)(p1));
  unsigned cflags = 0;
  CU_OK(CU(cuCtxGetFlags)(&cflags));
  CHECK(cflags == CU_CTX_SCHED_BLOCKING_SYNC);

  // Its memory goes when the last reference does.
  const size_t before = free_bytes();
  CUdeviceptr p = 0;
  CU_OK(CU(cuMemAlloc_v2)(&p, 64u << 20));
  CHECK(free_bytes() == before - (64u << 20));
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(dev));
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(active == 1);
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(dev));
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(active == 0);
  CHECK(flags == CU_CTX_SCHED_BLOCKING_SYNC);  // flags survive
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuDevicePrimaryCtxRelease_v2)(dev));
  // Still current here, but released: calls say so.
  CU_EQ(CUDA_ERROR_CONTEXT_IS_DESTROYED, CU(cuMemAlloc_v2)(&p, 64));
  CU_OK(CU(cuDevicePrimaryCtxSetFlags)(dev, 0));  // v1 is fine while inactive

  // Retained again: same handle, active, empty books.
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p2, dev));
  CHECK(p2 == p1);
  CHECK(free_bytes() == before);
  CU_OK(CU(cuMemAlloc_v2)(&p, 1u << 20));
  CU_OK(CU(cuDevicePrimaryCtxReset_v2)(dev));  // frees and deactivates
  CU_OK(CU(cuDevicePrimaryCtxGetState)(dev, &flags, &active));
  CHECK(active == 0);
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&p2, dev));
  CHECK(free_bytes() == before);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(p));  // freed by the reset
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(dev));
  clear_stack();

  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDevicePrimaryCtxRetain)(nullptr, dev));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDevicePrimaryCtxRetain)(&p1, n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDevicePrimaryCtxRelease_v2)(n));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDevicePrimaryCtxReset_v2)(-1));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDevicePrimaryCtxSetFlags_v2)(n, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDevicePrimaryCtxGetState)(n, &flags, &active));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDevicePrimaryCtxGetState)(dev, nullptr, &active));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDevicePrimaryCtxGetState)(dev, &flags, nullptr));
}

TEST_CASE("driver: destroying a context frees its allocations", "[driver]") {
  const int n = device_count();
  const CUdevice dev = n > 1 ? 1 : 0;
  size_t before = 0;
  {
    Ctx probe(dev);
    before = free_bytes();
  }
  CUdeviceptr a = 0, b = 0, m = 0;
  {
    Ctx ctx(dev);
    CU_OK(CU(cuMemAlloc_v2)(&a, 100u << 20));
    CU_OK(CU(cuMemAlloc_v2)(&b, 3000));
    CU_OK(CU(cuMemAllocManaged)(&m, 50u << 20, CU_MEM_ATTACH_GLOBAL));
    CHECK(free_bytes() == before - (100u << 20) - 3000 - (50u << 20));
    CUstream s = nullptr;
    CU_OK(CU(cuStreamCreate)(&s, 0));
    CUevent e = nullptr;
    CU_OK(CU(cuEventCreate)(&e, 0));
    CU_OK(CU(cuCtxDestroy_v2)(ctx.ctx));
    ctx.ctx = nullptr;
    // Its streams and events are gone with it.
    CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventQuery)(e));
    CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuStreamDestroy_v2)(s));
  }
  Ctx ctx(dev);
  CHECK(free_bytes() == before);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(a));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(m));
  CUdevice d = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(&d, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b));
}

TEST_CASE("driver: peer access between contexts", "[driver]") {
  const int n = device_count();
  if (n < 2 || !default_config()) return;
  clear_stack();
  CUcontext a = nullptr, b = nullptr, a2 = nullptr;
  CU_OK(CU(cuCtxCreate_v2)(&b, 0, 1));
  CU_OK(CU(cuCtxCreate_v2)(&a2, 0, 0));
  CU_OK(CU(cuCtxCreate_v2)(&a, 0, 0));  // current
  CU_OK(CU(cuCtxEnablePeerAccess)(b, 0));
  CU_EQ(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, CU(cuCtxEnablePeerAccess)(b, 0));
  CU_OK(CU(cuCtxDisablePeerAccess)(b));
  CU_EQ(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, CU(cuCtxDisablePeerAccess)(b));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuCtxEnablePeerAccess)(a2, 0));  // same device
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuCtxEnablePeerAccess)(b, 1));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxEnablePeerAccess)(garbage(), 0));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxEnablePeerAccess)(nullptr, 0));
  CU_OK(CU(cuCtxDestroy_v2)(b));
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxEnablePeerAccess)(b, 0));
  CU_OK(CU(cuCtxDestroy_v2)(a));
  CU_OK(CU(cuCtxDestroy_v2)(a2));
  clear_stack();
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuCtxDisablePeerAccess)(b));
}
