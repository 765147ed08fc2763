// SPDX-License-Identifier: Apache-2.0
// ABI test: fgapi's own NVML declarations (fakebackend/include/fakegpu/nvml_types.h)
// against the public nvml.h (NVML_API_VERSION 13).
//
// No nvml.h exists on the build machines, so the expected numbers are written
// out here. Sources:
//   [M] measured: research/api-census.md §2.3 and
//       census-probes/results/abi_nvml.txt (abi_nvml.c compiled against
//       NVIDIA/go-nvml pkg/nvml/nvml.h);
//   [H] read from the public header's field list and laid out by the LP64
//       rules (4-byte int/enum, 8-byte pointer/long/long long, natural
//       alignment), or quoted from the NVML API reference (R580/R590).
// A failure means our declaration drifted from the header: fix the header,
// not the expected number.

#include "fakegpu/nvml_types.h"

#include <cstddef>
#include <type_traits>
#include <utility>

#include <catch2/catch.hpp>

namespace nv = fgapi;

TEST_CASE("NVML return codes have the nvml.h values", "[abi]") {
  STATIC_REQUIRE(sizeof(nv::nvmlReturn_t) == 4);
  CHECK(nv::NVML_SUCCESS == 0);
  CHECK(nv::NVML_ERROR_UNINITIALIZED == 1);
  CHECK(nv::NVML_ERROR_INVALID_ARGUMENT == 2);
  CHECK(nv::NVML_ERROR_NOT_SUPPORTED == 3);
  CHECK(nv::NVML_ERROR_NO_PERMISSION == 4);
  CHECK(nv::NVML_ERROR_ALREADY_INITIALIZED == 5);
  CHECK(nv::NVML_ERROR_NOT_FOUND == 6);
  CHECK(nv::NVML_ERROR_INSUFFICIENT_SIZE == 7);
  CHECK(nv::NVML_ERROR_INSUFFICIENT_POWER == 8);
  CHECK(nv::NVML_ERROR_DRIVER_NOT_LOADED == 9);
  CHECK(nv::NVML_ERROR_TIMEOUT == 10);
  CHECK(nv::NVML_ERROR_IRQ_ISSUE == 11);
  CHECK(nv::NVML_ERROR_LIBRARY_NOT_FOUND == 12);
  CHECK(nv::NVML_ERROR_FUNCTION_NOT_FOUND == 13);
  CHECK(nv::NVML_ERROR_CORRUPTED_INFOROM == 14);
  CHECK(nv::NVML_ERROR_GPU_IS_LOST == 15);
  CHECK(nv::NVML_ERROR_RESET_REQUIRED == 16);
  CHECK(nv::NVML_ERROR_OPERATING_SYSTEM == 17);
  CHECK(nv::NVML_ERROR_LIB_RM_VERSION_MISMATCH == 18);
  CHECK(nv::NVML_ERROR_IN_USE == 19);
  CHECK(nv::NVML_ERROR_MEMORY == 20);
  CHECK(nv::NVML_ERROR_NO_DATA == 21);
  CHECK(nv::NVML_ERROR_VGPU_ECC_NOT_SUPPORTED == 22);
  CHECK(nv::NVML_ERROR_INSUFFICIENT_RESOURCES == 23);
  CHECK(nv::NVML_ERROR_FREQ_NOT_SUPPORTED == 24);
  CHECK(nv::NVML_ERROR_ARGUMENT_VERSION_MISMATCH == 25);
  CHECK(nv::NVML_ERROR_DEPRECATED == 26);
  CHECK(nv::NVML_ERROR_NOT_READY == 27);
  CHECK(nv::NVML_ERROR_GPU_NOT_FOUND == 28);
  CHECK(nv::NVML_ERROR_INVALID_STATE == 29);
  CHECK(nv::NVML_ERROR_RESET_TYPE_NOT_SUPPORTED == 30);
  CHECK(nv::NVML_ERROR_UNKNOWN == 999);
}

TEST_CASE("NVML constants have the nvml.h values", "[abi]") {
  // [M] buffer sizes
  CHECK(nv::NVML_DEVICE_UUID_V2_BUFFER_SIZE == 96);
  CHECK(nv::NVML_DEVICE_NAME_V2_BUFFER_SIZE == 96);
  CHECK(nv::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE == 80);
  CHECK(nv::NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE == 32);
  // [H] buffer sizes
  CHECK(nv::NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE == 16);
  CHECK(nv::NVML_DEVICE_UUID_BUFFER_SIZE == 80);
  CHECK(nv::NVML_DEVICE_PART_NUMBER_BUFFER_SIZE == 80);
  CHECK(nv::NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE == 80);
  CHECK(nv::NVML_DEVICE_NAME_BUFFER_SIZE == 64);
  CHECK(nv::NVML_DEVICE_SERIAL_BUFFER_SIZE == 30);
  CHECK(nv::NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE == 32);
  CHECK(nv::NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE == 16);

  // [M] versioned-struct constants
  CHECK(nv::nvmlMemory_v2 == 0x02000028U);
  CHECK(nv::nvmlProcessDetailList_v1 == 0x01000018U);
  // [H] sizeof | version << 24
  CHECK(nv::nvmlTemperature_v1 == 0x0100000CU);
  CHECK(nv::nvmlGpuFabricInfo_v2 == 0x02000024U);
  CHECK(nv::nvmlGpuFabricInfo_v3 == 0x03000028U);
  CHECK(nv::nvmlStructVersion(40, 2) == 0x02000028U);

  // [H]
  CHECK(nv::NVML_VALUE_NOT_AVAILABLE == -1);
  CHECK(nv::NVML_VALUE_NOT_AVAILABLE_ULL == 0xFFFFFFFFFFFFFFFFULL);
  CHECK(nv::NVML_INIT_FLAG_NO_GPUS == 1U);
  CHECK(nv::NVML_INIT_FLAG_NO_ATTACH == 2U);
  CHECK(nv::NVML_DEVICE_ARCH_KEPLER == 2U);
  CHECK(nv::NVML_DEVICE_ARCH_AMPERE == 7U);
  CHECK(nv::NVML_DEVICE_ARCH_HOPPER == 9U);
  CHECK(nv::NVML_DEVICE_ARCH_BLACKWELL == 10U);
  CHECK(nv::NVML_DEVICE_ARCH_UNKNOWN == 0xffffffffU);
  CHECK(nv::NVML_CUDA_DRIVER_VERSION_MAJOR(13000) == 13);
  CHECK(nv::NVML_CUDA_DRIVER_VERSION_MINOR(12090) == 9);

  // [H] event type bits
  CHECK(nv::nvmlEventTypeSingleBitEccError == 0x1ULL);
  CHECK(nv::nvmlEventTypeDoubleBitEccError == 0x2ULL);
  CHECK(nv::nvmlEventTypePState == 0x4ULL);
  CHECK(nv::nvmlEventTypeXidCriticalError == 0x8ULL);
  CHECK(nv::nvmlEventTypeClock == 0x10ULL);
  CHECK(nv::nvmlEventTypePowerSourceChange == 0x80ULL);
  CHECK(nv::nvmlEventMigConfigChange == 0x100ULL);
  CHECK(nv::nvmlEventTypeSingleBitEccErrorStorm == 0x200ULL);
  CHECK(nv::nvmlEventTypeDramRetirementEvent == 0x400ULL);
  CHECK(nv::nvmlEventTypeDramRetirementFailure == 0x800ULL);
  CHECK(nv::nvmlEventTypeNonFatalPoisonError == 0x1000ULL);
  CHECK(nv::nvmlEventTypeFatalPoisonError == 0x2000ULL);
  CHECK(nv::nvmlEventTypeGpuUnavailableError == 0x4000ULL);
  CHECK(nv::nvmlEventTypeGpuRecoveryAction == 0x8000ULL);
  CHECK(nv::nvmlEventTypeAll == 0xFF9FULL);
}

TEST_CASE("NVML enumerations have the nvml.h values", "[abi]") {
  // [H] enums are 4 bytes like a C enum
  STATIC_REQUIRE(sizeof(nv::nvmlEnableState_t) == 4);
  STATIC_REQUIRE(sizeof(nv::nvmlTemperatureSensors_t) == 4);
  STATIC_REQUIRE(sizeof(nv::nvmlValueType_t) == 4);
  STATIC_REQUIRE(sizeof(nv::nvmlPstates_t) == 4);

  CHECK(nv::NVML_FEATURE_DISABLED == 0);
  CHECK(nv::NVML_FEATURE_ENABLED == 1);
  CHECK(nv::NVML_TEMPERATURE_GPU == 0);
  CHECK(nv::NVML_TEMPERATURE_COUNT == 1);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN == 0);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN == 1);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_MEM_MAX == 2);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_GPU_MAX == 3);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN == 4);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR == 5);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX == 6);
  CHECK(nv::NVML_TEMPERATURE_THRESHOLD_GPS_CURR == 7);
  CHECK(nv::NVML_CLOCK_GRAPHICS == 0);
  CHECK(nv::NVML_CLOCK_SM == 1);
  CHECK(nv::NVML_CLOCK_MEM == 2);
  CHECK(nv::NVML_CLOCK_VIDEO == 3);
  CHECK(nv::NVML_CLOCK_ID_CURRENT == 0);
  CHECK(nv::NVML_CLOCK_ID_APP_CLOCK_TARGET == 1);
  CHECK(nv::NVML_CLOCK_ID_APP_CLOCK_DEFAULT == 2);
  CHECK(nv::NVML_CLOCK_ID_CUSTOMER_BOOST_MAX == 3);
  CHECK(nv::NVML_PSTATE_0 == 0);
  CHECK(nv::NVML_PSTATE_15 == 15);
  CHECK(nv::NVML_PSTATE_UNKNOWN == 32);
  CHECK(nv::NVML_COMPUTEMODE_DEFAULT == 0);
  CHECK(nv::NVML_COMPUTEMODE_PROHIBITED == 2);
  CHECK(nv::NVML_COMPUTEMODE_EXCLUSIVE_PROCESS == 3);
  CHECK(nv::NVML_PCIE_UTIL_TX_BYTES == 0);
  CHECK(nv::NVML_PCIE_UTIL_RX_BYTES == 1);
  CHECK(nv::NVML_BRAND_UNKNOWN == 0);
  CHECK(nv::NVML_BRAND_TESLA == 2);
  CHECK(nv::NVML_BRAND_GEFORCE == 5);
  CHECK(nv::NVML_BRAND_NVIDIA == 14);
  CHECK(nv::NVML_BRAND_TITAN_RTX == 16);
  CHECK(nv::NVML_VALUE_TYPE_DOUBLE == 0);
  CHECK(nv::NVML_VALUE_TYPE_UNSIGNED_LONG_LONG == 3);
  CHECK(nv::NVML_VALUE_TYPE_SIGNED_INT == 5);
  CHECK(nv::NVML_VALUE_TYPE_UNSIGNED_SHORT == 6);
  CHECK(nv::NVML_TOPOLOGY_INTERNAL == 0);
  CHECK(nv::NVML_TOPOLOGY_SINGLE == 10);
  CHECK(nv::NVML_TOPOLOGY_NODE == 40);
  CHECK(nv::NVML_TOPOLOGY_SYSTEM == 50);
  CHECK(nv::NVML_P2P_STATUS_OK == 0);
  CHECK(nv::NVML_P2P_STATUS_NOT_SUPPORTED == 5);
  CHECK(nv::NVML_P2P_STATUS_UNKNOWN == 6);
  CHECK(nv::NVML_GPU_VIRTUALIZATION_MODE_NONE == 0);
  CHECK(nv::NVML_NVLINK_DEVICE_TYPE_GPU == 0);
  CHECK(nv::NVML_NVLINK_DEVICE_TYPE_SWITCH == 2);
  CHECK(nv::NVML_NVLINK_DEVICE_TYPE_UNKNOWN == 0xFF);
  CHECK(nv::NVML_MEMORY_ERROR_TYPE_UNCORRECTED == 1);
  CHECK(nv::NVML_AGGREGATE_ECC == 1);
  CHECK(nv::NVML_MEMORY_LOCATION_DEVICE_MEMORY == 2);
  CHECK(nv::NVML_MEMORY_LOCATION_SRAM == 7);
}

// Offsets and sizes. FG_OFF checks one field's offset and size.
#define FG_OFF(T, F, OFFSET, SIZE)                  \
  CHECK(offsetof(nv::T, F) == std::size_t{OFFSET}); \
  CHECK(sizeof(std::declval<nv::T&>().F) == std::size_t{SIZE});

TEST_CASE("NVML process structs", "[abi]") {
  // [M] entry of the unversioned *RunningProcesses (v1 ABI)
  CHECK(sizeof(nv::nvmlProcessInfo_v1_t) == 16);
  FG_OFF(nvmlProcessInfo_v1_t, pid, 0, 4)
  FG_OFF(nvmlProcessInfo_v1_t, usedGpuMemory, 8, 8)
  // [M] entry of _v2 / _v3
  CHECK(sizeof(nv::nvmlProcessInfo_v2_t) == 24);
  FG_OFF(nvmlProcessInfo_v2_t, pid, 0, 4)
  FG_OFF(nvmlProcessInfo_v2_t, usedGpuMemory, 8, 8)
  FG_OFF(nvmlProcessInfo_v2_t, gpuInstanceId, 16, 4)
  FG_OFF(nvmlProcessInfo_v2_t, computeInstanceId, 20, 4)
  CHECK(sizeof(nv::nvmlProcessInfo_t) == 24);
  STATIC_REQUIRE(std::is_same_v<nv::nvmlProcessInfo_t, nv::nvmlProcessInfo_v2_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(nv::nvmlProcessInfo_t::usedGpuMemory), unsigned long long>);
  // [M] nvmlDeviceGetRunningProcessDetailList
  CHECK(sizeof(nv::nvmlProcessDetail_v1_t) == 32);
  FG_OFF(nvmlProcessDetail_v1_t, gpuInstanceId, 16, 4)
  FG_OFF(nvmlProcessDetail_v1_t, computeInstanceId, 20, 4)
  FG_OFF(nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory, 24, 8)
  CHECK(sizeof(nv::nvmlProcessDetailList_v1_t) == 24);
  FG_OFF(nvmlProcessDetailList_v1_t, version, 0, 4)  // [H]
  FG_OFF(nvmlProcessDetailList_v1_t, mode, 4, 4)     // [H]
  FG_OFF(nvmlProcessDetailList_v1_t, numProcArrayEntries, 8, 4)
  FG_OFF(nvmlProcessDetailList_v1_t, procArray, 16, 8)
  // [M] size, [H] offsets
  CHECK(sizeof(nv::nvmlProcessUtilizationSample_t) == 32);
  FG_OFF(nvmlProcessUtilizationSample_t, pid, 0, 4)
  FG_OFF(nvmlProcessUtilizationSample_t, timeStamp, 8, 8)
  FG_OFF(nvmlProcessUtilizationSample_t, smUtil, 16, 4)
  FG_OFF(nvmlProcessUtilizationSample_t, memUtil, 20, 4)
  FG_OFF(nvmlProcessUtilizationSample_t, encUtil, 24, 4)
  FG_OFF(nvmlProcessUtilizationSample_t, decUtil, 28, 4)
}

TEST_CASE("NVML memory and utilization structs", "[abi]") {
  // [M]
  CHECK(sizeof(nv::nvmlMemory_t) == 24);
  FG_OFF(nvmlMemory_t, total, 0, 8)
  FG_OFF(nvmlMemory_t, free, 8, 8)
  FG_OFF(nvmlMemory_t, used, 16, 8)
  CHECK(sizeof(nv::nvmlMemory_v2_t) == 40);
  FG_OFF(nvmlMemory_v2_t, version, 0, 4)
  FG_OFF(nvmlMemory_v2_t, total, 8, 8)
  FG_OFF(nvmlMemory_v2_t, reserved, 16, 8)
  FG_OFF(nvmlMemory_v2_t, free, 24, 8)
  FG_OFF(nvmlMemory_v2_t, used, 32, 8)
  CHECK(sizeof(nv::nvmlBAR1Memory_t) == 24);
  FG_OFF(nvmlBAR1Memory_t, bar1Total, 0, 8)
  FG_OFF(nvmlBAR1Memory_t, bar1Free, 8, 8)
  FG_OFF(nvmlBAR1Memory_t, bar1Used, 16, 8)
  CHECK(sizeof(nv::nvmlUtilization_t) == 8);
  FG_OFF(nvmlUtilization_t, gpu, 0, 4)
  FG_OFF(nvmlUtilization_t, memory, 4, 4)
  // [H]
  CHECK(sizeof(nv::nvmlConfComputeMemSizeInfo_t) == 16);
  FG_OFF(nvmlConfComputeMemSizeInfo_t, protectedMemSizeKib, 0, 8)
  FG_OFF(nvmlConfComputeMemSizeInfo_t, unprotectedMemSizeKib, 8, 8)
  CHECK(sizeof(nv::nvmlDeviceAttributes_t) == 40);
  FG_OFF(nvmlDeviceAttributes_t, multiprocessorCount, 0, 4)
  FG_OFF(nvmlDeviceAttributes_t, computeInstanceSliceCount, 28, 4)
  FG_OFF(nvmlDeviceAttributes_t, memorySizeMB, 32, 8)
}

TEST_CASE("NVML PCI info structs", "[abi]") {
  // [M] nvmlDeviceGetPciInfo_v3
  CHECK(sizeof(nv::nvmlPciInfo_t) == 68);
  FG_OFF(nvmlPciInfo_t, busIdLegacy, 0, 16)
  FG_OFF(nvmlPciInfo_t, domain, 16, 4)
  FG_OFF(nvmlPciInfo_t, bus, 20, 4)
  FG_OFF(nvmlPciInfo_t, device, 24, 4)
  FG_OFF(nvmlPciInfo_t, pciDeviceId, 28, 4)
  FG_OFF(nvmlPciInfo_t, pciSubSystemId, 32, 4)
  FG_OFF(nvmlPciInfo_t, busId, 36, 32)
  // [H] pre-v3 layout behind nvmlDeviceGetPciInfo / _v2 (NVML <= 8 headers)
  CHECK(sizeof(nv::nvmlPciInfoLegacy_t) == 52);
  FG_OFF(nvmlPciInfoLegacy_t, busId, 0, 16)
  FG_OFF(nvmlPciInfoLegacy_t, domain, 16, 4)
  FG_OFF(nvmlPciInfoLegacy_t, pciDeviceId, 28, 4)
  FG_OFF(nvmlPciInfoLegacy_t, pciSubSystemId, 32, 4)
  FG_OFF(nvmlPciInfoLegacy_t, reserved0, 36, 4)
  FG_OFF(nvmlPciInfoLegacy_t, reserved3, 48, 4)
  // The fields both layouts share sit at the same offsets, so one fill
  // routine can serve the prefix of both.
  CHECK(offsetof(nv::nvmlPciInfoLegacy_t, pciSubSystemId) == offsetof(nv::nvmlPciInfo_t, pciSubSystemId));
}

TEST_CASE("NVML field values, samples and events", "[abi]") {
  // [M] size, [H] offsets
  CHECK(sizeof(nv::nvmlFieldValue_t) == 40);
  FG_OFF(nvmlFieldValue_t, fieldId, 0, 4)
  FG_OFF(nvmlFieldValue_t, scopeId, 4, 4)
  FG_OFF(nvmlFieldValue_t, timestamp, 8, 8)
  FG_OFF(nvmlFieldValue_t, latencyUsec, 16, 8)
  FG_OFF(nvmlFieldValue_t, valueType, 24, 4)
  FG_OFF(nvmlFieldValue_t, nvmlReturn, 28, 4)
  FG_OFF(nvmlFieldValue_t, value, 32, 8)
  // [H]
  CHECK(sizeof(nv::nvmlValue_t) == 8);
  CHECK(sizeof(nv::nvmlSample_t) == 16);
  FG_OFF(nvmlSample_t, sampleValue, 8, 8)
  CHECK(sizeof(nv::nvmlEventData_t) == 32);
  FG_OFF(nvmlEventData_t, device, 0, 8)
  FG_OFF(nvmlEventData_t, eventType, 8, 8)
  FG_OFF(nvmlEventData_t, eventData, 16, 8)
  FG_OFF(nvmlEventData_t, gpuInstanceId, 24, 4)
  FG_OFF(nvmlEventData_t, computeInstanceId, 28, 4)
  STATIC_REQUIRE(sizeof(nv::nvmlEventSet_t) == 8);
  STATIC_REQUIRE(sizeof(nv::nvmlDevice_t) == 8);
  CHECK(sizeof(nv::nvmlTemperature_t) == 12);
  FG_OFF(nvmlTemperature_t, version, 0, 4)
  FG_OFF(nvmlTemperature_t, sensorType, 4, 4)
  FG_OFF(nvmlTemperature_t, temperature, 8, 4)
}

TEST_CASE("NVML GPU fabric info structs", "[abi]") {
  // [H]
  CHECK(sizeof(nv::nvmlGpuFabricInfo_t) == 28);
  FG_OFF(nvmlGpuFabricInfo_t, clusterUuid, 0, 16)
  FG_OFF(nvmlGpuFabricInfo_t, status, 16, 4)
  FG_OFF(nvmlGpuFabricInfo_t, cliqueId, 20, 4)
  FG_OFF(nvmlGpuFabricInfo_t, state, 24, 1)
  CHECK(sizeof(nv::nvmlGpuFabricInfo_v2_t) == 36);
  FG_OFF(nvmlGpuFabricInfo_v2_t, version, 0, 4)
  FG_OFF(nvmlGpuFabricInfo_v2_t, clusterUuid, 4, 16)
  FG_OFF(nvmlGpuFabricInfo_v2_t, status, 20, 4)
  FG_OFF(nvmlGpuFabricInfo_v2_t, cliqueId, 24, 4)
  FG_OFF(nvmlGpuFabricInfo_v2_t, state, 28, 1)
  FG_OFF(nvmlGpuFabricInfo_v2_t, healthMask, 32, 4)
  CHECK(sizeof(nv::nvmlGpuFabricInfo_v3_t) == 40);
  FG_OFF(nvmlGpuFabricInfo_v3_t, healthMask, 32, 4)
  FG_OFF(nvmlGpuFabricInfo_v3_t, healthSummary, 36, 1)
  STATIC_REQUIRE(std::is_same_v<nv::nvmlGpuFabricInfoV_t, nv::nvmlGpuFabricInfo_v3_t>);
}
