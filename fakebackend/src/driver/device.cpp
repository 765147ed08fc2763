// SPDX-License-Identifier: Apache-2.0
// Device queries: count, handles, name, memory, attributes 1..147, UUID, PCI bus id,
// compute capability, legacy CUdevprop, peer queries. Everything comes from the device
// model (core/device_model.h), so the driver agrees with cudart and NVML on UUIDs and PCI ids.
#include "driver/common.h"

#include <cctype>
#include <cstring>
#include <string>

using namespace fg;
using namespace fg::drv;

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetCount(int* count) {
  return api([&](Backend& b) -> CUresult {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = b.device_count();
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGet(CUdevice* device, int ordinal) {
  return api([&](Backend& b) -> CUresult {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!b.device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetName(char* name, int len, CUdevice dev) {
  return with_handle(name && len > 0, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    copy_string(name, len, d->model.name);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return query_handle(bytes, dev, device_arg, [](Device* d) { return d->model.total_memory; });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  const int a = static_cast<int>(attrib);
  return with_handle(pi && a >= 1 && a < kAttributeSlots, dev, device_arg, [&](Backend&, Device* d) {
    *pi = d->model.attributes[static_cast<size_t>(a)];
    return CUDA_SUCCESS;
  });
}

namespace {
CUresult get_uuid(CUuuid* uuid, CUdevice dev) {
  return with_handle(uuid != nullptr, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    std::memcpy(uuid->bytes, d->model.uuid.data(), 16);
    return CUDA_SUCCESS;
  });
}
}  // namespace

// cuDeviceGetUuid (9.2) and _v2 (11.4) differ only for MIG instances, which the fake has not.
extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return get_uuid(uuid, dev); }
extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) { return get_uuid(uuid, dev); }

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return with_handle(pciBusId && len > 0, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    // "0000:B7:00.0": upper-case hex like cudart and NVML (clients such as llama.cpp
    // lower-case it themselves), the same string cudaDeviceGetPCIBusId gives.
    copy_string(pciBusId, len, cuda_pci_bus_id(d->model));
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return api([&](Backend& b) -> CUresult {
    if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
    Device* d = b.device_by_pci_bus_id(pciBusId);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    *dev = d->ordinal;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  return with_handle(major && minor, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    *major = d->model.cc_major;
    *minor = d->model.cc_minor;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  return with_handle(prop != nullptr, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    const auto& at = d->model.attributes;
    prop->maxThreadsPerBlock = at[attr::MAX_THREADS_PER_BLOCK];
    prop->maxThreadsDim[0] = at[attr::MAX_BLOCK_DIM_X];
    prop->maxThreadsDim[1] = at[attr::MAX_BLOCK_DIM_Y];
    prop->maxThreadsDim[2] = at[attr::MAX_BLOCK_DIM_Z];
    prop->maxGridSize[0] = at[attr::MAX_GRID_DIM_X];
    prop->maxGridSize[1] = at[attr::MAX_GRID_DIM_Y];
    prop->maxGridSize[2] = at[attr::MAX_GRID_DIM_Z];
    prop->sharedMemPerBlock = at[attr::MAX_SHARED_MEMORY_PER_BLOCK];
    prop->totalConstantMemory = at[attr::TOTAL_CONSTANT_MEMORY];
    prop->SIMDWidth = at[attr::WARP_SIZE];
    prop->memPitch = at[attr::MAX_PITCH];
    prop->regsPerBlock = at[attr::MAX_REGISTERS_PER_BLOCK];
    prop->clockRate = at[attr::CLOCK_RATE];
    prop->textureAlign = at[attr::TEXTURE_ALIGNMENT];
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return api([&](Backend& b) -> CUresult {
    if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
    Device *d = nullptr, *p = nullptr;
    if (CUresult r = device_arg(b, dev, &d)) return r;
    if (CUresult r = device_arg(b, peerDev, &p)) return r;
    *canAccessPeer = peer_capable(d, p) ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                                           CUdevice dstDevice) {
  return api([&](Backend& b) -> CUresult {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    Device *s = nullptr, *d = nullptr;
    if (CUresult r = device_arg(b, srcDevice, &s)) return r;
    if (CUresult r = device_arg(b, dstDevice, &d)) return r;
    if (s == d) return CUDA_ERROR_INVALID_DEVICE;
    const bool ok = peer_capable(s, d);
    switch (static_cast<int>(attrib)) {
      case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
      case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
      case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
      case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = ok ? 1 : 0; break;
      case 5: *value = 0; break;  // CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED (13.0)
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDeviceGetExecAffinitySupport(int* pi, CUexecAffinityType type, CUdevice dev) {
  return with_handle(pi != nullptr, dev, device_arg, [&](Backend&, Device*) -> CUresult {
    if (static_cast<int>(type) != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
    *pi = 0;  // SM-count affinity needs MPS, which the fake does not model
    return CUDA_SUCCESS;
  });
}
