// SPDX-License-Identifier: Apache-2.0
// Runtime device management: counting and selecting devices, attributes and properties,
// limits and cache configuration, synchronisation and reset, peer access, versions.
#include "runtime/common.h"

#include "core/graph.h"

#include "core/device_model.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

using namespace fgapi;
using fg::rt::api;
using fg::rt::be;

namespace {

namespace attr = fg::attr;

// Stream priorities as an A100/H100 reports them: least 0, greatest -5.
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

// cudaDeviceProp as CUDA 12.x lays it out (cudaGetDeviceProperties_v2 of libcudart.so.12),
// 1032 bytes. CUDA 13 removed eight deprecated ints and shrank the struct to 1008 bytes, so
// multiProcessorCount moved from 388 to 384 (research/api-census.md §2.1).
using DeviceProp12 = cudaDeviceProp12;  // both layouts are checked where they are declared (fakegpu/cuda_types.h)

// The legacy plain cudaGetDeviceProperties of libcudart.so.12 (ABI v3020) takes the caller's
// pre-12.0 struct. That struct only ever grew at its end, and its first 712 bytes (name ..
// directManagedMemAccessFromHost) are laid out exactly as the 12.x struct's: 712 is
// sizeof(cudaDeviceProp) of CUDA 10.x, the oldest layout with uuid/luid at 256/272, while
// CUDA 11.x grew to 728 and beyond. Code built with CUDA 12 headers never calls this name
// (they map it to _v2), so callers are binaries and ctypes users of the old ABI: writing the
// 712-byte prefix fills every field they can know and never runs past their buffer.
constexpr size_t kLegacyPropBytes = 712;
static_assert(offsetof(DeviceProp12, maxBlocksPerMultiProcessor) == kLegacyPropBytes);

// Fields present in both layouts, by name.
template <class P>
void fill_common(P& p, const fg::DeviceModel& m) {
  const auto& a = m.attributes;
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.name, sizeof p.name, "%s", m.name.c_str());
  static_assert(sizeof p.uuid == 16);
  std::memcpy(&p.uuid, m.uuid.data(), 16);
  p.totalGlobalMem = m.total_memory;
  p.sharedMemPerBlock = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_BLOCK]);
  p.regsPerBlock = a[attr::MAX_REGISTERS_PER_BLOCK];
  p.warpSize = a[attr::WARP_SIZE];
  p.memPitch = static_cast<size_t>(static_cast<unsigned>(a[attr::MAX_PITCH]));
  p.maxThreadsPerBlock = a[attr::MAX_THREADS_PER_BLOCK];
  for (int i = 0; i < 3; ++i) {
    p.maxThreadsDim[i] = a[attr::MAX_BLOCK_DIM_X + i];
    p.maxGridSize[i] = a[attr::MAX_GRID_DIM_X + i];
  }
  p.totalConstMem = static_cast<size_t>(a[attr::TOTAL_CONSTANT_MEMORY]);
  p.major = a[attr::COMPUTE_CAPABILITY_MAJOR];
  p.minor = a[attr::COMPUTE_CAPABILITY_MINOR];
  p.textureAlignment = static_cast<size_t>(a[attr::TEXTURE_ALIGNMENT]);
  p.texturePitchAlignment = static_cast<size_t>(a[attr::TEXTURE_PITCH_ALIGNMENT]);
  p.multiProcessorCount = a[attr::MULTIPROCESSOR_COUNT];
  p.integrated = a[attr::INTEGRATED];
  p.canMapHostMemory = a[attr::CAN_MAP_HOST_MEMORY];
  p.maxTexture1D = a[attr::MAXIMUM_TEXTURE1D_WIDTH];
  p.maxTexture1DMipmap = a[attr::MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH];
  p.maxTexture2D[0] = a[attr::MAXIMUM_TEXTURE2D_WIDTH];
  p.maxTexture2D[1] = a[attr::MAXIMUM_TEXTURE2D_HEIGHT];
  p.maxTexture2DMipmap[0] = a[attr::MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH];
  p.maxTexture2DMipmap[1] = a[attr::MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT];
  p.maxTexture2DLinear[0] = a[attr::MAXIMUM_TEXTURE2D_LINEAR_WIDTH];
  p.maxTexture2DLinear[1] = a[attr::MAXIMUM_TEXTURE2D_LINEAR_HEIGHT];
  p.maxTexture2DLinear[2] = a[attr::MAXIMUM_TEXTURE2D_LINEAR_PITCH];
  p.maxTexture2DGather[0] = a[attr::MAXIMUM_TEXTURE2D_GATHER_WIDTH];
  p.maxTexture2DGather[1] = a[attr::MAXIMUM_TEXTURE2D_GATHER_HEIGHT];
  p.maxTexture3D[0] = a[attr::MAXIMUM_TEXTURE3D_WIDTH];
  p.maxTexture3D[1] = a[attr::MAXIMUM_TEXTURE3D_HEIGHT];
  p.maxTexture3D[2] = a[attr::MAXIMUM_TEXTURE3D_DEPTH];
  p.maxTexture3DAlt[0] = a[attr::MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE];
  p.maxTexture3DAlt[1] = a[attr::MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE];
  p.maxTexture3DAlt[2] = a[attr::MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE];
  p.maxTextureCubemap = a[attr::MAXIMUM_TEXTURECUBEMAP_WIDTH];
  p.maxTexture1DLayered[0] = a[attr::MAXIMUM_TEXTURE1D_LAYERED_WIDTH];
  p.maxTexture1DLayered[1] = a[attr::MAXIMUM_TEXTURE1D_LAYERED_LAYERS];
  p.maxTexture2DLayered[0] = a[attr::MAXIMUM_TEXTURE2D_LAYERED_WIDTH];
  p.maxTexture2DLayered[1] = a[attr::MAXIMUM_TEXTURE2D_LAYERED_HEIGHT];
  p.maxTexture2DLayered[2] = a[attr::MAXIMUM_TEXTURE2D_LAYERED_LAYERS];
  p.maxTextureCubemapLayered[0] = a[attr::MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH];
  p.maxTextureCubemapLayered[1] = a[attr::MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS];
  p.maxSurface1D = a[attr::MAXIMUM_SURFACE1D_WIDTH];
  p.maxSurface2D[0] = a[attr::MAXIMUM_SURFACE2D_WIDTH];
  p.maxSurface2D[1] = a[attr::MAXIMUM_SURFACE2D_HEIGHT];
  p.maxSurface3D[0] = a[attr::MAXIMUM_SURFACE3D_WIDTH];
  p.maxSurface3D[1] = a[attr::MAXIMUM_SURFACE3D_HEIGHT];
  p.maxSurface3D[2] = a[attr::MAXIMUM_SURFACE3D_DEPTH];
  p.maxSurface1DLayered[0] = a[attr::MAXIMUM_SURFACE1D_LAYERED_WIDTH];
  p.maxSurface1DLayered[1] = a[attr::MAXIMUM_SURFACE1D_LAYERED_LAYERS];
  p.maxSurface2DLayered[0] = a[attr::MAXIMUM_SURFACE2D_LAYERED_WIDTH];
  p.maxSurface2DLayered[1] = a[attr::MAXIMUM_SURFACE2D_LAYERED_HEIGHT];
  p.maxSurface2DLayered[2] = a[attr::MAXIMUM_SURFACE2D_LAYERED_LAYERS];
  p.maxSurfaceCubemap = a[attr::MAXIMUM_SURFACECUBEMAP_WIDTH];
  p.maxSurfaceCubemapLayered[0] = a[attr::MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH];
  p.maxSurfaceCubemapLayered[1] = a[attr::MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS];
  p.surfaceAlignment = static_cast<size_t>(a[attr::SURFACE_ALIGNMENT]);
  p.concurrentKernels = a[attr::CONCURRENT_KERNELS];
  p.ECCEnabled = a[attr::ECC_ENABLED];
  p.pciBusID = a[attr::PCI_BUS_ID];
  p.pciDeviceID = a[attr::PCI_DEVICE_ID];
  p.pciDomainID = a[attr::PCI_DOMAIN_ID];
  p.tccDriver = a[attr::TCC_DRIVER];
  p.asyncEngineCount = a[attr::ASYNC_ENGINE_COUNT];
  p.unifiedAddressing = a[attr::UNIFIED_ADDRESSING];
  p.memoryBusWidth = a[attr::GLOBAL_MEMORY_BUS_WIDTH];
  p.l2CacheSize = a[attr::L2_CACHE_SIZE];
  p.persistingL2CacheMaxSize = a[attr::MAX_PERSISTING_L2_CACHE_SIZE];
  p.maxThreadsPerMultiProcessor = a[attr::MAX_THREADS_PER_MULTIPROCESSOR];
  p.streamPrioritiesSupported = a[attr::STREAM_PRIORITIES_SUPPORTED];
  p.globalL1CacheSupported = a[attr::GLOBAL_L1_CACHE_SUPPORTED];
  p.localL1CacheSupported = a[attr::LOCAL_L1_CACHE_SUPPORTED];
  p.sharedMemPerMultiprocessor = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR]);
  p.regsPerMultiprocessor = a[attr::MAX_REGISTERS_PER_MULTIPROCESSOR];
  p.managedMemory = a[attr::MANAGED_MEMORY];
  p.isMultiGpuBoard = a[attr::MULTI_GPU_BOARD];
  p.multiGpuBoardGroupID = a[attr::MULTI_GPU_BOARD_GROUP_ID];
  p.hostNativeAtomicSupported = a[attr::HOST_NATIVE_ATOMIC_SUPPORTED];
  p.pageableMemoryAccess = a[attr::PAGEABLE_MEMORY_ACCESS];
  p.concurrentManagedAccess = a[attr::CONCURRENT_MANAGED_ACCESS];
  p.computePreemptionSupported = a[attr::COMPUTE_PREEMPTION_SUPPORTED];
  p.canUseHostPointerForRegisteredMem = a[attr::CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM];
  p.cooperativeLaunch = a[attr::COOPERATIVE_LAUNCH];
  p.sharedMemPerBlockOptin = static_cast<size_t>(a[attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]);
  p.pageableMemoryAccessUsesHostPageTables = a[attr::PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES];
  p.directManagedMemAccessFromHost = a[attr::DIRECT_MANAGED_MEM_ACCESS_FROM_HOST];
  p.maxBlocksPerMultiProcessor = a[attr::MAX_BLOCKS_PER_MULTIPROCESSOR];
  p.accessPolicyMaxWindowSize = a[attr::MAX_ACCESS_POLICY_WINDOW_SIZE];
  p.reservedSharedMemPerBlock = static_cast<size_t>(a[attr::RESERVED_SHARED_MEMORY_PER_BLOCK]);
  p.hostRegisterSupported = a[attr::HOST_REGISTER_SUPPORTED];
  p.sparseCudaArraySupported = a[attr::SPARSE_CUDA_ARRAY_SUPPORTED];
  p.hostRegisterReadOnlySupported = a[attr::READ_ONLY_HOST_REGISTER_SUPPORTED];
  p.timelineSemaphoreInteropSupported = a[attr::TIMELINE_SEMAPHORE_INTEROP_SUPPORTED];
  p.memoryPoolsSupported = a[attr::MEMORY_POOLS_SUPPORTED];
  p.gpuDirectRDMASupported = a[attr::GPU_DIRECT_RDMA_SUPPORTED];
  p.gpuDirectRDMAFlushWritesOptions = static_cast<unsigned>(a[attr::GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS]);
  p.gpuDirectRDMAWritesOrdering = a[attr::GPU_DIRECT_RDMA_WRITES_ORDERING];
  p.memoryPoolSupportedHandleTypes = static_cast<unsigned>(a[attr::MEMPOOL_SUPPORTED_HANDLE_TYPES]);
  p.deferredMappingCudaArraySupported = a[attr::DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED];
  p.ipcEventSupported = a[attr::IPC_EVENT_SUPPORTED];
  p.clusterLaunch = a[attr::CLUSTER_LAUNCH];
  p.unifiedFunctionPointers = a[attr::UNIFIED_FUNCTION_POINTERS];
  p.deviceNumaConfig = a[attr::NUMA_CONFIG];
  p.deviceNumaId = a[attr::NUMA_ID];
  p.mpsEnabled = a[attr::MPS_ENABLED];
  p.hostNumaId = a[attr::HOST_NUMA_ID];
  p.gpuPciDeviceID = static_cast<unsigned>(a[attr::GPU_PCI_DEVICE_ID]);
  p.gpuPciSubsystemID = static_cast<unsigned>(a[attr::GPU_PCI_SUBSYSTEM_ID]);
  p.hostNumaMultinodeIpcSupported = a[attr::HOST_NUMA_MULTINODE_IPC_SUPPORTED];
}

void fill12(DeviceProp12& p, const fg::DeviceModel& m) {
  fill_common(p, m);
  const auto& a = m.attributes;
  p.clockRate = a[attr::CLOCK_RATE];
  p.deviceOverlap = a[attr::GPU_OVERLAP];
  p.kernelExecTimeoutEnabled = a[attr::KERNEL_EXEC_TIMEOUT];
  p.computeMode = a[attr::COMPUTE_MODE];
  p.maxTexture1DLinear = a[attr::MAXIMUM_TEXTURE1D_LINEAR_WIDTH];
  p.memoryClockRate = a[attr::MEMORY_CLOCK_RATE];
  p.singleToDoublePrecisionPerfRatio = a[attr::SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO];
  p.cooperativeMultiDeviceLaunch = a[attr::COOPERATIVE_MULTI_DEVICE_LAUNCH];
}

// Validates (prop, device) and returns the device's model, or an error.
cudaError_t model_of(const void* prop, int device, const fg::DeviceModel** out) {
  if (!prop) return cudaErrorInvalidValue;
  fg::Backend& b = be();
  if (b.device_count() == 0) return cudaErrorNoDevice;
  fg::Device* d = b.device(device);
  if (!d) return cudaErrorInvalidDevice;
  *out = &d->model;
  return cudaSuccess;
}

// The current device for calls that act on "the current device" (its primary context).
cudaError_t current_device(fg::Device** out) {
  fg::Context* ctx = nullptr;
  if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
  *out = ctx->dev;
  return cudaSuccess;
}

// One schedule (Auto, Spin, Yield or BlockingSync), plus MapHost, LmemResizeToMax, SyncMemops.
bool valid_device_flags(unsigned flags) {
  constexpr unsigned known = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
                             cudaDeviceSyncMemops;
  const unsigned sched = flags & cudaDeviceScheduleMask;
  return (flags & ~known) == 0 && (sched == cudaDeviceScheduleAuto || sched == cudaDeviceScheduleSpin ||
                                   sched == cudaDeviceScheduleYield || sched == cudaDeviceScheduleBlockingSync);
}

// cudaLimit values 0..6 (stack, printf FIFO, malloc heap, sync depth, pending launches,
// L2 fetch granularity, persisting L2 size).
constexpr int kLimitCount = 7;

}  // namespace

// ---- devices --------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDeviceCount(int* count) {
  return api([&]() -> cudaError_t {
    if (!count) return cudaErrorInvalidValue;
    *count = be().device_count();
    return *count == 0 ? cudaErrorNoDevice : cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDevice(int* device) {
  return api([&]() -> cudaError_t {
    if (!device) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    *device = be().runtime_device();
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaSetDevice(int device) {
  return api([&]() -> cudaError_t {
    fg::Backend& b = be();
    if (b.device_count() == 0) return cudaErrorNoDevice;
    if (!b.device(device)) return cudaErrorInvalidDevice;
    return fg::rt::to_cuda(b.runtime_set_device(device));
  });
}

// Initialises the device's primary context without making it current.
extern "C" FG_IMPL cudaError_t fgimpl_cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  return api([&]() -> cudaError_t {
    fg::Backend& b = be();
    if (b.device_count() == 0) return cudaErrorNoDevice;
    fg::Device* d = b.device(device);
    if (!d) return cudaErrorInvalidDevice;
    if (flags & ~cudaInitDeviceFlagsAreValid) return cudaErrorInvalidValue;
    const bool use_flags = flags & cudaInitDeviceFlagsAreValid;
    if (use_flags && !valid_device_flags(deviceFlags)) return cudaErrorInvalidValue;
    {
      std::lock_guard lock(d->primary_mu);
      if (use_flags) d->primary_flags = deviceFlags;
      if (d->primary && d->primary_refs > 0) return cudaSuccess;  // the runtime already holds it
    }
    fg::Context* ctx = nullptr;
    return fg::rt::to_cuda(b.primary_retain(d, &ctx));
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaSetDeviceFlags(unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!valid_device_flags(flags)) return cudaErrorInvalidValue;
    fg::Device* d = nullptr;
    if (cudaError_t e = current_device(&d); e != cudaSuccess) return e;
    std::lock_guard lock(d->primary_mu);
    d->primary_flags = flags;
    if (d->primary) d->primary->flags = flags;
    return cudaSuccess;
  });
}

// With unified addressing every context maps host memory, so cudaDeviceMapHost is always
// reported, as the real runtime does.
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDeviceFlags(unsigned int* flags) {
  return api([&]() -> cudaError_t {
    if (!flags) return cudaErrorInvalidValue;
    fg::Device* d = nullptr;
    if (cudaError_t e = current_device(&d); e != cudaSuccess) return e;
    std::lock_guard lock(d->primary_mu);
    *flags = d->primary_flags | cudaDeviceMapHost;
    return cudaSuccess;
  });
}

namespace {
// The device that best matches prop: a non-empty name that occurs in the device's name
// first, then the same compute capability, then the newest capability, then the most memory.
// name, major and minor sit at the same offsets (0, 360, 364) in every cudaDeviceProp
// layout, so one implementation serves the CUDA 13 and the CUDA 12 (SPLIT) symbol.
cudaError_t choose_device(int* device, const void* prop) {
  if (!device || !prop) return cudaErrorInvalidValue;
  fg::Backend& b = be();
  if (b.device_count() == 0) return cudaErrorNoDevice;
  const auto* p = static_cast<const cudaDeviceProp*>(prop);
  static_assert(offsetof(cudaDeviceProp, major) == offsetof(DeviceProp12, major));
  static_assert(offsetof(cudaDeviceProp, minor) == offsetof(DeviceProp12, minor));
  char want_name[257] = {};
  std::memcpy(want_name, p->name, 256);
  int best = 0;
  long long best_score = -1;
  for (int i = 0; i < b.device_count(); ++i) {
    const fg::DeviceModel& m = b.device(i)->model;
    long long score = 0;
    if (want_name[0] && m.name.find(want_name) != std::string::npos) score += 1LL << 60;
    if (m.cc_major == p->major && m.cc_minor == p->minor) score += 1LL << 50;
    score += (static_cast<long long>(m.cc_major) * 10 + m.cc_minor) << 40;
    score += static_cast<long long>(m.total_memory >> 30);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  *device = best;
  return cudaSuccess;
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  return api([&] { return choose_device(device, prop); });
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaChooseDevice(int* device, const cudaDeviceProp12* prop) {
  return api([&] { return choose_device(device, prop); });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return api([&]() -> cudaError_t {
    if (!device || !pciBusId) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    fg::Device* d = be().device_by_pci_bus_id(pciBusId);
    if (!d) return cudaErrorInvalidDevice;
    *device = d->ordinal;
    return cudaSuccess;
  });
}

// "0000:07:00.0" (domain:bus:device.function), truncated to len like the real call.
extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return api([&]() -> cudaError_t {
    if (!pciBusId || len <= 0) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    fg::Device* d = be().device(device);
    if (!d) return cudaErrorInvalidDevice;
    std::snprintf(pciBusId, static_cast<size_t>(len), "%s", fg::cuda_pci_bus_id(d->model).c_str());
    return cudaSuccess;
  });
}

// cudaDeviceAttr numbers are CUdevice_attribute numbers; the runtime accepts the whole
// driver range 1..147 (a few numbers have no runtime enumerator but the driver knows them).
extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    fg::Device* d = be().device(device);
    if (!d) return cudaErrorInvalidDevice;
    const int a = static_cast<int>(attr);
    if (a < 1 || a >= fg::kAttributeSlots) return cudaErrorInvalidValue;
    *value = d->model.attributes[static_cast<size_t>(a)];
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int srcDevice,
                                                                int dstDevice) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    if (!be().device(srcDevice) || !be().device(dstDevice) || srcDevice == dstDevice) return cudaErrorInvalidDevice;
    switch (static_cast<int>(attr)) {
      case 1: *value = 0; return cudaSuccess;  // cudaDevP2PAttrPerformanceRank
      case 2:                                  // cudaDevP2PAttrAccessSupported
      case 3:                                  // cudaDevP2PAttrNativeAtomicSupported
      case 4: *value = 1; return cudaSuccess;  // cudaDevP2PAttrCudaArrayAccessSupported
      default: return cudaErrorInvalidValue;
    }
  });
}

// CUDA 13 layout (libcudart.so.13's cudaGetDeviceProperties).
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return api([&]() -> cudaError_t {
    const fg::DeviceModel* m = nullptr;
    if (cudaError_t e = model_of(prop, device, &m); e != cudaSuccess) return e;
    fill_common(*prop, *m);
    return cudaSuccess;
  });
}

// CUDA 12.x layout (libcudart.so.12's cudaGetDeviceProperties_v2).
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetDeviceProperties_v2(cudaDeviceProp12* prop, int device) {
  return api([&]() -> cudaError_t {
    const fg::DeviceModel* m = nullptr;
    if (cudaError_t e = model_of(prop, device, &m); e != cudaSuccess) return e;
    DeviceProp12 p;
    fill12(p, *m);
    std::memcpy(prop, &p, sizeof p);
    return cudaSuccess;
  });
}

// Legacy pre-12.0 layout (libcudart.so.12's plain cudaGetDeviceProperties): see kLegacyPropBytes.
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaGetDeviceProperties(cudaDevicePropLegacy* prop, int device) {
  return api([&]() -> cudaError_t {
    const fg::DeviceModel* m = nullptr;
    if (cudaError_t e = model_of(prop, device, &m); e != cudaSuccess) return e;
    DeviceProp12 p;
    fill12(p, *m);
    std::memcpy(prop, &p, kLegacyPropBytes);
    return cudaSuccess;
  });
}

// ---- limits and configuration -----------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetLimit(size_t* pValue, cudaLimit limit) {
  return api([&]() -> cudaError_t {
    if (!pValue) return cudaErrorInvalidValue;
    const int l = static_cast<int>(limit);
    if (l < 0 || l >= kLimitCount) return cudaErrorUnsupportedLimit;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    const fg::Status s = be().ctx_limit(ctx, l, pValue);
    return s == fg::Status::NotSupported ? cudaErrorUnsupportedLimit : fg::rt::to_cuda(s);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  return api([&]() -> cudaError_t {
    const int l = static_cast<int>(limit);
    if (l < 0 || l >= kLimitCount) return cudaErrorUnsupportedLimit;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    const fg::Status s = be().ctx_set_limit(ctx, l, value);
    return s == fg::Status::NotSupported ? cudaErrorUnsupportedLimit : fg::rt::to_cuda(s);
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetCacheConfig(cudaFuncCache* pCacheConfig) {
  return api([&]() -> cudaError_t {
    if (!pCacheConfig) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    std::lock_guard lock(ctx->mu);
    *pCacheConfig = static_cast<cudaFuncCache>(ctx->cache_config);
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig) {
  return api([&]() -> cudaError_t {
    const int c = static_cast<int>(cacheConfig);
    if (c < 0 || c > 3) return cudaErrorInvalidValue;  // PreferNone, Shared, L1, Equal
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    std::lock_guard lock(ctx->mu);
    ctx->cache_config = c;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* pConfig) {
  return api([&]() -> cudaError_t {
    if (!pConfig) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    std::lock_guard lock(ctx->mu);
    // Four-byte banks are what current parts report by default.
    *pConfig = ctx->shmem_config ? static_cast<cudaSharedMemConfig>(ctx->shmem_config) : cudaSharedMemBankSizeFourByte;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config) {
  return api([&]() -> cudaError_t {
    if (config < cudaSharedMemBankSizeDefault || config > cudaSharedMemBankSizeEightByte) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    std::lock_guard lock(ctx->mu);
    ctx->shmem_config = config;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api([&]() -> cudaError_t {
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    if (leastPriority) *leastPriority = kLeastPriority;
    if (greatestPriority) *greatestPriority = kGreatestPriority;
    return cudaSuccess;
  });
}

// ---- synchronisation and reset ------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceSynchronize() {
  return api([&]() -> cudaError_t {
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    // Refused while a stream of the context captures (core/graph.h).
    if (fg::Status st = fg::graph::check_ctx_sync(ctx); st != fg::Status::Ok) return fg::rt::to_cuda(st);
    return fg::rt::to_cuda(be().ctx_sync(ctx));
  });
}

// Destroys the current device's primary context: its allocations, streams, events and
// modules go; the next runtime call on the device starts a fresh one.
extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceReset() {
  return api([&]() -> cudaError_t {
    fg::Backend& b = be();
    if (b.device_count() == 0) return cudaErrorNoDevice;
    fg::Device* d = b.device(b.runtime_device());
    if (!d) return cudaErrorInvalidDevice;
    // The next use retains the primary context afresh (default limits, no peers).
    return fg::rt::to_cuda(b.primary_reset(d));
  });
}

// ---- peer access ----------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  return api([&]() -> cudaError_t {
    if (!canAccessPeer) return cudaErrorInvalidValue;
    if (be().device_count() == 0) return cudaErrorNoDevice;
    if (!be().device(device) || !be().device(peerDevice)) return cudaErrorInvalidDevice;
    *canAccessPeer = device != peerDevice ? 1 : 0;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (flags != 0) return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    if (!be().device(peerDevice) || peerDevice == ctx->dev->ordinal) return cudaErrorInvalidDevice;
    std::lock_guard lock(ctx->mu);
    if (!ctx->peers.insert(peerDevice).second) return cudaErrorPeerAccessAlreadyEnabled;
    return cudaSuccess;
  });
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceDisablePeerAccess(int peerDevice) {
  return api([&]() -> cudaError_t {
    fg::Context* ctx = nullptr;
    if (cudaError_t e = fg::rt::context(&ctx); e != cudaSuccess) return e;
    if (!be().device(peerDevice) || peerDevice == ctx->dev->ordinal) return cudaErrorInvalidDevice;
    std::lock_guard lock(ctx->mu);
    if (ctx->peers.erase(peerDevice) == 0) return cudaErrorPeerAccessNotEnabled;
    return cudaSuccess;
  });
}

// ---- versions -------------------------------------------------------------------------------------

extern "C" FG_IMPL cudaError_t fgimpl_cudaDriverGetVersion(int* driverVersion) {
  return api([&]() -> cudaError_t {
    if (!driverVersion) return cudaErrorInvalidValue;
    *driverVersion = fg::version::kCudaDriver;
    return cudaSuccess;
  });
}

namespace {
cudaError_t runtime_version(int* out, int version) {
  return api([&]() -> cudaError_t {
    if (!out) return cudaErrorInvalidValue;
    *out = version;
    return cudaSuccess;
  });
}
}  // namespace

extern "C" FG_IMPL cudaError_t fgimpl_cudaRuntimeGetVersion(int* runtimeVersion) {
  return runtime_version(runtimeVersion, fg::version::kRuntime13);
}
extern "C" FG_IMPL cudaError_t fgimpl_v12_cudaRuntimeGetVersion(int* runtimeVersion) {
  return runtime_version(runtimeVersion, fg::version::kRuntime12);
}

// ---- CUDA 12-only legacy names ----------------------------------------------------------------------
// The cudaThread* calls are the pre-4.0 spellings of the cudaDevice* calls (libcudart.so.12
// still exports them; CUDA 13 removed them).

extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadSynchronize() { return fgimpl_cudaDeviceSynchronize(); }
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadExit() { return fgimpl_cudaDeviceReset(); }
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadGetLimit(size_t* pValue, cudaLimit limit) {
  return fgimpl_cudaDeviceGetLimit(pValue, limit);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadSetLimit(cudaLimit limit, size_t value) {
  return fgimpl_cudaDeviceSetLimit(limit, value);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadGetCacheConfig(cudaFuncCache* pCacheConfig) {
  return fgimpl_cudaDeviceGetCacheConfig(pCacheConfig);
}
extern "C" FG_IMPL cudaError_t fgimpl_cudaThreadSetCacheConfig(cudaFuncCache cacheConfig) {
  return fgimpl_cudaDeviceSetCacheConfig(cacheConfig);
}

// ---- no-ops with validation ---------------------------------------------------------------------------

// No L2 lines persist on a fake device.
extern "C" FG_IMPL cudaError_t fgimpl_cudaCtxResetPersistingL2Cache() {
  return api([&]() -> cudaError_t {
    fg::Context* ctx = nullptr;
    return fg::rt::context(&ctx);
  });
}

// Copies complete when they return, so there are no GPUDirect RDMA writes to flush.
extern "C" FG_IMPL cudaError_t fgimpl_cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTarget target,
                                                                         cudaFlushGPUDirectRDMAWritesScope scope) {
  return api([&]() -> cudaError_t {
    if (target != cudaFlushGPUDirectRDMAWritesTargetCurrentDevice ||
        (scope != cudaFlushGPUDirectRDMAWritesToOwner && scope != cudaFlushGPUDirectRDMAWritesToAllDevices))
      return cudaErrorInvalidValue;
    fg::Context* ctx = nullptr;
    return fg::rt::context(&ctx);
  });
}
