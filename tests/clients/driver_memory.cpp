// SPDX-License-Identifier: Apache-2.0
// The seed tutorial's memory program (cuMemAlloc, page-locked cuMemAllocHost written from
// the host and set with cuMemsetD32 through unified addressing), extended with the copies,
// sets, queries and errors of a driver-API client. Modes:
//   driver_memory                       all of that
//   driver_memory free_without_context  frees with no context current: the driver finds
//                                       the owner from the pointer (unified addressing);
//                                       Numba's cuda.close() and garbage-collected buffers
//                                       in other threads rely on it
#include "drv_check.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {
int free_without_context() {
  CUcontext ctx = nullptr;
  checkDriver(cuCtxCreate(&ctx, nullptr, 0, 0));
  CUdeviceptr d = 0;
  void* h = nullptr;
  checkDriver(cuMemAlloc(&d, 1 << 20));
  checkDriver(cuMemAllocHost(&h, 1 << 16));
  std::vector<unsigned char> reg(1 << 16);
  checkDriver(cuMemHostRegister(reg.data(), reg.size(), 0));
  checkDriver(cuCtxPopCurrent(nullptr));
  CUcontext cur = reinterpret_cast<CUcontext>(1);
  checkDriver(cuCtxGetCurrent(&cur));
  std::printf("current_is_null=%d\n", cur == nullptr);
  fact_result("mem_free", cuMemFree(d));
  fact_result("mem_free_host", cuMemFreeHost(h));
  fact_result("mem_host_unregister", cuMemHostUnregister(reg.data()));
  checkDriver(cuCtxPushCurrent(ctx));
  size_t free_b = 0, total_b = 0;
  checkDriver(cuMemGetInfo(&free_b, &total_b));
  std::printf("used_after=%zu\n", total_b - free_b);
  checkDriver(cuCtxDestroy(ctx));
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  checkDriver(cuInit(0));
  if (argc > 1 && std::string(argv[1]) == "free_without_context") return free_without_context();
  CUcontext context = nullptr;
  CUdevice device = 0;
  checkDriver(cuCtxCreate(&context, nullptr, CU_CTX_SCHED_AUTO, device));
  std::printf("context_set=%d\n", context != nullptr);

  CUdeviceptr device_memory_pointer = 0;
  checkDriver(cuMemAlloc(&device_memory_pointer, 100));
  std::printf("device_pointer_set=%d\n", device_memory_pointer != 0);

  float* host_page_locked_memory = nullptr;
  checkDriver(cuMemAllocHost((void**)&host_page_locked_memory, 100));
  host_page_locked_memory[0] = 123;
  std::printf("host_page_locked_memory[0]=%f\n", host_page_locked_memory[0]);
  float new_value = 555;
  unsigned bits;
  std::memcpy(&bits, &new_value, sizeof bits);  // the tutorial's *(int*)&new_value
  checkDriver(cuMemsetD32((CUdeviceptr)host_page_locked_memory, bits, 1));
  checkDriver(cuCtxSynchronize());
  std::printf("after_memset_d32=%f\n", host_page_locked_memory[0]);
  unsigned mem_type = 0;
  checkDriver(cuPointerGetAttribute(&mem_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host_page_locked_memory));
  std::printf("page_locked_memory_type=%u\n", mem_type);
  checkDriver(cuPointerGetAttribute(&mem_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device_memory_pointer));
  std::printf("device_memory_type=%u\n", mem_type);
  checkDriver(cuMemFreeHost(host_page_locked_memory));
  checkDriver(cuMemFree(device_memory_pointer));

  // Accounting: a 64 MiB allocation moves cuMemGetInfo by exactly 64 MiB.
  size_t free0 = 0, total = 0, free1 = 0;
  checkDriver(cuMemGetInfo(&free0, &total));
  std::printf("total=%zu\nused_at_start=%zu\n", total, total - free0);
  const size_t n = 64u << 20;
  CUdeviceptr d = 0, d2 = 0;
  checkDriver(cuMemAlloc(&d, n));
  checkDriver(cuMemGetInfo(&free1, &total));
  std::printf("alloc_64mib_delta=%zu\n", free0 - free1);
  CUdeviceptr base = 0;
  size_t range = 0;
  checkDriver(cuMemGetAddressRange(&base, &range, d + 12345));
  std::printf("address_range_base_is_alloc=%d\naddress_range_size=%zu\n", base == d, range);

  // Copies in every direction, byte-exact.
  std::vector<unsigned char> host(n), back(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>((i * 131) ^ (i >> 9));
  checkDriver(cuMemcpyHtoD(d, host.data(), n));
  checkDriver(cuMemAlloc(&d2, n));
  checkDriver(cuMemcpyDtoD(d2, d, n));
  checkDriver(cuMemcpyDtoH(back.data(), d2, n));
  std::printf("htod_dtod_dtoh_roundtrip=%d\n", back == host);
  CUstream s;
  checkDriver(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::vector<unsigned char> part(4096);
  checkDriver(cuMemcpyDtoHAsync(part.data(), d2 + 1000, part.size(), s));
  checkDriver(cuStreamSynchronize(s));
  std::printf("async_partial_copy=%d\n", std::memcmp(part.data(), host.data() + 1000, part.size()) == 0);
  checkDriver(cuStreamDestroy(s));

  // Sets of 8, 16 and 32 bits.
  checkDriver(cuMemsetD8(d, 0xAB, 3));
  checkDriver(cuMemsetD16(d + 4, 0x1234, 2));
  checkDriver(cuMemsetD32(d + 8, 0xDEADBEEF, 2));
  unsigned char head[17];
  checkDriver(cuMemcpyDtoH(head, d, sizeof head));
  std::printf("memset_bytes=");
  for (unsigned char c : head) std::printf("%02x", c);
  std::printf("\n");

  // Managed and mapped host memory.
  CUdeviceptr m = 0;
  checkDriver(cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  unsigned is_managed = 0;
  checkDriver(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  reinterpret_cast<unsigned char*>(m)[77] = 0x5C;  // host access to managed memory
  unsigned char b = 0;
  checkDriver(cuMemcpyDtoH(&b, m + 77, 1));
  std::printf("managed_is_managed=%u\nmanaged_host_write_seen=%d\n", is_managed, b == 0x5C);
  void* mapped = nullptr;
  checkDriver(cuMemHostAlloc(&mapped, 1 << 16, CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr mapped_dev = 0;
  checkDriver(cuMemHostGetDevicePointer(&mapped_dev, mapped, 0));
  std::printf("mapped_device_pointer_is_host_pointer=%d\n", mapped_dev == reinterpret_cast<CUdeviceptr>(mapped));

  // Errors.
  CUdeviceptr huge = 0;
  fact_result("alloc_beyond_capacity", cuMemAlloc(&huge, size_t(100) << 30));
  fact_result("alloc_zero", cuMemAlloc(&huge, 0));
  checkDriver(cuMemFree(d2));
  fact_result("free_twice", cuMemFree(d2));

  checkDriver(cuMemFree(d));
  checkDriver(cuMemFree(m));
  checkDriver(cuMemFreeHost(mapped));
  checkDriver(cuMemGetInfo(&free1, &total));
  std::printf("used_at_end=%zu\n", total - free1);
  checkDriver(cuCtxDestroy(context));
  return 0;
}
