// SPDX-License-Identifier: Apache-2.0
// fakegpu — device models as data.
//
// A DeviceModel is everything the fake backend reports about one fake GPU: the
// profile values (what the real part reports: name, memory, every CUDA device
// attribute, the NVML-facing numbers) and the identity of this instance in the
// configured list (index, UUID, PCI address, serial).  Profiles are built by
// make_profile(); identities are filled by assign_identity(), which the parsers
// in config.h call.  See fakebackend/profiles/README.md for the user-facing side.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fg {

// Number of slots in DeviceModel::attributes: CU_DEVICE_ATTRIBUTE_MAX (cuda.h 13.0)
// == cudaDevAttrMax == 148.  Valid attribute numbers are 1..147; slot 0 is unused.
inline constexpr int kAttributeSlots = 148;
inline constexpr int kMaxDevices = 256;        // most devices one configuration may declare
inline constexpr int kDefaultDeviceCount = 8;  // with no configuration at all
inline constexpr std::string_view kDefaultProfile = "a100-80gb";
inline constexpr std::string_view kNamePrefix = "Fake ";
// Longest device name: NVML_DEVICE_NAME_V2_BUFFER_SIZE (96) minus the NUL.
inline constexpr std::size_t kMaxNameLength = 95;

// CUdevice_attribute numbers (cuda.h 13.0), without the CU_DEVICE_ATTRIBUTE_ prefix,
// so the core can index DeviceModel::attributes without including cuda.h.
namespace attr {
inline constexpr int MAX_THREADS_PER_BLOCK = 1;
inline constexpr int MAX_BLOCK_DIM_X = 2;
inline constexpr int MAX_BLOCK_DIM_Y = 3;
inline constexpr int MAX_BLOCK_DIM_Z = 4;
inline constexpr int MAX_GRID_DIM_X = 5;
inline constexpr int MAX_GRID_DIM_Y = 6;
inline constexpr int MAX_GRID_DIM_Z = 7;
inline constexpr int MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int TOTAL_CONSTANT_MEMORY = 9;
inline constexpr int WARP_SIZE = 10;
inline constexpr int MAX_PITCH = 11;
inline constexpr int MAX_REGISTERS_PER_BLOCK = 12;
inline constexpr int CLOCK_RATE = 13;
inline constexpr int TEXTURE_ALIGNMENT = 14;
inline constexpr int GPU_OVERLAP = 15;
inline constexpr int MULTIPROCESSOR_COUNT = 16;
inline constexpr int KERNEL_EXEC_TIMEOUT = 17;
inline constexpr int INTEGRATED = 18;
inline constexpr int CAN_MAP_HOST_MEMORY = 19;
inline constexpr int COMPUTE_MODE = 20;
inline constexpr int MAXIMUM_TEXTURE1D_WIDTH = 21;
inline constexpr int MAXIMUM_TEXTURE2D_WIDTH = 22;
inline constexpr int MAXIMUM_TEXTURE2D_HEIGHT = 23;
inline constexpr int MAXIMUM_TEXTURE3D_WIDTH = 24;
inline constexpr int MAXIMUM_TEXTURE3D_HEIGHT = 25;
inline constexpr int MAXIMUM_TEXTURE3D_DEPTH = 26;
inline constexpr int MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27;
inline constexpr int MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28;
inline constexpr int MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29;
inline constexpr int SURFACE_ALIGNMENT = 30;
inline constexpr int CONCURRENT_KERNELS = 31;
inline constexpr int ECC_ENABLED = 32;
inline constexpr int PCI_BUS_ID = 33;
inline constexpr int PCI_DEVICE_ID = 34;
inline constexpr int TCC_DRIVER = 35;
inline constexpr int MEMORY_CLOCK_RATE = 36;
inline constexpr int GLOBAL_MEMORY_BUS_WIDTH = 37;
inline constexpr int L2_CACHE_SIZE = 38;
inline constexpr int MAX_THREADS_PER_MULTIPROCESSOR = 39;
inline constexpr int ASYNC_ENGINE_COUNT = 40;
inline constexpr int UNIFIED_ADDRESSING = 41;
inline constexpr int MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42;
inline constexpr int MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43;
inline constexpr int CAN_TEX2D_GATHER = 44;
inline constexpr int MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45;
inline constexpr int MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46;
inline constexpr int MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47;
inline constexpr int MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48;
inline constexpr int MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49;
inline constexpr int PCI_DOMAIN_ID = 50;
inline constexpr int TEXTURE_PITCH_ALIGNMENT = 51;
inline constexpr int MAXIMUM_TEXTURECUBEMAP_WIDTH = 52;
inline constexpr int MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53;
inline constexpr int MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54;
inline constexpr int MAXIMUM_SURFACE1D_WIDTH = 55;
inline constexpr int MAXIMUM_SURFACE2D_WIDTH = 56;
inline constexpr int MAXIMUM_SURFACE2D_HEIGHT = 57;
inline constexpr int MAXIMUM_SURFACE3D_WIDTH = 58;
inline constexpr int MAXIMUM_SURFACE3D_HEIGHT = 59;
inline constexpr int MAXIMUM_SURFACE3D_DEPTH = 60;
inline constexpr int MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61;
inline constexpr int MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62;
inline constexpr int MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63;
inline constexpr int MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64;
inline constexpr int MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65;
inline constexpr int MAXIMUM_SURFACECUBEMAP_WIDTH = 66;
inline constexpr int MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67;
inline constexpr int MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68;
inline constexpr int MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69;
inline constexpr int MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70;
inline constexpr int MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71;
inline constexpr int MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72;
inline constexpr int MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73;
inline constexpr int MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74;
inline constexpr int COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77;
inline constexpr int STREAM_PRIORITIES_SUPPORTED = 78;
inline constexpr int GLOBAL_L1_CACHE_SUPPORTED = 79;
inline constexpr int LOCAL_L1_CACHE_SUPPORTED = 80;
inline constexpr int MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81;
inline constexpr int MAX_REGISTERS_PER_MULTIPROCESSOR = 82;
inline constexpr int MANAGED_MEMORY = 83;
inline constexpr int MULTI_GPU_BOARD = 84;
inline constexpr int MULTI_GPU_BOARD_GROUP_ID = 85;
inline constexpr int HOST_NATIVE_ATOMIC_SUPPORTED = 86;
inline constexpr int SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87;
inline constexpr int PAGEABLE_MEMORY_ACCESS = 88;
inline constexpr int CONCURRENT_MANAGED_ACCESS = 89;
inline constexpr int COMPUTE_PREEMPTION_SUPPORTED = 90;
inline constexpr int CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91;
inline constexpr int CAN_USE_STREAM_MEM_OPS_V1 = 92;
inline constexpr int CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93;
inline constexpr int CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94;
inline constexpr int COOPERATIVE_LAUNCH = 95;
inline constexpr int COOPERATIVE_MULTI_DEVICE_LAUNCH = 96;
inline constexpr int MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr int CAN_FLUSH_REMOTE_WRITES = 98;
inline constexpr int HOST_REGISTER_SUPPORTED = 99;
inline constexpr int PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100;
inline constexpr int DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101;
inline constexpr int VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102;
inline constexpr int HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103;
inline constexpr int HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104;
inline constexpr int HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105;
inline constexpr int MAX_BLOCKS_PER_MULTIPROCESSOR = 106;
inline constexpr int GENERIC_COMPRESSION_SUPPORTED = 107;
inline constexpr int MAX_PERSISTING_L2_CACHE_SIZE = 108;
inline constexpr int MAX_ACCESS_POLICY_WINDOW_SIZE = 109;
inline constexpr int GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110;
inline constexpr int RESERVED_SHARED_MEMORY_PER_BLOCK = 111;
inline constexpr int SPARSE_CUDA_ARRAY_SUPPORTED = 112;
inline constexpr int READ_ONLY_HOST_REGISTER_SUPPORTED = 113;
inline constexpr int TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114;
inline constexpr int MEMORY_POOLS_SUPPORTED = 115;
inline constexpr int GPU_DIRECT_RDMA_SUPPORTED = 116;
inline constexpr int GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117;
inline constexpr int GPU_DIRECT_RDMA_WRITES_ORDERING = 118;
inline constexpr int MEMPOOL_SUPPORTED_HANDLE_TYPES = 119;
inline constexpr int CLUSTER_LAUNCH = 120;
inline constexpr int DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121;
inline constexpr int CAN_USE_64_BIT_STREAM_MEM_OPS = 122;
inline constexpr int CAN_USE_STREAM_WAIT_VALUE_NOR = 123;
inline constexpr int DMA_BUF_SUPPORTED = 124;
inline constexpr int IPC_EVENT_SUPPORTED = 125;
inline constexpr int MEM_SYNC_DOMAIN_COUNT = 126;
inline constexpr int TENSOR_MAP_ACCESS_SUPPORTED = 127;
inline constexpr int HANDLE_TYPE_FABRIC_SUPPORTED = 128;
inline constexpr int UNIFIED_FUNCTION_POINTERS = 129;
inline constexpr int NUMA_CONFIG = 130;
inline constexpr int NUMA_ID = 131;
inline constexpr int MULTICAST_SUPPORTED = 132;
inline constexpr int MPS_ENABLED = 133;
inline constexpr int HOST_NUMA_ID = 134;
inline constexpr int D3D12_CIG_SUPPORTED = 135;
inline constexpr int MEM_DECOMPRESS_ALGORITHM_MASK = 136;
inline constexpr int MEM_DECOMPRESS_MAXIMUM_LENGTH = 137;
inline constexpr int VULKAN_CIG_SUPPORTED = 138;
inline constexpr int GPU_PCI_DEVICE_ID = 139;
inline constexpr int GPU_PCI_SUBSYSTEM_ID = 140;
inline constexpr int HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141;
inline constexpr int HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142;
inline constexpr int HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143;
inline constexpr int HOST_MEMORY_POOLS_SUPPORTED = 144;
inline constexpr int HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145;
inline constexpr int HOST_ALLOC_DMA_BUF_SUPPORTED = 146;
inline constexpr int ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147;
}  // namespace attr

struct DeviceModel {
  // ---- profile ---------------------------------------------------------------------
  std::string profile;        // profile id, e.g. "a100-80gb"
  std::string name;           // "Fake NVIDIA A100-SXM4-80GB" (always starts with "Fake ")
  uint64_t total_memory = 0;  // bytes
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  // Every CUDA device attribute, indexed by the CUdevice_attribute number (1..147);
  // index 0 unused.  Mirrors of named fields (13 clock rate = max_clock_sm_mhz*1000,
  // 16 = sm_count, 36 memory clock = max_clock_mem_mhz*1000, 75/76 = cc, 139/140 = PCI
  // ids) and identity slots (33 bus, 34 device, 50 domain, 85 board group id) are kept
  // in sync by sync_mirrored_attributes() / assign_identity().
  std::array<int, kAttributeSlots> attributes{};

  // ---- NVML-facing fields ------------------------------------------------------------
  unsigned power_limit_mw = 0, power_default_limit_mw = 0, power_min_limit_mw = 0, power_max_limit_mw = 0,
           power_usage_mw = 0;
  // Thresholds as nvmlDeviceGetTemperatureThreshold reports them; 0 in temp_max_mem_c
  // means the part has no memory sensor (NVML_ERROR_NOT_SUPPORTED).
  unsigned temperature_c = 0, temp_slowdown_c = 0, temp_shutdown_c = 0, temp_max_gpu_c = 0, temp_max_mem_c = 0;
  unsigned fan_speed_pct = 0;  // meaningful only when has_fan
  bool has_fan = false;        // false: nvmlDeviceGetFanSpeed -> NVML_ERROR_NOT_SUPPORTED
  unsigned max_clock_graphics_mhz = 0, max_clock_sm_mhz = 0, max_clock_mem_mhz = 0, max_clock_video_mhz = 0;
  unsigned clock_graphics_mhz = 0, clock_sm_mhz = 0, clock_mem_mhz = 0,
           clock_video_mhz = 0;  // current (idle-ish) clocks
  unsigned pcie_max_gen = 0, pcie_max_width = 0, pcie_cur_gen = 0, pcie_cur_width = 0;
  uint64_t bar1_total = 0;        // bytes
  int brand = 0;                  // nvmlBrandType_t (NVML_BRAND_NVIDIA = 14)
  int architecture = 0;           // nvmlDeviceArchitecture_t (TURING 6, AMPERE 7, ADA 8, HOPPER 9)
  unsigned pci_device_id = 0;     // (device id << 16) | 0x10DE, e.g. 0x20B210DE
  unsigned pci_subsystem_id = 0;  // (subsystem id << 16) | subsystem vendor 0x10DE

  // ---- identity of this instance (assign_identity) ----------------------------------
  int index = 0;                   // position in the configured list (before CUDA_VISIBLE_DEVICES)
  std::array<uint8_t, 16> uuid{};  // deterministic from (profile, index)
  std::string uuid_str;            // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0;
  std::string pci_bus_id;     // NVML form "00000000:07:00.0"
  std::string serial;         // 13 decimal digits
  unsigned minor_number = 0;  // = index (/dev/nvidiaN)
};

// Error in the user's device configuration.  what() names the problem and the fix.
struct ConfigError : std::runtime_error {
  using runtime_error::runtime_error;
};

// Known profile ids, default first: a100-80gb, a100-40gb, h100-80gb, h200, l4, t4.
const std::vector<std::string>& profile_ids();
// "a100-80gb, a100-40gb, h100-80gb, h200, l4, t4"
std::string known_profiles_text();
// Profile with identity fields zeroed.  Ids are matched case-insensitively.
// Throws ConfigError for an unknown id, listing the known ids.
DeviceModel make_profile(std::string_view id);
// Same, but returns false instead of throwing (out untouched).
bool find_profile(std::string_view id, DeviceModel& out);

// Fill index, uuid/uuid_str, PCI domain/bus/device/bus id, serial, minor number and the
// identity attributes for every device, in list order.  PCI addresses: the first 8 get
// the DGX A100 bus numbers 0x07,0x0F,0x47,0x4E,0x87,0x90,0xB7,0xBD in domain 0; device i
// gets domain i/8 and bus table[i%8], so every address in a list of up to 256 is unique.
// Throws ConfigError for more than kMaxDevices devices.
void assign_identity(std::vector<DeviceModel>&);

// Re-derive the attribute slots that mirror named fields (13, 16, 36, 75, 76, 139, 140)
// and the identity fields (33, 34, 50, 85).
void sync_mirrored_attributes(DeviceModel&);

// "GPU-" + 8-4-4-4-12 lower-case hex.
std::string format_uuid(const std::array<uint8_t, 16>& uuid);
// cudaDeviceGetPCIBusId / cuDeviceGetPCIBusId / NVML busIdLegacy form: "0000:07:00.0".
std::string cuda_pci_bus_id(const DeviceModel&);
// NVML busId form: "00000000:07:00.0" (same as DeviceModel::pci_bus_id).
std::string nvml_pci_bus_id(const DeviceModel&);

// Canonical cuda.h name of attribute 1..147 ("CU_DEVICE_ATTRIBUTE_CLOCK_RATE"), or
// nullptr for anything else.
const char* attribute_name(int attribute);
// Attribute number for a name: the cuda.h name or a deprecated alias, with or without
// the "CU_DEVICE_ATTRIBUTE_" prefix, any case; or a decimal number 1..147.  -1 if none.
int attribute_from_name(std::string_view name);

}  // namespace fg
