// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: stream-ordered allocation and memory pools.
#include "backend/driver_test.h"

#include <atomic>

using namespace drvtest;

namespace {

constexpr size_t kMiB = 1u << 20;

CUmemPoolProps pool_props(CUdevice dev) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}

uint64_t pool_attr(CUmemoryPool pool, CUmemPool_attribute a) {
  uint64_t v = 0;
  CU_OK(CU(cuMemPoolGetAttribute)(pool, a, &v));
  return v;
}

}  // namespace

TEST_CASE("driver: default and current memory pools", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  CUmemoryPool def = nullptr, cur = nullptr;
  CU_OK(CU(cuDeviceGetDefaultMemPool)(&def, 0));
  CHECK(def != nullptr);
  CU_OK(CU(cuDeviceGetMemPool)(&cur, 0));
  CHECK(cur == def);
  if (n > 1) {
    CUmemoryPool other = nullptr;
    CU_OK(CU(cuDeviceGetDefaultMemPool)(&other, 1));
    CHECK(other != def);
    CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceSetMemPool)(0, other));  // another device's pool
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetDefaultMemPool)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetDefaultMemPool)(&def, n));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceGetMemPool)(nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuDeviceGetMemPool)(&cur, -1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuDeviceSetMemPool)(0, reinterpret_cast<CUmemoryPool>(&cur)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolDestroy)(def));  // the default pool stays
}

TEST_CASE("driver: stream-ordered allocation from the current pool", "[driver]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  CUmemoryPool def = nullptr;
  CU_OK(CU(cuDeviceGetDefaultMemPool)(&def, 0));
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p = 0;
  CU_OK(CU(cuMemAllocAsync)(&p, 3 * kMiB, s));
  CHECK(free_bytes() == before - 3 * kMiB);
  unsigned char b[64] = {9, 8, 7};
  CU_OK(CU(cuMemcpyHtoDAsync_v2)(p, b, sizeof b, s));
  void* pool = nullptr;
  CU_OK(CU(cuPointerGetAttribute)(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
  CHECK(pool == def);
  unsigned legacy_ipc = 1;
  CU_OK(CU(cuPointerGetAttribute)(&legacy_ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p));
  CHECK(legacy_ipc == 0);

  // The free happens in stream order.
  Gate gate;
  CU_OK(CU(cuLaunchHostFunc)(s, &Gate::wait, &gate));
  CU_OK(CU(cuMemFreeAsync)(p, s));
  CHECK(free_bytes() == before - 3 * kMiB);
  gate.open = true;
  CU_OK(CU(cuStreamSynchronize)(s));
  CHECK(free_bytes() == before);

  // The per-thread twin and the NULL stream.
  CU_OK(CU(cuMemAllocAsync_ptsz)(&p, kMiB, nullptr));
  CU_OK(CU(cuMemFreeAsync)(p, nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(free_bytes() == before);
  // cuMemFree frees stream-ordered allocations too.
  CU_OK(CU(cuMemAllocAsync)(&p, kMiB, s));
  CU_OK(CU(cuMemFree_v2)(p));
  CHECK(free_bytes() == before);

  // Errors.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocAsync)(nullptr, 64, s));
  p = 1;
  CU_OK(CU(cuMemAllocAsync)(&p, 0, s));  // nothing to allocate: a real H200 succeeds
  CHECK(p == 0);
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemAllocAsync)(&p, 64, reinterpret_cast<CUstream>(&gate)));
  CU_OK(CU(cuMemAllocAsync)(&p, 64, s));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFreeAsync)(p + 8, s));  // interior
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuMemFreeAsync)(p, reinterpret_cast<CUstream>(&gate)));
  CU_OK(CU(cuMemFreeAsync)(p, s));
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFreeAsync)(p, s));  // already freed
  CU_OK(CU(cuStreamDestroy_v2)(s));
  clear_stack();
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemAllocAsync)(&p, 64, nullptr));
}

TEST_CASE("driver: created pools, their statistics and attributes", "[driver]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  CUmemoryPool pool = nullptr;
  CUmemPoolProps props = pool_props(0);
  CU_OK(CU(cuMemPoolCreate)(&pool, &props));
  CUdeviceptr a = 0, b = 0;
  CU_OK(CU(cuMemAllocFromPoolAsync)(&a, 5 * kMiB, pool, nullptr));
  CU_OK(CU(cuMemAllocFromPoolAsync)(&b, 3 * kMiB, pool, nullptr));
  CHECK(free_bytes() == before - 8 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 8 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 8 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 8 * kMiB);
  void* owner = nullptr;
  CU_OK(CU(cuPointerGetAttribute)(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b));
  CHECK(owner == pool);

  // Threshold 0: freed memory goes back at once.
  CU_OK(CU(cuMemFreeAsync)(a, nullptr));
  CU_OK(CU(cuCtxSynchronize)());
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 3 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 3 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 8 * kMiB);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 8 * kMiB);
  // A release threshold keeps freed memory reserved; trimming gives it back.
  uint64_t threshold = 64 * kMiB;
  CU_OK(CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 64 * kMiB);
  CU_OK(CU(cuMemFree_v2)(b));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 3 * kMiB);
  CU_OK(CU(cuMemPoolTrimTo)(pool, kMiB));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == kMiB);
  CU_OK(CU(cuMemPoolTrimTo)(pool, 0));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
  uint64_t zero = 0, one = 1;
  CU_OK(CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
  CU_OK(CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero));
  CHECK(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &one));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &zero));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolGetAttribute)(pool, static_cast<CUmemPool_attribute>(99), &one));
  int flag = -1;
  CU_OK(CU(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag));
  CHECK(flag == 1);
  flag = 0;
  CU_OK(CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag));
  flag = -1;
  CU_OK(CU(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag));
  CHECK(flag == 0);
  CHECK(free_bytes() == before);

  // The pool as the device's current pool.
  CU_OK(CU(cuDeviceSetMemPool)(0, pool));
  CUmemoryPool cur = nullptr;
  CU_OK(CU(cuDeviceGetMemPool)(&cur, 0));
  CHECK(cur == pool);
  CU_OK(CU(cuMemAllocAsync)(&a, kMiB, nullptr));
  CU_OK(CU(cuPointerGetAttribute)(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
  CHECK(owner == pool);
  CU_OK(CU(cuMemFreeAsync)(a, nullptr));
  CU_OK(CU(cuMemPoolDestroy)(pool));  // the device falls back to its default pool
  CUmemoryPool def = nullptr;
  CU_OK(CU(cuDeviceGetDefaultMemPool)(&def, 0));
  CU_OK(CU(cuDeviceGetMemPool)(&cur, 0));
  CHECK(cur == def);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolDestroy)(pool));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &one));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocFromPoolAsync)(&a, 64, pool, nullptr));

  // Creation errors.
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolCreate)(nullptr, &props));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolCreate)(&pool, nullptr));
  props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolCreate)(&pool, &props));
  props = pool_props(1000);
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemPoolCreate)(&pool, &props));
  props = pool_props(0);
  props.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemPoolCreate)(&pool, &props));
  props = pool_props(0);
  props.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemPoolCreate)(&pool, &props));
}

TEST_CASE("driver: memory pool access", "[driver]") {
  init();
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  CUmemoryPool pool = nullptr;
  const CUmemPoolProps props = pool_props(0);
  CU_OK(CU(cuMemPoolCreate)(&pool, &props));
  CUmemLocation own{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CU_OK(CU(cuMemPoolGetAccess)(&f, pool, &own));
  CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemAccessDesc d{};
  d.location = own;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemPoolSetAccess)(pool, &d, 1));  // its own device keeps access
  if (n > 1) {
    CUmemLocation peer{CU_MEM_LOCATION_TYPE_DEVICE, 1};
    CU_OK(CU(cuMemPoolGetAccess)(&f, pool, &peer));
    CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    d.location = peer;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_OK(CU(cuMemPoolSetAccess)(pool, &d, 1));
    CU_OK(CU(cuMemPoolGetAccess)(&f, pool, &peer));
    CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    d.flags = static_cast<CUmemAccess_flags>(2);
    CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolSetAccess)(pool, &d, 1));
  }
  d.location.id = 1000;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemPoolSetAccess)(pool, &d, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolGetAccess)(nullptr, pool, &own));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPoolGetAccess)(&f, pool, nullptr));
  CU_OK(CU(cuMemPoolDestroy)(pool));
}
