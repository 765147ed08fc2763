// SPDX-License-Identifier: Apache-2.0
// Runtime memory management: allocation kinds, frees, host registration, pointer
// attributes, memory info, out-of-memory, IPC handles, stream-ordered allocation and pools.
#include "runtime_api.h"

#include <cstring>
#include <vector>

using namespace rtt;

namespace {

// The attributes of `p`, once its memory type and its device and host addresses are checked.
cudaPointerAttributes check_attributes(const void* p, cudaMemoryType type, const void* device_pointer,
                                       const void* host_pointer) {
  cudaPointerAttributes a{};
  REQUIRE(rt().cudaPointerGetAttributes(&a, p) == cudaSuccess);
  CHECK(a.type == type);
  CHECK(a.devicePointer == device_pointer);
  CHECK(a.hostPointer == host_pointer);
  return a;
}

}  // namespace

TEST_CASE_METHOD(Case, "cudaMalloc / cudaFree", "[runtime]") {
  void* p = nullptr;
  REQUIRE(r.cudaMalloc(&p, 1000) == cudaSuccess);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
  std::memset(p, 0x5A, 1000);  // device memory is addressable host memory underneath
  CHECK(r.cudaFree(p) == cudaSuccess);
  CHECK(r.cudaFree(p) == cudaErrorInvalidValue);  // double free
  CHECK(r.cudaGetLastError() == cudaErrorInvalidValue);

  void* z = &z;
  CHECK(r.cudaMalloc(&z, 0) == cudaSuccess);  // size 0: success and a null pointer
  CHECK(z == nullptr);
  CHECK(r.cudaFree(nullptr) == cudaSuccess);
  CHECK(r.cudaMalloc(nullptr, 16) == cudaErrorInvalidValue);

  int local = 0;
  CHECK(r.cudaFree(&local) == cudaErrorInvalidValue);  // not CUDA memory
  REQUIRE(r.cudaMalloc(&p, 4096) == cudaSuccess);
  CHECK(r.cudaFree(static_cast<char*>(p) + 16) == cudaErrorInvalidValue);  // interior pointer
  void* h = nullptr;
  REQUIRE(r.cudaMallocHost(&h, 64) == cudaSuccess);
  CHECK(r.cudaFree(h) == cudaErrorInvalidValue);      // pinned memory is freed with cudaFreeHost
  CHECK(r.cudaFreeHost(p) == cudaErrorInvalidValue);  // and device memory with cudaFree
  CHECK(r.cudaFreeHost(h) == cudaSuccess);
  CHECK(r.cudaFree(p) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMemGetInfo tracks allocations", "[runtime]") {
  size_t free0 = 0, total = 0;
  REQUIRE(r.cudaMemGetInfo(&free0, &total) == cudaSuccess);
  CHECK(total > 0);
  CHECK(free0 <= total);
  if (default_devices()) CHECK(total == 85899345920ull);
  void* p = nullptr;
  REQUIRE(r.cudaMalloc(&p, 3 << 20) == cudaSuccess);
  size_t free1 = 0;
  REQUIRE(r.cudaMemGetInfo(&free1, &total) == cudaSuccess);
  CHECK(free0 - free1 == (3u << 20));
  REQUIRE(r.cudaFree(p) == cudaSuccess);
  REQUIRE(r.cudaMemGetInfo(&free1, &total) == cudaSuccess);
  CHECK(free1 == free0);
  CHECK(r.cudaMemGetInfo(nullptr, &total) == cudaErrorInvalidValue);
  CHECK(r.cudaMemGetInfo(&free1, nullptr) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "out of memory leaves the device usable", "[runtime]") {
  size_t free0 = 0, total = 0;
  REQUIRE(r.cudaMemGetInfo(&free0, &total) == cudaSuccess);
  void* p = &p;
  CHECK(r.cudaMalloc(&p, total + 1) == cudaErrorMemoryAllocation);
  CHECK(r.cudaGetLastError() == cudaErrorMemoryAllocation);
  // Most of the device, then more than what is left.
  void* big = nullptr;
  REQUIRE(r.cudaMalloc(&big, free0 - (64 << 20)) == cudaSuccess);
  CHECK(r.cudaMalloc(&p, 128 << 20) == cudaErrorMemoryAllocation);
  void* small = nullptr;
  CHECK(r.cudaMalloc(&small, 1 << 20) == cudaSuccess);  // what fits still works
  CHECK(r.cudaFree(small) == cudaSuccess);
  CHECK(r.cudaFree(big) == cudaSuccess);
  size_t free1 = 0;
  REQUIRE(r.cudaMemGetInfo(&free1, &total) == cudaSuccess);
  CHECK(free1 == free0);
  REQUIRE(r.cudaMalloc(&p, 128 << 20) == cudaSuccess);
  CHECK(r.cudaFree(p) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaMallocPitch rounds rows to 512 bytes", "[runtime]") {
  void* p = nullptr;
  size_t pitch = 0;
  REQUIRE(r.cudaMallocPitch(&p, &pitch, 100, 10) == cudaSuccess);
  CHECK(pitch == 512);
  std::memset(p, 1, pitch * 10);
  CHECK(r.cudaFree(p) == cudaSuccess);
  REQUIRE(r.cudaMallocPitch(&p, &pitch, 1025, 3) == cudaSuccess);
  CHECK(pitch == 1536);
  CHECK(r.cudaFree(p) == cudaSuccess);
  CHECK(r.cudaMallocPitch(nullptr, &pitch, 1, 1) == cudaErrorInvalidValue);
  CHECK(r.cudaMallocPitch(&p, nullptr, 1, 1) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "managed memory", "[runtime]") {
  void* m = nullptr;
  REQUIRE(r.cudaMallocManaged(&m, 256, cudaMemAttachGlobal) == cudaSuccess);
  std::memset(m, 7, 256);  // host-accessible
  check_attributes(m, cudaMemoryTypeManaged, m, m);
  CHECK(r.cudaFree(m) == cudaSuccess);
  REQUIRE(r.cudaMallocManaged(&m, 256, cudaMemAttachHost) == cudaSuccess);
  CHECK(r.cudaFree(m) == cudaSuccess);
  // Documented as invalid, but NVIDIA's runtime on a real H200 answers success (a null pointer).
  CHECK(r.cudaMallocManaged(&m, 0, cudaMemAttachGlobal) == cudaSuccess);
  CHECK(m == nullptr);
  CHECK(r.cudaMallocManaged(&m, 16, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaMallocManaged(&m, 16, cudaMemAttachSingle) == cudaErrorInvalidValue);
  CHECK(r.cudaMallocManaged(nullptr, 16, cudaMemAttachGlobal) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "pinned host memory", "[runtime]") {
  void* h = nullptr;
  REQUIRE(r.cudaMallocHost(&h, 4096) == cudaSuccess);
  std::memset(h, 3, 4096);
  unsigned flags = 0;
  CHECK(r.cudaHostGetFlags(&flags, h) == cudaSuccess);
  CHECK((flags & cudaHostAllocMapped) != 0);
  void* dp = nullptr;
  CHECK(r.cudaHostGetDevicePointer(&dp, h, 0) == cudaSuccess);
  CHECK(dp == h);  // unified addressing
  CHECK(r.cudaHostGetDevicePointer(&dp, h, 1) == cudaErrorInvalidValue);
  check_attributes(h, cudaMemoryTypeHost, h, h);
  CHECK(r.cudaFreeHost(h) == cudaSuccess);
  CHECK(r.cudaFreeHost(h) == cudaErrorInvalidValue);
  CHECK(r.cudaFreeHost(nullptr) == cudaSuccess);

  REQUIRE(r.cudaHostAlloc(&h, 100, cudaHostAllocPortable | cudaHostAllocWriteCombined) == cudaSuccess);
  CHECK(r.cudaHostGetFlags(&flags, h) == cudaSuccess);
  CHECK((flags & (cudaHostAllocPortable | cudaHostAllocWriteCombined)) ==
        (cudaHostAllocPortable | cudaHostAllocWriteCombined));
  CHECK(r.cudaFreeHost(h) == cudaSuccess);
  CHECK(r.cudaHostAlloc(&h, 100, 0x80) == cudaErrorInvalidValue);
  CHECK(r.cudaHostAlloc(nullptr, 100, 0) == cudaErrorInvalidValue);
  int local = 0;
  CHECK(r.cudaHostGetFlags(&flags, &local) == cudaErrorInvalidValue);
  CHECK(r.cudaHostGetDevicePointer(&dp, &local, 0) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "cudaHostRegister / cudaHostUnregister", "[runtime]") {
  std::vector<char> buf(8192);
  REQUIRE(r.cudaHostRegister(buf.data(), buf.size(), cudaHostRegisterDefault) == cudaSuccess);
  CHECK(r.cudaHostRegister(buf.data() + 100, 10, 0) == cudaErrorHostMemoryAlreadyRegistered);
  CHECK(r.cudaGetLastError() == cudaErrorHostMemoryAlreadyRegistered);
  cudaPointerAttributes a{};
  REQUIRE(r.cudaPointerGetAttributes(&a, buf.data() + 10) == cudaSuccess);
  CHECK(a.type == cudaMemoryTypeHost);
  CHECK(a.hostPointer == buf.data() + 10);
  void* dp = nullptr;
  CHECK(r.cudaHostGetDevicePointer(&dp, buf.data(), 0) == cudaSuccess);
  CHECK(dp == buf.data());
  CHECK(r.cudaHostUnregister(buf.data()) == cudaSuccess);
  CHECK(r.cudaHostUnregister(buf.data()) == cudaErrorHostMemoryNotRegistered);
  REQUIRE(r.cudaPointerGetAttributes(&a, buf.data()) == cudaSuccess);
  CHECK(a.type == cudaMemoryTypeUnregistered);
  CHECK(r.cudaHostRegister(nullptr, 16, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaHostRegister(buf.data(), 0, 0) == cudaErrorInvalidValue);
  CHECK(r.cudaHostRegister(buf.data(), 16, 0x100) == cudaErrorInvalidValue);
  CHECK(r.cudaHostUnregister(nullptr) == cudaErrorInvalidValue);
  void* h = nullptr;
  REQUIRE(r.cudaMallocHost(&h, 64) == cudaSuccess);
  CHECK(r.cudaHostRegister(h, 64, 0) == cudaErrorHostMemoryAlreadyRegistered);  // already pinned
  CHECK(r.cudaFreeHost(h) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "cudaPointerGetAttributes follows the CUDA 11+ rules", "[runtime]") {
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, 1024) == cudaSuccess);
  cudaPointerAttributes a = check_attributes(static_cast<char*>(d) + 100, cudaMemoryTypeDevice,
                                             static_cast<char*>(d) + 100, nullptr);
  CHECK(a.device == 0);
  CHECK(r.cudaFree(d) == cudaSuccess);

  if (device_count() > 1) {
    REQUIRE(r.cudaSetDevice(1) == cudaSuccess);
    REQUIRE(r.cudaMalloc(&d, 64) == cudaSuccess);
    REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
    REQUIRE(r.cudaPointerGetAttributes(&a, d) == cudaSuccess);
    CHECK(a.type == cudaMemoryTypeDevice);
    CHECK(a.device == 1);
    REQUIRE(r.cudaFree(d) == cudaSuccess);  // any device's memory can be freed from any device
  }

  int local = 0;
  a = check_attributes(&local, cudaMemoryTypeUnregistered, nullptr, &local);  // unregistered host memory
  CHECK(a.device == cudaInvalidDeviceId);
  CHECK(r.cudaPointerGetAttributes(nullptr, &local) == cudaErrorInvalidValue);
}

TEST_CASE_METHOD(Case, "IPC handles: errors within one process", "[runtime]") {
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, 1 << 20) == cudaSuccess);
  cudaIpcMemHandle_t h{};
  CHECK(r.cudaIpcGetMemHandle(&h, d) == cudaSuccess);
  void* opened = nullptr;
  // A process cannot open its own handle.
  CHECK(r.cudaIpcOpenMemHandle(&opened, h, cudaIpcMemLazyEnablePeerAccess) == cudaErrorDeviceUninitialized);
  CHECK(r.cudaIpcOpenMemHandle(&opened, h, 0x10) == cudaErrorInvalidValue);
  CHECK(r.cudaIpcOpenMemHandle(nullptr, h, 1) == cudaErrorInvalidValue);
  cudaIpcMemHandle_t garbage;
  std::memset(&garbage, 0x11, sizeof garbage);
  CHECK(r.cudaIpcOpenMemHandle(&opened, garbage, 1) == cudaErrorInvalidValue);
  int local = 0;
  CHECK(r.cudaIpcGetMemHandle(&h, &local) == cudaErrorInvalidValue);
  CHECK(r.cudaIpcGetMemHandle(nullptr, d) == cudaErrorInvalidValue);
  CHECK(r.cudaIpcCloseMemHandle(d) == cudaErrorInvalidValue);  // not an opened handle
  CHECK(r.cudaFree(d) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "stream-ordered allocation and memory pools", "[runtime]") {
  cudaMemPool_t def = nullptr, cur = nullptr;
  REQUIRE(r.cudaDeviceGetDefaultMemPool(&def, 0) == cudaSuccess);
  REQUIRE(def != nullptr);
  REQUIRE(r.cudaDeviceGetMemPool(&cur, 0) == cudaSuccess);
  CHECK(cur == def);
  CHECK(r.cudaDeviceGetDefaultMemPool(&def, device_count()) == cudaErrorInvalidDevice);
  CHECK(r.cudaDeviceGetDefaultMemPool(nullptr, 0) == cudaErrorInvalidValue);

  cudaStream_t s = nullptr;
  REQUIRE(r.cudaStreamCreate(&s) == cudaSuccess);
  uint64_t used0 = 0, used = 0, high = 0;
  REQUIRE(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used0) == cudaSuccess);
  void* p = nullptr;
  REQUIRE(r.cudaMallocAsync(&p, 1 << 20, s) == cudaSuccess);
  REQUIRE(p != nullptr);
  std::memset(p, 1, 1 << 20);
  REQUIRE(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used - used0 == (1u << 20));
  REQUIRE(r.cudaFreeAsync(p, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used == used0);
  REQUIRE(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess);
  CHECK(high >= used0 + (1u << 20));
  CHECK(r.cudaFree(p) == cudaErrorInvalidValue);  // already freed by cudaFreeAsync

  // A pool allocation freed with plain cudaFree is booked back too.
  REQUIRE(r.cudaMallocAsync(&p, 4096, nullptr) == cudaSuccess);
  REQUIRE(r.cudaFree(p) == cudaSuccess);
  REQUIRE(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used == used0);

  CHECK(r.cudaMallocAsync(nullptr, 16, s) == cudaErrorInvalidValue);
  CHECK(r.cudaMallocAsync(&p, 16, reinterpret_cast<cudaStream_t>(0x1234)) == cudaErrorInvalidResourceHandle);
  int local = 0;
  CHECK(r.cudaFreeAsync(&local, s) == cudaErrorInvalidValue);

  // Attributes.
  uint64_t thr = 1 << 30;
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr) == cudaSuccess);
  uint64_t back = 0;
  CHECK(r.cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &back) == cudaSuccess);
  CHECK(back == thr);
  thr = 0;
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr) == cudaSuccess);
  int on = 0;
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &on) == cudaSuccess);
  on = 7;
  CHECK(r.cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &on) == cudaSuccess);
  CHECK(on == 0);
  on = 1;
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &on) == cudaSuccess);
  uint64_t zero = 0, one = 1;
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &zero) == cudaSuccess);  // reset
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &one) == cudaErrorInvalidValue);
  CHECK(r.cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &zero) == cudaErrorInvalidValue);  // read-only
  CHECK(r.cudaMemPoolSetAttribute(nullptr, cudaMemPoolAttrReleaseThreshold, &zero) == cudaErrorInvalidValue);
  CHECK(r.cudaMemPoolTrimTo(def, 0) == cudaSuccess);

  // Explicit pools.
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  REQUIRE(r.cudaMemPoolCreate(&pool, &props) == cudaSuccess);
  REQUIRE(r.cudaMallocFromPoolAsync(&p, 8192, pool, s) == cudaSuccess);
  REQUIRE(r.cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used == 8192);
  REQUIRE(r.cudaFreeAsync(p, s) == cudaSuccess);
  REQUIRE(r.cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(r.cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used == 0);
  REQUIRE(r.cudaDeviceSetMemPool(0, pool) == cudaSuccess);
  REQUIRE(r.cudaDeviceGetMemPool(&cur, 0) == cudaSuccess);
  CHECK(cur == pool);
  if (device_count() > 1) CHECK(r.cudaDeviceSetMemPool(1, pool) == cudaErrorInvalidValue);  // wrong device

  cudaMemAccessDesc desc{};
  desc.location.type = cudaMemLocationTypeDevice;
  cudaMemAccessFlags fl = cudaMemAccessFlagsProtNone;
  cudaMemLocation loc{cudaMemLocationTypeDevice, 0};
  CHECK(r.cudaMemPoolGetAccess(&fl, pool, &loc) == cudaSuccess);
  CHECK(fl == cudaMemAccessFlagsProtReadWrite);  // the owner
  if (device_count() > 1) {
    loc.id = 1;
    CHECK(r.cudaMemPoolGetAccess(&fl, pool, &loc) == cudaSuccess);
    CHECK(fl == cudaMemAccessFlagsProtNone);
    desc.location.id = 1;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    CHECK(r.cudaMemPoolSetAccess(pool, &desc, 1) == cudaSuccess);
    CHECK(r.cudaMemPoolGetAccess(&fl, pool, &loc) == cudaSuccess);
    CHECK(fl == cudaMemAccessFlagsProtReadWrite);
  }
  desc.location.id = device_count();
  CHECK(r.cudaMemPoolSetAccess(pool, &desc, 1) == cudaErrorInvalidDevice);
  CHECK(r.cudaMemPoolSetAccess(pool, nullptr, 1) == cudaErrorInvalidValue);

  CHECK(r.cudaMemPoolDestroy(def) == cudaErrorInvalidValue);  // default pools stay
  REQUIRE(r.cudaMemPoolDestroy(pool) == cudaSuccess);
  REQUIRE(r.cudaDeviceGetMemPool(&cur, 0) == cudaSuccess);
  CHECK(cur == def);  // the device falls back to its default pool
  CHECK(r.cudaMemPoolDestroy(pool) == cudaErrorInvalidValue);
  CHECK(r.cudaMallocFromPoolAsync(&p, 16, pool, s) == cudaErrorInvalidValue);

  props.location.id = device_count();
  CHECK(r.cudaMemPoolCreate(&pool, &props) == cudaErrorInvalidDevice);
  props.location.id = 0;
  props.allocType = cudaMemAllocationTypeInvalid;
  CHECK(r.cudaMemPoolCreate(&pool, &props) == cudaErrorInvalidValue);
  CHECK(r.cudaMemPoolCreate(nullptr, &props) == cudaErrorInvalidValue);
  REQUIRE(r.cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "unified-memory hints are validated no-ops", "[runtime]") {
  REQUIRE(r.cudaSetDevice(0) == cudaSuccess);
  void* m = nullptr;
  REQUIRE(r.cudaMallocManaged(&m, 1 << 16, cudaMemAttachGlobal) == cudaSuccess);
  const cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  const cudaMemLocation host{cudaMemLocationTypeHost, 0};
  CHECK(r.cudaMemPrefetchAsync(m, 1 << 16, dev0, 0, nullptr) == cudaSuccess);
  CHECK(r.cudaMemPrefetchAsync(static_cast<char*>(m) + 4096, 4096, host, 0, nullptr) == cudaSuccess);
  CHECK(r.cudaMemPrefetchAsync12(m, 1 << 16, 0, nullptr) == cudaSuccess);  // CUDA 12 ABI
  CHECK(r.cudaMemPrefetchAsync12(m, 1 << 16, cudaCpuDeviceId, nullptr) == cudaSuccess);
  CHECK(r.cudaMemPrefetchAsync12(m, 1 << 16, device_count(), nullptr) == cudaErrorInvalidDevice);
  CHECK(r.cudaMemPrefetchAsync(m, (1 << 16) + 1, dev0, 0, nullptr) == cudaErrorInvalidValue);  // past the end
  CHECK(r.cudaMemPrefetchAsync(m, 16, cudaMemLocation{cudaMemLocationTypeDevice, device_count()}, 0, nullptr) ==
        cudaErrorInvalidDevice);
  CHECK(r.cudaMemPrefetchAsync(m, 16, dev0, 1, nullptr) == cudaErrorInvalidValue);
  void* d = nullptr;
  REQUIRE(r.cudaMalloc(&d, 64) == cudaSuccess);
  CHECK(r.cudaMemPrefetchAsync(d, 64, dev0, 0, nullptr) == cudaErrorInvalidValue);  // not managed

  CHECK(r.cudaMemAdvise(m, 4096, cudaMemAdviseSetReadMostly, host) == cudaSuccess);
  CHECK(r.cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, dev0) == cudaSuccess);
  CHECK(r.cudaMemAdvise(m, 4096, cudaMemAdviseSetAccessedBy, host) == cudaSuccess);
  CHECK(r.cudaMemAdvise12(m, 4096, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId) == cudaSuccess);
  CHECK(r.cudaMemAdvise12(m, 4096, cudaMemAdviseSetAccessedBy, -7) == cudaErrorInvalidDevice);
  CHECK(r.cudaMemAdvise(m, 4096, static_cast<cudaMemoryAdvise>(9), dev0) == cudaErrorInvalidValue);
  CHECK(r.cudaMemAdvise(d, 64, cudaMemAdviseSetReadMostly, dev0) == cudaErrorInvalidValue);

  CHECK(r.cudaStreamAttachMemAsync(nullptr, m, 0, cudaMemAttachGlobal) == cudaSuccess);
  CHECK(r.cudaStreamAttachMemAsync(nullptr, m, 1 << 16, cudaMemAttachHost) == cudaSuccess);
  CHECK(r.cudaStreamAttachMemAsync(nullptr, m, 100, cudaMemAttachGlobal) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamAttachMemAsync(nullptr, m, 0, 8) == cudaErrorInvalidValue);
  CHECK(r.cudaStreamAttachMemAsync(nullptr, d, 0, cudaMemAttachGlobal) == cudaErrorInvalidValue);
  CHECK(r.cudaFree(d) == cudaSuccess);
  CHECK(r.cudaFree(m) == cudaSuccess);
}

TEST_CASE_METHOD(Case, "CUDA 13 location-based pool calls", "[runtime]") {
  cudaMemLocation loc{cudaMemLocationTypeDevice, 0};
  cudaMemPool_t a = nullptr, b = nullptr;
  REQUIRE(r.cudaMemGetDefaultMemPool(&a, &loc, cudaMemAllocationTypePinned) == cudaSuccess);
  REQUIRE(r.cudaDeviceGetDefaultMemPool(&b, 0) == cudaSuccess);
  CHECK(a == b);
  REQUIRE(r.cudaMemGetMemPool(&a, &loc, cudaMemAllocationTypePinned) == cudaSuccess);
  REQUIRE(r.cudaDeviceGetMemPool(&b, 0) == cudaSuccess);
  CHECK(a == b);
  CHECK(r.cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, b) == cudaSuccess);
  cudaMemLocation host{cudaMemLocationTypeHost, 0};
  CHECK(r.cudaMemGetDefaultMemPool(&a, &host, cudaMemAllocationTypePinned) == cudaErrorNotSupported);
  CHECK(r.cudaMemGetDefaultMemPool(&a, &loc, cudaMemAllocationTypeManaged) == cudaErrorNotSupported);
  CHECK(r.cudaMemGetDefaultMemPool(&a, nullptr, cudaMemAllocationTypePinned) == cudaErrorInvalidValue);
  cudaMemLocation bad{cudaMemLocationTypeDevice, device_count()};
  CHECK(r.cudaMemGetMemPool(&a, &bad, cudaMemAllocationTypePinned) == cudaErrorInvalidDevice);
}
