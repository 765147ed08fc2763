// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API: virtual memory management (cuMemCreate / cuMemAddressReserve / cuMemMap /
// cuMemSetAccess / export and import), with real data and exact books.
#include "backend/driver_test.h"

#include <fcntl.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace drvtest;

namespace {

constexpr size_t kMiB = 1u << 20;

CUmemAllocationProp device_prop(CUdevice dev, bool posix_fd = true) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  p.requestedHandleTypes = posix_fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return p;
}

CUmemAccessDesc access(CUdevice dev, CUmemAccess_flags f) {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = dev;
  d.flags = f;
  return d;
}

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 rng(seed);
  for (auto& c : v) c = static_cast<unsigned char>(rng());
  return v;
}

// A case on a fresh context of device 0 that maps device memory of `prop` and keeps exact
// books against `before`.
struct VmmCase {
  Ctx ctx{0};
  const size_t before = free_bytes();
  const CUmemAllocationProp prop = device_prop(0);
};

}  // namespace

TEST_CASE("driver: allocation granularity", "[driver]") {
  init();
  CUmemAllocationProp p = device_prop(0);
  size_t g = 0;
  CU_OK(CU(cuMemGetAllocationGranularity)(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CHECK(g == 2 * kMiB);
  CU_OK(CU(cuMemGetAllocationGranularity)(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  CHECK(g == 2 * kMiB);
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemGetAllocationGranularity)(&g, &p, static_cast<CUmemAllocationGranularity_flags>(2)));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAllocationGranularity)(nullptr, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAllocationGranularity)(&g, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  p.location.id = 1000;
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemGetAllocationGranularity)(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  p = device_prop(0);
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemGetAllocationGranularity)(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  p = device_prop(0);
  p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAllocationGranularity)(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
}

TEST_CASE_METHOD(VmmCase, "driver: reserve, map, access, copy, unmap, with exact books", "[driver]") {
  CUmemGenericAllocationHandle h1 = 0, h2 = 0;
  CU_OK(CU(cuMemCreate)(&h1, 4 * kMiB, &prop, 0));
  CU_OK(CU(cuMemCreate)(&h2, 4 * kMiB, &prop, 0));
  CHECK(h1 != h2);
  CHECK(free_bytes() == before - 8 * kMiB);  // physical memory is booked at creation

  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 16 * kMiB, 0, 0, 0));
  CHECK(va % (2 * kMiB) == 0);
  CU_OK(CU(cuMemMap)(va, 4 * kMiB, 0, h1, 0));
  CU_OK(CU(cuMemMap)(va + 4 * kMiB, 4 * kMiB, 0, h2, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va, 4 * kMiB, 0, h2, 0));  // already mapped there
  CHECK(free_bytes() == before - 8 * kMiB);

  const auto data = pattern(8 * kMiB, 11);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(va, data.data(), 64));  // no access granted yet
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(va, 8 * kMiB, &rw, 1));
  CU_OK(CU(cuMemcpyHtoD_v2)(va, data.data(), data.size()));  // spans both mappings
  std::vector<unsigned char> out(8 * kMiB, 0);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), va, out.size()));
  CHECK(out == data);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoH_v2)(out.data(), va + 6 * kMiB, 4 * kMiB));  // into the unmapped part
  CUdeviceptr plain = 0;
  CU_OK(CU(cuMemAlloc_v2)(&plain, kMiB));
  CU_OK(CU(cuMemcpyDtoD_v2)(plain, va + 3 * kMiB + 5, kMiB));
  std::vector<unsigned char> part(kMiB);
  CU_OK(CU(cuMemcpyDtoH_v2)(part.data(), plain, kMiB));
  CHECK(std::equal(part.begin(), part.end(), data.begin() + 3 * kMiB + 5));
  CU_OK(CU(cuMemFree_v2)(plain));
  CU_OK(CU(cuMemsetD32_v2)(va + 8 * kMiB - 16, 0x01010101, 4));
  CU_OK(CU(cuMemcpyDtoH_v2)(part.data(), va + 8 * kMiB - 16, 16));
  CHECK(std::all_of(part.begin(), part.begin() + 16, [](unsigned char c) { return c == 1; }));

  unsigned long long flags = 9;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CU_OK(CU(cuMemGetAccess)(&flags, &loc, va + 5));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  int n = 0;
  CU_OK(CU(cuDeviceGetCount)(&n));
  if (n > 1) {
    loc.id = 1;
    CU_OK(CU(cuMemGetAccess)(&flags, &loc, va + 5));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    loc.id = 0;
  }
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAccess)(&flags, &loc, va + 9 * kMiB));  // not mapped
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAccess)(nullptr, &loc, va));

  // Pointer queries know the mapping.
  unsigned type = 0, mapped = 9;
  CU_OK(CU(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + 5 * kMiB));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  int ord = -1;
  CU_OK(CU(cuPointerGetAttribute)(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + 5 * kMiB));
  CHECK(ord == 0);
  CUdeviceptr start = 0;
  size_t size = 0;
  CU_OK(CU(cuPointerGetAttribute)(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + 5 * kMiB));
  CU_OK(CU(cuPointerGetAttribute)(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + 5 * kMiB));
  CHECK(start == va);
  CHECK(size == 16 * kMiB);
  CU_OK(CU(cuPointerGetAttribute)(&start, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, va + 5 * kMiB));
  CU_OK(CU(cuPointerGetAttribute)(&size, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, va + 5 * kMiB));
  CHECK(start == va + 4 * kMiB);
  CHECK(size == 4 * kMiB);
  unsigned long long types = 0;
  CU_OK(CU(cuPointerGetAttribute)(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, va));
  CHECK(types == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CU_OK(CU(cuPointerGetAttribute)(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va + 12 * kMiB));
  CHECK(mapped == 0);
  CU_OK(CU(cuMemGetAddressRange_v2)(&start, &size, va + 5 * kMiB));
  CHECK(start == va + 4 * kMiB);
  CHECK(size == 4 * kMiB);

  // A second mapping of h1 aliases the same bytes; read-only access refuses writes.
  CUdeviceptr alias = 0;
  CU_OK(CU(cuMemAddressReserve)(&alias, 4 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(alias, 4 * kMiB, 0, h1, 0));
  const CUmemAccessDesc ro = access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
  CU_OK(CU(cuMemSetAccess)(alias, 4 * kMiB, &ro, 1));
  CU_OK(CU(cuMemcpyDtoH_v2)(part.data(), alias + kMiB, kMiB));
  CHECK(std::equal(part.begin(), part.end(), data.begin() + kMiB));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(alias, data.data(), 16));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemsetD8_v2)(alias, 0, 16));

  // Handles released while mapped: the memory lives until the last mapping goes.
  CU_OK(CU(cuMemRelease)(h1));
  CU_OK(CU(cuMemRelease)(h2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemRelease)(h1));                             // nothing left to release
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va + 8 * kMiB, 4 * kMiB, 0, h1, 0));  // released: not mappable
  CHECK(free_bytes() == before - 8 * kMiB);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), va, 4 * kMiB));
  CHECK(std::equal(out.begin(), out.begin() + 4 * kMiB, data.begin()));

  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemUnmap)(va, 2 * kMiB));  // part of a mapping
  CU_OK(CU(cuMemUnmap)(va, 4 * kMiB));
  CHECK(free_bytes() == before - 8 * kMiB);  // h1 is still mapped at `alias`
  CU_OK(CU(cuMemUnmap)(alias, 4 * kMiB));
  CHECK(free_bytes() == before - 4 * kMiB);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyDtoH_v2)(out.data(), va, 16));  // unmapped
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemUnmap)(va, 4 * kMiB));             // twice
  CU_OK(CU(cuMemUnmap)(va + 4 * kMiB, 4 * kMiB));
  CHECK(free_bytes() == before);

  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressFree)(va, 8 * kMiB));  // not the reserved size
  CU_OK(CU(cuMemAddressFree)(va, 16 * kMiB));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressFree)(va, 16 * kMiB));
  CU_OK(CU(cuMemAddressFree)(alias, 4 * kMiB));
  // The freed range can be asked for again by address.
  CUdeviceptr again = 0;
  CU_OK(CU(cuMemAddressReserve)(&again, 16 * kMiB, 0, va, 0));
  CHECK(again == va);
  CU_OK(CU(cuMemAddressFree)(again, 16 * kMiB));
}

TEST_CASE("driver: access can be granted to part of a mapping", "[driver]") {
  Ctx ctx(0);
  const size_t before = free_bytes();
  const CUmemAllocationProp prop = device_prop(0, false);
  CUmemGenericAllocationHandle h = 0;
  CU_OK(CU(cuMemCreate)(&h, 8 * kMiB, &prop, 0));
  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 8 * kMiB, 4 * kMiB, 0, 0));
  CHECK(va % (4 * kMiB) == 0);
  CU_OK(CU(cuMemMap)(va, 8 * kMiB, 0, h, 0));
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(va + 2 * kMiB, 2 * kMiB, &rw, 1));
  unsigned char b[16] = {1, 2, 3};
  CU_OK(CU(cuMemcpyHtoD_v2)(va + 2 * kMiB, b, sizeof b));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(va, b, sizeof b));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemcpyHtoD_v2)(va + 4 * kMiB - 8, b, sizeof b));  // crosses into no access
  unsigned long long flags = 9;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CU_OK(CU(cuMemGetAccess)(&flags, &loc, va));
  CHECK(flags == 0);
  CU_OK(CU(cuMemGetAccess)(&flags, &loc, va + 3 * kMiB));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va + 1, 2 * kMiB, &rw, 1));  // not granularity-aligned
  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemUnmap)(va, 8 * kMiB));  // the whole mapping, however access split it
  CHECK(free_bytes() == before);
  CU_OK(CU(cuMemAddressFree)(va, 8 * kMiB));
}

TEST_CASE("driver: VMM arguments are checked", "[driver]") {
  Ctx ctx(0);
  CUmemAllocationProp prop = device_prop(0);
  CUmemGenericAllocationHandle h = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemCreate)(nullptr, 2 * kMiB, &prop, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemCreate)(&h, 2 * kMiB, nullptr, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemCreate)(&h, 2 * kMiB, &prop, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemCreate)(&h, 0, &prop, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemCreate)(&h, 3 * kMiB, &prop, 0));
  prop.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  prop = device_prop(0);
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  prop = device_prop(1000);
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  prop = device_prop(0);
  size_t total = 0;
  CU_OK(CU(cuDeviceTotalMem_v2)(&total, 0));
  CU_EQ(CUDA_ERROR_OUT_OF_MEMORY, CU(cuMemCreate)(&h, total + 2 * kMiB, &prop, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemRelease)(0xBADull));

  CUdeviceptr va = 0;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressReserve)(nullptr, 2 * kMiB, 0, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressReserve)(&va, kMiB, 0, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressReserve)(&va, 2 * kMiB, 3 * kMiB, 0, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemAddressReserve)(&va, 2 * kMiB, 0, 0, 1));
  CU_OK(CU(cuMemAddressReserve)(&va, 4 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va + 4096, 2 * kMiB, 0, h, 0));      // unaligned address
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va, 4 * kMiB, 0, h, 0));             // larger than the handle
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va + 4 * kMiB, 2 * kMiB, 0, h, 0));  // outside the reservation
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va, 2 * kMiB, 0, 0xBADull, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemMap)(va, 2 * kMiB, 0, h, 1));
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va, 2 * kMiB, &rw, 1));  // nothing mapped
  CU_OK(CU(cuMemMap)(va, 2 * kMiB, 0, h, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va, 4 * kMiB, &rw, 1));  // half mapped
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va, 2 * kMiB, nullptr, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va, 2 * kMiB, &rw, 0));
  CUmemAccessDesc bad = access(0, static_cast<CUmemAccess_flags>(2));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemSetAccess)(va, 2 * kMiB, &bad, 1));
  bad = access(1000, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_EQ(CUDA_ERROR_INVALID_DEVICE, CU(cuMemSetAccess)(va, 2 * kMiB, &bad, 1));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemUnmap)(va + 2 * kMiB, 2 * kMiB));  // nothing mapped there
  // A reservation freed with mappings still in it takes them down too.
  CU_OK(CU(cuMemRelease)(h));
  const size_t before = free_bytes();
  CU_OK(CU(cuMemAddressFree)(va, 4 * kMiB));
  CHECK(free_bytes() == before + 2 * kMiB);
}

TEST_CASE_METHOD(VmmCase, "driver: allocation handles: properties, retain, release", "[driver]") {
  CUmemGenericAllocationHandle h = 0, r = 0;
  CU_OK(CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  CUmemAllocationProp got{};
  CU_OK(CU(cuMemGetAllocationPropertiesFromHandle)(&got, h));
  CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED);
  CHECK(got.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
  CHECK(got.location.id == 0);
  CHECK(got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAllocationPropertiesFromHandle)(nullptr, h));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemGetAllocationPropertiesFromHandle)(&got, 0xBADull));

  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(va, 2 * kMiB, 0, h, 0));
  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemRetainAllocationHandle)(&r, reinterpret_cast<void*>(va + 12345)));
  CHECK(r == h);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemRetainAllocationHandle)(&r, &r));  // not a mapping
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuMemRetainAllocationHandle)(nullptr, reinterpret_cast<void*>(va)));
  CU_OK(CU(cuMemUnmap)(va, 2 * kMiB));
  CHECK(free_bytes() == before - 2 * kMiB);  // the retained reference keeps it
  CU_OK(CU(cuMemRelease)(r));
  CHECK(free_bytes() == before);
  CU_OK(CU(cuMemAddressFree)(va, 2 * kMiB));
}

TEST_CASE_METHOD(VmmCase, "driver: POSIX fd export and import in one process", "[driver]") {
  CUmemGenericAllocationHandle h = 0, imported = 0;
  CU_OK(CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  int fd = -1;
  CU_OK(CU(cuMemExportToShareableHandle)(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  REQUIRE(fd >= 0);
  CU_OK(CU(cuMemImportFromShareableHandle)(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);                                 // the handle keeps its own reference
  CHECK(imported == h);                      // our own allocation: the same handle, one more release owed
  CHECK(free_bytes() == before - 2 * kMiB);  // importing books nothing
  CUmemAllocationProp got{};
  CU_OK(CU(cuMemGetAllocationPropertiesFromHandle)(&got, imported));
  CHECK(got.location.id == 0);
  CHECK(got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);

  CUdeviceptr a = 0, b = 0;
  CU_OK(CU(cuMemAddressReserve)(&a, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemAddressReserve)(&b, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(a, 2 * kMiB, 0, h, 0));
  CU_OK(CU(cuMemMap)(b, 2 * kMiB, 0, imported, 0));
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(a, 2 * kMiB, &rw, 1));
  CU_OK(CU(cuMemSetAccess)(b, 2 * kMiB, &rw, 1));
  const auto data = pattern(4096, 12);
  CU_OK(CU(cuMemcpyHtoD_v2)(a + 100, data.data(), data.size()));
  std::vector<unsigned char> out(4096);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), b + 100, out.size()));
  CHECK(out == data);

  // Errors.
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemExportToShareableHandle)(nullptr, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemExportToShareableHandle)(&fd, 0xBADull, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_EQ(CUDA_ERROR_NOT_SUPPORTED, CU(cuMemExportToShareableHandle)(&fd, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  const CUmemAllocationProp plain_prop = device_prop(0, false);
  CUmemGenericAllocationHandle plain = 0;
  CU_OK(CU(cuMemCreate)(&plain, 2 * kMiB, &plain_prop, 0));
  CU_EQ(CUDA_ERROR_INVALID_VALUE,  // POSIX fds were not requested at creation
        CU(cuMemExportToShareableHandle)(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_OK(CU(cuMemRelease)(plain));
  const int null_fd = open("/dev/null", O_RDONLY);
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemImportFromShareableHandle)(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(null_fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(null_fd);
  CU_EQ(CUDA_ERROR_INVALID_VALUE,
        CU(cuMemImportFromShareableHandle)(nullptr, nullptr, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));

  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemRelease)(imported));
  CU_OK(CU(cuMemUnmap)(a, 2 * kMiB));
  CHECK(free_bytes() == before - 2 * kMiB);  // still mapped at b through the import
  CU_OK(CU(cuMemUnmap)(b, 2 * kMiB));
  CHECK(free_bytes() == before);
  CU_OK(CU(cuMemAddressFree)(a, 2 * kMiB));
  CU_OK(CU(cuMemAddressFree)(b, 2 * kMiB));
}

// Peer of the next case: creates and fills physical memory, exports it as a POSIX fd and
// waits; the parent opens the fd through /proc, imports it and writes back.
TEST_CASE("driver helper: VMM exporter", "[.][driver-helper]") {
  const std::string dir = peer_dir();
  Ctx ctx(0);
  const CUmemAllocationProp prop = device_prop(0);
  CUmemGenericAllocationHandle h = 0;
  CU_OK(CU(cuMemCreate)(&h, 2 * kMiB, &prop, 0));
  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(va, 2 * kMiB, 0, h, 0));
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(va, 2 * kMiB, &rw, 1));
  const auto data = pattern(2 * kMiB, 21);
  CU_OK(CU(cuMemcpyHtoD_v2)(va, data.data(), data.size()));
  int fd = -1;
  CU_OK(CU(cuMemExportToShareableHandle)(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  publish_file(dir + "/fd", std::to_string(getpid()) + " " + std::to_string(fd));
  REQUIRE(wait_for_file(dir + "/done"));
  std::vector<unsigned char> out(16);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), va, out.size()));
  CHECK(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == 0x99; }));
  CU_OK(CU(cuMemUnmap)(va, 2 * kMiB));
  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemAddressFree)(va, 2 * kMiB));
  close(fd);
}

TEST_CASE("driver: POSIX fd sharing across processes", "[driver]") {
  Ctx ctx(0);
  const Peer peer("driver helper: VMM exporter");
  REQUIRE(wait_for_file(peer.path("fd")));
  int pid = 0, their_fd = -1;
  REQUIRE(std::sscanf(read_file(peer.path("fd")).c_str(), "%d %d", &pid, &their_fd) == 2);
  // What SCM_RIGHTS would deliver: the same open file, here through /proc.
  const int fd = open(("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(their_fd)).c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  const size_t before = free_bytes();
  CUmemGenericAllocationHandle h = 0;
  CU_OK(CU(cuMemImportFromShareableHandle)(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CHECK(free_bytes() == before);
  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(va, 2 * kMiB, 0, h, 0));
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(va, 2 * kMiB, &rw, 1));
  std::vector<unsigned char> out(2 * kMiB);
  CU_OK(CU(cuMemcpyDtoH_v2)(out.data(), va, out.size()));
  CHECK(out == pattern(2 * kMiB, 21));
  CU_OK(CU(cuMemsetD8_v2)(va, 0x99, 16));
  CU_OK(CU(cuMemUnmap)(va, 2 * kMiB));
  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemAddressFree)(va, 2 * kMiB));
  peer.finish();
}

// The same library serves the runtime: its copies must accept driver-mapped ranges too
// (the core consults the driver's virtual-memory ranges), and refuse them without access.
TEST_CASE("driver: runtime copies reach virtual-memory mappings", "[driver]") {
  init();
  using Memcpy = int (*)(void*, const void*, size_t, int);
  auto rt_memcpy = reinterpret_cast<Memcpy>(dlvsym(drvtest::lib(), "cudaMemcpy", "libcudart.so.13"));
  REQUIRE(rt_memcpy != nullptr);
  CUcontext ctx = nullptr;
  CU_OK(CU(cuDevicePrimaryCtxRetain)(&ctx, 0));
  CU_OK(CU(cuCtxPushCurrent_v2)(ctx));
  CUmemAllocationProp p = device_prop(0);
  CUmemGenericAllocationHandle h = 0;
  CU_OK(CU(cuMemCreate)(&h, 2 * kMiB, &p, 0));
  CUdeviceptr va = 0;
  CU_OK(CU(cuMemAddressReserve)(&va, 2 * kMiB, 0, 0, 0));
  CU_OK(CU(cuMemMap)(va, 2 * kMiB, 0, h, 0));
  std::vector<unsigned char> data = pattern(4096, 3), out(4096, 0);
  constexpr int kDefault = 4;  // cudaMemcpyDefault
  constexpr int kInvalidValue = 1;
  CHECK(rt_memcpy(reinterpret_cast<void*>(va), data.data(), data.size(), kDefault) == kInvalidValue);
  const CUmemAccessDesc rw = access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CU_OK(CU(cuMemSetAccess)(va, 2 * kMiB, &rw, 1));
  CHECK(rt_memcpy(reinterpret_cast<void*>(va + 100), data.data(), data.size(), kDefault) == 0);
  CHECK(rt_memcpy(out.data(), reinterpret_cast<void*>(va + 100), out.size(), kDefault) == 0);
  CHECK(out == data);
  CHECK(rt_memcpy(reinterpret_cast<void*>(va + 2 * kMiB - 10), data.data(), 64, kDefault) == kInvalidValue);
  CU_OK(CU(cuMemUnmap)(va, 2 * kMiB));
  CU_OK(CU(cuMemRelease)(h));
  CU_OK(CU(cuMemAddressFree)(va, 2 * kMiB));
  CU_OK(CU(cuCtxPopCurrent_v2)(nullptr));
  CU_OK(CU(cuDevicePrimaryCtxRelease_v2)(0));
}
