// SPDX-License-Identifier: Apache-2.0
// NVML sensors and state: utilization, temperature (+ thresholds, TemperatureV), power, clocks,
// fan, PCIe, performance state, compute / persistence / display modes, ECC, field values, and
// the NVLink queries PyTorch asserts are exported. Numbers come from the DeviceModel; the fake
// GPU is idle (0 % utilization, idle clocks and power) and has no NVLink.
#include "nvml/common.h"

#include <cstring>
#include <iterator>

using namespace fg::nvml;

namespace {

bool ecc_enabled(const fg::DeviceModel& m) { return m.attributes[fg::attr::ECC_ENABLED] != 0; }

// The utilization sampling period the real library reports for datacenter parts (µs).
constexpr unsigned kSamplingPeriodUs = 167000;

// A GPU without NVLink says so for every link number, in range or not (a real H200 without
// NVLink answers NOT_SUPPORTED for links 0..19).
nvmlReturn_t no_nvlink(nvmlDevice_t device, unsigned /*link*/, const void* out) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;
  });
}

// The clock of one domain: NOT_SUPPORTED for a domain the query does not cover (`covered`)
// and for a clock type outside nvmlClockType_t, as a real H200 answers.
nvmlReturn_t clock_of(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock, unsigned covered,
                      unsigned (*value)(const fg::DeviceModel&, nvmlClockType_t)) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
    if (type < 0 || type >= NVML_CLOCK_COUNT || !(covered & (1u << type))) return NVML_ERROR_NOT_SUPPORTED;
    *clock = value(h.model, type);
    return NVML_SUCCESS;
  });
}

constexpr unsigned kAllClocks = 0xF;
constexpr unsigned kGraphicsSmMem = (1u << NVML_CLOCK_GRAPHICS) | (1u << NVML_CLOCK_SM) | (1u << NVML_CLOCK_MEM);
constexpr unsigned kGraphicsSm = (1u << NVML_CLOCK_GRAPHICS) | (1u << NVML_CLOCK_SM);

unsigned current_clock(const fg::DeviceModel& m, nvmlClockType_t t) {
  const unsigned v[] = {m.clock_graphics_mhz, m.clock_sm_mhz, m.clock_mem_mhz, m.clock_video_mhz};
  return v[t];
}
// Maximum, application (no clocks are locked: the defaults) and customer boost clocks.
unsigned max_clock(const fg::DeviceModel& m, nvmlClockType_t t) {
  const unsigned v[] = {m.max_clock_graphics_mhz, m.max_clock_sm_mhz, m.max_clock_mem_mhz, m.max_clock_video_mhz};
  return v[t];
}

}  // namespace

// ---- utilization -----------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                                     nvmlUtilization_t* utilization) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
    utilization->gpu = 0;  // kernels are recorded, never run
    utilization->memory = 0;
    return NVML_SUCCESS;
  });
}

static nvmlReturn_t codec_utilization(nvmlDevice_t device, unsigned* utilization, unsigned* sampling_period_us) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!utilization || !sampling_period_us) return NVML_ERROR_INVALID_ARGUMENT;
    *utilization = 0;
    *sampling_period_us = kSamplingPeriodUs;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                                                       unsigned int* sampling_period_us) {
  return codec_utilization(device, utilization, sampling_period_us);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                                                       unsigned int* sampling_period_us) {
  return codec_utilization(device, utilization, sampling_period_us);
}

// ---- temperature -----------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                                nvmlTemperatureSensors_t sensor_type,
                                                                unsigned int* temp) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!temp || sensor_type != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    *temp = h.model.temperature_c;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!temperature) return NVML_ERROR_INVALID_ARGUMENT;
    if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    temperature->temperature = static_cast<int>(h.model.temperature_c);
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                                                         nvmlTemperatureThresholds_t threshold_type,
                                                                         unsigned int* temp) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!temp) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned value = 0;
    switch (threshold_type) {
      case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: value = h.model.temp_shutdown_c; break;
      case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: value = h.model.temp_slowdown_c; break;
      case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: value = h.model.temp_max_mem_c; break;
      case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: value = h.model.temp_max_gpu_c; break;
      default:
        // Acoustic and GPS thresholds exist on no modelled part; anything else is no threshold.
        return static_cast<int>(threshold_type) >= 0 &&
                       static_cast<int>(threshold_type) < static_cast<int>(NVML_TEMPERATURE_THRESHOLD_COUNT)
                   ? NVML_ERROR_NOT_SUPPORTED
                   : NVML_ERROR_INVALID_ARGUMENT;
    }
    if (value == 0) return NVML_ERROR_NOT_SUPPORTED;  // e.g. no memory sensor (GDDR parts)
    *temp = value;
    return NVML_SUCCESS;
  });
}

// ---- power -----------------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return device_value(device, power, [](DeviceHandle& h) { return h.model.power_usage_mw; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return device_value(device, limit, [](DeviceHandle& h) { return h.model.power_limit_mw; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return device_value(device, limit, [](DeviceHandle& h) { return h.model.power_limit_mw; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                                                unsigned int* default_limit) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!default_limit) return NVML_ERROR_INVALID_ARGUMENT;
    *default_limit = h.model.power_default_limit_mw;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                                    unsigned int* min_limit,
                                                                                    unsigned int* max_limit) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!min_limit || !max_limit) return NVML_ERROR_INVALID_ARGUMENT;
    *min_limit = h.model.power_min_limit_mw;
    *max_limit = h.model.power_max_limit_mw;
    return NVML_SUCCESS;
  });
}

// ---- clocks ----------------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                              unsigned int* clock) {
  return clock_of(device, type, clock, kAllClocks, current_clock);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                                 unsigned int* clock) {
  return clock_of(device, type, clock, kAllClocks, max_clock);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                                      unsigned int* clockMHz) {
  return clock_of(device, clockType, clockMHz, kGraphicsSmMem, max_clock);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device,
                                                                             nvmlClockType_t clockType,
                                                                             unsigned int* clockMHz) {
  return clock_of(device, clockType, clockMHz, kGraphicsSmMem, max_clock);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device,
                                                                          nvmlClockType_t clockType,
                                                                          unsigned int* clockMHz) {
  return clock_of(device, clockType, clockMHz, kGraphicsSm, max_clock);
}

// Clocks follow the load (no fixed clocks): enabled, as a real H200 reports.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetAdaptiveClockInfoStatus(nvmlDevice_t device,
                                                                            unsigned int* adaptiveClockStatus) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!adaptiveClockStatus) return NVML_ERROR_INVALID_ARGUMENT;
    *adaptiveClockStatus = 1;  // NVML_ADAPTIVE_CLOCKING_INFO_STATUS_ENABLED
    return NVML_SUCCESS;
  });
}

// ---- fan -------------------------------------------------------------------------------------
// A passively cooled part has no fans: 0, where the fan speed itself is NOT_SUPPORTED.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* numFans) {
  return device_value(device, numFans, [](DeviceHandle& h) { return h.model.has_fan ? 1 : 0; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!speed) return NVML_ERROR_INVALID_ARGUMENT;
    if (!h.model.has_fan) return NVML_ERROR_NOT_SUPPORTED;  // passively cooled
    *speed = h.model.fan_speed_pct;
    return NVML_SUCCESS;
  });
}

// ---- PCIe ------------------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return device_value(device, gen, [](DeviceHandle& h) { return h.model.pcie_cur_gen; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return device_value(device, width, [](DeviceHandle& h) { return h.model.pcie_cur_width; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return device_value(device, gen, [](DeviceHandle& h) { return h.model.pcie_max_gen; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return device_value(device, width, [](DeviceHandle& h) { return h.model.pcie_max_width; });
}

// The part's own maximum generation (the link's may be lower; here they agree).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                                             unsigned int* maxLinkGenDevice) {
  return fgimpl_nvmlDeviceGetMaxPcieLinkGeneration(device, maxLinkGenDevice);
}

namespace {
// Per-lane transfer rate of a PCIe generation, in Mbps (gen5: 32000, as a real H200 reports).
unsigned pcie_mbps(unsigned gen) {
  constexpr unsigned kRate[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
  return gen < std::size(kRate) ? kRate[gen] : 0;
}
}  // namespace

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPcieSpeed(nvmlDevice_t device, unsigned int* pcieSpeed) {
  return device_value(device, pcieSpeed, [](DeviceHandle& h) { return pcie_mbps(h.model.pcie_cur_gen); });
}

// NVML_PCIE_LINK_MAX_SPEED_*: 1 = 2500 Mbps ... 5 = 32000, 6 = 64000, i.e. the generation.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int* maxSpeed) {
  return device_value(device, maxSpeed, [](DeviceHandle& h) { return h.model.pcie_max_gen; });
}

// No link errors on a fake bus.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return device_value(device, value, [](DeviceHandle&) { return 0; });
}

// KB/s over the last 20 ms: nothing moves over the (fake) bus.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                                                   unsigned int* value) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!value || (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES))
      return NVML_ERROR_INVALID_ARGUMENT;
    *value = 0;
    return NVML_SUCCESS;
  });
}

// ---- state and modes -------------------------------------------------------------------------
// Datacenter parts stay in P0 while a driver holds them.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* p_state) {
  return device_value(device, p_state, [](DeviceHandle&) { return NVML_PSTATE_0; });
}

// Same numbering as CUdevice_attribute COMPUTE_MODE (0 default, 2 prohibited, 3 exclusive process).
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  return device_value(device, mode, [](DeviceHandle& h) {
    return static_cast<nvmlComputeMode_t>(h.model.attributes[fg::attr::COMPUTE_MODE]);
  });
}

// Datacenter hosts run nvidia-persistenced: persistence mode on.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return device_value(device, mode, [](DeviceHandle&) { return NVML_FEATURE_ENABLED; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* display) {
  return device_value(device, display, [](DeviceHandle&) { return NVML_FEATURE_DISABLED; });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* is_active) {
  return device_value(device, is_active, [](DeviceHandle&) { return NVML_FEATURE_DISABLED; });
}

// Driver models (WDDM / TCC / MCDM) exist only on Windows.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetDriverModel_v2(nvmlDevice_t device, nvmlDriverModel_t* current,
                                                                   nvmlDriverModel_t* pending) {
  return with_device(device, [&](DeviceHandle&) -> nvmlReturn_t {
    if (!current && !pending) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;
  });
}

// ---- ECC -------------------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
                                                            nvmlEnableState_t* pending) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlEnableState_t state = ecc_enabled(h.model) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    *current = state;
    *pending = state;
    return NVML_SUCCESS;
  });
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                                   nvmlMemoryErrorType_t error_type,
                                                                   nvmlEccCounterType_t counter_type,
                                                                   unsigned long long* ecc_counts) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!ecc_counts ||
        (error_type != NVML_MEMORY_ERROR_TYPE_CORRECTED && error_type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
        (counter_type != NVML_VOLATILE_ECC && counter_type != NVML_AGGREGATE_ECC))
      return NVML_ERROR_INVALID_ARGUMENT;
    if (!ecc_enabled(h.model)) return NVML_ERROR_NOT_SUPPORTED;
    *ecc_counts = 0;
    return NVML_SUCCESS;
  });
}

// ---- field values ----------------------------------------------------------------------------
// Each entry gets its own status; the call itself succeeds. Answered: ECC mode, ECC totals,
// retired pages and remapped rows (all 0), memory temperature (parts with an HBM sensor), the
// NVLink link count (0); every other field is NOT_SUPPORTED.
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetFieldValues(nvmlDevice_t device, int values_count,
                                                                nvmlFieldValue_t* values) {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!values || values_count < 0) return NVML_ERROR_INVALID_ARGUMENT;
    const long long now = now_us();
    const bool ecc = ecc_enabled(h.model);
    for (int i = 0; i < values_count; ++i) {
      nvmlFieldValue_t& v = values[i];
      v.timestamp = now;
      v.latencyUsec = 0;
      std::memset(&v.value, 0, sizeof v.value);
      v.nvmlReturn = NVML_SUCCESS;
      switch (v.fieldId) {
        case NVML_FI_DEV_ECC_CURRENT:
        case NVML_FI_DEV_ECC_PENDING:
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.uiVal = ecc ? 1 : 0;
          break;
        case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
        case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
          v.value.ullVal = 0;
          if (!ecc) v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          break;
        case NVML_FI_DEV_RETIRED_SBE:
        case NVML_FI_DEV_RETIRED_DBE:
        case NVML_FI_DEV_RETIRED_PENDING:
        case NVML_FI_DEV_REMAPPED_COR:
        case NVML_FI_DEV_REMAPPED_UNC:
        case NVML_FI_DEV_REMAPPED_PENDING:
        case NVML_FI_DEV_REMAPPED_FAILURE:
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.uiVal = 0;  // a healthy GPU
          if (!ecc) v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          break;
        case NVML_FI_DEV_MEMORY_TEMP:
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.uiVal = h.model.temperature_c;
          if (h.model.temp_max_mem_c == 0) v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;  // no memory sensor
          break;
        case NVML_FI_DEV_NVLINK_LINK_COUNT:
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.uiVal = 0;
          break;
        default: v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED; break;
      }
    }
    return NVML_SUCCESS;
  });
}

// ---- NVLink (none) -----------------------------------------------------------------------------
extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                                nvmlEnableState_t* is_active) {
  return no_nvlink(device, link, is_active);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link,
                                                                     nvmlNvLinkCapability_t /*capability*/,
                                                                     unsigned int* cap_result) {
  return no_nvlink(device, link, cap_result);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                                           nvmlIntNvLinkDeviceType_t* type) {
  return no_nvlink(device, link, type);
}

extern "C" FG_IMPL nvmlReturn_t fgimpl_nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                                           nvmlPciInfo_t* pci) {
  return no_nvlink(device, link, pci);
}
