// SPDX-License-Identifier: Apache-2.0
// fakegpu — device profiles (data) and per-instance identity.
//
// Values are what the real parts report through cuDeviceGetAttribute / deviceQuery /
// nvidia-smi as best known from public spec sheets, the NVIDIA driver README's
// supported-GPU table (PCI device and subsystem ids) and published deviceQuery /
// `nvidia-smi -q` dumps.  Values that could not be confirmed are marked "est.".
#include "device_model.h"

#include "fakegpu/ledger_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace fg {
namespace {

constexpr uint64_t MiB = 1024ull * 1024ull;

// Canonical cuda.h names, index = attribute number - 1.
constexpr const char* kAttributeNames[kAttributeSlots - 1] = {
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z",
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X",
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y",
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z",
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK",
    "CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY",
    "CU_DEVICE_ATTRIBUTE_WARP_SIZE",
    "CU_DEVICE_ATTRIBUTE_MAX_PITCH",
    "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK",
    "CU_DEVICE_ATTRIBUTE_CLOCK_RATE",
    "CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT",
    "CU_DEVICE_ATTRIBUTE_GPU_OVERLAP",
    "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
    "CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT",
    "CU_DEVICE_ATTRIBUTE_INTEGRATED",
    "CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT",
    "CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS",
    "CU_DEVICE_ATTRIBUTE_ECC_ENABLED",
    "CU_DEVICE_ATTRIBUTE_PCI_BUS_ID",
    "CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID",
    "CU_DEVICE_ATTRIBUTE_TCC_DRIVER",
    "CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
    "CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH",
    "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE",
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR",
    "CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT",
    "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE",
    "CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID",
    "CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
    "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH",
    "CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR",
    "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY",
    "CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD",
    "CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID",
    "CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO",
    "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS",
    "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1",
    "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH",
    "CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH",
    "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES",
    "CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
    "CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
    "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR",
    "CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE",
    "CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE",
    "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK",
    "CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS",
    "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING",
    "CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES",
    "CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH",
    "CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS",
    "CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR",
    "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT",
    "CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS",
    "CU_DEVICE_ATTRIBUTE_NUMA_CONFIG",
    "CU_DEVICE_ATTRIBUTE_NUMA_ID",
    "CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MPS_ENABLED",
    "CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID",
    "CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK",
    "CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH",
    "CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID",
    "CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID",
    "CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED",
    "CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED",
};

// Deprecated aliases that cuda.h still defines.
struct AttrAlias {
  const char* name;
  int value;
};
constexpr AttrAlias kAttributeAliases[] = {
    {"CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK", 8},
    {"CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK", 12},
    {"CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH", 27},
    {"CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT", 28},
    {"CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES", 29},
    {"CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED", 102},
};

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// Attribute values every profile here shares: limits that have been constant since
// Volta/Turing (block/grid dims, texture/surface limits), Linux x86-64 host facts
// (unified addressing, no pageable access without HMM/ATS, no host-native atomics over
// PCIe), datacenter-part facts (ECC on, not integrated, default compute mode).
void set_common_attributes(std::array<int, kAttributeSlots>& a) {
  using namespace attr;
  a[MAX_THREADS_PER_BLOCK] = 1024;
  a[MAX_BLOCK_DIM_X] = 1024;
  a[MAX_BLOCK_DIM_Y] = 1024;
  a[MAX_BLOCK_DIM_Z] = 64;
  a[MAX_GRID_DIM_X] = 2147483647;
  a[MAX_GRID_DIM_Y] = 65535;
  a[MAX_GRID_DIM_Z] = 65535;
  a[MAX_SHARED_MEMORY_PER_BLOCK] = 49152;
  a[TOTAL_CONSTANT_MEMORY] = 65536;
  a[WARP_SIZE] = 32;
  a[MAX_PITCH] = 2147483647;
  a[MAX_REGISTERS_PER_BLOCK] = 65536;
  a[TEXTURE_ALIGNMENT] = 512;
  a[GPU_OVERLAP] = 1;
  a[KERNEL_EXEC_TIMEOUT] = 0;  // no display attached
  a[INTEGRATED] = 0;
  a[CAN_MAP_HOST_MEMORY] = 1;
  a[COMPUTE_MODE] = 0;  // CU_COMPUTEMODE_DEFAULT
  a[MAXIMUM_TEXTURE1D_WIDTH] = 131072;
  a[MAXIMUM_TEXTURE2D_WIDTH] = 131072;
  a[MAXIMUM_TEXTURE2D_HEIGHT] = 65536;
  a[MAXIMUM_TEXTURE3D_WIDTH] = 16384;
  a[MAXIMUM_TEXTURE3D_HEIGHT] = 16384;
  a[MAXIMUM_TEXTURE3D_DEPTH] = 16384;
  a[MAXIMUM_TEXTURE2D_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_TEXTURE2D_LAYERED_HEIGHT] = 32768;
  a[MAXIMUM_TEXTURE2D_LAYERED_LAYERS] = 2048;
  a[SURFACE_ALIGNMENT] = 512;
  a[CONCURRENT_KERNELS] = 1;
  a[ECC_ENABLED] = 1;
  a[TCC_DRIVER] = 0;  // Linux
  a[UNIFIED_ADDRESSING] = 1;
  a[MAXIMUM_TEXTURE1D_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_TEXTURE1D_LAYERED_LAYERS] = 2048;
  a[CAN_TEX2D_GATHER] = 1;
  a[MAXIMUM_TEXTURE2D_GATHER_WIDTH] = 32768;
  a[MAXIMUM_TEXTURE2D_GATHER_HEIGHT] = 32768;
  a[MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE] = 8192;
  a[MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE] = 8192;
  a[MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE] = 32768;
  a[TEXTURE_PITCH_ALIGNMENT] = 32;
  a[MAXIMUM_TEXTURECUBEMAP_WIDTH] = 32768;
  a[MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS] = 2046;
  a[MAXIMUM_SURFACE1D_WIDTH] = 32768;
  a[MAXIMUM_SURFACE2D_WIDTH] = 131072;
  a[MAXIMUM_SURFACE2D_HEIGHT] = 65536;
  a[MAXIMUM_SURFACE3D_WIDTH] = 16384;
  a[MAXIMUM_SURFACE3D_HEIGHT] = 16384;
  a[MAXIMUM_SURFACE3D_DEPTH] = 16384;
  a[MAXIMUM_SURFACE1D_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_SURFACE1D_LAYERED_LAYERS] = 2048;
  a[MAXIMUM_SURFACE2D_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_SURFACE2D_LAYERED_HEIGHT] = 32768;
  a[MAXIMUM_SURFACE2D_LAYERED_LAYERS] = 2048;
  a[MAXIMUM_SURFACECUBEMAP_WIDTH] = 32768;
  a[MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH] = 32768;
  a[MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS] = 2046;
  a[MAXIMUM_TEXTURE1D_LINEAR_WIDTH] = 268435456;  // deprecated attribute; 2^28
  a[MAXIMUM_TEXTURE2D_LINEAR_WIDTH] = 131072;
  a[MAXIMUM_TEXTURE2D_LINEAR_HEIGHT] = 65000;
  a[MAXIMUM_TEXTURE2D_LINEAR_PITCH] = 2097120;
  a[MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH] = 32768;
  a[MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT] = 32768;
  a[MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH] = 32768;
  a[STREAM_PRIORITIES_SUPPORTED] = 1;
  a[GLOBAL_L1_CACHE_SUPPORTED] = 1;
  a[LOCAL_L1_CACHE_SUPPORTED] = 1;
  a[MAX_REGISTERS_PER_MULTIPROCESSOR] = 65536;
  a[MANAGED_MEMORY] = 1;
  a[MULTI_GPU_BOARD] = 0;
  a[HOST_NATIVE_ATOMIC_SUPPORTED] = 0;  // 1 only over NVLink-C2C (Grace), not PCIe hosts
  a[PAGEABLE_MEMORY_ACCESS] = 0;        // needs HMM/ATS; 0 on a stock x86 host
  a[CONCURRENT_MANAGED_ACCESS] = 1;
  a[COMPUTE_PREEMPTION_SUPPORTED] = 1;
  a[CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM] = 1;  // est.: UVA on 64-bit Linux
  // v1 stream memory operations (deprecated): off unless the driver module enables them.
  a[CAN_USE_STREAM_MEM_OPS_V1] = 0;
  a[CAN_USE_64_BIT_STREAM_MEM_OPS_V1] = 0;
  a[CAN_USE_STREAM_WAIT_VALUE_NOR_V1] = 0;
  a[COOPERATIVE_LAUNCH] = 1;
  a[COOPERATIVE_MULTI_DEVICE_LAUNCH] = 1;
  a[CAN_FLUSH_REMOTE_WRITES] = 0;
  a[HOST_REGISTER_SUPPORTED] = 1;
  a[PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES] = 0;
  a[DIRECT_MANAGED_MEM_ACCESS_FROM_HOST] = 0;
  a[VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED] = 1;
  a[HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED] = 1;
  a[HANDLE_TYPE_WIN32_HANDLE_SUPPORTED] = 0;
  a[HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED] = 0;
  a[GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED] = 1;
  a[READ_ONLY_HOST_REGISTER_SUPPORTED] = 1;  // as a real H200 on an x86 host reports
  a[TIMELINE_SEMAPHORE_INTEROP_SUPPORTED] = 1;
  a[MEMORY_POOLS_SUPPORTED] = 1;
  a[GPU_DIRECT_RDMA_SUPPORTED] = 1;
  a[GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS] = 1;  // CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST
  a[MEMPOOL_SUPPORTED_HANDLE_TYPES] = 1;        // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
  a[CAN_USE_64_BIT_STREAM_MEM_OPS] = 1;
  a[CAN_USE_STREAM_WAIT_VALUE_NOR] = 1;
  a[DMA_BUF_SUPPORTED] = 1;  // est.: Turing+ with a recent Linux driver
  a[IPC_EVENT_SUPPORTED] = 1;
  a[HANDLE_TYPE_FABRIC_SUPPORTED] = 0;  // needs IMEX / NVLink fabric
  a[UNIFIED_FUNCTION_POINTERS] = 0;     // Hopper and later: set_sm_limits
  a[NUMA_CONFIG] = 0;                   // CU_DEVICE_NUMA_CONFIG_NONE
  a[NUMA_ID] = -1;
  a[MULTICAST_SUPPORTED] = 0;  // needs NVSwitch multicast + IMEX
  a[MPS_ENABLED] = 0;
  a[HOST_NUMA_ID] = 0;  // est.: single host NUMA node 0
  a[D3D12_CIG_SUPPORTED] = 0;
  a[MEM_DECOMPRESS_ALGORITHM_MASK] = 0;  // Blackwell decompression engine only
  a[MEM_DECOMPRESS_MAXIMUM_LENGTH] = 0;
  a[VULKAN_CIG_SUPPORTED] = 0;
  // HOST / HOST_NUMA locations for VMM and pools: est. unsupported (conservative;
  // clients fall back to cuMemHostAlloc).
  a[HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED] = 0;
  a[HOST_NUMA_MEMORY_POOLS_SUPPORTED] = 0;
  a[HOST_NUMA_MULTINODE_IPC_SUPPORTED] = 0;
  a[HOST_MEMORY_POOLS_SUPPORTED] = 0;
  a[HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED] = 0;
  a[HOST_ALLOC_DMA_BUF_SUPPORTED] = 0;
  a[ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED] = 0;
}

// Per-SM limits that follow from the compute capability (CUDA C Programming Guide,
// "Technical Specifications per Compute Capability").
void set_sm_limits(DeviceModel& d) {
  using namespace attr;
  auto& a = d.attributes;
  const int cc = d.cc_major * 10 + d.cc_minor;
  switch (cc) {
    case 75:  // Turing
      a[MAX_THREADS_PER_MULTIPROCESSOR] = 1024;
      a[MAX_BLOCKS_PER_MULTIPROCESSOR] = 16;
      a[MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 65536;
      a[MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 65536;
      a[RESERVED_SHARED_MEMORY_PER_BLOCK] = 0;
      break;
    case 80:  // A100: 164 KiB per SM, 163 KiB opt-in per block
      a[MAX_THREADS_PER_MULTIPROCESSOR] = 2048;
      a[MAX_BLOCKS_PER_MULTIPROCESSOR] = 32;
      a[MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 167936;
      a[MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 166912;
      a[RESERVED_SHARED_MEMORY_PER_BLOCK] = 1024;
      break;
    case 89:  // Ada: 100 KiB per SM, 99 KiB opt-in
      a[MAX_THREADS_PER_MULTIPROCESSOR] = 1536;
      a[MAX_BLOCKS_PER_MULTIPROCESSOR] = 24;
      a[MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 102400;
      a[MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 101376;
      a[RESERVED_SHARED_MEMORY_PER_BLOCK] = 1024;
      break;
    case 90:  // Hopper: 228 KiB per SM, 227 KiB opt-in
    default:
      a[MAX_THREADS_PER_MULTIPROCESSOR] = 2048;
      a[MAX_BLOCKS_PER_MULTIPROCESSOR] = 32;
      a[MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] = 233472;
      a[MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 232448;
      a[RESERVED_SHARED_MEMORY_PER_BLOCK] = 1024;
      break;
  }
  const bool ampere_plus = cc >= 80;
  const bool hopper_plus = cc >= 90;
  // Compressible memory, sparse and deferred-mapping CUDA arrays: Ampere and later
  // (est. 0 on Turing).
  a[GENERIC_COMPRESSION_SUPPORTED] = ampere_plus ? 1 : 0;
  a[SPARSE_CUDA_ARRAY_SUPPORTED] = ampere_plus ? 1 : 0;
  a[DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED] = ampere_plus ? 1 : 0;
  // L2 persistence / access policy windows: Ampere and later.  The window limit is the
  // value A100s report (128 MiB - 4 KiB); a real H200 reports 128 MiB.
  a[MAX_ACCESS_POLICY_WINDOW_SIZE] = hopper_plus ? 134217728 : ampere_plus ? 134213632 : 0;
  // CUGPUDirectRDMAWritesOrdering: 100 = OWNER on Ampere+ (est.), 0 = NONE on Turing.
  a[GPU_DIRECT_RDMA_WRITES_ORDERING] = ampere_plus ? 100 : 0;
  a[CLUSTER_LAUNCH] = hopper_plus ? 1 : 0;
  a[TENSOR_MAP_ACCESS_SUPPORTED] = hopper_plus ? 1 : 0;
  a[MEM_SYNC_DOMAIN_COUNT] = hopper_plus ? 4 : 1;
  a[UNIFIED_FUNCTION_POINTERS] = hopper_plus ? 1 : 0;  // a real H200 on an x86 host: 1
}

// The values that differ between parts.
struct ProfileSpec {
  const char* id;
  const char* name;  // without "Fake "
  uint64_t total_memory;
  int cc_major, cc_minor, sm_count;
  unsigned max_sm_mhz, max_mem_mhz, max_video_mhz;
  unsigned idle_sm_mhz, idle_mem_mhz, idle_video_mhz;
  int bus_width_bits;
  int l2_bytes;
  int persisting_l2_bytes;  // CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
  int async_engines;        // copy engines, deviceQuery "Yes with N copy engine(s)"
  int fp32_to_fp64_ratio;
  unsigned power_max_mw, power_min_mw, power_idle_mw;
  unsigned temp_idle_c, temp_slowdown_c, temp_shutdown_c, temp_max_gpu_c, temp_max_mem_c;
  unsigned pcie_gen, pcie_width;
  uint64_t bar1_bytes;
  int architecture;
  unsigned pci_device_id, pci_subsystem_id;
};

constexpr int NVML_BRAND_NVIDIA = 14;
constexpr int ARCH_TURING = 6, ARCH_AMPERE = 7, ARCH_ADA = 8, ARCH_HOPPER = 9;

// Order = profile_ids() order; the first one is the default.  Each row: identity and size;
// max SM / memory / video clock, idle SM / memory / video clock (MHz); bus width, L2,
// persisting L2, copy engines, FP32:FP64; power max / min / idle (mW); temperatures idle /
// slowdown / shutdown / max GPU / max memory; PCIe gen, width; BAR1; architecture; PCI ids.
// clang-format off
constexpr ProfileSpec kProfiles[] = {
    // A100-SXM4-80GB: 80 GiB as the FakeGPU seed and nvidia-smi (81920 MiB) report;
    // 1410 MHz boost, HBM2e 1593 MHz x 5120 bit, 40 MiB L2, 400 W (min 100 W);
    // PCI 20B2 subsystem 10DE:147F (DGX A100).  Persisting-L2 max 30 MiB (cudaDeviceProp
    // dumps), 3 copy engines (est.), BAR1 128 GiB.  Idle clocks 210/1593/585 MHz.
    {"a100-80gb", "NVIDIA A100-SXM4-80GB", 85899345920ull, 8, 0, 108,
     1410, 1593, 1290, 210, 1593, 585,
     5120, 41943040, 31457280, 3, 2,
     400000, 100000, 62000,
     32, 89, 92, 85, 95,
     4, 16, 128 * 1024 * MiB, ARCH_AMPERE, 0x20B210DEu, 0x147F10DEu},
    // A100-SXM4-40GB: 40960 MiB, HBM2 1215 MHz, BAR1 64 GiB; subsystem 10DE:134F (est.:
    // the driver README lists 20B0 without a subsystem).
    {"a100-40gb", "NVIDIA A100-SXM4-40GB", 40960 * MiB, 8, 0, 108,
     1410, 1215, 1290, 210, 1215, 585,
     5120, 41943040, 31457280, 3, 2,
     400000, 100000, 58000,
     31, 89, 92, 85, 95,
     4, 16, 64 * 1024 * MiB, ARCH_AMPERE, 0x20B010DEu, 0x134F10DEu},
    // H100 80GB HBM3 (SXM5): nvidia-smi 81559 MiB, 1980 MHz boost, HBM3 2619 MHz x 5120
    // bit, 50 MiB L2, 700 W (min 200 W), PCIe gen5; PCI 2330 subsystem 10DE:16C1.
    // Persisting-L2 max est. 75 % of L2; 3 copy engines est.; BAR1 128 GiB.
    {"h100-80gb", "NVIDIA H100 80GB HBM3", 81559 * MiB, 9, 0, 132,
     1980, 2619, 1545, 345, 2619, 765,
     5120, 52428800, 39321600, 3, 2,
     700000, 200000, 72000,
     33, 89, 92, 87, 95,
     5, 16, 128 * 1024 * MiB, ARCH_HOPPER, 0x233010DEu, 0x16C110DEu},
    // H200 (SXM), as a real one reports it (driver 580.159, tests/clients/golden/h200.facts):
    // 143771 MiB = 150754820096 bytes ("141 GB"), HBM3e 3201 MHz x 6016 bit, 60 MiB L2,
    // 132 SMs, 700 W (min 200 W), shutdown at 95 C, PCIe gen5 x16; PCI 2335 subsystem
    // 10DE:18BF; BAR1 256 GiB.
    {"h200", "NVIDIA H200", 143771 * MiB, 9, 0, 132,
     1980, 3201, 1545, 345, 3201, 765,
     6016, 62914560, 39321600, 3, 2,
     700000, 200000, 76000,
     33, 89, 95, 87, 95,
     5, 16, 256 * 1024 * MiB, ARCH_HOPPER, 0x233510DEu, 0x18BF10DEu},
    // L4: nvidia-smi 23034 MiB, 2040 MHz boost, GDDR6 6251 MHz x 192 bit, 48 MiB L2,
    // 72 W (min 40 W), PCIe gen4, passively cooled (no fan); PCI 27B8 subsystem
    // 10DE:16CA; BAR1 32 GiB.  2 copy engines, thresholds and idle clocks est.
    {"l4", "NVIDIA L4", 23034 * MiB, 8, 9, 58,
     2040, 6251, 1770, 210, 405, 765,
     192, 50331648, 37748736, 2, 64,
     72000, 40000, 16000,
     35, 93, 96, 90, 0,
     4, 16, 32 * 1024 * MiB, ARCH_ADA, 0x27B810DEu, 0x16CA10DEu},
    // Tesla T4 (the real part's name is "Tesla T4"; the project spells it "Fake NVIDIA
    // Tesla T4"): nvidia-smi 15360 MiB, 1590 MHz boost, GDDR6 5001 MHz x 256 bit, 4 MiB
    // L2, 70 W (min 60 W), PCIe gen3, passively cooled; PCI 1EB8 subsystem 10DE:12A2;
    // BAR1 256 MiB.  No L2 persistence (Turing).  Thresholds est.
    {"t4", "NVIDIA Tesla T4", 15360 * MiB, 7, 5, 40,
     1590, 5001, 1470, 300, 405, 540,
     256, 4194304, 0, 3, 32,
     70000, 60000, 10000,
     34, 93, 96, 85, 0,
     3, 16, 256 * MiB, ARCH_TURING, 0x1EB810DEu, 0x12A210DEu},
};
// clang-format on

DeviceModel build(const ProfileSpec& s) {
  DeviceModel d;
  d.profile = s.id;
  d.name = std::string(kNamePrefix) + s.name;
  d.total_memory = s.total_memory;
  d.cc_major = s.cc_major;
  d.cc_minor = s.cc_minor;
  d.sm_count = s.sm_count;

  set_common_attributes(d.attributes);
  set_sm_limits(d);
  auto& a = d.attributes;
  a[attr::GLOBAL_MEMORY_BUS_WIDTH] = s.bus_width_bits;
  a[attr::L2_CACHE_SIZE] = s.l2_bytes;
  a[attr::MAX_PERSISTING_L2_CACHE_SIZE] = s.persisting_l2_bytes;
  a[attr::ASYNC_ENGINE_COUNT] = s.async_engines;
  a[attr::SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO] = s.fp32_to_fp64_ratio;

  d.power_limit_mw = s.power_max_mw;
  d.power_default_limit_mw = s.power_max_mw;
  d.power_min_limit_mw = s.power_min_mw;
  d.power_max_limit_mw = s.power_max_mw;
  d.power_usage_mw = s.power_idle_mw;
  d.temperature_c = s.temp_idle_c;
  d.temp_slowdown_c = s.temp_slowdown_c;
  d.temp_shutdown_c = s.temp_shutdown_c;
  d.temp_max_gpu_c = s.temp_max_gpu_c;
  d.temp_max_mem_c = s.temp_max_mem_c;
  d.has_fan = false;  // every profile here is passively cooled (SXM or passive PCIe)
  d.fan_speed_pct = 0;
  d.max_clock_graphics_mhz = s.max_sm_mhz;
  d.max_clock_sm_mhz = s.max_sm_mhz;
  d.max_clock_mem_mhz = s.max_mem_mhz;
  d.max_clock_video_mhz = s.max_video_mhz;
  d.clock_graphics_mhz = s.idle_sm_mhz;
  d.clock_sm_mhz = s.idle_sm_mhz;
  d.clock_mem_mhz = s.idle_mem_mhz;
  d.clock_video_mhz = s.idle_video_mhz;
  d.pcie_max_gen = s.pcie_gen;
  d.pcie_max_width = s.pcie_width;
  d.pcie_cur_gen = s.pcie_gen;
  d.pcie_cur_width = s.pcie_width;
  d.bar1_total = s.bar1_bytes;
  d.brand = NVML_BRAND_NVIDIA;  // A100/H100/H200/L4 and, with current drivers, T4
  d.architecture = s.architecture;
  d.pci_device_id = s.pci_device_id;
  d.pci_subsystem_id = s.pci_subsystem_id;
  sync_mirrored_attributes(d);
  return d;
}

// 64-bit FNV-1a, then splitmix64 finalisation for good bit spread.
uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr unsigned kDgxBuses[8] = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};

}  // namespace

const std::vector<std::string>& profile_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const auto& p : kProfiles) v.emplace_back(p.id);
    return v;
  }();
  return ids;
}

std::string known_profiles_text() {
  std::string s;
  for (const auto& id : profile_ids()) {
    if (!s.empty()) s += ", ";
    s += id;
  }
  return s;
}

bool find_profile(std::string_view id, DeviceModel& out) {
  const std::string key = lower(id);
  for (const auto& p : kProfiles) {
    if (key == p.id) {
      out = build(p);
      return true;
    }
  }
  return false;
}

DeviceModel make_profile(std::string_view id) {
  DeviceModel d;
  if (!find_profile(id, d)) {
    throw ConfigError("unknown profile \"" + std::string(id) + "\"; known profiles: " + known_profiles_text());
  }
  return d;
}

void sync_mirrored_attributes(DeviceModel& d) {
  auto& a = d.attributes;
  a[0] = 0;
  a[attr::CLOCK_RATE] = static_cast<int>(d.max_clock_sm_mhz * 1000u);
  a[attr::MEMORY_CLOCK_RATE] = static_cast<int>(d.max_clock_mem_mhz * 1000u);
  a[attr::MULTIPROCESSOR_COUNT] = d.sm_count;
  a[attr::COMPUTE_CAPABILITY_MAJOR] = d.cc_major;
  a[attr::COMPUTE_CAPABILITY_MINOR] = d.cc_minor;
  a[attr::GPU_PCI_DEVICE_ID] = static_cast<int>(d.pci_device_id);
  a[attr::GPU_PCI_SUBSYSTEM_ID] = static_cast<int>(d.pci_subsystem_id);
  a[attr::PCI_BUS_ID] = static_cast<int>(d.pci_bus);
  a[attr::PCI_DEVICE_ID] = static_cast<int>(d.pci_device);
  a[attr::PCI_DOMAIN_ID] = static_cast<int>(d.pci_domain);
  a[attr::MULTI_GPU_BOARD_GROUP_ID] = d.index;
}

std::string format_uuid(const std::array<uint8_t, 16>& u) { return ledger::uuid_text(u.data()); }

std::string cuda_pci_bus_id(const DeviceModel& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04X:%02X:%02X.0", d.pci_domain & 0xFFFFu, d.pci_bus & 0xFFu, d.pci_device & 0xFFu);
  return buf;
}

std::string nvml_pci_bus_id(const DeviceModel& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.0", d.pci_domain, d.pci_bus & 0xFFu, d.pci_device & 0xFFu);
  return buf;
}

void assign_identity(std::vector<DeviceModel>& devices) {
  if (devices.size() > static_cast<std::size_t>(kMaxDevices)) {
    throw ConfigError(std::to_string(devices.size()) + " devices configured, at most " + std::to_string(kMaxDevices) +
                      " are supported; lower the counts");
  }
  std::set<std::array<uint8_t, 16>> seen;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    DeviceModel& d = devices[i];
    const int idx = static_cast<int>(i);
    d.index = idx;
    d.minor_number = static_cast<unsigned>(idx);
    d.pci_domain = static_cast<unsigned>(idx / 8);
    d.pci_bus = kDgxBuses[idx % 8];
    d.pci_device = 0;
    d.pci_bus_id = nvml_pci_bus_id(d);

    // UUID: hash of (profile, index), so every process with the same configuration
    // sees the same UUIDs.  A (practically impossible) collision is resolved by salting.
    const std::string key = "fakegpu-uuid/v1/" + d.profile + "/" + std::to_string(idx);
    for (uint64_t salt = 0;; ++salt) {
      const uint64_t h = fnv1a(key) ^ mix(salt);
      const uint64_t hi = mix(h), lo = mix(hi ^ 0x6a09e667f3bcc909ull);
      for (int b = 0; b < 8; ++b) {
        d.uuid[b] = static_cast<uint8_t>(hi >> (56 - 8 * b));
        d.uuid[8 + b] = static_cast<uint8_t>(lo >> (56 - 8 * b));
      }
      if (seen.insert(d.uuid).second) break;
    }
    d.uuid_str = format_uuid(d.uuid);

    // Serial: "16" + 8 digits from the profile + 3-digit index: 13 digits, unique.
    char serial[32];
    std::snprintf(serial, sizeof serial, "16%08llu%03d",
                  static_cast<unsigned long long>(mix(fnv1a(d.profile)) % 100000000ull), idx);
    d.serial = serial;
    sync_mirrored_attributes(d);
  }
}

const char* attribute_name(int attribute) {
  if (attribute < 1 || attribute >= kAttributeSlots) return nullptr;
  return kAttributeNames[attribute - 1];
}

int attribute_from_name(std::string_view name) {
  if (name.empty()) return -1;
  if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (name.size() > 3) return -1;
    int v = 0;
    for (char c : name) v = v * 10 + (c - '0');
    return (v >= 1 && v < kAttributeSlots) ? v : -1;
  }
  static constexpr std::string_view kPrefix = "CU_DEVICE_ATTRIBUTE_";
  std::string key = upper(name);
  if (key.rfind(kPrefix, 0) != 0) key = std::string(kPrefix) + key;
  for (int i = 1; i < kAttributeSlots; ++i) {
    if (key == kAttributeNames[i - 1]) return i;
  }
  for (const auto& al : kAttributeAliases) {
    if (key == al.name) return al.value;
  }
  return -1;
}

}  // namespace fg
