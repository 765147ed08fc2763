// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the NVML shim (nvml/*.cpp): the library state (init refcount), the
// device handle table, the argument checks every entry point repeats, and string output.
//
// Identity: NVML enumerates every configured fake GPU, like the real library, which ignores
// CUDA_VISIBLE_DEVICES (PyTorch's _device_count_nvml and nvitop apply that variable on top of
// the NVML list themselves, so a pre-filtered list would be filtered twice). Names, UUIDs, PCI
// ids and memory totals are the DeviceModel's, so they agree with what cudart and the driver
// API report for the visible subset; memory use and process lists come from the host-wide
// ledger, so they agree across processes.
#pragma once
#include "common/impl.h"
#include "common/log.h"
#include "core/backend.h"
#include "core/versions.h"
#include "fakegpu/nvml_api.h"
#include "fakegpu/nvml_types.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace fg::nvml {

using namespace fgapi;

inline constexpr const char* kDriverVersion = version::kDisplayDriver;
inline constexpr const char* kNvmlVersion = version::kNvml;
inline constexpr int kCudaDriverVersion = version::kCudaDriver;

// Real non-MIG GPUs report this in nvmlProcessInfo gpuInstanceId / computeInstanceId.
inline constexpr unsigned kNoInstanceId = 0xFFFFFFFFu;

// ---- nvml.h names that fakegpu/nvml_types.h does not declare (values from nvml.h, API 13) ----
inline constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

// nvmlProcessDetailList_t::mode.
inline constexpr unsigned NVML_PROCESS_MODE_COMPUTE = 0;
inline constexpr unsigned NVML_PROCESS_MODE_GRAPHICS = 1;
inline constexpr unsigned NVML_PROCESS_MODE_MPS = 2;

// nvmlFieldValue_t::fieldId values answered by nvmlDeviceGetFieldValues.
inline constexpr unsigned NVML_FI_DEV_ECC_CURRENT = 1;
inline constexpr unsigned NVML_FI_DEV_ECC_PENDING = 2;
inline constexpr unsigned NVML_FI_DEV_ECC_SBE_VOL_TOTAL = 3;
inline constexpr unsigned NVML_FI_DEV_ECC_DBE_VOL_TOTAL = 4;
inline constexpr unsigned NVML_FI_DEV_ECC_SBE_AGG_TOTAL = 5;
inline constexpr unsigned NVML_FI_DEV_ECC_DBE_AGG_TOTAL = 6;
inline constexpr unsigned NVML_FI_DEV_RETIRED_SBE = 29;
inline constexpr unsigned NVML_FI_DEV_RETIRED_DBE = 30;
inline constexpr unsigned NVML_FI_DEV_RETIRED_PENDING = 31;
inline constexpr unsigned NVML_FI_DEV_MEMORY_TEMP = 82;
inline constexpr unsigned NVML_FI_DEV_NVLINK_LINK_COUNT = 91;
inline constexpr unsigned NVML_FI_DEV_REMAPPED_COR = 142;
inline constexpr unsigned NVML_FI_DEV_REMAPPED_UNC = 143;
inline constexpr unsigned NVML_FI_DEV_REMAPPED_PENDING = 144;
inline constexpr unsigned NVML_FI_DEV_REMAPPED_FAILURE = 145;

// ABI facts the clients depend on (census §2.3).
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(sizeof(nvmlFieldValue_t) == 40);

// ---- library state -------------------------------------------------------------------------
// True between a successful nvmlInit* and the matching last nvmlShutdown.
bool initialized() noexcept;

// ---- device handles ------------------------------------------------------------------------
// An nvmlDevice_t points at one of these; the table is built on the first nvmlInit and never
// changes afterwards (the configured list is fixed for the life of the process).
inline constexpr uint32_t kHandleMagic = 0x4E564D4C;  // "NVML"
struct DeviceHandle {
  uint32_t magic = kHandleMagic;
  unsigned index = 0;  // NVML index = position in the configured list
  DeviceModel model;
  uint32_t ledger_index = 0;  // host-wide ledger slot of this device
  Device* cuda = nullptr;     // the backend device when CUDA_VISIBLE_DEVICES shows it, else null
};

unsigned device_count() noexcept;                         // 0 before the first init
DeviceHandle* handle_at(unsigned index) noexcept;         // nullptr when out of range
DeviceHandle* from_handle(nvmlDevice_t device) noexcept;  // nullptr unless one of ours
inline nvmlDevice_t to_handle(DeviceHandle* h) noexcept { return reinterpret_cast<nvmlDevice_t>(h); }

// ---- entry-point scaffolding ---------------------------------------------------------------
// No exception leaves an entry point: allocation failure -> NVML_ERROR_MEMORY, anything else
// -> NVML_ERROR_UNKNOWN.
template <class F>
nvmlReturn_t guarded(F&& body) noexcept {
  return fg::guarded<nvmlReturn_t>(NVML_ERROR_MEMORY, NVML_ERROR_UNKNOWN, std::forward<F>(body));
}

// Library calls that need nvmlInit but no device.
template <class F>
nvmlReturn_t with_init(F&& body) noexcept {
  return guarded([&]() -> nvmlReturn_t {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    return body();
  });
}

// Device calls: UNINITIALIZED before init, INVALID_ARGUMENT for a handle that is not ours,
// then body(DeviceHandle&), which checks its own out-pointers.
template <class F>
nvmlReturn_t with_device(nvmlDevice_t device, F&& body) noexcept {
  return guarded([&]() -> nvmlReturn_t {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    DeviceHandle* h = from_handle(device);
    if (!h) return NVML_ERROR_INVALID_ARGUMENT;
    return body(*h);
  });
}

// Device calls that answer one value: INVALID_ARGUMENT for a null out-pointer, else
// *out = value(handle).
template <class T, class F>
nvmlReturn_t device_value(nvmlDevice_t device, T* out, F&& value) noexcept {
  return with_device(device, [&](DeviceHandle& h) -> nvmlReturn_t {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    *out = value(h);
    return NVML_SUCCESS;
  });
}

// Copies s with its NUL into out[length]: NULL out -> INVALID_ARGUMENT, too short ->
// INSUFFICIENT_SIZE (out then holds the NUL-terminated prefix that fits, if length > 0).
nvmlReturn_t copy_string(std::string_view s, char* out, unsigned length) noexcept;

// Maps a core status to NVML's codes.
nvmlReturn_t to_nvml(Status s) noexcept;

// ---- device facts shared by several files ----------------------------------------------------
struct MemoryNumbers {
  uint64_t total = 0, used = 0, free = 0;
};
// Host-wide numbers from the ledger (every process), the same ones cudaMemGetInfo uses.
MemoryNumbers memory_of(const DeviceHandle& h) noexcept;

// Live processes holding memory on the device (host-wide), with their usage.
std::vector<ledger::ProcessUsage> processes_of(const DeviceHandle& h);
// What NVML calls usedGpuMemory: device + managed bytes.
inline uint64_t used_gpu_memory(const ledger::ProcessUsage& p) noexcept {
  return p.used[ledger::kDevice] + p.used[ledger::kManaged];
}

// MIG-capable parts (A100/A30, Hopper and later) report MIG mode "disabled"; others do not
// support the MIG queries at all.
bool mig_capable(const DeviceModel& m) noexcept;

// Microseconds since the epoch (NVML sample and field-value timestamps).
long long now_us() noexcept;

}  // namespace fg::nvml
