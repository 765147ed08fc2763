// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: allocations (device, pitched, managed, pinned, registered), books,
// address ranges, pointer attributes, legacy IPC, concurrency.
#include "backend/driver_test.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <vector>

using namespace drvtest;

TEST_CASE("driver: cuMemAlloc and cuMemFree", "[driver]") {
  clear_stack();
  CUdeviceptr p = 0;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemAlloc_v2)(&p, 64));
  // Frees need no current context (the owner is found from the pointer): NULL is a no-op,
  // an unknown pointer is an invalid value.
  CU_OK(CU(cuMemFree_v2)(p));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(0x1000));
  size_t f = 0, t = 0;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemGetInfo_v2)(&f, &t));

  Ctx ctx(0);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAlloc_v2)(nullptr, 64));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAlloc_v2)(&p, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetInfo_v2)(nullptr, &t));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetInfo_v2)(&f, nullptr));
  CU_OK(CU(cuMemGetInfo_v2)(&f, &t));
  size_t total = 0;
  CU_OK(CU(cuDeviceTotalMem_v2)(&total, 0));
  CHECK(t == total);
  CHECK(f <= t);

  const size_t before = free_bytes();
  CU_OK(CU(cuMemAlloc_v2)(&p, 1u << 20));
  CHECK(p != 0);
  CHECK(p % 256 == 0);
  CHECK(free_bytes() == before - (1u << 20));
  CUdeviceptr q = 0;
  CU_OK(CU(cuMemAlloc_v2)(&q, 1));  // one byte is booked as one byte
  CHECK(free_bytes() == before - (1u << 20) - 1);
  CHECK(q != p);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(p + 16));  // interior pointer
  CU_OK(CU(cuMemFree_v2)(p));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(p));  // double free
  CU_OK(CU(cuMemFree_v2)(q));
  CHECK(free_bytes() == before);
  int local = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(reinterpret_cast<CUdeviceptr>(&local)));  // not ours
  CU_OK(CU(cuMemFree_v2)(0));  // as the real driver: freeing NULL succeeds
  void* host = nullptr;
  CU_OK(CU(cuMemAllocHost_v2)(&host, 64));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFree_v2)(reinterpret_cast<CUdeviceptr>(host)));  // wrong kind
  CU_OK(CU(cuMemFreeHost)(host));
}

TEST_CASE("driver: out of memory leaves the device usable", "[driver]") {
  Ctx ctx(0);
  size_t total = 0;
  CU_OK(CU(cuDeviceTotalMem_v2)(&total, 0));
  const size_t before = free_bytes();
  CUdeviceptr p = 0;
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAlloc_v2)(&p, total + 1));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAlloc_v2)(&p, before + 1));
  CHECK(free_bytes() == before);
  // Fill the device (leaving 64 MiB), fail, allocate within what is left, free, allocate again.
  CUdeviceptr big = 0;
  CU_OK(CU(cuMemAlloc_v2)(&big, before - (64u << 20)));
  CHECK(free_bytes() == (64u << 20));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAlloc_v2)(&p, 65u << 20));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAllocManaged)(&p, 65u << 20, CU_MEM_ATTACH_GLOBAL));
  CHECK(free_bytes() == (64u << 20));
  CUdeviceptr small = 0;
  CU_OK(CU(cuMemAlloc_v2)(&small, 1u << 20));
  CHECK(free_bytes() == (63u << 20));
  CU_OK(CU(cuMemFree_v2)(small));
  CU_OK(CU(cuMemFree_v2)(big));
  CHECK(free_bytes() == before);
  p = alloc_filled(4096, 0x5A);
  unsigned char b[4096];
  CU_OK(CU(cuMemcpyDtoH_v2)(b, p, sizeof b));
  CHECK(std::all_of(b, b + sizeof b, [](unsigned char c) { return c == 0x5A; }));
  CU_OK(CU(cuMemFree_v2)(p));
}

TEST_CASE("driver: pitched allocations", "[driver]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  CUdeviceptr p = 0;
  size_t pitch = 0;
  CU_OK(CU(cuMemAllocPitch_v2)(&p, &pitch, 100, 10, 4));
  CHECK(pitch == 512);
  CHECK(free_bytes() == before - 512 * 10);
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_OK(CU(cuMemGetAddressRange_v2)(&base, &size, p + 700));
  CHECK(base == p);
  CHECK(size == 5120);
  CU_OK(CU(cuMemFree_v2)(p));
  CU_OK(CU(cuMemAllocPitch_v2)(&p, &pitch, 512, 3, 16));
  CHECK(pitch == 512);
  CU_OK(CU(cuMemFree_v2)(p));
  CU_OK(CU(cuMemAllocPitch_v2)(&p, &pitch, 513, 1, 8));
  CHECK(pitch == 1024);
  CU_OK(CU(cuMemFree_v2)(p));
  CHECK(free_bytes() == before);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocPitch_v2)(&p, &pitch, 100, 10, 3));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocPitch_v2)(&p, &pitch, 0, 10, 4));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocPitch_v2)(&p, &pitch, 100, 0, 4));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocPitch_v2)(nullptr, &pitch, 100, 10, 4));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocPitch_v2)(&p, nullptr, 100, 10, 4));
}

TEST_CASE("driver: managed memory", "[driver]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  CUdeviceptr m = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocManaged)(&m, 4096, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocManaged)(&m, 4096, 3));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocManaged)(&m, 0, CU_MEM_ATTACH_GLOBAL));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocManaged)(nullptr, 4096, CU_MEM_ATTACH_GLOBAL));
  CU_OK(CU(cuMemAllocManaged)(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  CHECK(free_bytes() == before - 4096);  // managed memory counts against the device
  auto* host = reinterpret_cast<unsigned char*>(m);
  for (int i = 0; i < 4096; ++i) host[i] = static_cast<unsigned char>(i);  // directly usable on the host
  unsigned char back[4096];
  CU_OK(CU(cuMemcpyDtoH_v2)(back, m, sizeof back));
  CHECK(std::memcmp(back, host, sizeof back) == 0);
  unsigned managed = 0, type = 0;
  CU_OK(CU(cuPointerGetAttribute)(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  CHECK(managed == 1);
  CU_OK(CU(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  void* hp = nullptr;
  CU_OK(CU(cuPointerGetAttribute)(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, m));
  CHECK(hp == host);

  // Hints: accepted on managed ranges only.
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CU_OK(CU(cuMemAdvise_v2)(m, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
  CU_OK(CU(cuMemPrefetchAsync_v2)(m, 4096, loc, 0, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAdvise_v2)(m, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAdvise_v2)(m, 4096, static_cast<CUmem_advise>(0), loc));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPrefetchAsync_v2)(m, 4096, loc, 1, nullptr));
  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, 4096));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemPrefetchAsync_v2)(d, 4096, loc, 0, nullptr));
  loc.id = 1000;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemPrefetchAsync_v2)(m, 4096, loc, 0, nullptr));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuMemFree_v2)(m));
  CHECK(free_bytes() == before);
}

TEST_CASE("driver: pinned host memory", "[driver]") {
  clear_stack();
  void* h = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuMemAllocHost_v2)(&h, 64));
  Ctx ctx(0);
  const size_t before = free_bytes();
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAllocHost_v2)(nullptr, 64));
  h = &h;
  CU_OK(CU(cuMemAllocHost_v2)(&h, 0));  // zero bytes: success and a null pointer, as a real H200
  CHECK(h == nullptr);
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAllocHost_v2)(&h, SIZE_MAX));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemHostAlloc)(&h, SIZE_MAX, 0));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemAllocHost_v2)(&h, SIZE_MAX - (4u << 20) + 2));
  CU_OK(CU(cuMemAllocHost_v2)(&h, 1u << 20));
  std::memset(h, 0xAB, 1u << 20);  // ordinary host memory
  CHECK(free_bytes() == before);   // pinned memory is not device memory
  unsigned flags = 0;
  CU_OK(CU(cuMemHostGetFlags)(&flags, h));
  CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP);
  CUdeviceptr dp = 0;
  CU_OK(CU(cuMemHostGetDevicePointer_v2)(&dp, h, 0));
  CHECK(dp == reinterpret_cast<CUdeviceptr>(h));
  CU_OK(CU(cuMemHostGetDevicePointer_v2)(&dp, static_cast<char*>(h) + 100, 0));
  CHECK(dp == reinterpret_cast<CUdeviceptr>(h) + 100);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetDevicePointer_v2)(&dp, h, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetDevicePointer_v2)(nullptr, h, 0));
  unsigned type = 0;
  CU_OK(CU(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(h)));
  CHECK(type == CU_MEMORYTYPE_HOST);

  void* h2 = nullptr;
  CU_OK(CU(cuMemHostAlloc)(&h2, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_WRITECOMBINED));
  CU_OK(CU(cuMemHostGetFlags)(&flags, h2));
  CHECK(flags == (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_WRITECOMBINED | CU_MEMHOSTALLOC_DEVICEMAP));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostAlloc)(&h2, 4096, 0x10));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostAlloc)(nullptr, 4096, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetFlags)(nullptr, h));
  CU_OK(CU(cuMemFreeHost)(h2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFreeHost)(h2));  // double free
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetFlags)(&flags, h2));
  CU_OK(CU(cuMemFreeHost)(nullptr));  // free(NULL) semantics, as the real driver

  CUdeviceptr d = 0;
  CU_OK(CU(cuMemAlloc_v2)(&d, 64));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemFreeHost)(reinterpret_cast<void*>(d)));  // device memory
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetFlags)(&flags, reinterpret_cast<void*>(d)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetDevicePointer_v2)(&dp, reinterpret_cast<void*>(d), 0));
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuMemFreeHost)(h));
}

TEST_CASE("driver: host registration", "[driver]") {
  Ctx ctx(0);
  std::vector<unsigned char> buf(1 << 20, 0x11);
  void* p = buf.data();
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostRegister_v2)(nullptr, 4096, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostRegister_v2)(p, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostRegister_v2)(p, 4096, 0x10));
  CU_OK(CU(cuMemHostRegister_v2)(p, buf.size(), CU_MEMHOSTREGISTER_PORTABLE));
  CU_EQ(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CU(cuMemHostRegister_v2)(p, buf.size(), 0));
  CU_EQ(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CU(cuMemHostRegister_v2)(buf.data() + 4096, 4096, 0));
  CUdeviceptr dp = 0;
  CU_OK(CU(cuMemHostGetDevicePointer_v2)(&dp, buf.data() + 10, 0));
  CHECK(dp == reinterpret_cast<CUdeviceptr>(buf.data() + 10));
  unsigned type = 0;
  CU_OK(CU(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp));
  CHECK(type == CU_MEMORYTYPE_HOST);
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_OK(CU(cuMemGetAddressRange_v2)(&base, &size, dp));
  CHECK(base == reinterpret_cast<CUdeviceptr>(p));
  CHECK(size == buf.size());
  // A registered range is a valid copy target in both directions.
  const CUdeviceptr d = alloc_filled(4096, 0x77);
  CU_OK(CU(cuMemcpyDtoD_v2)(dp, d, 4096));  // registered memory as a device pointer
  CHECK(buf[10] == 0x77);
  CHECK(buf[4105] == 0x77);
  CHECK(buf[4106] == 0x11);
  CU_OK(CU(cuMemFree_v2)(d));
  CU_OK(CU(cuMemHostUnregister)(p));
  CU_EQ(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, CU(cuMemHostUnregister)(p));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostUnregister)(nullptr));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemHostGetDevicePointer_v2)(&dp, p, 0));
  void* pinned = nullptr;
  CU_OK(CU(cuMemAllocHost_v2)(&pinned, 4096));
  CU_EQ(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CU(cuMemHostRegister_v2)(pinned, 4096, 0));
  CU_OK(CU(cuMemFreeHost)(pinned));
}

TEST_CASE("driver: address ranges", "[driver]") {
  Ctx ctx(0);
  CUdeviceptr p = 0, base = 0;
  size_t size = 0;
  CU_OK(CU(cuMemAlloc_v2)(&p, 10000));
  CU_OK(CU(cuMemGetAddressRange_v2)(&base, &size, p + 9999));
  CHECK(base == p);
  CHECK(size == 10000);
  CU_OK(CU(cuMemGetAddressRange_v2)(nullptr, nullptr, p));
  CU_OK(CU(cuMemGetAddressRange_v2)(&base, nullptr, p + 5));
  CHECK(base == p);
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuMemGetAddressRange_v2)(&base, &size, p + 10000));
  int local = 0;
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuMemGetAddressRange_v2)(&base, &size, reinterpret_cast<CUdeviceptr>(&local)));
  CU_OK(CU(cuMemFree_v2)(p));
  CU_EQ(CUDA_ERROR_NOT_FOUND, CU(cuMemGetAddressRange_v2)(&base, &size, p));
}

TEST_CASE("driver: pointer attributes", "[driver]") {
  int n = 0;
  init();
  CU_OK(CU(cuDeviceGetCount)(&n));
  const CUdevice dev = n - 1;
  Ctx ctx(dev);
  CUdeviceptr p = 0;
  CU_OK(CU(cuMemAlloc_v2)(&p, 3000));
  const CUdeviceptr in = p + 1000;

  CUcontext c = nullptr;
  CU_OK(CU(cuPointerGetAttribute)(&c, CU_POINTER_ATTRIBUTE_CONTEXT, in));
  CHECK(c == ctx.ctx);
  unsigned u = 0;
  CU_OK(CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, in));
  CHECK(u == CU_MEMORYTYPE_DEVICE);
  CUdeviceptr dp = 0;
  CU_OK(CU(cuPointerGetAttribute)(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, in));
  CHECK(dp == in);
  void* hp = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, in));
  CU_OK(CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_IS_MANAGED, in));
  CHECK(u == 0);
  int ord = -1;
  CU_OK(CU(cuPointerGetAttribute)(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, in));
  CHECK(ord == dev);
  CU_OK(CU(cuPointerGetAttribute)(&dp, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, in));
  CHECK(dp == p);
  size_t sz = 0;
  CU_OK(CU(cuPointerGetAttribute)(&sz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, in));
  CHECK(sz == 3000);
  CU_OK(CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_MAPPED, in));
  CHECK(u == 1);
  CU_OK(CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, in));
  CHECK(u == 1);
  CU_OK(CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, in));
  CHECK(u == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
  unsigned long long id1 = 0, id2 = 0;
  CU_OK(CU(cuPointerGetAttribute)(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, in));
  CU_OK(CU(cuPointerGetAttribute)(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
  CHECK(id1 == id2);
  CHECK(id1 != 0);
  unsigned long long types = 9;
  CU_OK(CU(cuPointerGetAttribute)(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, in));
  CHECK(types == 0);
  void* pool = reinterpret_cast<void*>(1);
  CU_OK(CU(cuPointerGetAttribute)(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, in));
  CHECK(pool == nullptr);
  CU_OK(CU(cuPointerGetAttribute)(&dp, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, in));
  CHECK(dp == p);
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuPointerGetAttribute)(&id1, CU_POINTER_ATTRIBUTE_P2P_TOKENS, in));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(nullptr, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, in));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(&u, static_cast<CUpointer_attribute>(99), in));
  int local = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(&local)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 3000));

  // Several at once; an unknown pointer is not an error there.
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT,
                                 CU_POINTER_ATTRIBUTE_HOST_POINTER};
  unsigned type = 77, managed = 77;
  int ordinal = 77;
  CUcontext actx = reinterpret_cast<CUcontext>(7);
  void* host = reinterpret_cast<void*>(7);
  void* data[] = {&type, &ordinal, &managed, &actx, &host};
  CU_OK(CU(cuPointerGetAttributes)(5, attrs, data, in));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK(ordinal == dev);
  CHECK(managed == 0);
  CHECK(actx == ctx.ctx);
  CHECK(host == nullptr);  // no host mapping: the default
  CU_OK(CU(cuPointerGetAttributes)(5, attrs, data, reinterpret_cast<CUdeviceptr>(&local)));
  CHECK(type == 0);
  CHECK(ordinal == -2);
  CHECK(managed == 0);
  CHECK(actx == nullptr);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttributes)(0, attrs, data, in));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttributes)(5, nullptr, data, in));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttributes)(5, attrs, nullptr, in));
  CU_OK(CU(cuMemFree_v2)(p));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuPointerGetAttribute)(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, in));
}

TEST_CASE("driver: legacy IPC handles in one process", "[driver]") {
  Ctx ctx(0);
  CUdeviceptr p = 0;
  CU_OK(CU(cuMemAlloc_v2)(&p, 4096));
  CUipcMemHandle h;
  CU_OK(CU(cuIpcGetMemHandle)(&h, p));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcGetMemHandle)(nullptr, p));
  void* host = nullptr;
  CU_OK(CU(cuMemAllocHost_v2)(&host, 64));
  CUipcMemHandle h2;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcGetMemHandle)(&h2, reinterpret_cast<CUdeviceptr>(host)));
  CU_OK(CU(cuMemFreeHost)(host));
  // As with the real driver, a process cannot open its own handle.
  CUdeviceptr q = 0;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuIpcOpenMemHandle_v2)(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenMemHandle_v2)(nullptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenMemHandle_v2)(&q, h, 2));
  CUipcMemHandle junk;
  std::memset(&junk, 0x5C, sizeof junk);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenMemHandle_v2)(&q, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcCloseMemHandle)(p));  // not an opened handle
  CU_OK(CU(cuMemFree_v2)(p));
}

// Peer of the next case: exports 1 MiB with a pattern, waits, checks what the opener wrote.
TEST_CASE("driver helper: IPC exporter", "[.][driver-helper]") {
  const std::string dir = peer_dir();
  Ctx ctx(0);
  constexpr size_t kSize = 1 << 20;
  CUdeviceptr p = 0;
  CU_OK(CU(cuMemAlloc_v2)(&p, kSize));
  std::vector<unsigned char> pattern(kSize);
  for (size_t i = 0; i < kSize; ++i) pattern[i] = static_cast<unsigned char>(i * 7);
  CU_OK(CU(cuMemcpyHtoD_v2)(p, pattern.data(), kSize));
  CUipcMemHandle h;
  CU_OK(CU(cuIpcGetMemHandle)(&h, p));
  publish_file(dir + "/handle", to_hex(&h, sizeof h));
  REQUIRE(wait_for_file(dir + "/done"));
  std::vector<unsigned char> back(kSize);
  CU_OK(CU(cuMemcpyDtoH_v2)(back.data(), p, kSize));
  for (size_t i = 0; i < kSize; ++i) pattern[i] = static_cast<unsigned char>(i * 3 + 1);
  CHECK(back == pattern);
  CU_OK(CU(cuMemFree_v2)(p));
}

TEST_CASE("driver: legacy IPC handles across processes", "[driver]") {
  Ctx ctx(0);
  const Peer peer("driver helper: IPC exporter");
  const auto h = peer.await_hex<CUipcMemHandle>("handle");
  CUdeviceptr q = 0;
  CU_OK(CU(cuIpcOpenMemHandle_v2)(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  constexpr size_t kSize = 1 << 20;
  std::vector<unsigned char> got(kSize), want(kSize);
  CU_OK(CU(cuMemcpyDtoH_v2)(got.data(), q, kSize));
  for (size_t i = 0; i < kSize; ++i) want[i] = static_cast<unsigned char>(i * 7);
  CHECK(got == want);
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_OK(CU(cuMemGetAddressRange_v2)(&base, &size, q + 10));
  CHECK(base == q);
  CHECK(size == kSize);
  unsigned type = 0;
  CU_OK(CU(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, q));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  for (size_t i = 0; i < kSize; ++i) want[i] = static_cast<unsigned char>(i * 3 + 1);
  CU_OK(CU(cuMemcpyHtoD_v2)(q, want.data(), kSize));
  CU_OK(CU(cuIpcCloseMemHandle)(q));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcCloseMemHandle)(q));
  peer.finish();
}

TEST_CASE("driver: many threads allocate and free with exact books", "[driver][threads]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  auto alloc = CU(cuMemAlloc_v2);
  auto freep = CU(cuMemFree_v2);
  auto push = CU(cuCtxPushCurrent_v2);
  auto pop = CU(cuCtxPopCurrent_v2);
  constexpr int kThreads = 8, kIters = 2000;
  std::atomic<int> errors{0};
  std::vector<std::vector<std::pair<CUdeviceptr, size_t>>> kept(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      if (push(ctx.ctx) != CUDA_SUCCESS) ++errors;
      std::mt19937_64 rng(1234 + t);
      std::vector<std::pair<CUdeviceptr, size_t>> live;
      for (int i = 0; i < kIters; ++i) {
        if (!live.empty() && rng() % 3 == 0) {
          const size_t k = rng() % live.size();
          if (freep(live[k].first) != CUDA_SUCCESS) ++errors;
          live[k] = live.back();
          live.pop_back();
        } else {
          const size_t size = 1 + rng() % (rng() % 8 == 0 ? (8u << 20) : 65536);
          CUdeviceptr p = 0;
          if (alloc(&p, size) != CUDA_SUCCESS) ++errors;
          live.emplace_back(p, size);
        }
      }
      kept[t] = live;
      if (pop(nullptr) != CUDA_SUCCESS) ++errors;
    });
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  size_t held = 0;
  std::map<CUdeviceptr, size_t> ranges;
  for (const auto& v : kept)
    for (const auto& [p, s] : v) {
      held += s;
      ranges.emplace(p, s);
    }
  CHECK(free_bytes() == before - held);
  // Live allocations never overlap.
  CUdeviceptr end = 0;
  for (const auto& [p, s] : ranges) {
    CHECK(p >= end);
    end = p + s;
  }
  for (const auto& v : kept)
    for (const auto& [p, s] : v) CU_OK(CU(cuMemFree_v2)(p));
  CHECK(free_bytes() == before);
}
