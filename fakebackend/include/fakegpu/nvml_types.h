// SPDX-License-Identifier: Apache-2.0
// fakegpu — our own declarations of the NVML (libnvidia-ml) types.
//
// Why this file exists
//   No nvml.h ships with the CUDA toolkit, and the fake backend must build
//   without any NVIDIA header at all. The types below reproduce the public
//   nvml.h of NVML_API_VERSION 13 (driver branch R580, CUDA 13.0) on x86-64
//   Linux: same names (in namespace fgapi), same values, same sizes and field
//   offsets. Sizes and offsets are pinned by the static_asserts at the end and
//   by tests/abi/test_nvml_layout.cpp (expected numbers measured against the
//   public header, see research/api-census.md §2.3 and
//   census-probes/results/abi_nvml.txt).
//
// ABI traps this file encodes
//   * Versioned structs carry their version in the first field:
//     (sizeof(struct) | version << 24). nvmlMemory_v2 is 0x02000028, not 2
//     (nvtop passes 2; pynvml/gpustat/nvitop pass 0x02000028).
//   * Process lists come in three entry sizes: 16 bytes for the unversioned
//     nvmlDevice*RunningProcesses (v1 ABI, what PyTorch C++ binds), 24 bytes
//     for _v2 and _v3. Headers of drivers 535.43-535.86 briefly had a 32-byte
//     v3 entry; nvidia-ml-py 12.535.77 and nvitop still special-case it.
//     Always size the caller's array with the entry type of the symbol that
//     was called.
//   * nvmlDeviceGetPciInfo (v1) and _v2 predate the 68-byte nvmlPciInfo_t; a
//     caller of those may pass a 52-byte nvmlPciInfoLegacy_t. Write the legacy
//     layout there, never the current one.
//   * nvmlDevice_t and nvmlEventSet_t are plain pointers to incomplete structs
//     in nvml.h. (go-nvml rewrites them as one-member structs for cgo; same
//     size and same register class, so both spellings interoperate.)
//   * nvmlValue_t contains `unsigned long`: 8 bytes on LP64 only.
//
// This header is self-contained: it includes only <cstddef> and <cstdint>,
// declares none of NVML's functions (only constexpr stand-ins for nvml.h's
// helper macros), and defines no macros.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fgapi {

// NVML_API_VERSION of the header these declarations reproduce.
inline constexpr int kNvmlApiVersion = 13;

// NVML_STRUCT_VERSION(name, ver): the size of the struct in the low 24 bits,
// the version number in the top 8.
constexpr unsigned int nvmlStructVersion(std::size_t structSize, unsigned int version) noexcept {
  return static_cast<unsigned int>(structSize) | (version << 24U);
}

// ===========================================================================
// Return codes
// ===========================================================================
// Values 28-30 are new in NVML 13; older clients print them as unknown
// errors, so prefer the long-standing codes (NOT_SUPPORTED, INVALID_ARGUMENT,
// INSUFFICIENT_SIZE, ...) wherever they fit.
enum nvmlReturn_t : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,  // deprecated: init is ref-counted
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,  // wrong `version` field in a versioned struct
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
  NVML_ERROR_UNKNOWN = 999,
};

// ===========================================================================
// Handles
// ===========================================================================
struct nvmlDevice_st;
struct nvmlUnit_st;
struct nvmlEventSet_st;
struct nvmlGpuInstance_st;
struct nvmlComputeInstance_st;
using nvmlDevice_t = nvmlDevice_st*;
using nvmlUnit_t = nvmlUnit_st*;
using nvmlEventSet_t = nvmlEventSet_st*;
using nvmlGpuInstance_t = nvmlGpuInstance_st*;
using nvmlComputeInstance_t = nvmlComputeInstance_st*;

// ===========================================================================
// Constants
// ===========================================================================
// "Not available" marker. Fields of type unsigned long long (e.g.
// nvmlProcessInfo_t::usedGpuMemory) receive it converted, i.e. ~0ULL.
inline constexpr int NVML_VALUE_NOT_AVAILABLE = -1;
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = static_cast<unsigned long long>(
    NVML_VALUE_NOT_AVAILABLE);

// nvmlInitWithFlags flags.
inline constexpr unsigned int NVML_INIT_FLAG_NO_GPUS = 1;    // don't fail when no GPU is found
inline constexpr unsigned int NVML_INIT_FLAG_NO_ATTACH = 2;  // don't attach GPUs

// String buffer sizes guaranteed large enough by the API (including the NUL).
inline constexpr unsigned int NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE = 16;
inline constexpr unsigned int NVML_DEVICE_UUID_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_PART_NUMBER_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_NAME_BUFFER_SIZE = 64;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_SERIAL_BUFFER_SIZE = 30;
inline constexpr unsigned int NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

// PCI bus id formats: busId has an 8-digit domain, busIdLegacy a 4-digit one.
// The CUDA runtime/driver print the 4-digit form ("%04x:%02x:%02x.0", lower
// case); keep all three consistent for the same fake device.
inline constexpr const char* NVML_DEVICE_PCI_BUS_ID_FMT = "%08X:%02X:%02X.0";
inline constexpr const char* NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT = "%04X:%02X:%02X.0";

// nvmlDeviceGetArchitecture results (nvmlDeviceArchitecture_t is a plain
// unsigned int, not an enum).
using nvmlDeviceArchitecture_t = unsigned int;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_KEPLER = 2;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_MAXWELL = 3;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_PASCAL = 4;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_VOLTA = 5;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_TURING = 6;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_AMPERE = 7;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_ADA = 8;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_HOPPER = 9;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_BLACKWELL = 10;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_UNKNOWN = 0xffffffffU;

// nvmlDeviceGetMigMode values.
inline constexpr unsigned int NVML_DEVICE_MIG_DISABLE = 0;
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;

// Event types (nvmlDeviceRegisterEvents / nvmlEventData_t::eventType), a
// 64-bit mask. NVIDIA writes them as `0x...LL` literals.
inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x0000000000000001ULL;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x0000000000000002ULL;
inline constexpr unsigned long long nvmlEventTypePState = 0x0000000000000004ULL;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x0000000000000008ULL;
inline constexpr unsigned long long nvmlEventTypeClock = 0x0000000000000010ULL;
inline constexpr unsigned long long nvmlEventTypePowerSourceChange = 0x0000000000000080ULL;
inline constexpr unsigned long long nvmlEventMigConfigChange = 0x0000000000000100ULL;
inline constexpr unsigned long long nvmlEventTypeSingleBitEccErrorStorm = 0x0000000000000200ULL;
inline constexpr unsigned long long nvmlEventTypeDramRetirementEvent = 0x0000000000000400ULL;
inline constexpr unsigned long long nvmlEventTypeDramRetirementFailure = 0x0000000000000800ULL;
inline constexpr unsigned long long nvmlEventTypeNonFatalPoisonError = 0x0000000000001000ULL;
inline constexpr unsigned long long nvmlEventTypeFatalPoisonError = 0x0000000000002000ULL;
inline constexpr unsigned long long nvmlEventTypeGpuUnavailableError = 0x0000000000004000ULL;
inline constexpr unsigned long long nvmlEventTypeGpuRecoveryAction = 0x0000000000008000ULL;
inline constexpr unsigned long long nvmlEventTypeNone = 0x0000000000000000ULL;
inline constexpr unsigned long long nvmlEventTypeAll =
    nvmlEventTypeNone | nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError | nvmlEventTypePState |
    nvmlEventTypeClock | nvmlEventTypeXidCriticalError | nvmlEventTypePowerSourceChange | nvmlEventMigConfigChange |
    nvmlEventTypeSingleBitEccErrorStorm | nvmlEventTypeDramRetirementEvent | nvmlEventTypeDramRetirementFailure |
    nvmlEventTypeNonFatalPoisonError | nvmlEventTypeFatalPoisonError | nvmlEventTypeGpuUnavailableError |
    nvmlEventTypeGpuRecoveryAction;

// Clock event ("throttle") reasons, nvmlDeviceGetCurrentClocksEventReasons.
inline constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x0000000000000001ULL;
inline constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x0000000000000002ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x0000000000000004ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwSlowdown = 0x0000000000000008ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSyncBoost = 0x0000000000000010ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x0000000000000020ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwThermalSlowdown = 0x0000000000000040ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x0000000000000080ULL;
inline constexpr unsigned long long nvmlClocksEventReasonDisplayClockSetting = 0x0000000000000100ULL;
inline constexpr unsigned long long nvmlClocksEventReasonNone = 0x0000000000000000ULL;

// GPU fabric probe states (nvmlGpuFabricInfo*_t::state).
inline constexpr unsigned int NVML_GPU_FABRIC_UUID_LEN = 16;
using nvmlGpuFabricState_t = unsigned char;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_STARTED = 1;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_COMPLETED = 3;

// Helpers of nvml.h (macros there).
constexpr int NVML_CUDA_DRIVER_VERSION_MAJOR(int v) noexcept { return v / 1000; }
constexpr int NVML_CUDA_DRIVER_VERSION_MINOR(int v) noexcept { return (v % 1000) / 10; }

// ===========================================================================
// Enumerations
// ===========================================================================
// *_COUNT sentinels are given only where their NVML 13 value is known; they
// grow between NVML versions, so never size ABI-visible data with them.

enum nvmlEnableState_t : int {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1,
};

enum nvmlBrandType_t : int {
  NVML_BRAND_UNKNOWN = 0,
  NVML_BRAND_QUADRO = 1,
  NVML_BRAND_TESLA = 2,
  NVML_BRAND_NVS = 3,
  NVML_BRAND_GRID = 4,  // deprecated from API reporting
  NVML_BRAND_GEFORCE = 5,
  NVML_BRAND_TITAN = 6,
  NVML_BRAND_NVIDIA_VAPPS = 7,
  NVML_BRAND_NVIDIA_VPC = 8,
  NVML_BRAND_NVIDIA_VCS = 9,
  NVML_BRAND_NVIDIA_VWS = 10,
  NVML_BRAND_NVIDIA_CLOUD_GAMING = 11,
  NVML_BRAND_NVIDIA_VGAMING = 11,  // deprecated alias of CLOUD_GAMING
  NVML_BRAND_QUADRO_RTX = 12,
  NVML_BRAND_NVIDIA_RTX = 13,
  NVML_BRAND_NVIDIA = 14,
  NVML_BRAND_GEFORCE_RTX = 15,
  NVML_BRAND_TITAN_RTX = 16,
};

enum nvmlTemperatureThresholds_t : int {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN = 4,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR = 5,
  NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX = 6,
  NVML_TEMPERATURE_THRESHOLD_GPS_CURR = 7,
  NVML_TEMPERATURE_THRESHOLD_COUNT = 8,
};

enum nvmlTemperatureSensors_t : int {
  NVML_TEMPERATURE_GPU = 0,
  NVML_TEMPERATURE_COUNT = 1,
};

enum nvmlComputeMode_t : int {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,  // support removed; never reported
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
  NVML_COMPUTEMODE_COUNT = 4,
};

enum nvmlMemoryErrorType_t : int {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
  NVML_MEMORY_ERROR_TYPE_COUNT = 2,
};

enum nvmlEccCounterType_t : int {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1,
  NVML_ECC_COUNTER_TYPE_COUNT = 2,
};

enum nvmlMemoryLocation_t : int {
  NVML_MEMORY_LOCATION_L1_CACHE = 0,
  NVML_MEMORY_LOCATION_L2_CACHE = 1,
  NVML_MEMORY_LOCATION_DRAM = 2,
  NVML_MEMORY_LOCATION_DEVICE_MEMORY = 2,
  NVML_MEMORY_LOCATION_REGISTER_FILE = 3,
  NVML_MEMORY_LOCATION_TEXTURE_MEMORY = 4,
  NVML_MEMORY_LOCATION_TEXTURE_SHM = 5,
  NVML_MEMORY_LOCATION_CBU = 6,
  NVML_MEMORY_LOCATION_SRAM = 7,
};

enum nvmlClockType_t : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
  NVML_CLOCK_COUNT = 4,
};

enum nvmlClockId_t : int {
  NVML_CLOCK_ID_CURRENT = 0,
  NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
  NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
  NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3,
  NVML_CLOCK_ID_COUNT = 4,
};

enum nvmlDriverModel_t : int {
  NVML_DRIVER_WDDM = 0,
  NVML_DRIVER_WDM = 1,
};

enum nvmlPstates_t : int {
  NVML_PSTATE_0 = 0,  // maximum performance
  NVML_PSTATE_1 = 1,
  NVML_PSTATE_2 = 2,
  NVML_PSTATE_3 = 3,
  NVML_PSTATE_4 = 4,
  NVML_PSTATE_5 = 5,
  NVML_PSTATE_6 = 6,
  NVML_PSTATE_7 = 7,
  NVML_PSTATE_8 = 8,
  NVML_PSTATE_9 = 9,
  NVML_PSTATE_10 = 10,
  NVML_PSTATE_11 = 11,
  NVML_PSTATE_12 = 12,
  NVML_PSTATE_13 = 13,
  NVML_PSTATE_14 = 14,
  NVML_PSTATE_15 = 15,  // minimum performance
  NVML_PSTATE_UNKNOWN = 32,
};

enum nvmlGpuOperationMode_t : int {
  NVML_GOM_ALL_ON = 0,
  NVML_GOM_COMPUTE = 1,
  NVML_GOM_LOW_DP = 2,
};

enum nvmlInforomObject_t : int {
  NVML_INFOROM_OEM = 0,
  NVML_INFOROM_ECC = 1,
  NVML_INFOROM_POWER = 2,
};

enum nvmlPcieUtilCounter_t : int {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1,
  NVML_PCIE_UTIL_COUNT = 2,
};

enum nvmlValueType_t : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
  NVML_VALUE_TYPE_COUNT = 7,
};

enum nvmlSamplingType_t : int {
  NVML_TOTAL_POWER_SAMPLES = 0,
  NVML_GPU_UTILIZATION_SAMPLES = 1,
  NVML_MEMORY_UTILIZATION_SAMPLES = 2,
  NVML_ENC_UTILIZATION_SAMPLES = 3,
  NVML_DEC_UTILIZATION_SAMPLES = 4,
  NVML_PROCESSOR_CLK_SAMPLES = 5,
  NVML_MEMORY_CLK_SAMPLES = 6,
  NVML_MODULE_POWER_SAMPLES = 7,
};

enum nvmlGpuTopologyLevel_t : int {
  NVML_TOPOLOGY_INTERNAL = 0,
  NVML_TOPOLOGY_SINGLE = 10,
  NVML_TOPOLOGY_MULTIPLE = 20,
  NVML_TOPOLOGY_HOSTBRIDGE = 30,
  NVML_TOPOLOGY_NODE = 40,
  NVML_TOPOLOGY_CPU = 40,  // old name of NODE (a macro in nvml.h)
  NVML_TOPOLOGY_SYSTEM = 50,
};

enum nvmlGpuP2PStatus_t : int {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,  // sic, NVIDIA's spelling
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
  NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
  NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5,
  NVML_P2P_STATUS_UNKNOWN = 6,
};

enum nvmlGpuP2PCapsIndex_t : int {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PROP = 4,
  NVML_P2P_CAPS_INDEX_UNKNOWN = 5,
};

enum nvmlNvLinkCapability_t : int {
  NVML_NVLINK_CAP_P2P_SUPPORTED = 0,
  NVML_NVLINK_CAP_SYSMEM_ACCESS = 1,
  NVML_NVLINK_CAP_P2P_ATOMICS = 2,
  NVML_NVLINK_CAP_SYSMEM_ATOMICS = 3,
  NVML_NVLINK_CAP_SLI_BRIDGE = 4,
  NVML_NVLINK_CAP_VALID = 5,
  NVML_NVLINK_CAP_COUNT = 6,
};

enum nvmlIntNvLinkDeviceType_t : int {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
};

enum nvmlGpuVirtualizationMode_t : int {
  NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,  // bare metal
  NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1,
  NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4,
};

enum nvmlRestrictedAPI_t : int {
  NVML_RESTRICTED_API_SET_APPLICATION_CLOCKS = 0,
  NVML_RESTRICTED_API_SET_AUTO_BOOSTED_CLOCKS = 1,
};

// ===========================================================================
// Structs
// ===========================================================================

// nvmlDeviceGetPciInfo_v3 (and the unversioned name in current headers).
struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  // "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;                        // (device id << 16) | vendor id
  unsigned int pciSubSystemId;                     // (subsystem id << 16) | subsystem vendor id
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "%08X:%02X:%02X.0"
};
using nvmlPciInfo_t = nvmlPciInfo_st;

// Layout behind the exported nvmlDeviceGetPciInfo (v1) and
// nvmlDeviceGetPciInfo_v2: the pre-v3 nvmlPciInfo_t (NVML <= 8 headers).
// NVIDIA never gave it a separate name; this one is ours.
struct nvmlPciInfoLegacy_t {
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  // 16 bytes, 4-digit domain
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int reserved0;
  unsigned int reserved1;
  unsigned int reserved2;
  unsigned int reserved3;
};

struct nvmlUtilization_st {
  unsigned int gpu;     // percent
  unsigned int memory;  // percent
};
using nvmlUtilization_t = nvmlUtilization_st;

// nvmlDeviceGetMemoryInfo (v1): total = free + used.
struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using nvmlMemory_t = nvmlMemory_st;

// nvmlDeviceGetMemoryInfo_v2: version@0, then 4 bytes of padding, total@8.
// used includes reserved.
struct nvmlMemory_v2_st {
  unsigned int version;  // must be nvmlMemory_v2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
using nvmlMemory_v2_t = nvmlMemory_v2_st;
inline constexpr unsigned int nvmlMemory_v2 = nvmlStructVersion(sizeof(nvmlMemory_v2_t), 2);

struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
};
using nvmlBAR1Memory_t = nvmlBAR1Memory_st;

// Entry of the unversioned nvmlDevice{Compute,Graphics,MPSCompute}RunningProcesses.
struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE_ULL if unknown
};
using nvmlProcessInfo_v1_t = nvmlProcessInfo_v1_st;

// Entry of the _v2 and _v3 variants. gpuInstanceId / computeInstanceId are
// 0xFFFFFFFF when MIG is off.
struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
using nvmlProcessInfo_v2_t = nvmlProcessInfo_v2_st;
using nvmlProcessInfo_t = nvmlProcessInfo_v2_st;  // the _v3 ABI in NVML 13

// nvmlDeviceGetRunningProcessDetailList entry and list.
struct nvmlProcessDetail_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};

struct nvmlProcessDetailList_v1_t {
  unsigned int version;              // must be nvmlProcessDetailList_v1
  unsigned int mode;                 // 0 compute, 1 graphics, 2 MPS compute
  unsigned int numProcArrayEntries;  // in: capacity, out: count
  nvmlProcessDetail_v1_t* procArray;
};
using nvmlProcessDetailList_t = nvmlProcessDetailList_v1_t;
inline constexpr unsigned int nvmlProcessDetailList_v1 = nvmlStructVersion(sizeof(nvmlProcessDetailList_v1_t), 1);

struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
using nvmlProcessUtilizationSample_t = nvmlProcessUtilizationSample_st;

struct nvmlDeviceAttributes_st {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
using nvmlDeviceAttributes_t = nvmlDeviceAttributes_st;

union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;  // 8 bytes on LP64
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};
using nvmlValue_t = nvmlValue_st;

struct nvmlSample_st {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
};
using nvmlSample_t = nvmlSample_st;

// nvmlDeviceGetFieldValues element. The caller sets fieldId (and scopeId);
// NVML fills the rest and reports per-field status in nvmlReturn.
struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;  // e.g. NVLink id; "unused" in old headers
  long long timestamp;   // microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
using nvmlFieldValue_t = nvmlFieldValue_st;

// nvmlEventSetWait_v2 result.
struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;  // one nvmlEventType* bit
  unsigned long long eventData;  // Xid for XidCriticalError, else 0
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
using nvmlEventData_t = nvmlEventData_st;

// nvmlDeviceGetTemperatureV argument.
struct nvmlTemperature_v1_t {
  unsigned int version;  // must be nvmlTemperature_v1
  nvmlTemperatureSensors_t sensorType;
  int temperature;  // degrees C (signed, unlike the v1 API)
};
using nvmlTemperature_t = nvmlTemperature_v1_t;
inline constexpr unsigned int nvmlTemperature_v1 = nvmlStructVersion(sizeof(nvmlTemperature_v1_t), 1);

// Confidential computing protected-memory sizes (KiB).
struct nvmlConfComputeMemSizeInfo_st {
  unsigned long long protectedMemSizeKib;
  unsigned long long unprotectedMemSizeKib;
};
using nvmlConfComputeMemSizeInfo_t = nvmlConfComputeMemSizeInfo_st;

// Confidential computing, system-wide: nvmlSystemGetConfComputeState (unversioned) and
// nvmlSystemGetConfComputeSettings (versioned, adds the multi-GPU mode). All fields are the
// NVML_CC_SYSTEM_* enumerations; 0 is "unavailable" / "disabled" / "none" throughout.
struct nvmlConfComputeSystemState_t {
  unsigned int environment;
  unsigned int ccFeature;
  unsigned int devToolsMode;
};

struct nvmlSystemConfComputeSettings_v1_t {
  unsigned int version;
  unsigned int environment;
  unsigned int ccFeature;
  unsigned int devToolsMode;
  unsigned int multiGpuMode;
};
using nvmlSystemConfComputeSettings_t = nvmlSystemConfComputeSettings_v1_t;
inline constexpr unsigned int nvmlSystemConfComputeSettings_v1 = nvmlStructVersion(
    sizeof(nvmlSystemConfComputeSettings_v1_t), 1);

// nvmlDeviceGetGpuFabricInfo (unversioned, deprecated).
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
};

// nvmlDeviceGetGpuFabricInfoV: version first. v2 adds healthMask, v3 adds
// healthSummary; nvmlGpuFabricInfoV_t is v3 in NVML 13. A v2 caller passes
// a 36-byte buffer: check `version` before writing healthSummary.
struct nvmlGpuFabricInfo_v2_t {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
};

struct nvmlGpuFabricInfo_v3_t {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
  unsigned char healthSummary;
};
using nvmlGpuFabricInfoV_t = nvmlGpuFabricInfo_v3_t;
inline constexpr unsigned int nvmlGpuFabricInfo_v2 = nvmlStructVersion(sizeof(nvmlGpuFabricInfo_v2_t), 2);
inline constexpr unsigned int nvmlGpuFabricInfo_v3 = nvmlStructVersion(sizeof(nvmlGpuFabricInfo_v3_t), 3);

// ===========================================================================
// Layout pins (x86-64 Linux, LP64). A failure here means a field was added,
// dropped or retyped; fix the struct, do not adjust the number.
// ===========================================================================
static_assert(sizeof(void*) == 8 && sizeof(long) == 8,
              "fgapi NVML layouts are written for LP64 (x86-64 / aarch64 Linux)");
static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlDevice_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlPciInfoLegacy_t) == 52);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlBAR1Memory_t) == 24);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(sizeof(nvmlProcessDetail_v1_t) == 32);
static_assert(sizeof(nvmlProcessDetailList_v1_t) == 24);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(sizeof(nvmlDeviceAttributes_t) == 40);
static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlSample_t) == 16);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(sizeof(nvmlTemperature_t) == 12);
static_assert(sizeof(nvmlConfComputeMemSizeInfo_t) == 16);
static_assert(sizeof(nvmlConfComputeSystemState_t) == 12);
static_assert(sizeof(nvmlSystemConfComputeSettings_v1_t) == 20);
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28);
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36);
static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40);

// Version constants as nvml.h spells them out (and as clients hard-code them).
static_assert(nvmlMemory_v2 == 0x02000028U);
static_assert(nvmlProcessDetailList_v1 == 0x01000018U);
static_assert(nvmlTemperature_v1 == 0x0100000CU);
static_assert(nvmlGpuFabricInfo_v2 == 0x02000024U);
static_assert(nvmlSystemConfComputeSettings_v1 == 0x01000014U);
static_assert(nvmlGpuFabricInfo_v3 == 0x03000028U);

}  // namespace fgapi
