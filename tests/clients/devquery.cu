// SPDX-License-Identifier: Apache-2.0
// deviceQuery-like client: what an application learns about the devices through the
// CUDA Runtime (cudaDeviceProp, attributes, PCI ids, memory), one "key=value" per fact.
// run_client_tests.py runs it under several device configurations.
#include "rt_check.h"

#include <cstring>

// "devD.FIELD=value" for a cudaDeviceProp field whose key is its name.
void print_prop(int d, const char* field, size_t v) { std::printf("dev%d.%s=%zu\n", d, field, v); }
void print_prop(int d, const char* field, int v) { std::printf("dev%d.%s=%d\n", d, field, v); }
#define PRINT_PROP(field) print_prop(d, #field, p.field)

int main() {
  int drv = 0, rt = 0, n = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  std::printf("driver_version=%d\nruntime_version=%d\n", drv, rt);
  cudaError_t count_err = cudaGetDeviceCount(&n);
  std::printf("count=%d\ncount_error=%s\n", n, cudaGetErrorName(count_err));
  if (count_err != cudaSuccess) {
    // No devices: every device call reports the same error as the count.
    FACT_ERR("set_device_0", cudaSetDevice(0));
    size_t f = 0, t = 0;
    FACT_ERR("mem_get_info", cudaMemGetInfo(&f, &t));
    return 0;
  }
  int cur = -1;
  CK(cudaGetDevice(&cur));
  std::printf("current_device=%d\n", cur);

  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p;
    std::memset(&p, 0xAB, sizeof p);
    CK(cudaGetDeviceProperties(&p, d));
    char uuid[41];
    format_uuid(reinterpret_cast<const unsigned char*>(p.uuid.bytes), uuid);
    std::printf("dev%d.name=%s\n", d, p.name);
    std::printf("dev%d.uuid=%s\n", d, uuid);
    PRINT_PROP(totalGlobalMem);
    std::printf("dev%d.cc=%d.%d\n", d, p.major, p.minor);
    PRINT_PROP(multiProcessorCount);
    std::printf("dev%d.pci=%x:%x:%x\n", d, p.pciDomainID, p.pciBusID, p.pciDeviceID);
    PRINT_PROP(warpSize);
    PRINT_PROP(maxThreadsPerBlock);
    std::printf("dev%d.maxThreadsDim=%d,%d,%d\n", d, p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    std::printf("dev%d.maxGridSize=%d,%d,%d\n", d, p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    PRINT_PROP(sharedMemPerBlock);
    PRINT_PROP(sharedMemPerBlockOptin);
    PRINT_PROP(sharedMemPerMultiprocessor);
    PRINT_PROP(regsPerBlock);
    PRINT_PROP(maxThreadsPerMultiProcessor);
    PRINT_PROP(l2CacheSize);
    PRINT_PROP(memoryBusWidth);
    PRINT_PROP(totalConstMem);
    PRINT_PROP(unifiedAddressing);
    PRINT_PROP(managedMemory);
    PRINT_PROP(concurrentManagedAccess);
    PRINT_PROP(integrated);

    // Attributes must agree with the struct.
    int sm = 0, major = 0, clock = 0, mem_clock = 0, bus = 0;
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, d));
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    CK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d));
    CK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, d));
    CK(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d));
    std::printf("dev%d.attr.sm_count=%d\n", d, sm);
    std::printf("dev%d.attr.cc_major=%d\n", d, major);
    std::printf("dev%d.attr.clock_khz=%d\n", d, clock);
    std::printf("dev%d.attr.mem_clock_khz=%d\n", d, mem_clock);
    std::printf("dev%d.attr.pci_bus=%d\n", d, bus);

    char bus_id[32];
    CK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d));
    int back = -1;
    CK(cudaDeviceGetByPCIBusId(&back, bus_id));
    std::printf("dev%d.pci_bus_id=%s\n", d, bus_id);
    std::printf("dev%d.by_pci_bus_id=%d\n", d, back);

    CK(cudaSetDevice(d));
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    std::printf("dev%d.mem_free=%zu\ndev%d.mem_total=%zu\n", d, free_b, d, total_b);
    if (n > 1) {
      int can = -1;
      CK(cudaDeviceCanAccessPeer(&can, d, (d + 1) % n));
      std::printf("dev%d.can_access_peer_next=%d\n", d, can);
    }
  }
  // Errors a query client meets.
  cudaDeviceProp p;
  FACT_ERR("props_out_of_range", cudaGetDeviceProperties(&p, n));
  FACT_ERR("set_device_out_of_range", cudaSetDevice(n));
  int back = -1;
  FACT_ERR("by_unknown_pci_bus_id", cudaDeviceGetByPCIBusId(&back, "0000:01:00.0"));
  CK(cudaDeviceReset());
  return 0;
}
