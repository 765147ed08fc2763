// SPDX-License-Identifier: Apache-2.0
// NVML memory queries: framebuffer (v1 and versioned v2), BAR1, confidential-compute sizes.
// Totals are the DeviceModel's (what cudaMemGetInfo / cuDeviceTotalMem report); used and free
// are host-wide, from the ledger, so every process sees the same numbers.
#include "nvml/common.h"

#include <cstring>

using namespace fg::nvml;

namespace {
// The host-wide numbers, in either layout.
template <class Memory>
void put_memory_numbers(const DeviceHandle& h, Memory* memory) {
  const MemoryNumbers m = memory_of(h);
  memory->total = m.total;
  memory->free = m.free;
  memory->used = m.used;
}
}  // namespace

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    put_memory_numbers(h, memory);
    return NVML_SUCCESS;
  });
}

// The caller must set version = nvmlMemory_v2 (0x02000028); pynvml / gpustat / nvitop pass the
// constant. nvtop passes 2 and falls back to v1 on the error: a version field with no version
// byte at all gets NVML_ERROR_FUNCTION_NOT_FOUND, as a real H200 answers to 2; any other wrong
// version NVML_ERROR_ARGUMENT_VERSION_MISMATCH. Nothing is reserved.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2)
      return memory->version >> 24 == 0 ? NVML_ERROR_FUNCTION_NOT_FOUND : NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    put_memory_numbers(h, memory);
    memory->reserved = 0;
    return NVML_SUCCESS;
  });
}

// BAR1 aperture: nothing is mapped through it.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!bar1) return NVML_ERROR_INVALID_ARGUMENT;
    bar1->bar1Total = h.model.bar1_total;
    bar1->bar1Free = h.model.bar1_total;
    bar1->bar1Used = 0;
    return NVML_SUCCESS;
  });
}

// Confidential computing is off: Hopper and later report no protected memory and the whole
// framebuffer as unprotected; older parts do not support the query.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device,
                                                                           nvmlConfComputeMemSizeInfo_t* mem_info) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!mem_info) return NVML_ERROR_INVALID_ARGUMENT;
    if (h.model.architecture < static_cast<int>(NVML_DEVICE_ARCH_HOPPER)) return NVML_ERROR_NOT_SUPPORTED;
    mem_info->protectedMemSizeKib = 0;
    mem_info->unprotectedMemSizeKib = h.model.total_memory / 1024;
    return NVML_SUCCESS;
  });
}
